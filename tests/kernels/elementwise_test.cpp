// Standalone elementwise kernels against the reference evaluator: every unary
// op, affine, add, mul and prelu with broadcasting of either operand, ranks 1
// to 6, shapes smaller than a vector, and an epilogue after the op.
#include <gtest/gtest.h>

#include <cmath>

#include "generators/elementwise.h"
#include "kernel_test_support.h"

namespace aotc::kernel_test {
namespace {

struct ElementwiseCase {
  std::string name;
  OpKind op;
  std::vector<Shape> inputs;  // the op's operands (affine: just x; its [C] operands are added)
  std::vector<PostOpCase> epilogue = {};
  float min = 0, max = 0;  // clamp
  size_t nan_every = 0;    // when set, every nan_every-th element of the first operand is NaN
  float alpha = 1;         // elu
};

void PrintTo(const ElementwiseCase& c, std::ostream* os) { *os << c.name; }

gen::ElementwiseSpec::Kind kind_of(OpKind op) {
  switch (op) {
    case OpKind::Relu: return gen::ElementwiseSpec::Kind::kRelu;
    case OpKind::Clamp: return gen::ElementwiseSpec::Kind::kClamp;
    case OpKind::HardSwish: return gen::ElementwiseSpec::Kind::kHardSwish;
    case OpKind::Sigmoid: return gen::ElementwiseSpec::Kind::kSigmoid;
    case OpKind::Tanh: return gen::ElementwiseSpec::Kind::kTanh;
    case OpKind::Elu: return gen::ElementwiseSpec::Kind::kElu;
    case OpKind::Softplus: return gen::ElementwiseSpec::Kind::kSoftplus;
    case OpKind::PRelu: return gen::ElementwiseSpec::Kind::kPRelu;
    case OpKind::Affine: return gen::ElementwiseSpec::Kind::kAffine;
    case OpKind::Add: return gen::ElementwiseSpec::Kind::kAdd;
    case OpKind::Mul: return gen::ElementwiseSpec::Kind::kMul;
    case OpKind::Max: return gen::ElementwiseSpec::Kind::kMax;
    case OpKind::Min: return gen::ElementwiseSpec::Kind::kMin;
    case OpKind::Div: return gen::ElementwiseSpec::Kind::kDiv;
    default: return gen::ElementwiseSpec::Kind::kCopy;  // Dropout: the identity
  }
}

class ElementwiseKernel : public ::testing::TestWithParam<ElementwiseCase> {};

TEST_P(ElementwiseKernel, MatchesReference) {
  const ElementwiseCase& c = GetParam();
  Attrs attrs = NoAttrs{};
  if (c.op == OpKind::Clamp) attrs = ClampAttrs{c.min, c.max};
  if (c.op == OpKind::Elu) attrs = EluAttrs{c.alpha};
  NodeUnderTest node(c.op, attrs, 17);
  std::vector<Shape> operands = c.inputs;
  if (c.op == OpKind::Affine) operands = {c.inputs[0], {c.inputs[0][1]}, {c.inputs[0][1]}};
  for (const Shape& s : operands) node.add_operand(s);
  node.add_post_ops(c.epilogue);
  if (c.nan_every) sprinkle_nans(node.value(0), 1, c.nan_every);

  gen::ElementwiseSpec spec;
  spec.kind = kind_of(c.op);
  spec.min = c.min;
  spec.max = c.max;
  spec.alpha = c.alpha;
  spec.input_shapes = operands;
  spec.output_shape = node.output_shape();
  spec.epilogue = node.epilogue_specs();
  const Halide::Target target = host_target();
  gen::Kernel kernel = gen::elementwise(spec, target);
  std::vector<const Value*> inputs;
  for (size_t i = 0; i < kernel.inputs.size(); ++i) inputs.push_back(&node.value(i));
  SCOPED_TRACE(kernel.schedule);
  expect_matches(node.reference(), run_kernel(kernel, inputs, spec.output_shape, target));
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(Unary, ElementwiseKernel, ::testing::Values(
    ElementwiseCase{"relu_4d", OpKind::Relu, {{1, 16, 56, 56}}},
    ElementwiseCase{"clamp_relu6", OpKind::Clamp, {{2, 3, 7, 9}}, {}, 0.0f, 6.0f},
    ElementwiseCase{"clamp_negative_range", OpKind::Clamp, {{37}}, {}, -0.5f, -0.1f},
    ElementwiseCase{"hardswish_rank3", OpKind::HardSwish, {{3, 5, 11}}},
    ElementwiseCase{"sigmoid_se_gate", OpKind::Sigmoid, {{1, 24, 1, 1}}},
    ElementwiseCase{"tanh_4d_tail", OpKind::Tanh, {{1, 5, 7, 9}}},
    ElementwiseCase{"tanh_rank1_short_relu", OpKind::Tanh, {{5}}, {relu()}},
    ElementwiseCase{"elu_4d_tail", OpKind::Elu, {{1, 5, 7, 9}}},
    ElementwiseCase{"elu_alpha_softplus", OpKind::Elu, {{3, 37}}, {softplus()}, 0, 0, 0, 0.35f},
    ElementwiseCase{"softplus_rank5_elu", OpKind::Softplus, {{2, 3, 1, 5, 7}}, {elu(-1.5f)}},
    ElementwiseCase{"copy_rank6", OpKind::Dropout, {{2, 3, 1, 4, 5, 3}}},
    ElementwiseCase{"copy_rank1_short", OpKind::Dropout, {{3}}},
    // NaN stays NaN through relu and clamp (PyTorch), also as fused post-ops.
    ElementwiseCase{"relu_keeps_nan", OpKind::Relu, {{1, 3, 5, 7}}, {}, 0, 0, 3},
    ElementwiseCase{"clamp_keeps_nan", OpKind::Clamp, {{41}}, {clamp(-0.5f, 0.5f)}, -0.25f, 0.75f, 4},
    ElementwiseCase{"add_relu_keeps_nan", OpKind::Add, {{1, 4, 6, 6}, {1, 4, 1, 1}}, {relu()}, 0, 0, 5}
), [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(Binary, ElementwiseKernel, ::testing::Values(
    ElementwiseCase{"affine_bn_relu", OpKind::Affine, {{1, 12, 14, 14}}, {relu()}},
    ElementwiseCase{"affine_rank2", OpKind::Affine, {{4, 10}}},
    ElementwiseCase{"affine_rank5", OpKind::Affine, {{1, 3, 2, 5, 7}}},
    ElementwiseCase{"add_same_shape_relu", OpKind::Add, {{1, 8, 28, 28}, {1, 8, 28, 28}}, {relu()}},
    ElementwiseCase{"add_channel_bias", OpKind::Add, {{2, 6, 5, 9}, {1, 6, 1, 1}}},
    ElementwiseCase{"add_first_broadcast", OpKind::Add, {{6, 1, 1}, {2, 6, 5, 9}}},
    ElementwiseCase{"mul_both_broadcast", OpKind::Mul, {{2, 1, 4, 9}, {1, 5, 1, 9}}},
    ElementwiseCase{"mul_se_scale", OpKind::Mul, {{1, 16, 10, 10}, {1, 16, 1, 1}}, {hardswish()}},
    ElementwiseCase{"mul_rank1_by_scalar", OpKind::Mul, {{100}, {1}}},
    ElementwiseCase{"prelu_per_channel", OpKind::PRelu, {{1, 16, 12, 12}, {16, 1, 1}}},
    ElementwiseCase{"prelu_nchw_alpha_odd", OpKind::PRelu, {{2, 5, 3, 7}, {1, 5, 1, 1}}, {add({2, 5, 3, 7})}},
    ElementwiseCase{"prelu_full_alpha", OpKind::PRelu, {{3, 4, 19}, {3, 4, 19}}},
    ElementwiseCase{"prelu_scalar_alpha", OpKind::PRelu, {{37}, {1}}},
    ElementwiseCase{"max_channel_broadcast", OpKind::Max, {{2, 6, 5, 9}, {1, 6, 1, 1}}},
    ElementwiseCase{"min_first_broadcast_relu", OpKind::Min, {{6, 1, 1}, {2, 6, 5, 9}}, {relu()}},
    ElementwiseCase{"max_keeps_nan", OpKind::Max, {{1, 4, 6, 6}, {1, 4, 6, 6}}, {}, 0, 0, 3},
    ElementwiseCase{"min_keeps_nan_of_scalar", OpKind::Min, {{37}, {1}}, {}, 0, 0, 2},
    ElementwiseCase{"div_both_broadcast_tanh", OpKind::Div, {{2, 1, 4, 9}, {1, 5, 1, 9}}, {tanh()}},
    ElementwiseCase{"add_rank6_broadcast", OpKind::Add, {{2, 1, 3, 1, 4, 5}, {3, 2, 4, 1}}, {sigmoid(), mul({5})}}
), [](const auto& info) { return info.param.name; });
// clang-format on

// Random inputs in [-1, 1) never reach saturated tails, tiny values or the
// cancellations near 0: `kind` over its whole range, within 1e-6 relative of
// `exact` (float has ~6e-8).
void expect_accurate(gen::ElementwiseSpec::Kind kind, const char* name, double (*exact)(double)) {
  const Value x{{14}, {-100.0f, -30.0f, -9.0f, -2.5f, -0.2f, -1e-3f, -1e-7f, 0.0f, 3e-6f, 0.124f, 0.75f, 15.0f, 40.0f, 88.0f}};
  gen::ElementwiseSpec spec;
  spec.kind = kind;
  spec.alpha = 1;
  spec.input_shapes = {x.shape};
  spec.output_shape = x.shape;
  gen::Kernel kernel = gen::elementwise(spec, host_target());
  const KernelRun run = run_kernel(kernel, {&x}, x.shape, host_target());
  ASSERT_EQ(run.output.size(), x.data.size());
  for (size_t i = 0; i < x.data.size(); ++i) {
    const double expected = exact(static_cast<double>(x.data[i]));
    EXPECT_NEAR(run.output[i], expected, 1e-6 * std::fabs(expected) + 1e-30) << name << "(" << x.data[i] << ")";
  }
}

TEST(ElementwiseKernel, TanhOverItsWholeRange) {
  expect_accurate(gen::ElementwiseSpec::Kind::kTanh, "tanh", [](double v) { return std::tanh(v); });
}

TEST(ElementwiseKernel, EluOverItsWholeRange) {
  expect_accurate(gen::ElementwiseSpec::Kind::kElu, "elu", [](double v) { return v > 0 ? v : std::expm1(v); });
}

TEST(ElementwiseKernel, SoftplusOverItsWholeRange) {
  expect_accurate(gen::ElementwiseSpec::Kind::kSoftplus, "softplus",
                  [](double v) { return std::log1p(std::exp(v)); });
}

}  // namespace
}  // namespace aotc::kernel_test
