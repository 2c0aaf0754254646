// Integer 2-D convolution (dense, grouped, depthwise) of quantized tensors, NCHW in and out,
// the semantics of the IR's qconv2d (docs/int8.md, ONNX Runtime's QLinearConv):
//
//   acc[n,o,y,x] = bias[o] + sum_{c,ky,kx} (in[n, g*Cg + c, y*sy - pt + ky*dy, x*sx - pl + kx*dx] - in_zero)
//                                          * w[o, c, ky, kx]          in int32, exactly
//   out = clamp(round_half_to_even(float(acc) * multiplier[o]) + out_zero, min, max)
//
// or, with spec.fixed_point, TFLite's requantization (reference_integer_ops::ConvPerChannel):
//
//   out = clamp(MultiplyByQuantizedMultiplier(acc, multiplier[o], shift[o]) + out_zero, min, max)
//
// reading the input's zero point outside it; `w` has its zero points subtracted already
// (pack_qconv2d_weights). Kernel inputs: (input [N,C,H,W] int8/uint8, packed weights,
// bias [O] int32, multipliers [O] float32, or with spec.fixed_point [O, 3] int32 from
// pack_fixed_point_multipliers); output [N,O,OH,OW] of out_type.
// Schedules:
// - dense (groups 1): a register tile of a few output pixels x one or two blocks of 16
//   output channels; each step broadcasts one pixel's pair of input channels (int16, zero
//   point subtracted, staged per tile and chunk of channels) against the block's weight
//   pairs, each pair of products summed into an int32 lane (pmaddwd on x86: twice the
//   multiply-adds of a float FMA per instruction). Weights [O/16, C/2, KH, KW, 16, 2].
// - dense with spec.vnni: the same tile, each step broadcasting 4 input channels of a pixel
//   as uint8 (int8 inputs + 128) against int8 weight quads, vpdpbusd summing the 4 products
//   into each int32 lane (64 multiply-adds per instruction). Its input is not the NCHW tensor
//   but its quads (qconv2d_quads_shape, written by qconv2d_quads()). The input's zero point is not
//   subtracted (padding holds it): zero point x the weights' sum per output channel (a fifth
//   input, qconv2d_weight_sums) is subtracted from the bias. Weights
//   [O/16, C/4, KH, KW, 16, 4].
// - grouped and depthwise: output rows vectorised (int32 accumulators, as many lanes as
//   float32), a register tile of a few output channels accumulating over (c, ky, kx).
//   Weights [O, C/groups, KH, KW].
// Tiles in parallel tasks.
#pragma once

#include <array>

#include "generators/kernel.h"

namespace aotc::gen {

struct QConv2dSpec {
  Shape input_shape;                   // [N, C, H, W]
  Halide::Type input_type = Halide::UInt(8);
  int64_t in_zero = 0;
  int64_t out_channels = 0;            // O
  std::array<int, 2> kernel{1, 1};     // KH, KW
  std::array<int, 2> stride{1, 1};
  std::array<int, 4> pad{0, 0, 0, 0};  // top, left, bottom, right
  std::array<int, 2> dilation{1, 1};
  int groups = 1;
  Halide::Type weight_type = Halide::Int(8);  // of the packed weights: Int(8), or Int(32) when zero points were subtracted
  Halide::Type out_type = Halide::UInt(8);
  int64_t out_zero = 0;
  int64_t min = 0, max = 255;  // saturation bounds, within out_type
  // Dense only: uint8 x int8 dot products of 4 input channels (AVX512-VNNI vpdpbusd) rather
  // than int16 pairs; needs Int(8) weights (every zero point 0). qconv2d_uses_vnni() says
  // when a target has them.
  bool vnni = false;
  // TFLite's fixed-point requantization rather than ONNX Runtime's float multiplier.
  bool fixed_point = false;
};

// spec.fixed_point: the multipliers input [O, 3] of TFLite's per-channel (multiplier, shift)
// pairs (QuantizeMultiplier: multiplier in [2^30, 2^31) or 0, shift in [-31, 30]). Packed
// weights hold integers exactly below 2^24 only, so each multiplier travels as its high and
// low 16 bits: (multiplier >> 16, multiplier & 0xffff, shift).
PackedWeights pack_fixed_point_multipliers(const std::vector<int32_t>& multipliers, const std::vector<int>& shifts);

// spec.vnni: the convolution reads its input as uint8 quads of channels (int8 inputs + 128),
// padded: [N, H + pad top + bottom, C/4 (rounded up), W + pad left + right, 4], which
// qconv2d_quads() writes from the NCHW input (kernel input: the input; output: the quads).
Shape qconv2d_quads_shape(const QConv2dSpec& spec);
Kernel qconv2d_quads(const QConv2dSpec& spec, const Halide::Target& target);

// Whether `spec` (vnni aside) can take VNNI dot products on `target`.
bool qconv2d_uses_vnni(const QConv2dSpec& spec, const Halide::Target& target);

// [N, O, OH, OW]; throws std::invalid_argument for an inconsistent spec.
Shape qconv2d_output_shape(const QConv2dSpec& spec);

// PyTorch's weight layout [O, C/groups, KH, KW] minus each output channel's zero point, in
// the schedule's layout (above) of spec.weight_type (Int(8) when every zero point is 0, else
// Int(32)); channels past O and C in the dense layout are zeros.
PackedWeights pack_qconv2d_weights(const QConv2dSpec& spec, const float* oihw, const std::vector<int64_t>& zero_points);

// spec.vnni: the fifth input, [O] int32: the sum of output channel o's weights (int8, zero
// points 0; at most 32767 taps keep it below 2^24).
PackedWeights qconv2d_weight_sums(const QConv2dSpec& spec, const float* oihw);

Kernel qconv2d(const QConv2dSpec& spec, const Halide::Target& target);

}  // namespace aotc::gen
