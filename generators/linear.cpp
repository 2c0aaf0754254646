#include "generators/linear.h"

#include <algorithm>

#include "generators/epilogue.h"

namespace aotc::gen {
namespace {

using Halide::Func;
using Halide::Var;

// Largest packed block of output features (four AVX-512 vectors).
constexpr int64_t kMaxBlock = 64;
// Output features per register tile: independent accumulator chains hide the
// FMA latency (the loop over k is one chain per vector).
constexpr int64_t kTileFeatures = 64;
// Batch rows per register tile; each weight vector loaded serves them all.
constexpr int64_t kTileRows = 4;

// GPU: output features per block (16 consecutive: whole 32-byte sectors of a
// packed weight row); at most this many slices of k per block; threads
// wanted (an H100 holds 270K resident: enough loads in flight to stream the
// weights); the fewest k steps a thread sums; steps unrolled.
constexpr int kGpuFeatures = 16;
constexpr int kGpuMaxSlices = 32;
constexpr int64_t kGpuWantedThreads = 128 * 1024;
constexpr int64_t kGpuMinSteps = 16;
constexpr int kGpuUnrolledSteps = 4;

void require_valid(const LinearSpec& s) {
  require(s.batch >= 1 && s.in_features >= 1 && s.out_features >= 1, "linear: batch and feature counts must be positive");
}

// Output features per packed block: the largest power of two (at most
// kMaxBlock) dividing M, else M's largest divisor up to 16 (odd M).
int64_t block_size(const LinearSpec& s) {
  int64_t block = 1;
  while (block * 2 <= kMaxBlock && s.out_features % (block * 2) == 0) block *= 2;
  return block >= 4 ? block : largest_divisor_at_most(s.out_features, 16);
}

// One kernel, a block per 16 output features (times up to kTileRows batch
// rows): with batch 1 a thread per output and the whole of k would be few
// threads in long serial loops, so k is cut in slices (rfactor): each of
// 16 x slices threads sums every slices-th k of one feature in registers
// (threads along m: coalesced weight reads; the batch rows share each
// weight load) into shared memory; then 16 threads add the slices, the bias
// and the epilogue. (Not two kernels: an intermediate in global memory is a
// device allocation per call, which a CUDA graph capture refuses.)
std::string schedule_gpu(Func& output, Func& acc, const Halide::RDom& k, const Var& m, const Var& n,
                         const LinearSpec& s) {
  const int tile_n = static_cast<int>(largest_divisor_at_most(s.batch, kTileRows));
  const int64_t blocks = (s.out_features + kGpuFeatures - 1) / kGpuFeatures * (s.batch / tile_n);
  int slices = 1;
  while (slices < kGpuMaxSlices && blocks * kGpuFeatures * slices < kGpuWantedThreads &&
         s.in_features / (slices * 2) >= kGpuMinSteps)
    slices *= 2;
  Halide::RVar kj("kj"), ks("ks"), kjo("kjo"), kji("kji");
  Var slice("slice"), mo("mo"), mi("mi"), no("no"), ni("ni");
  Func partial = acc.update().split(k.x, kj, ks, slices).rfactor(ks, slice);
  Func staged = partial.in();  // partial sums in registers, then stored once in shared memory
  output.split(m, mo, mi, kGpuFeatures, Halide::TailStrategy::GuardWithIf)
      .split(n, no, ni, tile_n)
      .reorder(ni, mi, mo, no)
      .gpu_blocks(mo, no)
      .gpu_threads(mi)
      .unroll(ni);
  acc.compute_at(output, mi).store_in(Halide::MemoryType::Register).unroll(n);
  acc.update().unroll(n);
  staged.compute_at(output, mo)
      .store_in(Halide::MemoryType::GPUShared)
      .reorder(n, m, slice)
      .gpu_threads(m, slice)
      .unroll(n);
  partial.compute_at(staged, m).store_in(Halide::MemoryType::Register).unroll(n);
  partial.update()
      .reorder(n, kj, m, slice)
      .split(kj, kjo, kji, kGpuUnrolledSteps, Halide::TailStrategy::GuardWithIf)
      .unroll(kji)
      .unroll(n);
  return std::to_string(kGpuFeatures) + " features x " + std::to_string(tile_n) + " rows per block, k in " +
         std::to_string(slices) + " slices summed by " + std::to_string(kGpuFeatures * slices) +
         " threads, then added in shared memory";
}

}  // namespace

PackedWeights pack_linear_weights(const LinearSpec& spec, const float* mk) {
  require_valid(spec);
  return pack_in_row_blocks(mk, spec.out_features, spec.in_features, block_size(spec));
}

Kernel linear(const LinearSpec& spec, const Halide::Target& target) {
  require_valid(spec);
  const int64_t block = block_size(spec);
  const Shape out_shape{spec.batch, spec.out_features};
  Kernel kernel;
  Halide::ImageParam x = dense_input("input", {spec.batch, spec.in_features});
  Halide::ImageParam weights = dense_input("weights", {spec.out_features / block, spec.in_features, block});
  kernel.inputs = {x, weights};
  if (spec.has_bias) kernel.inputs.push_back(dense_input("bias", {spec.out_features}));

  /* algorithm */
  Var m("m"), n("n");
  Func acc("acc"), output("linear");
  Halide::RDom k(0, static_cast<int>(spec.in_features), "k");
  const int b = static_cast<int>(block);
  acc(m, n) = spec.has_bias ? kernel.inputs[2](m) : Halide::Expr(0.0f);
  acc(m, n) += x(k, n) * weights(m % b, k, m / b);
  output(m, n) = apply_epilogue(acc(m, n), spec.epilogue, {n, m}, out_shape, kernel.inputs);
  constrain_output(output, out_shape);

  /* schedule */
  if (target.has_gpu_feature()) {
    kernel.output = output;
    kernel.schedule = "linear gpu: " + schedule_gpu(output, acc, k, m, n, spec) + ", weight block " +
                      std::to_string(block) +
                      (spec.epilogue.empty() ? "" : ", epilogue " + epilogue_suffix(spec.epilogue));
    return kernel;
  }
  const int lanes = static_cast<int>(largest_divisor_at_most(block, native_lanes(target)));
  const int tile_m = static_cast<int>(block * largest_divisor_at_most(spec.out_features / block, std::max<int64_t>(1, kTileFeatures / block)));
  const int tile_n = static_cast<int>(largest_divisor_at_most(spec.batch, kTileRows));
  Var mo("mo"), mi("mi"), no("no"), ni("ni"), tiles("tiles");
  output.split(m, mo, mi, tile_m).split(n, no, ni, tile_n).reorder(mi, ni, mo, no).fuse(mo, no, tiles).parallel(tiles);
  acc.compute_at(output, tiles);
  acc.update().reorder(m, n, k);
  if (lanes > 1) {
    output.vectorize(mi, lanes);
    acc.vectorize(m, lanes);
    acc.update().vectorize(m, lanes);
  }
  output.unroll(mi).unroll(ni);
  acc.unroll(m).unroll(n);
  acc.update().unroll(m).unroll(n);
  kernel.output = output;
  kernel.schedule = "linear: tile " + std::to_string(tile_m / lanes) + "x" + std::to_string(lanes) + " lanes (m) x " +
                    std::to_string(tile_n) + " rows, weight block " + std::to_string(block) + ", parallel(tiles)" +
                    (spec.epilogue.empty() ? "" : ", epilogue " + epilogue_suffix(spec.epilogue));
  return kernel;
}

}  // namespace aotc::gen
