// Fully connected layer with a fused epilogue:
//   out[n, m] = bias[m] + sum_k x[n, k] * w[m, k], then the epilogue.
// Kernel inputs: (x [N, K] (callers flatten), packed weights, bias [M] if
// has_bias, epilogue operands...); output [N, M].
// Schedule: vectors over output features, the weights streamed once per
// batch tile, parallel over feature tiles. For a GPU target: one kernel, a
// block per 16 features, k split among its threads (partial sums in
// registers, added in shared memory), then the bias and the epilogue.
#pragma once

#include "generators/kernel.h"

namespace aotc::gen {

struct LinearSpec {
  int64_t batch = 1;         // N
  int64_t in_features = 0;   // K
  int64_t out_features = 0;  // M
  bool has_bias = false;
  std::vector<PostOpSpec> epilogue;
};

// Rearranges PyTorch's weight [M, K] into blocks of B consecutive output
// features, [M/B, K, B], so that a vector of B weights for one k is one load.
// B depends on M only (never on the target).
PackedWeights pack_linear_weights(const LinearSpec& spec, const float* mk);

Kernel linear(const LinearSpec& spec, const Halide::Target& target);

}  // namespace aotc::gen
