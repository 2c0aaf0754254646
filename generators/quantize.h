// Conversions between float32 and quantized int8/uint8 tensors, any rank 1..6, with ONNX's
// or TFLite's semantics (docs/int8.md), per tensor or per channel along `axis`:
//   quantize:   q = saturate(round(x / scale[c]) + zero_point[c])   (x / scale in float32,
//               as ONNX Runtime and TFLite; ties to even, or away from zero with
//               ties_away_from_zero as TFLite's QUANTIZE; NaN gives the zero point)
//   dequantize: x = float(q - zero_point[c]) * scale[c]
// The scales and zero points are compiled into the kernel. Kernel inputs: (x); output of the
// same shape. Schedule: schedule_pointwise (kernel.h).
#pragma once

#include "generators/kernel.h"

namespace aotc::gen {

struct QuantizeSpec {
  enum class Kind { kQuantize, kDequantize };
  Kind kind = Kind::kQuantize;
  Shape shape;
  Halide::Type integer_type = Halide::UInt(8);  // Int(8) or UInt(8)
  std::vector<float> scale;
  std::vector<int64_t> zero_point;
  int axis = -1;  // -1: one scale and zero point; else one per index of this dim (outermost first)
  bool ties_away_from_zero = false;
};

Kernel quantize(const QuantizeSpec& spec, const Halide::Target& target);

}  // namespace aotc::gen
