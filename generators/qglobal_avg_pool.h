// Integer global average pooling of a quantized NCHW tensor, the semantics of the IR's
// qglobal_avg_pool (docs/int8.md, ONNX Runtime's QLinearGlobalAveragePool):
//
//   acc[n,c] = sum_{h,w} (in[n,c,h,w] - in_zero)                      in int32, exactly
//   out[n,c] = saturate(round_half_to_even(float(acc) * multiplier) + out_zero)
//
// Kernel inputs: (input [N,C,H,W] int8/uint8); output [N,C,1,1] of the same type. Schedule:
// channels vectorised, the plane summed in int32 lanes.
#pragma once

#include "generators/kernel.h"

namespace aotc::gen {

struct QGlobalAvgPoolSpec {
  Shape input_shape;  // [N, C, H, W]
  Halide::Type type = Halide::UInt(8);
  int64_t in_zero = 0, out_zero = 0;
  float multiplier = 0;
};

Kernel qglobal_avg_pool(const QGlobalAvgPoolSpec& spec, const Halide::Target& target);

}  // namespace aotc::gen
