// Integer addition of two quantized tensors of one shape and one type (int8 or uint8), the
// semantics of the IR's qadd (docs/int8.md, ONNX Runtime's QLinearAdd):
//
//   out = clamp(round_half_to_even(fma(a + shift, a_ratio, fma(b + shift, b_ratio, offset))) - shift,
//               min, max)
//
// (shift 128 for int8: computed on uint8, as ONNX Runtime does), or with spec.fixed_point
// TFLite's integer ADD (reference_integer_ops::AddElementwise):
//
//   out = clamp(MBQM(MBQM((a + offsets[0]) << 20, a's) + MBQM((b + offsets[1]) << 20, b's),
//                    output's) + offsets[2], min, max)
//
// with MBQM multiply_by_quantized_multiplier (kernel.h) and (multiplier, shift) pairs.
// Halide 14 has no fused multiply-add, so each fma is computed in double (a * a_ratio is
// exact there) and rounded to float32: equal to the fma wherever the double add is exact,
// which the compiler checks for every input pair before it makes a qadd
// (qadd_exact_in_double). The constants are compiled in. Kernel inputs: (a, b); output of
// the same shape. Schedule: schedule_pointwise (kernel.h).
#pragma once

#include <array>

#include "generators/kernel.h"

namespace aotc::gen {

struct QAddSpec {
  Shape shape;
  Halide::Type type = Halide::UInt(8);  // of a, b and the output: Int(8) or UInt(8)
  float a_ratio = 0, b_ratio = 0, offset = 0;
  int shift = 0;
  bool fixed_point = false;
  std::array<int32_t, 3> multipliers{};  // a, b, output
  std::array<int, 3> shifts{};
  std::array<int32_t, 3> offsets{};      // -a_zero_point, -b_zero_point, y_zero_point
  int64_t min = 0, max = 255;  // saturation bounds, within type
};

Kernel qadd(const QAddSpec& spec, const Halide::Target& target);

}  // namespace aotc::gen
