#include "generators/elementwise.h"

#include "generators/epilogue.h"

namespace aotc::gen {
namespace {

// The op as the post-op that computes it on x (kCopy: none), and the number of
// operands it takes.
std::vector<PostOpSpec> op_as_post_op(const ElementwiseSpec& s, size_t& operands) {
  using Kind = ElementwiseSpec::Kind;
  PostOpSpec p;
  operands = 1;
  switch (s.kind) {
    case Kind::kCopy: return {};
    case Kind::kRelu: p.kind = PostOpSpec::Kind::kRelu; break;
    case Kind::kClamp:
      p.kind = PostOpSpec::Kind::kClamp;
      p.min = s.min;
      p.max = s.max;
      break;
    case Kind::kHardSwish: p.kind = PostOpSpec::Kind::kHardSwish; break;
    case Kind::kSigmoid: p.kind = PostOpSpec::Kind::kSigmoid; break;
    case Kind::kTanh: p.kind = PostOpSpec::Kind::kTanh; break;
    case Kind::kElu:
      p.kind = PostOpSpec::Kind::kElu;
      p.alpha = s.alpha;
      break;
    case Kind::kSoftplus: p.kind = PostOpSpec::Kind::kSoftplus; break;
    case Kind::kAffine:
      p.kind = PostOpSpec::Kind::kAffine;
      operands = 3;
      break;
    case Kind::kAdd:
    case Kind::kMul:
    case Kind::kPRelu:
    case Kind::kMax:
    case Kind::kMin:
    case Kind::kDiv:
      p.kind = s.kind == Kind::kAdd    ? PostOpSpec::Kind::kAdd
               : s.kind == Kind::kMul  ? PostOpSpec::Kind::kMul
               : s.kind == Kind::kMax  ? PostOpSpec::Kind::kMax
               : s.kind == Kind::kMin  ? PostOpSpec::Kind::kMin
               : s.kind == Kind::kDiv  ? PostOpSpec::Kind::kDiv
                                       : PostOpSpec::Kind::kPRelu;
      operands = 2;
      if (s.input_shapes.size() == 2) p.operand_shape = s.input_shapes[1];
      break;
  }
  return {p};
}

}  // namespace

Kernel elementwise(const ElementwiseSpec& spec, const Halide::Target& target) {
  size_t operands = 0;
  std::vector<PostOpSpec> ops = op_as_post_op(spec, operands);
  const Shape& out_shape = spec.output_shape;
  require(spec.input_shapes.size() == operands, "elementwise: expected " + std::to_string(operands) + " operands");
  require(!out_shape.empty() && out_shape.size() <= kMaxRank, "elementwise: output rank must be 1..6, got " + to_string(out_shape));
  require_broadcastable(spec.input_shapes[0], out_shape, "elementwise: input");
  if (spec.kind == ElementwiseSpec::Kind::kAffine)
    require(out_shape.size() >= 2 && spec.input_shapes[1] == Shape{out_shape[1]} &&
                spec.input_shapes[2] == Shape{out_shape[1]},
            "elementwise: affine takes scale and shift of shape [C]");
  ops.insert(ops.end(), spec.epilogue.begin(), spec.epilogue.end());
  require(spec.element_type == Halide::Float(32) || ops.empty(), "elementwise: only a plain copy moves non-float elements");

  Kernel kernel;
  Halide::ImageParam x = dense_input("input", spec.input_shapes[0], spec.element_type);
  kernel.inputs = {x};

  /* algorithm */
  std::vector<Halide::Var> vars = make_vars(out_shape.size());
  const std::vector<Halide::Expr> nchw = outermost_first(vars);
  Halide::Func output("elementwise");
  output(vars) = apply_epilogue(broadcast_read(x, spec.input_shapes[0], nchw), ops, nchw, out_shape, kernel.inputs);
  constrain_output(output, out_shape);

  /* schedule */
  kernel.schedule =
      "elementwise" + epilogue_suffix(ops) + ": " + schedule_pointwise(output, out_shape, true, target, spec.aligned);
  kernel.output = output;
  return kernel;
}

}  // namespace aotc::gen
