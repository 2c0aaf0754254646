#include "generators/epilogue.h"

namespace aotc::gen {
namespace {

// tanh from Halide's inlined exp (Halide::tanh calls libm's tanhf, one scalar
// call per element, and C programs linking a model would need -lm):
// sign(v) * (1 - e) / (1 + e) with e = exp(-2|v|) in [0, 1], no overflow; near 0,
// where 1 - e cancels, the Taylor series (its next term is below 2e-9 relative
// for |v| < 0.125).
Halide::Expr tanh_expr(const Halide::Expr& v) {
  const Halide::Expr a = Halide::abs(v), v2 = v * v;
  const Halide::Expr e = Halide::exp(-2.0f * a);
  const Halide::Expr large = Halide::select(v < 0.0f, -1.0f, 1.0f) * ((1.0f - e) / (1.0f + e));
  const Halide::Expr small = v * (1.0f + v2 * (-1.0f / 3 + v2 * (2.0f / 15 + v2 * (-17.0f / 315))));
  return Halide::select(a < 0.125f, small, large);
}

// exp(v) - 1 for v <= 0 (elu's negative side): near 0, where the subtraction
// cancels, the Taylor series (its next term is below 1e-9 relative for |v| < 0.125).
Halide::Expr expm1_expr(const Halide::Expr& v) {
  const Halide::Expr small = v * (1.0f + v * (1.0f / 2 + v * (1.0f / 6 + v * (1.0f / 24 + v * (1.0f / 120 + v / 720)))));
  return Halide::select(v > -0.125f, small, Halide::exp(v) - 1.0f);
}

// log(1 + exp(v)) = max(v, 0) + log1p(z), z = exp(-|v|) in (0, 1], without the
// cancellation of log(1 + z) for small z: log1p(z) = 2 atanh(s), s = z / (2 + z)
// in (0, 1/3], whose odd series to s^15 is within 2e-9 relative.
Halide::Expr softplus_expr(const Halide::Expr& v) {
  const Halide::Expr z = Halide::exp(-Halide::abs(v));
  const Halide::Expr s = z / (2.0f + z), w = s * s;
  const Halide::Expr series =
      1.0f + w * (1.0f / 3 + w * (1.0f / 5 + w * (1.0f / 7 + w * (1.0f / 9 + w * (1.0f / 11 + w * (1.0f / 13 + w / 15))))));
  return Halide::max(v, 0.0f) + 2.0f * s * series;
}

// relu and clamp give NaN for NaN, as PyTorch's do. Halide compiles floats
// with fast-math flags, under which float compares and x86's max/min drop a
// NaN, so the NaN test looks at the bits (integer ops have no such flags).
// (strict_float around the operand would do too, but crashes Halide 14 on
// some operands, e.g. the selects of tanh.)
Halide::Expr is_nan_bits(const Halide::Expr& v) {
  return (Halide::reinterpret<int32_t>(v) & 0x7fffffff) > 0x7f800000;
}

Halide::Expr relu_expr(const Halide::Expr& v) {
  const Halide::Expr negative = Halide::reinterpret<int32_t>(v) < 0 && !is_nan_bits(v);  // -0 included
  return Halide::select(negative, 0.0f, v);
}

// min(max(v, lo), hi), as PyTorch and the reference evaluator define it: with
// lo > hi every value becomes hi. (Halide::clamp is undefined there and gave lo;
// simplify-algebra folds relu -> clamp{max < 0} into such a clamp. Found by
// aotc-fuzz on arm-64-linux.)
Halide::Expr clamp_expr(const Halide::Expr& v, float lo, float hi) {
  return Halide::select(is_nan_bits(v), v, Halide::min(Halide::max(v, lo), hi));
}

const char* post_op_name(PostOpSpec::Kind kind) {
  switch (kind) {
    case PostOpSpec::Kind::kRelu: return "relu";
    case PostOpSpec::Kind::kClamp: return "clamp";
    case PostOpSpec::Kind::kHardSwish: return "hardswish";
    case PostOpSpec::Kind::kSigmoid: return "sigmoid";
    case PostOpSpec::Kind::kTanh: return "tanh";
    case PostOpSpec::Kind::kAffine: return "affine";
    case PostOpSpec::Kind::kAdd: return "add";
    case PostOpSpec::Kind::kMul: return "mul";
    case PostOpSpec::Kind::kPRelu: return "prelu";
    case PostOpSpec::Kind::kElu: return "elu";
    case PostOpSpec::Kind::kSoftplus: return "softplus";
    case PostOpSpec::Kind::kMax: return "max";
    case PostOpSpec::Kind::kMin: return "min";
    case PostOpSpec::Kind::kDiv: return "div";
  }
  return "?";
}

}  // namespace

size_t add_epilogue_operands(const std::vector<PostOpSpec>& epilogue, const Shape& output_shape,
                             std::vector<Halide::ImageParam>& params, size_t first_post_op) {
  const size_t first = params.size();
  for (size_t i = 0; i < epilogue.size(); ++i) {
    const PostOpSpec& p = epilogue[i];
    const std::string name = "post" + std::to_string(first_post_op + i) + "_" + post_op_name(p.kind);
    switch (p.kind) {
      case PostOpSpec::Kind::kAffine:
        require(output_shape.size() >= 2, name + ": the output has no channel dim");
        params.push_back(dense_input(name + "_scale", {output_shape[1]}));
        params.push_back(dense_input(name + "_shift", {output_shape[1]}));
        break;
      case PostOpSpec::Kind::kAdd:
      case PostOpSpec::Kind::kMul:
      case PostOpSpec::Kind::kPRelu:
      case PostOpSpec::Kind::kMax:
      case PostOpSpec::Kind::kMin:
      case PostOpSpec::Kind::kDiv:
        require_broadcastable(p.operand_shape, output_shape, name + " operand");
        params.push_back(dense_input(name, p.operand_shape));
        break;
      default: break;
    }
  }
  return first;
}

Halide::Expr epilogue_expr(Halide::Expr value, const std::vector<PostOpSpec>& epilogue,
                           const std::vector<Halide::Expr>& nchw, const std::vector<Halide::ImageParam>& params,
                           size_t first_operand) {
  size_t next = first_operand;
  for (const PostOpSpec& p : epilogue) {
    switch (p.kind) {
      case PostOpSpec::Kind::kRelu: value = relu_expr(value); break;
      case PostOpSpec::Kind::kClamp: value = clamp_expr(value, p.min, p.max); break;
      case PostOpSpec::Kind::kHardSwish: value = value * Halide::clamp(value + 3.0f, 0.0f, 6.0f) / 6.0f; break;
      case PostOpSpec::Kind::kSigmoid: value = 1.0f / (1.0f + Halide::exp(-value)); break;
      case PostOpSpec::Kind::kTanh: value = tanh_expr(value); break;
      case PostOpSpec::Kind::kElu: value = Halide::select(value > 0.0f, value, p.alpha * expm1_expr(value)); break;
      case PostOpSpec::Kind::kSoftplus: value = softplus_expr(value); break;
      case PostOpSpec::Kind::kAffine:
        value = value * params[next](nchw[1]) + params[next + 1](nchw[1]);
        next += 2;
        break;
      case PostOpSpec::Kind::kAdd:
      case PostOpSpec::Kind::kMul: {
        const Halide::Expr operand = broadcast_read(params[next++], p.operand_shape, nchw);
        value = p.kind == PostOpSpec::Kind::kAdd ? value + operand : value * operand;
        break;
      }
      case PostOpSpec::Kind::kPRelu: {
        const Halide::Expr alpha = broadcast_read(params[next++], p.operand_shape, nchw);
        value = Halide::select(value >= 0.0f, value, value * alpha);
        break;
      }
      case PostOpSpec::Kind::kMax:
      case PostOpSpec::Kind::kMin: {
        const Halide::Expr operand = broadcast_read(params[next++], p.operand_shape, nchw);
        const Halide::Expr chosen = p.kind == PostOpSpec::Kind::kMax ? Halide::max(value, operand) : Halide::min(value, operand);
        value = Halide::select(is_nan_bits(value), value, Halide::select(is_nan_bits(operand), operand, chosen));
        break;
      }
      case PostOpSpec::Kind::kDiv: value = value / broadcast_read(params[next++], p.operand_shape, nchw); break;
    }
  }
  return value;
}

Halide::Expr apply_epilogue(Halide::Expr value, const std::vector<PostOpSpec>& epilogue,
                            const std::vector<Halide::Expr>& nchw, const Shape& output_shape,
                            std::vector<Halide::ImageParam>& params, size_t first_post_op) {
  require(nchw.size() == output_shape.size(), "epilogue: coordinates do not match the output rank");
  const size_t first = add_epilogue_operands(epilogue, output_shape, params, first_post_op);
  return epilogue_expr(std::move(value), epilogue, nchw, params, first);
}

Halide::Expr apply_blocked_epilogue(Halide::Expr value, const std::vector<PostOpSpec>& epilogue,
                                    const std::vector<Halide::Expr>& blocked, const Shape& blocked_shape,
                                    const std::vector<Halide::Expr>& nchw, const Shape& logical_shape,
                                    std::vector<Halide::ImageParam>& params) {
  for (size_t i = 0; i < epilogue.size(); ++i) {
    const PostOpSpec& post = epilogue[i];
    if (post.kind == PostOpSpec::Kind::kAdd || post.kind == PostOpSpec::Kind::kMul) {
      PostOpSpec in_blocks = post;
      in_blocks.operand_shape = blocked_shape;
      value = apply_epilogue(value, {in_blocks}, blocked, blocked_shape, params, i);
    } else {
      value = apply_epilogue(value, {post}, nchw, logical_shape, params, i);
    }
  }
  return value;
}

std::string epilogue_suffix(const std::vector<PostOpSpec>& epilogue) {
  std::string s;
  for (const PostOpSpec& p : epilogue) s += std::string("+") + post_op_name(p.kind);
  return s;
}

}  // namespace aotc::gen
