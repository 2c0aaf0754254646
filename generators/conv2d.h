// 2-D convolution (dense, grouped, depthwise) with a fused epilogue, NCHW in and
// out, PyTorch semantics with asymmetric padding:
//
//   out[n,o,y,x] = bias[o] + sum_{c,ky,kx} in[n, g*Cg + c, y*sy - pt + ky*dy, x*sx - pl + kx*dx]
//                                         * w[o, c, ky, kx],   g = o / (O/groups), Cg = C/groups
//
// reading zeros outside the input, then the epilogue.
// Kernel inputs: (input [N,C,H,W], packed weights, bias [O] if has_bias,
// epilogue operands...); output [N,O,OH,OW].
//
// Schedules, chosen from the shapes (see conv2d.cpp for the knobs):
//  - vectorise width: output rows are vectors; a register tile of a few vectors
//    along the row times a few output channels accumulates over (c, ky, kx).
//  - vectorise channels: for rows narrower than a vector (late, deep layers),
//    the vectors run over 16 output channels and the tile over a row's pixels.
//  - depthwise (groups == C): per channel, vectors along the row times a few rows.
// Padding is materialised per output row into a small buffer on the stack
// (never a heap allocation) only when some window reaches outside the input.
#pragma once

#include <array>

#include "generators/kernel.h"

namespace aotc::gen {

struct Conv2dSpec {
  Shape input_shape;                   // [N, C, H, W]
  int64_t out_channels = 0;            // O
  std::array<int, 2> kernel{1, 1};     // KH, KW
  std::array<int, 2> stride{1, 1};     // sy, sx
  std::array<int, 4> pad{0, 0, 0, 0};  // top, left, bottom, right
  std::array<int, 2> dilation{1, 1};   // dy, dx
  int groups = 1;
  bool has_bias = false;
  std::vector<PostOpSpec> epilogue;
};

// [N, O, OH, OW]; throws std::invalid_argument for an inconsistent spec.
Shape conv2d_output_shape(const Conv2dSpec& spec);

// Rearranges PyTorch's weight [O, C/groups, KH, KW] into the kernel's layout:
// blocks of B consecutive output channels, [O/B, C/groups, KH, KW, B], so the
// B weights a register tile needs for one (c, ky, kx) are adjacent. B depends
// on the spec only, never on the target: one packed blob serves every target.
PackedWeights pack_conv2d_weights(const Conv2dSpec& spec, const float* oihw);

Kernel conv2d(const Conv2dSpec& spec, const Halide::Target& target);

// The schedule conv2d() picks for `spec` on `target`, as a cost model sees it:
// family "vectorize-width", "vectorize-channels" or "depthwise".
ScheduleShape conv2d_schedule_shape(const Conv2dSpec& spec, const Halide::Target& target);

}  // namespace aotc::gen
