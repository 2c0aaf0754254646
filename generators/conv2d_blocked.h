// A dense 2-D convolution (groups 1, any kernel, stride and dilation) that
// writes the channel-blocked layout NCHWc (depthwise_conv_blocked.h): output
// [N, O/B, OH, OW, B], from an input in NCHW ([N, C, H, W]) or NCHWc
// ([N, C/B, H, W, B]) that the caller has already padded (pad.h), so that no
// tap ever reads outside it:
//
//   out[n, o, y, x] = bias[o] + sum_{c,ky,kx} in[n, c, y*sy + ky*dy, x*sx + kx*dx] * w[o, c, ky, kx],
//
// then the epilogue. It is pointwise_conv_blocked's register tile with taps:
// one vector holds one output pixel of B channels, a tile of a few pixels
// along a row times one or two channel blocks accumulates over (c, kx, ky),
// each input value broadcast to a block's vector, so a strided convolution
// costs no more per output than a stride-1 one (NCHW's width vectors
// straddle the skipped columns).
//
// Kernel inputs: (input, packed weights [O/B, C/Bi, KH, KW, Bi, B] with Bi = B
// for an NCHWc input and 1 for NCHW, bias [O] if has_bias, epilogue operands:
// affine's [O] vectors, add/mul operands of the whole output in NCHWc);
// output [N, O/B, OH, OW, B].
#pragma once

#include "generators/conv2d.h"

namespace aotc::gen {

struct BlockedConvSpec {
  // groups 1 and no padding: conv.input_shape is the padded input's logical
  // [N, C, H, W]. Epilogue operands: add and mul only of the output's whole
  // logical shape [N, O, OH, OW], no prelu.
  Conv2dSpec conv;
  int block = 16;              // B (channel_block(target))
  bool input_blocked = false;  // the input in NCHWc (C a multiple of B) rather than NCHW
};

// Whether the kernel handles `spec`: groups 1, no padding, out channels (and
// a blocked input's channels) a multiple of the block, operands of the
// output's whole shape.
bool blocked_conv_fits(const BlockedConvSpec& spec);

// PyTorch's weight [O, C, KH, KW] as [O/B, C/Bi, KH, KW, Bi, B].
PackedWeights pack_blocked_conv_weights(const BlockedConvSpec& spec, const float* oihw);

Kernel conv2d_blocked(const BlockedConvSpec& spec, const Halide::Target& target);

// The schedule conv2d_blocked() uses, as a cost model sees it: family
// "direct-nchwc"; its lanes are always full, a row's last pixel tile may not be.
ScheduleShape conv2d_blocked_schedule_shape(const BlockedConvSpec& spec, const Halide::Target& target);

}  // namespace aotc::gen
