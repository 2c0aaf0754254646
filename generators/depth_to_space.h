// depth_to_space of an NCHW tensor in TensorFlow's DCR order, then an
// optional fused epilogue:
//   y[n, c, h*b + i, w*b + j] = x[n, (i*b + j) * C/(b*b) + c, h, w].
// Kernel inputs: (x [N,C,H,W], epilogue operands...); output [N,C/b^2,H*b,W*b].
//
// Schedule: each output row reads b input planes; its columns are computed in
// b unrolled phases of dense vectors (one input row each) whose strided
// stores Halide merges into dense ones. Parallel over the rows of all planes.
// For a GPU target: a thread per output value, warps along output rows.
#pragma once

#include "generators/kernel.h"

namespace aotc::gen {

struct DepthToSpaceSpec {
  Shape input_shape;  // [N, C, H, W]
  int block = 2;      // b
  std::vector<PostOpSpec> epilogue;
};

Shape depth_to_space_output_shape(const DepthToSpaceSpec& spec);

Kernel depth_to_space(const DepthToSpaceSpec& spec, const Halide::Target& target);

}  // namespace aotc::gen
