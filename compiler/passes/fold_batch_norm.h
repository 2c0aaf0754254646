// fold-batch-norm: Folds batch_norm into the conv2d or linear that produces its input:
//   W' = W * gamma / sqrt(var + eps),  b' = (b - mean) * gamma / sqrt(var + eps) + beta
// (conv without bias, grouped and depthwise conv, BN without affine). The fold is
// skipped when the producer's output has another user or is a graph output, or
// the producer is not a conv/linear (e.g. concat, relu): such a batch_norm is
// rewritten as affine(x, scale, shift). Needs shapes; BN statistics must be constants.
#pragma once

#include "passes/pass.h"

namespace aotc {

[[nodiscard]] Graph fold_batch_norm(Graph g, PassCounters& counters);

}  // namespace aotc
