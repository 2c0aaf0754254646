// quantize-ops: Turns the quantize/dequantize patterns of quantized models (ONNX's QDQ form)
// into integer ops, the way ONNX Runtime's QDQ transformer fuses them:
//
//   quantize(conv2d|linear(dequantize(x), dequantize(w), dequantize(b)?) [-> relu|clamp])
//     -> qconv2d(x, w, b?) with the relu or clamp folded into its saturation bounds
//        (a linear: a 1x1 qconv2d between reshapes, which cost nothing)
//   quantize(add(dequantize(a), dequantize(b)) [-> relu|clamp])
//     -> qadd(a, b) (ONNX Runtime's QLinearAdd, or TFLite's ADD with its arithmetic), the relu
//        or clamp folded into its bounds, where a, b and the output have one integer type and
//        one shape (and, with ONNX's arithmetic, its kernel is exact: qadd_exact_in_double)
//   quantize(global_avg_pool(dequantize(x)))  -> qglobal_avg_pool(x) (ONNX's arithmetic, x and
//     the output of one integer type),
//   quantize(reshape|flatten|dropout|max_pool2d(dequantize(x)))  -> the op on x itself,
//   quantize(dequantize(x))                                      -> x,
// where the quantize's scale and zero point equal x's (these ops commute with a
// dequantization of unchanged parameters: exact); and, where none of these applies,
//   quantize(f(dequantize(x))), f a chain of one-operand elementwise float ops or none
//     -> qlookup(x), a 256-entry table the reference evaluator computes from those nodes.
//
// Needs x quantized per tensor, w an integer constant (per tensor or per output channel)
// and b an i32 constant whose scale is x_scale * w_scale (docs/int8.md); the intermediate
// float tensors read by nothing else. The integer ops change the arithmetic from float
// sums of dequantized values to exact integer sums requantized once (QConv2dAttrs):
// within one quantization step of the float graph, as in ONNX Runtime. Everything left
// between a dequantize and a quantize runs in float (a "float island", listed by the
// report). Runs before fold-constants, which would fold the weights' dequantize nodes.
// Counters: qconv2d, qlinear, qadd, qglobal_avg_pool, qlookup, integer.<op>, quantize_dequantize.
#pragma once

#include "passes/pass.h"

namespace aotc {

[[nodiscard]] Graph quantize_ops(Graph g, PassCounters& counters);

}  // namespace aotc
