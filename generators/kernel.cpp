#include "generators/kernel.h"

#include <algorithm>
#include <stdexcept>

namespace aotc::gen {

void require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument(message);
}

int64_t num_elements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string to_string(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ',';
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

namespace {

// Halide indexes with int32: every extent and every flat index must fit.
void require_indexable(const Shape& shape, const std::string& what) {
  for (int64_t d : shape) require(d >= 1, what + " " + to_string(shape) + " has an empty dimension");
  require(num_elements(shape) < (int64_t{1} << 31), what + " " + to_string(shape) + " has 2^31 or more elements");
}

// Dimension i (innermost first) of a dense row-major `shape` in Halide's order.
template <typename Dimension>
void constrain_dense(Dimension dim, const Shape& shape, size_t i, int64_t stride) {
  dim.set_bounds(0, static_cast<int>(shape[shape.size() - 1 - i])).set_stride(static_cast<int>(stride));
}

}  // namespace

Halide::ImageParam dense_input(const std::string& name, const Shape& shape, Halide::Type type) {
  require_indexable(shape, "input '" + name + "'");
  Halide::ImageParam param(type, static_cast<int>(shape.size()), name);
  int64_t stride = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    constrain_dense(param.dim(static_cast<int>(i)), shape, i, stride);
    stride *= shape[shape.size() - 1 - i];
  }
  return param;
}

void constrain_output(Halide::Func& f, const Shape& shape) {
  require_indexable(shape, "output '" + f.name() + "'");
  int64_t stride = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    constrain_dense(f.output_buffer().dim(static_cast<int>(i)), shape, i, stride);
    stride *= shape[shape.size() - 1 - i];
  }
}

std::vector<Halide::Var> make_vars(size_t rank, const std::string& prefix) {
  std::vector<Halide::Var> vars;
  for (size_t i = 0; i < rank; ++i) vars.emplace_back(prefix + std::to_string(i));
  return vars;
}

std::vector<Halide::Expr> outermost_first(const std::vector<Halide::Var>& innermost_first) {
  return std::vector<Halide::Expr>(innermost_first.rbegin(), innermost_first.rend());
}

bool has_avx512_vnni(const Halide::Target& target) {
  return target.arch == Halide::Target::X86 && target.has_feature(Halide::Target::AVX512_SapphireRapids);
}

Halide::Target kernel_target(const Halide::Target& library, const Kernel& kernel) {
  Halide::Target t = library.without_feature(Halide::Target::AVX512_SapphireRapids);
  for (const Halide::Target::Feature f : kernel.features) {
    if (f == Halide::Target::AVX512_SapphireRapids && !library.has_feature(f)) continue;
    t = t.with_feature(f);
  }
  return t;
}

int native_lanes(const Halide::Target& target) { return target.natural_vector_size<float>(); }

bool many_vector_registers(const Halide::Target& target) {
  return target.has_feature(Halide::Target::AVX512) || (target.arch == Halide::Target::ARM && target.bits == 64);
}

int accumulator_registers(const Halide::Target& target) { return many_vector_registers(target) ? 24 : 12; }

int broadcast_tile_accumulators(const Halide::Target& target) {
  return many_vector_registers(target) ? 14 : kFewRegistersBroadcastAccumulators;
}

double tile_use(int64_t extent, int64_t tile) {
  return static_cast<double>(extent) / static_cast<double>((extent + tile - 1) / tile * tile);
}

int lanes_for_extent(int64_t extent, int max_lanes) {
  int lanes = 1;
  while (lanes * 2 <= max_lanes && lanes * 2 <= extent) lanes *= 2;
  return lanes;
}

PackedWeights pack_in_row_blocks(const float* matrix, int64_t rows, int64_t cols, int64_t block) {
  require(block >= 1 && rows % block == 0, "pack_in_row_blocks: the block must divide the rows");
  PackedWeights packed;
  packed.shape = {rows / block, cols, block};
  packed.data.resize(static_cast<size_t>(num_elements(packed.shape)));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      packed.data[static_cast<size_t>((r / block * cols + c) * block + r % block)] = matrix[r * cols + c];
  return packed;
}

int64_t largest_divisor_at_most(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, limit); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

Halide::Expr multiply_by_quantized_multiplier(const Halide::Expr& acc, const Halide::Expr& multiplier,
                                              const Halide::Expr& shift) {
  using Halide::Expr;
  const Expr left = Halide::cast<int64_t>(Halide::max(shift, 0)), right = Halide::max(-shift, 0);
  const Expr shifted = Halide::cast<int32_t>(Halide::cast<int64_t>(acc) << left);  // wraps, as TFLite's int32
  const Expr product = Halide::cast<int64_t>(shifted) * Halide::cast<int64_t>(multiplier);
  const Expr nudged =
      product + Halide::select(product >= 0, Expr(int64_t{1} << 30), Expr(1 - (int64_t{1} << 30)));
  // Divided by 2^31 truncating toward zero, as C++'s integer division.
  const Expr high = Halide::cast<int32_t>(
      (nudged + Halide::select(nudged < 0, Expr((int64_t{1} << 31) - 1), Expr(int64_t{0}))) >> 31);
  const Expr mask = Halide::cast<int32_t>((Expr(int64_t{1}) << Halide::cast<int64_t>(right)) - 1);
  const Expr threshold = (mask >> 1) + Halide::select(high < 0, 1, 0);
  return (high >> right) + Halide::select((high & mask) > threshold, 1, 0);
}

Halide::Expr broadcast_read(const Halide::ImageParam& operand, const Shape& operand_shape,
                            const std::vector<Halide::Expr>& nchw) {
  const size_t skipped = nchw.size() - operand_shape.size();
  std::vector<Halide::Expr> innermost_first;
  for (size_t i = operand_shape.size(); i-- > 0;)
    innermost_first.push_back(operand_shape[i] == 1 ? Halide::Expr(0) : nchw[skipped + i]);
  return operand(innermost_first);
}

void require_broadcastable(const Shape& operand, const Shape& output, const std::string& what) {
  bool ok = operand.size() <= output.size();
  for (size_t i = 0; ok && i < operand.size(); ++i) {
    const int64_t out_dim = output[output.size() - operand.size() + i];
    ok = operand[i] == 1 || operand[i] == out_dim;
  }
  require(ok, what + " " + to_string(operand) + " does not broadcast to the output " + to_string(output));
}

int gpu_threads_for(int64_t extent, int least, int most) {
  int threads = least;
  while (threads < most && threads < extent) threads *= 2;
  return threads;
}

Halide::Var schedule_gpu_rows(Halide::Func& output, const Halide::Var& x, const Halide::Var& y, const Halide::Var& c,
                              const Halide::Var& n, int columns) {
  Halide::Var xo("xo"), xi("xi"), yo("yo"), yi("yi"), plane("plane"), tile("tile"), block("block");
  output.split(x, xo, xi, columns, Halide::TailStrategy::GuardWithIf)
      .split(y, yo, yi, 4, Halide::TailStrategy::GuardWithIf)
      .reorder(xi, yi, xo, yo, c, n)
      .fuse(c, n, plane)
      .fuse(xo, yo, tile)
      .fuse(tile, plane, block)
      .gpu_blocks(block)
      .gpu_threads(xi, yi);
  return xi;
}

Halide::Var schedule_gpu_channel_tile(Halide::Func& output, const Halide::Var& x, const Halide::Var& y,
                                      const Halide::Var& o, const Halide::Var& n, int pixels, int channels) {
  Halide::Var p("p"), po("po"), pi("pi"), oo("oo"), oi("oi");
  output.fuse(x, y, p)
      .split(p, po, pi, pixels, Halide::TailStrategy::GuardWithIf)
      .split(o, oo, oi, channels, Halide::TailStrategy::GuardWithIf)
      .reorder(oi, pi, po, oo, n)
      .gpu_blocks(po, oo, n)
      .gpu_threads(pi)
      .unroll(oi);
  return pi;
}

namespace {

// A thread per kGpuVectorLanes consecutive elements (one float4 load per operand
// read densely, Halide's 128-bit loads on CUDA) when the element count allows and
// the buffers start 16-byte aligned, else a thread per element, of all the dims
// fused into one: consecutive threads touch consecutive elements (coalesced),
// whatever the rank or broadcasting. GuardWithIf: see schedule_pointwise.
std::string schedule_pointwise_gpu(Halide::Func& output, const Shape& shape, bool aligned) {
  const std::vector<Halide::Var> args = output.args();
  if (args.empty()) {
    output.gpu_single_thread();
    return "gpu: scalar, one thread";
  }
  Halide::Var all = args[0];
  for (size_t i = 1; i < args.size(); ++i) {
    Halide::Var fused(all.name() + "_" + args[i].name());
    output.fuse(all, args[i], fused);
    all = fused;
  }
  const int64_t elements = num_elements(shape);
  const int lanes = aligned && elements % kGpuVectorLanes == 0 ? kGpuVectorLanes : 1;
  if (lanes > 1) {
    // An exact split (the extent is a multiple of the lanes): no guard, so no
    // predicated loads, which Halide would scalarise.
    Halide::Var vector("vector");
    output.split(all, all, vector, lanes, Halide::TailStrategy::RoundUp).vectorize(vector);
  }
  const int threads = gpu_threads_for(elements / lanes, 32, kGpuPointwiseThreads);
  Halide::Var block("block"), thread("thread");
  output.split(all, block, thread, threads, Halide::TailStrategy::GuardWithIf).gpu_blocks(block).gpu_threads(thread);
  return "gpu: " + (lanes > 1 ? std::to_string(lanes) + " elements (float4)" : std::string("one element")) +
         " per thread, dims fused, " + std::to_string(threads) + " threads per block";
}

}  // namespace

std::string schedule_pointwise(Halide::Func& output, const Shape& shape, bool fuse_rows, const Halide::Target& target,
                               bool aligned) {
  if (target.has_gpu_feature()) return schedule_pointwise_gpu(output, shape, aligned);
  const std::vector<Halide::Var> args = output.args();
  std::vector<Halide::VarOrRVar> dims(args.begin(), args.end());
  std::string description;
  int64_t inner = shape.empty() ? 1 : shape.back();
  if (fuse_rows && shape.size() >= 2) {
    Halide::Var fused(args[0].name() + "_rows");
    output.fuse(args[0], args[1], fused);
    dims.erase(dims.begin(), dims.begin() + 2);
    dims.insert(dims.begin(), fused);
    inner *= shape[shape.size() - 2];
    description = "fused rows, ";
  }
  if (dims.empty()) return "scalar";
  const int lanes = lanes_for_extent(inner, native_lanes(target));
  // GuardWithIf, not the default ShiftInwards: a shifted tail recomputes
  // elements, which is wrong when the output overwrites an input in place
  // (the memory planner relies on this: compiler/plan/memory_plan.cpp).
  if (lanes > 1) output.vectorize(dims[0], lanes, Halide::TailStrategy::GuardWithIf);
  description += "vec" + std::to_string(lanes);
  if (dims.size() >= 2) {
    // Parallel over everything outside the vectorised run.
    Halide::VarOrRVar outer = dims.back();
    for (size_t i = dims.size() - 1; i-- > 1;) {
      Halide::Var fused_outer(dims[i].name() + "_" + outer.name());
      output.fuse(dims[i].var, outer.var, fused_outer);
      outer = fused_outer;
    }
    description += ", " + parallel_in_tasks(output, outer, num_elements(shape) / inner, inner);
  }
  return description;
}

namespace {

// Iterations per task: at least kMinTaskWork each, but two tasks at least.
// Even a loop too small to gain from threads stays a parallel loop of two
// tasks: Halide 14 stages buffers inside a task's closure on a stack it
// aligns, while staged rows in the kernel's own frame came out misaligned for
// its aligned vector loads (a serial SSE4.1 depthwise conv with stride 2
// faulted; found by aotc-fuzz). Loops of one iteration have no closure.
// Between 3 and 16 tasks, their count is rounded up to a multiple of 4 and
// their sizes evened out: 3 tasks on 2 threads ran no faster than 1 (a 14x14
// depthwise conv of 384 planes in tasks of 149, 149, 86 took 63 us on two
// threads, 57 on one).
int64_t iterations_per_task(int64_t iterations, int64_t work_per_iteration) {
  const int64_t half = std::max<int64_t>(1, (iterations + 1) / 2);
  const int64_t work = std::max<int64_t>(1, work_per_iteration);
  const int64_t per_task = std::clamp<int64_t>((kMinTaskWork + work - 1) / work, 1, half);
  int64_t tasks = (iterations + per_task - 1) / per_task;
  if (tasks < 3 || tasks > 16) return per_task;
  tasks = (tasks + 3) / 4 * 4;
  return std::max<int64_t>(1, (iterations + tasks - 1) / tasks);
}

std::string tasks_description(int64_t per_task) { return "parallel in tasks of " + std::to_string(per_task); }

}  // namespace

std::string parallel_in_tasks(Halide::Stage stage, const Halide::VarOrRVar& loop, int64_t iterations,
                              int64_t work_per_iteration) {
  const int64_t per_task = iterations_per_task(iterations, work_per_iteration);
  if (per_task == 1) stage.parallel(loop);
  else stage.parallel(loop, static_cast<int>(per_task), Halide::TailStrategy::GuardWithIf);
  return tasks_description(per_task);
}

std::string parallel_in_tasks(Halide::Stage stage, const Halide::Var& loop, int64_t iterations,
                              int64_t work_per_iteration, const Halide::Var& iteration) {
  const int64_t per_task = iterations_per_task(iterations, work_per_iteration);
  stage.split(loop, loop, iteration, static_cast<int>(per_task), Halide::TailStrategy::GuardWithIf);
  stage.parallel(loop);
  return tasks_description(per_task);
}

void stage_on_stack(Halide::Func& staged, int lanes) {
  const Halide::Var x = staged.args()[0];
  staged.store_in(Halide::MemoryType::Stack)
      .align_storage(x, lanes)
      .vectorize(x, lanes, Halide::TailStrategy::GuardWithIf);
}

}  // namespace aotc::gen
