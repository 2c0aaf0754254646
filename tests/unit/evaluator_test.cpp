// The reference evaluator on small cases whose results were worked out by hand
// (the arithmetic is in the comments); pooling edge cases were also checked
// against torch.nn.functional (PyTorch 1.13). Tolerance: 1e-6 absolute, the
// values being O(1)-O(100) sums of a few exactly representable terms.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>

#include "ir/shape_rules.h"
#include "reference/evaluator.h"
#include "support/error.h"

namespace aotc {
namespace {

constexpr float kTolerance = 1e-6f;

// A graph of one node `n` whose operands are graph inputs shaped like `args`,
// with `epilogue` post-ops whose operands (if any) follow as further inputs.
Graph one_node(OpKind op, Attrs attrs, const std::vector<Value>& args, const std::vector<PostOp>& epilogue = {},
               size_t epilogue_operands = 0) {
  Graph g;
  Node node{.name = "n", .op = op, .attrs = std::move(attrs)};
  for (size_t i = 0; i < args.size(); ++i) {
    TensorId id = g.add_tensor({.name = "in" + std::to_string(i), .shape = args[i].shape});
    g.inputs.push_back(id);
    node.inputs.push_back(id);
  }
  const size_t first_epilogue_operand = args.size() - epilogue_operands;
  node.inputs.resize(first_epilogue_operand);
  size_t next = first_epilogue_operand;
  for (const PostOp& p : epilogue) {
    const std::vector<TensorId> operands(g.inputs.begin() + static_cast<int64_t>(next),
                                         g.inputs.begin() + static_cast<int64_t>(next) + post_op_operand_count(p.kind));
    next += operands.size();
    node.append_post_op(p, operands);
  }
  node.outputs = {g.add_tensor({.name = "out"})};
  g.tensor(node.outputs[0]).shape = infer_node_shapes(g, node)[0];
  g.outputs = node.outputs;
  g.nodes.push_back(std::move(node));
  return g;
}

Value run(OpKind op, Attrs attrs, const std::vector<Value>& args) {
  return evaluate(one_node(op, std::move(attrs), args), args).at(0);
}

void expect_value(const Value& actual, const Shape& shape, const std::vector<float>& expected) {
  EXPECT_EQ(actual.shape, shape);
  ASSERT_EQ(actual.data.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(actual.data[i], expected[i], kTolerance) << "element " << i;
}

// 1, 2, ..., n
std::vector<float> iota(int n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<float>(i + 1);
  return v;
}

Conv2dAttrs conv(std::array<int, 2> stride, std::array<int, 4> pad, std::array<int, 2> dilation, int groups) {
  return {.stride = stride, .pad = pad, .dilation = dilation, .groups = groups};
}

Pool2dAttrs pool(std::array<int, 2> kernel, std::array<int, 2> stride, std::array<int, 4> pad, bool ceil_mode,
                 bool count_include_pad = true, std::array<int, 2> dilation = {1, 1}) {
  return {.kernel = kernel, .stride = stride, .pad = pad, .dilation = dilation, .ceil_mode = ceil_mode,
          .count_include_pad = count_include_pad};
}

const Value kRow5{{1, 1, 1, 5}, iota(5)};  // [1 2 3 4 5]

// ---- conv2d ------------------------------------------------------------------------

TEST(Evaluator, Conv2dSumsWindowsAndAddsBias) {
  // 3x3 input 1..9, 2x2 kernel of ones: 1+2+4+5, 2+3+5+6, 4+5+7+8, 5+6+8+9; plus bias 1.
  const Value x{{1, 1, 3, 3}, iota(9)}, w{{1, 1, 2, 2}, {1, 1, 1, 1}}, b{{1}, {1}};
  expect_value(run(OpKind::Conv2d, conv({1, 1}, {0, 0, 0, 0}, {1, 1}, 1), {x, w, b}), {1, 1, 2, 2}, {13, 17, 25, 29});
}

TEST(Evaluator, Conv2dZeroPadding) {
  // 2x2 input, 3x3 ones kernel, pad 1: every window covers the whole input: 1+2+3+4.
  const Value x{{1, 1, 2, 2}, iota(4)}, w{{1, 1, 3, 3}, std::vector<float>(9, 1)};
  expect_value(run(OpKind::Conv2d, conv({1, 1}, {1, 1, 1, 1}, {1, 1}, 1), {x, w}), {1, 1, 2, 2}, {10, 10, 10, 10});
}

TEST(Evaluator, Conv2dStrideAndAsymmetricPadding) {
  // Row [1 2 3 4], kernel [1 10], stride 2, pad left 1: windows [pad,1] and [2,3].
  const Value x{{1, 1, 1, 4}, iota(4)}, w{{1, 1, 1, 2}, {1, 10}};
  expect_value(run(OpKind::Conv2d, conv({1, 2}, {0, 1, 0, 0}, {1, 1}, 1), {x, w}), {1, 1, 1, 2}, {10, 32});
}

TEST(Evaluator, Conv2dDilation) {
  // Row [1..5], kernel [1 1] with dilation 2: x[i] + x[i+2].
  const Value w{{1, 1, 1, 2}, {1, 1}};
  expect_value(run(OpKind::Conv2d, conv({1, 1}, {0, 0, 0, 0}, {1, 2}, 1), {kRow5, w}), {1, 1, 1, 3}, {4, 6, 8});
}

TEST(Evaluator, Conv2dGroupsKeepChannelsApart) {
  // Channels [2, 3]; groups=2 with 1x1 weights [10, 100] -> [20, 300].
  const Value x{{1, 2, 1, 1}, {2, 3}}, w{{2, 1, 1, 1}, {10, 100}};
  expect_value(run(OpKind::Conv2d, conv({1, 1}, {0, 0, 0, 0}, {1, 1}, 2), {x, w}), {1, 2, 1, 1}, {20, 300});
  // groups=1 with weights [[1,10],[100,1000]] mixes them: 2+30, 200+3000.
  const Value w1{{2, 2, 1, 1}, {1, 10, 100, 1000}};
  expect_value(run(OpKind::Conv2d, conv({1, 1}, {0, 0, 0, 0}, {1, 1}, 1), {x, w1}), {1, 2, 1, 1}, {32, 3200});
  // 4 in, 2 out, groups=2: out0 = 1*x0 + 2*x1, out1 = 3*x2 + 4*x3 with x = [1,2,3,4] -> [5, 25].
  const Value x4{{1, 4, 1, 1}, iota(4)}, w4{{2, 2, 1, 1}, {1, 2, 3, 4}};
  expect_value(run(OpKind::Conv2d, conv({1, 1}, {0, 0, 0, 0}, {1, 1}, 2), {x4, w4}), {1, 2, 1, 1}, {5, 25});
}

// ---- normalisation and elementwise ----------------------------------------------

TEST(Evaluator, BatchNorm) {
  // x = [1, 5], mean 1, var [3, 15], eps 1: (x-mean)/sqrt(var+1) = [0/2, 4/4] = [0, 1].
  const Value x{{1, 2, 1, 1}, {1, 5}}, mean{{2}, {1, 1}}, var{{2}, {3, 15}};
  expect_value(run(OpKind::BatchNorm, BatchNormAttrs{1}, {x, mean, var}), {1, 2, 1, 1}, {0, 1});
  // gamma [2, 3], beta [1, -1]: [0*2+1, 1*3-1].
  const Value gamma{{2}, {2, 3}}, beta{{2}, {1, -1}};
  expect_value(run(OpKind::BatchNorm, BatchNormAttrs{1}, {x, mean, var, gamma, beta}), {1, 2, 1, 1}, {1, 2});
  // Rank 2 ([N, C], BatchNorm1d): channel is dim 1.
  const Value x2{{2, 2}, {1, 5, 3, 9}};
  expect_value(run(OpKind::BatchNorm, BatchNormAttrs{1}, {x2, mean, var}), {2, 2}, {0, 1, 1, 2});
}

TEST(Evaluator, Affine) {
  // [1, 2, 2]: channel 0 = [1, 2] * 2 + 0, channel 1 = [3, 4] * -1 + 1.
  const Value x{{1, 2, 2}, iota(4)}, scale{{2}, {2, -1}}, shift{{2}, {0, 1}};
  expect_value(run(OpKind::Affine, NoAttrs{}, {x, scale, shift}), {1, 2, 2}, {2, 4, -2, -3});
}

TEST(Evaluator, Activations) {
  const Value x{{4}, {-4, -1, 1, 4}};
  expect_value(run(OpKind::Relu, NoAttrs{}, {x}), {4}, {0, 0, 1, 4});
  expect_value(run(OpKind::Clamp, ClampAttrs{-2, 3}, {x}), {4}, {-2, -1, 1, 3});
  // v * clamp(v+3, 0, 6) / 6: -4*0/6, -1*2/6, 1*4/6, 4*6/6.
  expect_value(run(OpKind::HardSwish, NoAttrs{}, {x}), {4}, {0, -1.0f / 3, 2.0f / 3, 4});
  // sigmoid(0) = 1/2, sigmoid(ln 3) = 1/(1+1/3) = 3/4, sigmoid(-ln 3) = 1/4.
  const Value s{{3}, {0, std::log(3.0f), -std::log(3.0f)}};
  expect_value(run(OpKind::Sigmoid, NoAttrs{}, {s}), {3}, {0.5f, 0.75f, 0.25f});
  expect_value(run(OpKind::Dropout, NoAttrs{}, {x}), {4}, {-4, -1, 1, 4});
  // elu: alpha * (e^v - 1) below 0: 2 * (e^-ln 2 - 1) = -1, 2 * (e^-ln 4 - 1) = -1.5.
  const Value e{{4}, {-std::log(2.0f), -std::log(4.0f), 0, 3}};
  expect_value(run(OpKind::Elu, EluAttrs{2}, {e}), {4}, {-1, -1.5f, 0, 3});
  // softplus: log(1 + e^v): log 2 at 0, log 4 at ln 3, log(4/3) at -ln 3.
  expect_value(run(OpKind::Softplus, NoAttrs{}, {s}), {3}, {std::log(2.0f), std::log(4.0f), std::log(4.0f / 3)});
}

TEST(Evaluator, MaxMinDivBroadcast) {
  const Value a{{2, 2}, {-1, 5, 2, -7}}, b{{2}, {0, 4}};
  expect_value(run(OpKind::Max, NoAttrs{}, {a, b}), {2, 2}, {0, 5, 2, 4});
  expect_value(run(OpKind::Min, NoAttrs{}, {b, a}), {2, 2}, {-1, 4, 0, -7});
  expect_value(run(OpKind::Div, NoAttrs{}, {a, Value{{2, 1}, {2, -4}}}), {2, 2}, {-0.5f, 2.5f, -0.5f, 1.75f});
  // NaN in either operand gives NaN (torch.maximum), whatever the order.
  const Value n{{2}, {std::nanf(""), 1}}, m{{2}, {3, std::nanf("")}};
  for (OpKind op : {OpKind::Max, OpKind::Min}) {
    const Value y = run(op, NoAttrs{}, {n, m});
    EXPECT_TRUE(std::isnan(y.data[0]) && std::isnan(y.data[1])) << op_name(op);
  }
}

TEST(Evaluator, ReluAndClampPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(run(OpKind::Relu, NoAttrs{}, {Value{{1}, {nan}}}).data[0]));
  EXPECT_TRUE(std::isnan(run(OpKind::Clamp, ClampAttrs{0, 6}, {Value{{1}, {nan}}}).data[0]));
}

TEST(Evaluator, AddMulBroadcast) {
  // [2,1] op [3] -> [2,3]: rows a = [1, 2], columns b = [10, 20, 30].
  const Value a{{2, 1}, {1, 2}}, b{{3}, {10, 20, 30}};
  expect_value(run(OpKind::Add, NoAttrs{}, {a, b}), {2, 3}, {11, 21, 31, 12, 22, 32});
  expect_value(run(OpKind::Mul, NoAttrs{}, {a, b}), {2, 3}, {10, 20, 30, 20, 40, 60});
  // Per-channel [1,2,1,1] times [1,2,2,1]: channel c scaled by [3, 5].
  const Value x{{1, 2, 2, 1}, iota(4)}, c{{1, 2, 1, 1}, {3, 5}};
  expect_value(run(OpKind::Mul, NoAttrs{}, {x, c}), {1, 2, 2, 1}, {3, 6, 15, 20});
  // Scalar operand.
  expect_value(run(OpKind::Add, NoAttrs{}, {Value{{}, {0.5f}}, a}), {2, 1}, {1.5f, 2.5f});
}

// ---- pooling -------------------------------------------------------------------------

TEST(Evaluator, MaxPool) {
  // 4x4 of 1..16, 2x2 stride 2: the bottom-right of each block.
  const Value x{{1, 1, 4, 4}, iota(16)};
  expect_value(run(OpKind::MaxPool2d, pool({2, 2}, {2, 2}, {0, 0, 0, 0}, false), {x}), {1, 1, 2, 2}, {6, 8, 14, 16});
}

TEST(Evaluator, MaxPoolPaddingActsAsMinusInfinity) {
  // All-negative 2x2, 2x2 windows stride 1 pad 1: zero padding would give 0s (PyTorch: these values).
  const Value x{{1, 1, 2, 2}, {-1, -2, -3, -4}};
  expect_value(run(OpKind::MaxPool2d, pool({2, 2}, {1, 1}, {1, 1, 1, 1}, false), {x}), {1, 1, 3, 3},
               {-1, -1, -2, -1, -1, -2, -3, -3, -4});
}

TEST(Evaluator, MaxPoolDilationAndCeilMode) {
  // Row [1 5 2 4 3], 2 taps with dilation 2: max(x[i], x[i+2]) = [2, 5, 3].
  const Value x{{1, 1, 1, 5}, {1, 5, 2, 4, 3}};
  expect_value(run(OpKind::MaxPool2d, pool({1, 2}, {1, 1}, {0, 0, 0, 0}, false, true, {1, 2}), {x}), {1, 1, 1, 3},
               {2, 5, 3});
  // Kernel 2 stride 2 ceil mode: [1 5], [2 4], [3] (the last window hangs over the end).
  expect_value(run(OpKind::MaxPool2d, pool({1, 2}, {1, 2}, {0, 0, 0, 0}, true), {x}), {1, 1, 1, 3}, {5, 4, 3});
}

TEST(Evaluator, MaxPoolPropagatesNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Value x{{1, 1, 1, 4}, {1, nan, 3, 4}};
  const Value y = run(OpKind::MaxPool2d, pool({1, 2}, {1, 2}, {0, 0, 0, 0}, false), {x});
  EXPECT_TRUE(std::isnan(y.data[0]));
  EXPECT_EQ(y.data[1], 4);
}

TEST(Evaluator, AvgPoolCountIncludePadAndCeilMode) {
  // Row [1..5], kernel 3 stride 2 pad 1, ceil mode (PyTorch gives [1, 3, 3] and [1.5, 3, 4.5]):
  // windows [pad 1 2], [2 3 4], [4 5 pad].
  const Pool2dAttrs with_pad = pool({1, 3}, {1, 2}, {0, 1, 0, 1}, true, true);
  expect_value(run(OpKind::AvgPool2d, with_pad, {kRow5}), {1, 1, 1, 3}, {3.0f / 3, 9.0f / 3, 9.0f / 3});
  const Pool2dAttrs without_pad = pool({1, 3}, {1, 2}, {0, 1, 0, 1}, true, false);
  expect_value(run(OpKind::AvgPool2d, without_pad, {kRow5}), {1, 1, 1, 3}, {3.0f / 2, 9.0f / 3, 9.0f / 2});
  // Kernel 2 stride 2 ceil mode, no padding: the overhanging last window [5] divides by 1
  // even with count_include_pad (PyTorch: [1.5, 3.5, 5]).
  expect_value(run(OpKind::AvgPool2d, pool({1, 2}, {1, 2}, {0, 0, 0, 0}, true, true), {kRow5}), {1, 1, 1, 3},
               {1.5f, 3.5f, 5});
}

TEST(Evaluator, AvgPoolAsymmetricPadding) {
  // Row [1 2 3], pad right 1, kernel 2 stride 2: [1 2], [3 pad] (= pad(0,1) then avg_pool in PyTorch: [1.5, 1.5]).
  const Value x{{1, 1, 1, 3}, iota(3)};
  expect_value(run(OpKind::AvgPool2d, pool({1, 2}, {1, 2}, {0, 0, 0, 1}, false, true), {x}), {1, 1, 1, 2}, {1.5f, 1.5f});
  expect_value(run(OpKind::AvgPool2d, pool({1, 2}, {1, 2}, {0, 0, 0, 1}, false, false), {x}), {1, 1, 1, 2}, {1.5f, 3});
}

TEST(Evaluator, AdaptiveAvgPoolNonDivisible) {
  // 5 -> 3: windows [0,2), [1,4), [3,5) -> 1.5, 3, 4.5 (PyTorch agrees).
  expect_value(run(OpKind::AdaptiveAvgPool2d, AdaptiveAvgPool2dAttrs{{1, 3}}, {kRow5}), {1, 1, 1, 3}, {1.5f, 3, 4.5f});
  // 2 -> 3 (upsampling): windows [0,1), [0,2), [1,2) -> 1, 1.5, 2.
  const Value x{{1, 1, 2, 1}, {1, 2}};
  expect_value(run(OpKind::AdaptiveAvgPool2d, AdaptiveAvgPool2dAttrs{{3, 1}}, {x}), {1, 1, 3, 1}, {1, 1.5f, 2});
}

TEST(Evaluator, GlobalAvgPool) {
  // Two channels of 2x2: means of 1..4 and 5..8.
  const Value x{{1, 2, 2, 2}, iota(8)};
  expect_value(run(OpKind::GlobalAvgPool, NoAttrs{}, {x}), {1, 2, 1, 1}, {2.5f, 6.5f});
}

// ---- linear and data movement ------------------------------------------------------

TEST(Evaluator, LinearFlattensTrailingDims) {
  // x [2,1,2] = rows [1 2], [3 4]; w = [[1 0], [1 1], [0 -1]]; b = [0, 10, 100].
  const Value x{{2, 1, 2}, iota(4)}, w{{3, 2}, {1, 0, 1, 1, 0, -1}}, b{{3}, {0, 10, 100}};
  expect_value(run(OpKind::Linear, NoAttrs{}, {x, w, b}), {2, 3}, {1, 13, 98, 3, 17, 96});
  expect_value(run(OpKind::Linear, NoAttrs{}, {x, w}), {2, 3}, {1, 3, -2, 3, 7, -4});
}

TEST(Evaluator, FlattenAndReshapeKeepData) {
  const Value x{{1, 2, 3}, iota(6)};
  expect_value(run(OpKind::Flatten, FlattenAttrs{}, {x}), {1, 6}, iota(6));
  expect_value(run(OpKind::Reshape, ReshapeAttrs{{3, 2}}, {x}), {3, 2}, iota(6));
}

TEST(Evaluator, ConcatAlongEveryAxis) {
  const Value a{{2, 2}, {1, 2, 3, 4}}, b{{2, 1}, {5, 6}}, c{{1, 2}, {7, 8}};
  expect_value(run(OpKind::Concat, AxisAttrs{1}, {a, b}), {2, 3}, {1, 2, 5, 3, 4, 6});
  expect_value(run(OpKind::Concat, AxisAttrs{0}, {a, c}), {3, 2}, {1, 2, 3, 4, 7, 8});
  const Value d{{1, 1, 2}, {9, 10}}, e{{1, 1, 1}, {11}};
  expect_value(run(OpKind::Concat, AxisAttrs{2}, {d, e, d}), {1, 1, 5}, {9, 10, 11, 9, 10});
}

TEST(Evaluator, SoftmaxIsStableAlongAnyAxis) {
  // [0, ln 3] -> [1/4, 3/4].
  const float ln3 = std::log(3.0f);
  expect_value(run(OpKind::Softmax, AxisAttrs{1}, {Value{{1, 2}, {0, ln3}}}), {1, 2}, {0.25f, 0.75f});
  // [1000, 1001] -> [1/(1+e), e/(1+e)]; exp(1000) alone would overflow.
  const float e = std::exp(1.0f);
  expect_value(run(OpKind::Softmax, AxisAttrs{1}, {Value{{1, 2}, {1000, 1001}}}), {1, 2}, {1 / (1 + e), e / (1 + e)});
  // Axis 0 of [[0, 5], [ln 3, 5]]: columns [1/4, 3/4] and [1/2, 1/2].
  expect_value(run(OpKind::Softmax, AxisAttrs{0}, {Value{{2, 2}, {0, 5, ln3, 5}}}), {2, 2}, {0.25f, 0.5f, 0.75f, 0.5f});
}

TEST(Evaluator, PadAnyRank) {
  // [[1 2], [3 4]] with one row before and one column after, value 9.
  const Value x{{2, 2}, iota(4)};
  expect_value(run(OpKind::Pad, PadAttrs{{1, 0, 0, 1}, 9}, {x}), {3, 3}, {9, 9, 9, 1, 2, 9, 3, 4, 9});
  expect_value(run(OpKind::Pad, PadAttrs{{2, 1}, -1}, {Value{{1}, {5}}}), {4}, {-1, -1, 5, -1});
}

// ---- epilogues ---------------------------------------------------------------------------

// A fused epilogue must compute exactly what the same ops as separate nodes do.
TEST(Evaluator, EpilogueMatchesSeparateOpsBitForBit) {
  const Value x{{1, 2, 1, 3}, {-3.5f, -0.7f, 0.2f, 1.1f, 2.9f, -5}};
  const Value scale{{2}, {1.5f, -0.3f}}, shift{{2}, {0.25f, 0.1f}};
  const Value residual{{1, 2, 1, 3}, {0.3f, -0.2f, 1, 2, -1, 0.7f}}, gate{{1, 1, 1, 3}, {2, -1, 0.5f}};
  const std::vector<PostOp> epilogue = {
      {.kind = PostOpKind::kAffine}, {.kind = PostOpKind::kAdd},       {.kind = PostOpKind::kClamp, .min = -2, .max = 2},
      {.kind = PostOpKind::kMul},    {.kind = PostOpKind::kHardSwish}, {.kind = PostOpKind::kSigmoid},
      {.kind = PostOpKind::kRelu},   {.kind = PostOpKind::kElu, .alpha = 0.5f}, {.kind = PostOpKind::kSoftplus},
  };
  const std::vector<Value> args = {x, scale, shift, residual, gate};
  const Value fused = evaluate(one_node(OpKind::Dropout, NoAttrs{}, args, epilogue, 4), args).at(0);

  Value step = run(OpKind::Affine, NoAttrs{}, {x, scale, shift});
  step = run(OpKind::Add, NoAttrs{}, {step, residual});
  step = run(OpKind::Clamp, ClampAttrs{-2, 2}, {step});
  step = run(OpKind::Mul, NoAttrs{}, {step, gate});
  step = run(OpKind::HardSwish, NoAttrs{}, {step});
  step = run(OpKind::Sigmoid, NoAttrs{}, {step});
  step = run(OpKind::Relu, NoAttrs{}, {step});
  step = run(OpKind::Elu, EluAttrs{0.5f}, {step});
  step = run(OpKind::Softplus, NoAttrs{}, {step});
  EXPECT_EQ(fused.shape, step.shape);
  EXPECT_EQ(fused.data, step.data);
}

TEST(Evaluator, ConvWithBiasResidualAndRelu) {
  // 1x1 conv doubling channel 0 and negating channel 1, bias [1, 0]; then + residual, relu.
  const Value x{{1, 2, 1, 2}, {1, 2, 3, 4}}, w{{2, 2, 1, 1}, {2, 0, 0, -1}}, b{{2}, {1, 0}};
  const Value residual{{1, 2, 1, 2}, {0, -10, 1, 5}};
  const std::vector<Value> args = {x, w, b, residual};
  const Graph g = one_node(OpKind::Conv2d, conv({1, 1}, {0, 0, 0, 0}, {1, 1}, 1), args,
                           {{.kind = PostOpKind::kAdd}, {.kind = PostOpKind::kRelu}}, 1);
  // conv: [3, 5, -3, -4]; + residual: [3, -5, -2, 1]; relu: [3, 0, 0, 1].
  expect_value(evaluate(g, args).at(0), {1, 2, 1, 2}, {3, 0, 0, 1});
}

// ---- whole graphs and evaluate_node ------------------------------------------------------

TEST(Evaluator, WalksNodesInOrderWithConstants) {
  // y = relu(x * c) + x, with c a constant [2, -1]; the product is freed after its last use.
  Graph g;
  const TensorId x = g.add_tensor({.name = "x", .shape = {2}});
  const TensorId c = g.add_constant("c", {2}, {2, -1});
  const TensorId p = g.add_tensor({.name = "p", .shape = {2}});
  const TensorId r = g.add_tensor({.name = "r", .shape = {2}});
  const TensorId y = g.add_tensor({.name = "y", .shape = {2}});
  g.inputs = {x};
  g.nodes.push_back({.name = "mul", .op = OpKind::Mul, .inputs = {x, c}, .outputs = {p}});
  g.nodes.push_back({.name = "relu", .op = OpKind::Relu, .inputs = {p}, .outputs = {r}});
  g.nodes.push_back({.name = "add", .op = OpKind::Add, .inputs = {r, x}, .outputs = {y}});
  g.outputs = {y, c, x, r};  // outputs may be constants, inputs or intermediates
  const std::vector<Value> out = evaluate(g, {Value{{2}, {3, 4}}});
  ASSERT_EQ(out.size(), 4u);
  expect_value(out[0], {2}, {9, 4});  // relu([6, -4]) + [3, 4]
  expect_value(out[1], {2}, {2, -1});
  expect_value(out[2], {2}, {3, 4});
  expect_value(out[3], {2}, {6, 0});
}

TEST(Evaluator, RejectsWrongInputs) {
  const Graph g = one_node(OpKind::Relu, NoAttrs{}, {Value{{2, 2}, iota(4)}});
  try {
    evaluate(g, {});
    ADD_FAILURE() << "accepted no inputs";
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), ExitCode::kInvalidModel);
    EXPECT_NE(std::string(e.what()).find("has 1 inputs but 0 values were given"), std::string::npos) << e.what();
  }
  try {
    evaluate(g, {Value{{4}, iota(4)}});
    ADD_FAILURE() << "accepted a wrong shape";
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), ExitCode::kInvalidModel);
    EXPECT_STREQ(e.what(), "input 'in0' has shape [2,2] but the value given has [4]");
  }
  try {
    evaluate(g, {Value{{2, 2}, iota(3)}});
    ADD_FAILURE() << "accepted too little data";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "input 'in0' needs 4 values, got 3");
  }
}

TEST(Evaluator, RejectsAReadBeforeDefinition) {
  Graph g;
  const TensorId a = g.add_tensor({.name = "a", .shape = {1}});
  const TensorId b = g.add_tensor({.name = "b", .shape = {1}});
  g.nodes.push_back({.name = "r", .op = OpKind::Relu, .inputs = {a}, .outputs = {b}});
  g.outputs = {b};
  try {
    evaluate(g, {});
    ADD_FAILURE() << "read an undefined tensor";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "node 'r' reads tensor 'a', which no earlier node defines");
  }
}

TEST(Evaluator, EvaluateNodeOnExplicitValues) {
  const Value a{{2}, {1, 2}}, b{{2}, {10, 20}};
  const Graph g = one_node(OpKind::Add, NoAttrs{}, {a, b});
  const std::vector<Value> out = evaluate_node(g, g.nodes[0], {&a, &b});
  ASSERT_EQ(out.size(), 1u);
  expect_value(out[0], {2}, {11, 22});
}

// Quantize and dequantize (ONNX QuantizeLinear / DequantizeLinear, graph.h), bit-exact:
// the expected integers follow from round-half-to-even and saturation by hand.
Value quantize_values(const Value& x, DType dtype, Quantization q) {
  Graph g;
  const TensorId in = g.add_tensor({.name = "x", .shape = x.shape});
  g.inputs = {in};
  g.outputs = {append_node(g, OpKind::Quantize, QuantizeAttrs{dtype, std::move(q)}, {in}, "q", "test")};
  return evaluate(g, {x}).at(0);
}

Value dequantize_values(const Value& x, DType dtype, Quantization q) {
  Graph g;
  const TensorId in = g.add_tensor(
      {.name = "x", .dtype = dtype, .shape = x.shape, .quant = std::make_shared<const Quantization>(std::move(q))});
  g.inputs = {in};
  g.outputs = {append_node(g, OpKind::Dequantize, NoAttrs{}, {in}, "d", "test")};
  return evaluate(g, {x}).at(0);
}

TEST(Evaluator, QuantizeRoundsHalfToEvenAndSaturates) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const Value x{{10}, {0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 1000, -1000, nan, inf, -inf}};
  // x / 1 rounded: 0, 2, 2, -0, -2, 1000, -1000, NaN (the zero point), inf, -inf; + 3, saturated.
  expect_value(quantize_values(x, DType::I8, {{1.0f}, {3}, -1}), {10}, {3, 5, 5, 3, 1, 127, -128, 3, 127, -128});
  expect_value(quantize_values(x, DType::U8, {{1.0f}, {3}, -1}), {10}, {3, 5, 5, 3, 1, 255, 0, 3, 255, 0});
  // x / 0.25: 2, 6, 10, -2, -10, ...; zero point 0.
  expect_value(quantize_values(x, DType::I8, {{0.25f}, {0}, -1}), {10}, {2, 6, 10, -2, -10, 127, -128, 0, 127, -128});
}

TEST(Evaluator, QuantizeWithTfliteArithmeticRoundsTiesAwayFromZero) {
  for (const auto& [x, want] : std::vector<std::pair<float, int64_t>>{
           {0.5f, 4}, {1.5f, 5}, {2.5f, 6}, {-0.5f, 2}, {-2.5f, 0}, {0.49999997f, 3}, {200, 127}}) {
    EXPECT_EQ(quantize_value(x, DType::I8, 1.0f, 3, Arithmetic::kTflite), want) << x;
  }
}

TEST(Evaluator, TfliteQuantizeMultiplierMatchesItsDefinition) {
  // frexp: 0.5 = 0.5 * 2^0, 1 = 0.5 * 2^1, 0.1 = 0.8 * 2^-3 (0.8 * 2^31 = 1717986918.4).
  const auto m = [](double real) {
    const FixedPointMultiplier f = quantize_multiplier(real);
    return std::pair<int32_t, int>{f.multiplier, f.shift};
  };
  EXPECT_EQ(m(0.5), (std::pair<int32_t, int>{1 << 30, 0}));
  EXPECT_EQ(m(1.0), (std::pair<int32_t, int>{1 << 30, 1}));
  EXPECT_EQ(m(0.1), (std::pair<int32_t, int>{1717986918, -3}));
  EXPECT_EQ(m(0.0), (std::pair<int32_t, int>{0, 0}));
  EXPECT_EQ(m(1e-12), (std::pair<int32_t, int>{0, 0}));  // shift below -31
}

TEST(Evaluator, TfliteMultiplyByQuantizedMultiplierRoundsTwiceAsTfliteDoes) {
  const FixedPointMultiplier half{1 << 30, 0}, quarter{1 << 30, -1}, eighth{1 << 30, -2}, one{1 << 30, 1};
  EXPECT_EQ(multiply_by_quantized_multiplier(100, half), 50);
  EXPECT_EQ(multiply_by_quantized_multiplier(5, half), 3);    // 2.5: the high multiply's nudge rounds up
  EXPECT_EQ(multiply_by_quantized_multiplier(-5, half), -2);  // -2.5: (-6 * 2^30 + 1) / 2^31 truncates to -2
  EXPECT_EQ(multiply_by_quantized_multiplier(-5, one), -5);   // the left shift first
  EXPECT_EQ(multiply_by_quantized_multiplier(-5, quarter), -1);
  EXPECT_EQ(multiply_by_quantized_multiplier(6, eighth), 1);  // 3 / 4 rounded: 0.75 -> 1
  // 1.25 -> 2: 5 x 0.5 rounds to 3, then 3 / 2 rounds half away from zero (double rounding).
  EXPECT_EQ(multiply_by_quantized_multiplier(5, quarter), 2);
  EXPECT_EQ(multiply_by_quantized_multiplier(-7, quarter), -2);  // -3.5 -> -3, then -1.5 -> -2
}

TEST(Evaluator, QAddFollowsOnnxRuntimesQLinearAdd) {
  // Scales 0.5, 0.25 into 1: r_a = 0.5, r_b = 0.25, all exact; zero points 0 (u8).
  const Quantization a{{0.5f}, {0}, -1}, b{{0.25f}, {0}, -1}, y{{1.0f}, {0}, -1};
  const QAddConstants k = qadd_constants(a, b, y, DType::U8);
  EXPECT_EQ(qadd_value(3, 2, k), 2);    // 1.5 + 0.5 = 2
  EXPECT_EQ(qadd_value(3, 0, k), 2);    // 1.5: ties to even
  EXPECT_EQ(qadd_value(5, 0, k), 2);    // 2.5: ties to even
  EXPECT_EQ(qadd_value(255, 255, k), 191);  // 127.5 + 63.75 = 191.25 (saturation is the caller's)
  // int8 is computed on uint8: values and zero points + 128. a_zp 10, b_zp -20, y_zp 5:
  // offset = 133 - (0.5 * 138 + 0.25 * 108) = 37; (-128 + 128) * 0.5 + (7 + 128) * 0.25 + 37 = 70.75.
  const Quantization ai{{0.5f}, {10}, -1}, bi{{0.25f}, {-20}, -1}, yi{{1.0f}, {5}, -1};
  const QAddConstants ki = qadd_constants(ai, bi, yi, DType::I8);
  EXPECT_EQ(ki.offset, 37.0f);
  EXPECT_EQ(qadd_value(-128, 7, ki), 71 - 128);
}

TEST(Evaluator, TfliteAddFollowsTflitesIntegerAdd) {
  // Scales 0.5 and 0.25 into 1: twice = 1, multipliers 0.5 (2^30, 0), 0.25 (2^30, -1) and
  // 2^-20 (2^30, -19); zero points 0. 3 + 2: (3 << 20) * 0.5 + (2 << 20) * 0.25 = 2^21, then
  // 2^21 * 2^-20 = 2.
  const Quantization a{{0.5f}, {0}, -1}, b{{0.25f}, {0}, -1}, y{{1.0f}, {0}, -1};
  const TfliteAddParameters p = tflite_add_parameters(a, b, y);
  EXPECT_EQ(p.a.multiplier, 1 << 30);
  EXPECT_EQ(p.a.shift, 0);
  EXPECT_EQ(p.b.shift, -1);
  EXPECT_EQ(p.out.shift, -19);
  EXPECT_EQ(tflite_add_value(3, 2, p), 2);
  EXPECT_EQ(tflite_add_value(3, 0, p), 2);    // 1.5: ties away from zero
  EXPECT_EQ(tflite_add_value(-3, 0, p), -2);  // -1.5: away from zero
  // Zero points: offsets -zp and +y_zp.
  const TfliteAddParameters q = tflite_add_parameters({{0.5f}, {10}, -1}, {{0.25f}, {-20}, -1}, {{1.0f}, {5}, -1});
  EXPECT_EQ(tflite_add_value(14, -12, q), 9);  // (4 * 0.5 + 8 * 0.25) + 5
}

TEST(Evaluator, QuantizePerChannelAlongItsAxis) {
  // Shape [1,2,3], axis 1: channel 0 scale 0.5 zero point 10, channel 1 scale 2 zero point 128.
  const Value x{{1, 2, 3}, {1.25f, -1.25f, 0.75f, 3, 5, -300}};
  // 2.5 -> 2, -2.5 -> -2, 1.5 -> 2 (+10); 1.5 -> 2, 2.5 -> 2, -150 (+128 -> -22 -> 0).
  expect_value(quantize_values(x, DType::U8, {{0.5f, 2.0f}, {10, 128}, 1}), {1, 2, 3}, {12, 8, 12, 130, 130, 0});
}

TEST(Evaluator, DequantizeSubtractsTheZeroPointThenScales) {
  expect_value(dequantize_values(Value{{4}, {-128, 0, 3, 127}}, DType::I8, {{0.5f}, {3}, -1}), {4},
               {-65.5f, -1.5f, 0, 62});
  // Per channel along axis 0 of [2,2]: (q - 128) * 0.25, then (q - 0) * 2.
  expect_value(dequantize_values(Value{{2, 2}, {0, 255, 1, 255}}, DType::U8, {{0.25f, 2.0f}, {128, 0}, 0}), {2, 2},
               {-32, 31.75f, 2, 510});
}

TEST(Evaluator, RejectsAnIntegerInputValueOutsideItsDtype) {
  try {
    dequantize_values(Value{{2}, {0, 256}}, DType::U8, {{1.0f}, {0}, -1});
    ADD_FAILURE() << "accepted 256 for a u8 input";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "the value given for input 'x': tensor 'x' (u8): value 256 at 1 is not an integer in [0, 255]");
  }
}

// One qconv2d over a quantized input `x` and integer constants, evaluated.
struct QConv2dCase {
  Value x;
  DType x_dtype;
  Quantization x_quant;
  Tensor weight, bias;  // constants; bias.data null for none
  QConv2dAttrs attrs;
};

Graph qconv2d_graph(const QConv2dCase& c) {
  Graph g;
  const TensorId in = g.add_tensor({.name = "x", .dtype = c.x_dtype, .shape = c.x.shape,
                                    .quant = std::make_shared<const Quantization>(c.x_quant)});
  g.inputs = {in};
  std::vector<TensorId> inputs = {in, g.add_tensor(c.weight)};
  if (c.bias.data) inputs.push_back(g.add_tensor(c.bias));
  g.outputs = {append_node(g, OpKind::QConv2d, c.attrs, inputs, "y", "test")};
  return g;
}

Tensor integer_constant(const std::string& name, DType dtype, Shape shape, std::vector<float> values, Quantization q) {
  return {.name = name, .dtype = dtype, .shape = std::move(shape),
          .data = std::make_shared<const std::vector<float>>(std::move(values)),
          .quant = std::make_shared<const Quantization>(std::move(q))};
}

TEST(Evaluator, QConv2dPadsWithTheZeroPointRoundsHalfToEvenAndSaturates) {
  QConv2dCase c;
  // x - 10 = [0, 2, 4, -1]; a 1x1 weight 3 padded by 1: the border reads the zero point (0 after the shift).
  c.x = Value{{1, 1, 2, 2}, {10, 12, 14, 9}};
  c.x_dtype = DType::U8;
  c.x_quant = {{1.0f}, {10}, -1};
  c.weight = integer_constant("w", DType::I8, {1, 1, 1, 1}, {3}, {{1.0f}, {0}, -1});
  c.bias = integer_constant("b", DType::I32, {1}, {5}, {{1.0f}, {0}, -1});
  c.attrs.conv.pad = {1, 1, 1, 1};
  c.attrs.out = {DType::U8, {{2.0f}, {100}, -1}};
  c.attrs.min = 0;
  c.attrs.max = 255;
  // acc = 5 + [0, 6, 12, -3] = [5, 11, 17, 2], border 5; x 0.5 = [2.5, 5.5, 8.5, 1], border 2.5;
  // ties to even [2, 6, 8, 1], border 2; + 100.
  const Graph g = qconv2d_graph(c);
  expect_value(evaluate(g, {c.x}).at(0), {1, 1, 4, 4},
               {102, 102, 102, 102, 102, 102, 106, 102, 102, 108, 101, 102, 102, 102, 102, 102});
  // A folded relu6-like clamp: [102, 107].
  c.attrs.min = 102;
  c.attrs.max = 107;
  expect_value(evaluate(qconv2d_graph(c), {c.x}).at(0), {1, 1, 4, 4},
               {102, 102, 102, 102, 102, 102, 106, 102, 102, 107, 102, 102, 102, 102, 102, 102});
}

TEST(Evaluator, QConv2dPerChannelWeightsWithZeroPointsPerGroup) {
  QConv2dCase c;
  c.x = Value{{1, 2, 1, 1}, {4, 6}};
  c.x_dtype = DType::U8;
  c.x_quant = {{0.5f}, {0}, -1};
  // w - zero point = [4, -3]; multipliers 0.5 * [0.25, 1] / 0.5 = [0.25, 1].
  c.weight = integer_constant("w", DType::U8, {2, 1, 1, 1}, {14, 17}, {{0.25f, 1.0f}, {10, 20}, 0});
  c.attrs.conv.groups = 2;
  c.attrs.out = {DType::I8, {{0.5f}, {-3}, -1}};
  c.attrs.min = -128;
  c.attrs.max = 127;
  // [4 * 4 * 0.25, 6 * -3 * 1] - 3 = [1, -21].
  expect_value(evaluate(qconv2d_graph(c), {c.x}).at(0), {1, 2, 1, 1}, {1, -21});
}

TEST(Evaluator, QConv2dRefusesABiasOfAnotherScale) {
  QConv2dCase c;
  c.x = Value{{1, 1, 1, 1}, {0}};
  c.x_dtype = DType::I8;
  c.x_quant = {{0.5f}, {0}, -1};
  c.weight = integer_constant("w", DType::I8, {1, 1, 1, 1}, {1}, {{0.25f}, {0}, -1});
  c.bias = integer_constant("b", DType::I32, {1}, {1}, {{0.25f}, {0}, -1});  // not 0.5 * 0.25
  c.attrs.out = {DType::I8, {{1.0f}, {0}, -1}};
  c.attrs.min = -128;
  c.attrs.max = 127;
  try {
    qconv2d_graph(c);
    ADD_FAILURE() << "accepted a bias of scale 0.25 for an accumulator of scale 0.125";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("bias 'b' channel 0 has scale 0.25 and zero point 0"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace aotc
