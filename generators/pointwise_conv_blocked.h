// A 1x1 convolution (stride 1, no padding, groups 1) that writes the
// channel-blocked layout NCHWc (depthwise_conv_blocked.h): output [N, O/B, P,
// B] over P = H*W pixels, from an input in NCHW ([N, C, P]) or NCHWc ([N, C/B,
// P, B]):
//
//   out[n, o, p] = bias[o] + sum_c in[n, c, p] * w[o, c],   then the epilogue.
//
// Kernel inputs: (input, packed weights [O/B, C, B], bias [O] if has_bias,
// epilogue operands...: affine's [O] vectors, add/mul operands of the whole
// output in NCHWc [N, O/B, P, B]); output [N, O/B, P, B].
//
// Schedule: one vector holds one pixel of B output channels (where
// pointwise_conv's vectors hold pixels), so the output is stored as whole
// vectors of NCHWc; a register tile of a few pixels times a few channel blocks
// accumulates over c, each input value broadcast to a block's vector.
#pragma once

#include "generators/kernel.h"

namespace aotc::gen {

struct BlockedPointwiseSpec {
  int64_t batch = 1, in_channels = 0, pixels = 0, out_channels = 0;  // N, C, P, O
  int block = 16;              // B (channel_block(target))
  bool input_blocked = false;  // the input in NCHWc (C a multiple of B) rather than NCHW
  bool has_bias = false;
  // Post-ops: add and mul only with an operand of the output's shape [N, O, P],
  // no prelu.
  std::vector<PostOpSpec> epilogue;
};

// Whether the kernel handles `spec`: out channels (and a blocked input's
// channels) a multiple of the block, operands of the output's whole shape.
bool blocked_pointwise_fits(const BlockedPointwiseSpec& spec);

// PyTorch's weight [O, C] (of [O, C, 1, 1]) as [O/B, C, B].
PackedWeights pack_blocked_pointwise_weights(const BlockedPointwiseSpec& spec, const float* oc);

Kernel pointwise_conv_blocked(const BlockedPointwiseSpec& spec, const Halide::Target& target);

// The schedule pointwise_conv_blocked() uses, as a cost model sees it: family
// "pointwise-nchwc" ("pointwise-nchw-to-nchwc" reading an NCHW input); its
// lanes are always full, its last pixel tile may not be.
ScheduleShape pointwise_conv_blocked_schedule_shape(const BlockedPointwiseSpec& spec, const Halide::Target& target);

}  // namespace aotc::gen
