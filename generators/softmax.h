// Softmax along one axis (any rank), numerically stable:
//   out = exp(x - max) / sum(exp(x - max)), max and sum along the axis;
// then an optional fused epilogue.
// Kernel inputs: (x, epilogue operands...); output: x's shape.
// Schedule: the max and the sum of one vector of independent rows are
// computed right before that vector's outputs (no intermediate beyond a few
// vectors); parallel over the outermost other dim. For a GPU target: with
// many rows across the innermost dim, a thread per row (warps across rows,
// max and sum in registers); else a block per row, whose threads reduce
// interleaved slices of it in shared memory.
#pragma once

#include "generators/kernel.h"

namespace aotc::gen {

struct SoftmaxSpec {
  Shape shape;
  int axis = 1;  // non-negative
  std::vector<PostOpSpec> epilogue;
};

Kernel softmax(const SoftmaxSpec& spec, const Halide::Target& target);

}  // namespace aotc::gen
