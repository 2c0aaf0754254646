// A standalone elementwise node (one not fused into a producer), any rank 1..6:
// unary relu/clamp/hardswish/sigmoid/tanh/elu/softplus, a copy (reshape, flatten, dropout that
// could not alias), affine (x * scale[c] + shift[c], c = dim 1), or
// add/mul/prelu/max/min/div with both operands broadcast to the output shape (NumPy rules;
// prelu's alpha to x's shape); then the node's own epilogue. The op is applied as the first post-op of the epilogue
// (epilogue.h), so an op and the same post-op compute the same thing.
// Kernel inputs: (the op's operands, epilogue operands...); output output_shape.
// Schedule: schedule_pointwise (kernel.h); for a GPU target a thread per float4 (4
// elements) or per element.
#pragma once

#include "generators/kernel.h"

namespace aotc::gen {

struct ElementwiseSpec {
  enum class Kind { kCopy, kRelu, kClamp, kHardSwish, kSigmoid, kTanh, kElu, kSoftplus, kAffine, kAdd, kMul, kPRelu, kMax, kMin, kDiv };
  Kind kind = Kind::kCopy;
  float min = 0, max = 0;  // kClamp
  float alpha = 0;         // kElu
  // The op's operands: x (broadcast to output_shape); affine adds scale and
  // shift ([C] each), add, mul and prelu the second operand (prelu's alpha).
  std::vector<Shape> input_shapes;
  Shape output_shape;
  std::vector<PostOpSpec> epilogue;
  // Whether every buffer starts 16-byte aligned (a tensor of the arena does; a copy
  // into a concat's slice may not): a GPU schedule then moves float4s.
  bool aligned = true;
  // kCopy without an epilogue may move another element type (an integer tensor's reshape
  // that could not alias its input); every other kind is float32.
  Halide::Type element_type = Halide::Float(32);
};

Kernel elementwise(const ElementwiseSpec& spec, const Halide::Target& target);

}  // namespace aotc::gen
