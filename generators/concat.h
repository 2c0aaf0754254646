// Concatenation of N inputs along an axis (any rank), with an optional fused
// epilogue. Each input is copied into its slice of the output by its own
// update of the output Func (no select between inputs, so each copy is a
// plain vectorised loop that reads only its own input).
// Kernel inputs: (the N inputs, epilogue operands...); output: the inputs'
// shape with the axis extents summed.
#pragma once

#include "generators/kernel.h"

namespace aotc::gen {

struct ConcatSpec {
  int axis = 1;  // non-negative
  std::vector<Shape> input_shapes;
  std::vector<PostOpSpec> epilogue;
};

Shape concat_output_shape(const ConcatSpec& spec);

Kernel concat(const ConcatSpec& spec, const Halide::Target& target);

}  // namespace aotc::gen
