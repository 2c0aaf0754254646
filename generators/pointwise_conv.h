// A 1x1 convolution (stride 1, no padding, groups 1) as a register-blocked
// GEMM over flattened pixels: with NCHW, the input [N, C, H, W] is the matrix
// [N, C, P] (P = H*W, dense), and
//
//   out[n, o, p] = bias[o] + sum_c in[n, c, p] * w[o, c],   then the epilogue.
//
// Kernel inputs: (input [N, C, P], packed weights, bias [O] if has_bias,
// epilogue operands shaped against [N, O, P]...); output [N, O, P]. The
// lowering passes the 4-D tensors as these 3-D views (the bytes are the same).
//
// Schedule: a register tile of a few vectors of pixels times one packed block
// of output channels accumulates over c, so each input vector loaded serves the
// block's channels and each weight broadcast serves the tile's pixels. Unlike
// conv2d's vectorise-width tiles, tiles never straddle a row end (no lanes lost
// to 56-, 28- or 55-wide rows) and hold more accumulators. Used where
// use_pointwise_conv() says: measured on this machine against conv2d's tiles
// (one thread, two): 13x13 and larger maps gain 0-30%, SqueezeNet's classifier
// (1000 channels, which conv2d's vectorise-channels tiles cannot take) 30%,
// while 7x7 maps run twice as fast with conv2d's vectorise-channels tiles.
#pragma once

#include "generators/kernel.h"

namespace aotc::gen {

struct PointwiseConvSpec {
  int64_t batch = 1, in_channels = 0, pixels = 0, out_channels = 0;  // N, C, P, O
  // Distinct weight matrices S, batch n multiplying by matrix n % S: 1 for a
  // convolution; 36 for the batched GEMMs of a Winograd convolution (one per
  // point of the 6x6 transformed tile, winograd_conv.h).
  int64_t weight_sets = 1;
  bool has_bias = false;
  std::vector<PostOpSpec> epilogue;  // operand shapes broadcast to [N, O, P]
};

// Whether a 1x1 conv (stride 1, no padding, groups 1) of `pixels` pixels and
// `out_channels` channels should run as a pointwise_conv rather than a conv2d.
bool use_pointwise_conv(int64_t pixels, int64_t out_channels);

// PyTorch's weight [O, C] (of [O, C, 1, 1]) as blocks [O/B, C, B] of B output
// channels, B = 8 on targets with 32 vector registers, 4 with 16 (or O's largest
// divisor below that). With S weight sets, `oc` holds S such matrices and the
// result is [S, O/B, C, B].
PackedWeights pack_pointwise_conv_weights(const PointwiseConvSpec& spec, const Halide::Target& target, const float* oc);

Kernel pointwise_conv(const PointwiseConvSpec& spec, const Halide::Target& target);

// The schedule pointwise_conv() picks for `spec` on `target`, as a cost model sees it.
ScheduleShape pointwise_conv_schedule_shape(const PointwiseConvSpec& spec, const Halide::Target& target);

}  // namespace aotc::gen
