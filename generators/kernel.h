// The vocabulary shared by every generator: what a fused epilogue asks for, what
// a generator returns, and the small helpers that build dense, shape-specialised
// Halide parameters. Independent of the compiler's IR, so that generators can be
// used on their own (kernel tests, benchmarks).
//
// Conventions of every generator:
//  - Tensors are dense row-major float32 NCHW (the quantized kernels' integer
//    tensors: int8/uint8, quantize.h, qconv2d.h) (shapes are written outermost
//    first, as in the IR). Halide lists dimensions innermost first, so an NCHW
//    tensor is an ImageParam of 4 dims (w, h, c, n).
//  - Every parameter and the output are constrained to the exact shape given
//    (min 0, dense strides), so each kernel is specialised to one layer.
//  - Kernel::inputs are in call order: the op's own inputs, then the operands
//    of the epilogue's post-ops in epilogue order.
//  - A spec that breaks a generator's preconditions (the caller's bug, never the
//    model's: the compiler validates models first) throws std::invalid_argument.
#pragma once

#include <Halide.h>

#include <cstdint>
#include <string>
#include <vector>

namespace aotc::gen {

using Shape = std::vector<int64_t>;  // outermost first

// One step of a fused epilogue, applied to every output element in order.
struct PostOpSpec {
  enum class Kind {
    kRelu,       // max(v, 0)
    kClamp,      // min(max(v, min), max)
    kHardSwish,  // v * clamp(v + 3, 0, 6) / 6
    kSigmoid,    // 1 / (1 + exp(-v))
    kTanh,       // tanh(v)
    kAffine,     // v * scale[c] + shift[c]: two [C] operands, c = output dim 1
    kAdd,        // v + operand, broadcast to the output shape
    kMul,        // v * operand, broadcast to the output shape
    kPRelu,      // v >= 0 ? v : v * operand (alpha), broadcast to the output shape
    kElu,        // v > 0 ? v : alpha * (exp(v) - 1)
    kSoftplus,   // log(1 + exp(v))
    kMax,        // max(v, operand), NaN if either is; broadcast to the output shape
    kMin,        // min(v, operand), the same
    kDiv,        // v / operand, broadcast to the output shape
  };
  Kind kind = Kind::kRelu;
  float min = 0, max = 0;  // kClamp only
  // kAdd, kMul, kPRelu, kMax, kMin, kDiv: the operand's shape, broadcast to the output's with NumPy rules
  // (aligned from the right; dims of extent 1 repeat). Unused otherwise.
  Shape operand_shape;
  float alpha = 0;  // kElu only
};

// A generated kernel: an algorithm with its schedule, ready to compile (AOT or JIT) for
// kernel_target(the library's target, kernel).
struct Kernel {
  std::vector<Halide::ImageParam> inputs;  // in call order
  Halide::Func output;
  std::string schedule;  // one line naming the schedule and its knobs, for the report
  // Target features the kernel needs on top of those every kernel gets (kernel_target):
  // AVX512_SapphireRapids for the AVX512-VNNI dot products.
  std::vector<Halide::Target::Feature> features;
};

// Whether an x86 target's kernels may use AVX512-VNNI (vpdpbusd): Halide 14 has these only
// under its avx512_sapphirerapids feature, which it also sets for AMD Zen 4.
bool has_avx512_vnni(const Halide::Target& target);
// The target a kernel compiles for: the library's, without avx512_sapphirerapids unless the
// kernel asks for it. That feature also means AVX-VNNI (VEX-encoded), which Zen 4 lacks:
// LLVM 14 emitted VEX vpdpwssd for index arithmetic (a depth_to_space died with SIGILL,
// found by aotc-fuzz), so only kernels that need it get it, and only their 512-bit dot
// products (EVEX) use it (tests/kernels/vnni_encoding_test.py checks the objects).
Halide::Target kernel_target(const Halide::Target& library, const Kernel& kernel);

// What a cost model needs to know of the schedule a generator picks for one
// layer: its family, the fraction of the target's vector lanes it keeps
// busy with output values (the rest are register-tile padding past a row's or
// a channel block's end, or lanes of vectors narrower than the target's), and
// the memory traffic its loop order adds.
struct ScheduleShape {
  std::string family;
  double lane_use = 1;
  // Bytes the schedule reads again from L3, or from memory where they do not
  // fit in L3, on top of reading its operands once (operands re-read for
  // every tile): their time adds to the arithmetic's.
  double l3_bytes = 0, memory_bytes = 0;
};

// Weights rearranged at compile time into the layout a kernel's schedule reads.
struct PackedWeights {
  Shape shape;  // the dense shape of the buffer the kernel expects, outermost first
  std::vector<float> data;
  // The buffer's element type; an integer type's values are held exactly in `data`
  // (8- and 16-bit weights, 32-bit values below 2^24).
  Halide::Type type = Halide::Float(32);
};

// ---- Helpers for the generators -------------------------------------------------

// A row-major matrix [rows, cols] (a weight [O, C]) as blocks [rows/block,
// cols, block] of `block` rows (which must divide rows): a block's values for
// one column are one vector.
PackedWeights pack_in_row_blocks(const float* matrix, int64_t rows, int64_t cols, int64_t block);

// Halide keeps constant-size buffers of up to 16 KiB on the stack and silently
// moves larger "stack" buffers to the heap (halide_malloc, once per parallel
// task), which a kernel must never call. A schedule stages at most this much
// in one buffer, leaving room for a second buffer and the register tiles.
constexpr int64_t kMaxStagedBytes = 8 * 1024;

// The highest rank of the tensors the rank-generic kernels take (elementwise, transpose, quantize).
constexpr size_t kMaxRank = 6;

// Throws std::invalid_argument(message) unless `condition` holds.
void require(bool condition, const std::string& message);

int64_t num_elements(const Shape& shape);
std::string to_string(const Shape& shape);  // "[1,64,56,56]"

// An ImageParam of rank shape.size() and element `type`, constrained to exactly `shape`, dense.
Halide::ImageParam dense_input(const std::string& name, const Shape& shape, Halide::Type type = Halide::Float(32));
// Constrains a Func's output buffer to exactly `shape`, dense.
void constrain_output(Halide::Func& f, const Shape& shape);

// `rank` pure Vars named after `prefix`, innermost first (Halide's order).
std::vector<Halide::Var> make_vars(size_t rank, const std::string& prefix = "d");
// The same coordinates outermost first (the NCHW order the epilogue takes).
std::vector<Halide::Expr> outermost_first(const std::vector<Halide::Var>& innermost_first);

// Float lanes of one native vector register of the target (16 with AVX-512).
int native_lanes(const Halide::Target& target);
// Whether the target has 32 vector registers (AVX-512, AArch64) rather than
// 16 (AVX2 and older x86, 32-bit ARM NEON).
bool many_vector_registers(const Halide::Target& target);
// Vector registers a register-blocked inner loop may fill with accumulators,
// leaving room for the operands it loads.
int accumulator_registers(const Halide::Target& target);
// With 16 registers, the accumulators of a tile that broadcasts an input value
// per pixel, leaving room for its weight vectors: 12 with 4 weight vectors
// spilled (conv2d's vectorise-channels and the blocked 1x1 on AVX2, one Zen 4
// core: 36-52 GFLOP/s against 76-111 with 10 or fewer).
constexpr int kFewRegistersBroadcastAccumulators = 10;
// The accumulators of the channel-blocked kernels' tiles (a few pixels times
// one or two blocks, each pixel's input value a broadcast of its own): past
// these counts the tile spilled (one core, MobileNetV2's 1x1 shapes: AVX-512,
// 2 blocks x 12 pixels ran at 54-80 GFLOP/s against 116-117 with 2 x 7; AVX2,
// 2 x 6 at 36-52 against 106-111 with 2 x 5).
int broadcast_tile_accumulators(const Halide::Target& target);
// Output values over the values whole tiles of `tile` compute along `extent`.
double tile_use(int64_t extent, int64_t tile);
// Lanes for vectorising a loop of `extent`: the largest power of two no larger
// than `extent` or `max_lanes`, so that split factors never exceed extents.
int lanes_for_extent(int64_t extent, int max_lanes);
int64_t largest_divisor_at_most(int64_t n, int64_t limit);

// TFLite's MultiplyByQuantizedMultiplier (docs/int8.md) of int32 `acc`, in int64 where TFLite
// widens: RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(acc << max(shift, 0),
// multiplier), max(-shift, 0)). The multiplier is positive, so the high multiply never
// saturates.
Halide::Expr multiply_by_quantized_multiplier(const Halide::Expr& acc, const Halide::Expr& multiplier,
                                              const Halide::Expr& shift);

// Reads `operand` at output coordinates `nchw` (outermost first) with NumPy
// broadcasting: aligned from the right, dims of extent 1 stay at index 0.
Halide::Expr broadcast_read(const Halide::ImageParam& operand, const Shape& operand_shape,
                            const std::vector<Halide::Expr>& nchw);
// Throws unless `operand` broadcasts to `output` (NumPy rules).
void require_broadcastable(const Shape& operand, const Shape& output, const std::string& what);

// The schedule of an output computed point by point (elementwise chains,
// copies, padding): the innermost dim is vectorised, the dims outside it are
// parallel. With `fuse_rows`, the two innermost dims are first fused into one
// run (right when every input is read at the output's coordinates or
// broadcast: Halide folds the fused index back into dense addresses).
// For a GPU target: all dims fused, a thread per kGpuVectorLanes elements
// (float4 loads and stores) when their count is a multiple of it and `aligned`
// (every buffer starts 16-byte aligned, as the arena's tensors do; CUDA faults on
// a misaligned float4), else a thread per element; blocks of up to
// kGpuPointwiseThreads threads (`fuse_rows` does not matter there).
// Returns its description.
std::string schedule_pointwise(Halide::Func& output, const Shape& shape, bool fuse_rows, const Halide::Target& target,
                               bool aligned = true);

// GPU schedules: threads per block of a kernel of independent elements, and the
// elements per thread of a vectorised one (a float4).
constexpr int kGpuPointwiseThreads = 256;
constexpr int kGpuVectorLanes = 4;
// Threads along a loop of `extent`: the smallest power of two from `least` to
// `most` that covers it, so that small tensors waste few threads.
int gpu_threads_for(int64_t extent, int least, int most);

// A GPU schedule of an output (x, y, c, n) (NCHW, innermost first): a thread per
// value, `columns` threads along each row (coalesced writes) x 4 rows per block,
// the blocks of all planes in one grid dimension (x: grid y and z stop at 65535). Returns the thread var along the row, for what is
// computed per thread.
Halide::Var schedule_gpu_rows(Halide::Func& output, const Halide::Var& x, const Halide::Var& y, const Halide::Var& c,
                              const Halide::Var& n, int columns);

// Output channels a thread of a GPU convolution accumulates in registers: each
// input value it loads feeds them all.
constexpr int kGpuChannelTile = 8;

// A GPU schedule of a convolution's output (x, y, o, n): a thread computes
// `channels` channels (unrolled) of one pixel, blocks of `pixels` consecutive
// pixels (x and y fused). Returns the thread var, at which the per-thread
// accumulation is computed.
Halide::Var schedule_gpu_channel_tile(Halide::Func& output, const Halide::Var& x, const Halide::Var& y,
                                      const Halide::Var& o, const Halide::Var& n, int pixels, int channels);

// Parallel loops cost the pool a wake-up per loop and an atomic claim per
// task: tasks hold at least this much work (a smaller loop is two tasks), and
// 3 to 16 tasks become a multiple of 4 of even size (3 uneven tasks on 2
// threads ran no faster than on 1). Work: elements read or written by memory-bound
// kernels; multiply-adds / kMacsPerElement for arithmetic ones (one element of
// traffic costs about as long as 16 multiply-adds on one core).
constexpr int64_t kMinTaskWork = 16 * 1024;
constexpr int64_t kMacsPerElement = 16;

// Parallelises `loop` of `stage` (`iterations` of `work_per_iteration` each) in
// tasks of at least kMinTaskWork, or in two. Returns its description.
std::string parallel_in_tasks(Halide::Stage stage, const Halide::VarOrRVar& loop, int64_t iterations,
                              int64_t work_per_iteration);
// The same, always splitting `loop` into tasks (`loop`) of iterations
// (`iteration`), so that a Func can be computed per iteration.
std::string parallel_in_tasks(Halide::Stage stage, const Halide::Var& loop, int64_t iterations,
                              int64_t work_per_iteration, const Halide::Var& iteration);

// Schedules `staged` (computed at some loop of a consumer) into a stack
// buffer whose rows start on a vector boundary, vectorised along dim 0. The
// caller keeps the buffer within its budget (kMaxStagedBytes; conv2d's wider
// one for a few cases), always under Halide's 16 KiB.
// Aligned rows are needed, not just faster: Halide 14 turns strided loads
// from internal buffers into aligned dense loads, which faulted on rows of
// odd length (stride-2 kernels). With stride 3 (and dilation 2) even aligned
// rows faulted (max pooling and depthwise convs, found by aotc-fuzz);
// align_bounds then broke stride-2 convs. So no kernel loads from staged rows
// with a stride above kMaxStagedLoadStride.
constexpr int kMaxStagedLoadStride = 2;
void stage_on_stack(Halide::Func& staged, int lanes);

}  // namespace aotc::gen
