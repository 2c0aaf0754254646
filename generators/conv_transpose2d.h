// Transposed 2-D convolution (groups = 1) with a fused epilogue, NCHW in and
// out, PyTorch's weight layout [C, O, KH, KW]:
//
//   full[n,o,Y,X] = sum_{c,ky,kx: Y = iy*sy + ky, X = ix*sx + kx} in[n,c,iy,ix] * w[c,o,ky,kx]
//   out[n,o,y,x]  = bias[o] + full[n,o,y + pad_top,x + pad_left]
//
// ((H-1)*sy + KH rows before cropping pad_top and pad_bottom; likewise
// columns), then the epilogue.
// Kernel inputs: (input [N,C,H,W], packed weights, bias [O] if has_bias,
// epilogue operands...); output [N,O,OH,OW].
//
// Algorithm: in phases. Output column x = qx*sx + px receives the kernel
// columns kx = (px + pad_left) % sx + jx*sx from input columns
// qx + (px + pad_left) / sx - jx, jx = 0, 1, ... (likewise rows): for each of
// the sx*sy phases an ordinary correlation with a ceil(K/s)-tap kernel.
// Schedule: a register tile of vectors along qx times all phases times a few
// output channels accumulates over (c, jy, jx); the phases are unrolled, so
// the reads are dense vectors and the strided stores of the phases merge into
// dense ones. Input padding is read through bounds checks that Halide moves
// out of the interior tiles. For a GPU target: a thread computes 8 output
// channels of one pixel in registers, blocks of 32-128 pixels.
#pragma once

#include <array>

#include "generators/kernel.h"

namespace aotc::gen {

struct ConvTranspose2dSpec {
  Shape input_shape;                   // [N, C, H, W]
  int64_t out_channels = 0;            // O
  std::array<int, 2> kernel{1, 1};     // KH, KW
  std::array<int, 2> stride{1, 1};     // sy, sx
  std::array<int, 4> pad{0, 0, 0, 0};  // top, left, bottom, right: cropped from the full output
  bool has_bias = false;
  std::vector<PostOpSpec> epilogue;
};

// [N, O, OH, OW]; throws std::invalid_argument for an inconsistent spec.
Shape conv_transpose2d_output_shape(const ConvTranspose2dSpec& spec);

// Rearranges the weight [C, O, KH, KW] into [C, KH', KW', O] with the kernel
// zero-extended to KH' = ceil(KH/sy)*sy rows and KW' = ceil(KW/sx)*sx columns,
// so that every phase has the same number of taps.
PackedWeights pack_conv_transpose2d_weights(const ConvTranspose2dSpec& spec, const float* weight);

Kernel conv_transpose2d(const ConvTranspose2dSpec& spec, const Halide::Target& target);

}  // namespace aotc::gen
