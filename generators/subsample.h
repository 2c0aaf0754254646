// Every stride-th pixel of an NCHW tensor: out[n][c][y][x] = in[n][c][y*sy][x*sx].
// A strided 1x1 convolution (ResNet's downsampling shortcut) reads only these
// pixels, so it runs as this copy and then a matrix product over dense pixels
// (pointwise_conv.h), instead of a direct convolution whose vectors straddle
// the skipped columns.
// Kernel inputs: (x); output: [N, C, ceil(H/sy), ceil(W/sx)].
// Schedule: schedule_pointwise (kernel.h); for a GPU target a thread per float4 (4
// elements) or per element.
#pragma once

#include <array>

#include "generators/kernel.h"

namespace aotc::gen {

struct SubsampleSpec {
  Shape input_shape;                // [N, C, H, W]
  std::array<int, 2> stride{1, 1};  // (y, x), each >= 1
};

Shape subsample_output_shape(const SubsampleSpec& spec);

Kernel subsample(const SubsampleSpec& spec, const Halide::Target& target);

}  // namespace aotc::gen
