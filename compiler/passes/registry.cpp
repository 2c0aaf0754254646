// The one list of passes. Its order is the default pipeline's order:
//  - infer-shapes first: every other pass relies on shapes;
//  - simplify and fold-constants before cse, so that equal subgraphs look equal;
//  - quantize-ops before fold-constants, which would fold the quantized weights'
//    dequantize nodes into float constants;
//  - fold-batch-norm before fold-pad and fuse-epilogues, since it needs the bare
//    conv -> batch_norm pattern;
//  - fuse-epilogues last: it hides elementwise nodes inside their producers.
// dce is listed once here and run by the pipeline after every pass.
#include "passes/pass.h"
#include "passes/infer_shapes.h"
#include "passes/eliminate_dead_code.h"
#include "passes/simplify_algebra.h"
#include "passes/quantize_ops.h"
#include "passes/fold_constants.h"
#include "passes/eliminate_common_subexpressions.h"
#include "passes/fold_batch_norm.h"
#include "passes/fold_pad.h"
#include "passes/fuse_epilogues.h"

namespace aotc {

const std::vector<PassInfo>& pass_registry() {
  static const std::vector<PassInfo> kPasses = {
      {"infer-shapes", "Computes every node's output shapes from its inputs and attributes; rejects inconsistent models.", infer_shapes},
      {"dce", "Removes nodes whose outputs are never used and compacts unused tensors (also runs after every pass).", eliminate_dead_code},
      {"simplify", "Algebraic simplification: identities (dropout, x*1, x+0, identity reshapes), relu(relu(x)), reshape of reshape, transpose of transpose, data-preserving transposes as reshapes, flatten before linear.", simplify_algebra},
      {"quantize-ops", "Turns dequantize -> conv2d/linear (-> relu/clamp) -> quantize into integer qconv2d, and quantized reshapes, flattens and max pools into integer ones.", quantize_ops},
      {"fold-constants", "Evaluates nodes whose inputs are all constants at compile time.", fold_constants},
      {"cse", "Merges identical constants and identical nodes (same op, attributes and inputs).", eliminate_common_subexpressions},
      {"fold-batch-norm", "Folds batch_norm, and per-channel mul/add/affine by constants, into the preceding conv2d/linear; other batch_norms become per-channel affine ops.", fold_batch_norm},
      {"fold-pad", "Folds constant pad nodes into the padding of the following conv2d or pooling.", fold_pad},
      {"fuse-epilogues", "Fuses activations and per-channel/elementwise ops into the epilogue of their producer (conv+bias+act, residual add into the later producer, elementwise chains).", fuse_epilogues},
  };
  return kPasses;
}

}  // namespace aotc
