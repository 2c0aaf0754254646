// A depthwise convolution (groups = in channels = out channels) in the
// channel-blocked layout NCHWc: a tensor [N, C, H, W] is stored as
// [N, C/B, H, W, B], B channels innermost, B = the target's float lanes (16
// with AVX-512), so one vector holds one pixel of B channels. A strided
// convolution then reads whole vectors at every tap, where NCHW needs strided
// loads that deinterleave (ONNX Runtime's MLAS runs MobileNetV2's stride-2
// depthwise convs this way, in 0.77-0.83 of the time conv2d's NCHW schedule
// takes in the model).
//
//   out[n, c, y, x] = bias[c] + sum_{ky,kx} in[n, c, y*sy + ky*dy - top, x*sx + kx*dx - left]
//                                         * w[c, 0, ky, kx],   then the epilogue.
//
// Kernel inputs: (input [N, C/B, H, W, B], packed weights [C/B, KH, KW, B],
// bias [C] if has_bias, affine operands [C]...); output [N, C/B, OH, OW, B].
// The conversions from and to NCHW are transposes of views (layout.h).
#pragma once

#include <array>

#include "generators/kernel.h"

namespace aotc::gen {

struct BlockedDepthwiseSpec {
  Shape input_shape;  // logical [N, C, H, W]
  int block = 16;     // B: channels per block (channel_block(target))
  std::array<int, 2> kernel{3, 3}, stride{1, 1}, dilation{1, 1};
  std::array<int, 4> pad{0, 0, 0, 0};  // top, left, bottom, right
  bool has_bias = false;
  // Post-ops without tensor operands, and affine (read by channel).
  std::vector<PostOpSpec> epilogue;
};

// The channel block of `target`'s NCHWc layout: one native float vector.
int channel_block(const Halide::Target& target);

// [N, C, H, W] stored as NCHWc: [N, C/block, H, W, block]. Requires C % block == 0.
Shape blocked_shape(const Shape& nchw, int block);

// Whether the kernel handles `spec` (channels a multiple of the block, strides
// up to kMaxStagedLoadStride, an epilogue it can apply by channel).
bool blocked_depthwise_fits(const BlockedDepthwiseSpec& spec);

// The logical output shape [N, C, OH, OW].
Shape blocked_depthwise_output_shape(const BlockedDepthwiseSpec& spec);

// PyTorch's weight [C, 1, KH, KW] as [C/B, KH, KW, B].
PackedWeights pack_blocked_depthwise_weights(const BlockedDepthwiseSpec& spec, const float* weights);

Kernel depthwise_conv_blocked(const BlockedDepthwiseSpec& spec, const Halide::Target& target);

}  // namespace aotc::gen
