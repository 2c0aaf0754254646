// The reference evaluator: naive, obviously-correct loops for every op and
// post-op of the IR, accumulating in double. It runs any graph, before or after
// passes; it is the oracle that proves passes preserve meaning and (later) the
// differential check for generated code. Speed is not a goal.
#pragma once

#include <vector>

#include "ir/graph.h"

namespace aotc {

struct Value {
  Shape shape;
  std::vector<float> data;  // row-major, num_elements(shape) floats
};

// Evaluates the graph on `inputs` (one per graph input, in order, shapes must
// match) and returns one Value per graph output, in order.
// Throws UserError(kInvalidModel) on a count or shape mismatch.
std::vector<Value> evaluate(const Graph& g, const std::vector<Value>& inputs);

// Evaluates one node (including its epilogue) on explicit input values, one per
// node input. Used by constant folding.
std::vector<Value> evaluate_node(const Graph& g, const Node& node,
                                 const std::vector<const Value*>& inputs);

// The quantize op on one value: saturate(round(x / scale) + zero_point) to `dtype`, with
// x / scale in float32, ties to even (ONNX QuantizeLinear, as ONNX Runtime computes it) or
// away from zero (TFLite's QUANTIZE); NaN gives the zero point.
int64_t quantize_value(float x, DType dtype, float scale, int64_t zero_point, Arithmetic arithmetic = Arithmetic::kOnnx);

// qconv2d's requantization multiplier of output channel `o` (graph.h, QConv2dAttrs), as ONNX
// Runtime computes it: float32(float32(x_scale * w_scale[o]) / y_scale). The evaluator and the
// kernels use this one definition.
float requantization_multiplier(const Quantization& x, const Quantization& w, const Quantization& y, int64_t o);

// qglobal_avg_pool's requantization multiplier (graph.h) for a plane of `count` values, as
// ONNX Runtime computes it: float32(x_scale / float32(y_scale * float32(count))).
float global_avg_pool_multiplier(const Quantization& x, const Quantization& y, int64_t count);

// qadd's float32 constants (graph.h, QAddAttrs), as ONNX Runtime's QLinearAdd computes them
// on x86 (on uint8: int8 values and zero points shifted by `shift` = 128, as its QDQ
// transformer converts int8 activations): r_a = a_scale / y_scale, r_b = b_scale / y_scale,
// offset = y_zp - fma(r_a, a_zp, r_b * b_zp).
struct QAddConstants {
  float a_ratio = 0, b_ratio = 0, offset = 0;
  int shift = 0;
};
QAddConstants qadd_constants(const Quantization& a, const Quantization& b, const Quantization& y, DType dtype);
// qadd of one pair of integers before saturation: round_half_to_even(fma(a + shift, r_a,
// fma(b + shift, r_b, offset))) - shift, the fused multiply-adds exact.
int64_t qadd_value(int64_t a, int64_t b, const QAddConstants& k);
// Whether the kernels' form of qadd_value, in double (Halide 14 has no fma: (a + shift) * r_a
// is exact in double, so each fma is one double add rounded to float32 when that add is
// exact), equals it for every pair of values; quantize-ops makes qadd only then.
bool qadd_exact_in_double(const QAddConstants& k);

// TFLite's fixed-point multiplier (quantization_util.cc, QuantizeMultiplier): real ~=
// multiplier * 2^(shift - 31), multiplier in [2^30, 2^31) (0 for a real below 2^-32).
struct FixedPointMultiplier {
  int32_t multiplier = 0;
  int shift = 0;
};
FixedPointMultiplier quantize_multiplier(double real);
// qconv2d's fixed-point multiplier of output channel `o` with TFLite's arithmetic:
// QuantizeMultiplier(double(x_scale) * double(w_scale[o]) / double(y_scale)), as TFLite's
// PopulateConvolutionQuantizationParams computes it.
FixedPointMultiplier tflite_requantization_multiplier(const Quantization& x, const Quantization& w,
                                                      const Quantization& y, int64_t o);
// TFLite's MultiplyByQuantizedMultiplier (kernels/internal/common.h, double rounding):
// RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(acc * 2^max(shift, 0), multiplier),
// max(-shift, 0)); the left shift wraps in int32.
int32_t multiply_by_quantized_multiplier(int32_t acc, FixedPointMultiplier m);

// qadd with TFLite's arithmetic (kernels/add.cc, reference_integer_ops::AddElementwise): each
// input plus its offset (minus its zero point), shifted left by 20, times its multiplier; the
// sum times the output's, plus the output's zero point. The multipliers as add.cc's Prepare
// computes them: twice = 2 * max(a_scale, b_scale); a: a_scale / twice, b: b_scale / twice,
// output: twice / (2^20 * y_scale), each QuantizeMultiplier'd in double.
struct TfliteAddParameters {
  static constexpr int kLeftShift = 20;
  FixedPointMultiplier a, b, out;
  int32_t a_offset = 0, b_offset = 0, out_offset = 0;
};
TfliteAddParameters tflite_add_parameters(const Quantization& a, const Quantization& b, const Quantization& y);
// One output before saturation.
int64_t tflite_add_value(int64_t a, int64_t b, const TfliteAddParameters& p);

}  // namespace aotc
