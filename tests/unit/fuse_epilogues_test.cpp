// fuse-epilogues: which elementwise nodes fuse into which producers, in what
// order, which do not (other users, graph outputs, non-anchors, shape-changing
// constants), and numerically (reference evaluator, before vs after,
// |diff| <= 1e-5 * max(1, |ref|)) that every fusion keeps the values.
// Golden text: tests/lit/passes/fuse-epilogues/.
#include <gtest/gtest.h>

#include "pass_test_support.h"
#include "passes/fuse_epilogues.h"

namespace aotc {
namespace {

using testing::count_ops;
using testing::expect_same_results;
using testing::parse;
using testing::producer_of;
using testing::run_pass;

Graph fuse(const Graph& g, PassCounters& counters) { return run_pass(g, fuse_epilogues, counters); }

std::vector<PostOpKind> kinds(const Node& node) {
  std::vector<PostOpKind> k;
  for (const PostOp& p : node.epilogue) k.push_back(p.kind);
  return k;
}

// input %x [1,3,6,6], conv %c [1,4,6,6], then `body`.
std::string after_conv(const std::string& body) {
  return R"(graph t {
  input %x: f32[1,3,6,6]
  const %w: f32[4,3,3,3] = random(1)
  const %b: f32[4] = random(2)
  const %s: f32[4] = random(3)
  const %t: f32[4] = random(4)
  %c = conv2d(%x, %w, %b) {pad=[1,1,1,1]}: f32[1,4,6,6]
)" + body + "}\n";
}

TEST(FuseEpilogues, ReluFusesIntoConvAndTheOutputKeepsItsName) {
  const Graph g = parse(after_conv("  %r = relu(%c): f32[1,4,6,6]\n  output %r\n"));
  PassCounters counters;
  const Graph after = fuse(g, counters);
  EXPECT_EQ(counters.get("conv2d+relu"), 1);
  ASSERT_EQ(after.nodes.size(), 1u);
  EXPECT_EQ(after.nodes[0].op, OpKind::Conv2d);
  EXPECT_EQ(kinds(after.nodes[0]), (std::vector{PostOpKind::kRelu}));
  EXPECT_EQ(after.tensor(after.outputs[0]).name, "r");
  expect_same_results(g, after);
}

TEST(FuseEpilogues, ChainFusesInOrder) {
  const Graph g = parse(after_conv(R"(
  %a = affine(%c, %s, %t): f32[1,4,6,6]
  %r = relu(%a): f32[1,4,6,6]
  %y = clamp(%r) {min=0, max=0.5}: f32[1,4,6,6]
  %h = hardswish(%y): f32[1,4,6,6]
  %z = sigmoid(%h): f32[1,4,6,6]
  output %z
)"));
  PassCounters counters;
  const Graph after = fuse(g, counters);
  ASSERT_EQ(after.nodes.size(), 1u);
  const Node& conv = after.nodes[0];
  EXPECT_EQ(kinds(conv), (std::vector{PostOpKind::kAffine, PostOpKind::kRelu, PostOpKind::kClamp,
                                      PostOpKind::kHardSwish, PostOpKind::kSigmoid}));
  EXPECT_EQ(conv.epilogue[2].max, 0.5f);
  const std::vector<TensorId> affine_operands = conv.post_op_operands(conv.epilogue[0]);
  ASSERT_EQ(affine_operands.size(), 2u);
  EXPECT_EQ(after.tensor(affine_operands[0]).name, "s");
  EXPECT_EQ(after.tensor(affine_operands[1]).name, "t");
  EXPECT_EQ(counters.get("conv2d+affine"), 1);
  EXPECT_EQ(counters.get("conv2d+clamp"), 1);
  EXPECT_EQ(counters.get("conv2d+sigmoid"), 1);
  expect_same_results(g, after);
}

// PReLU carries its alpha as an operand (per channel, or computed: then the fused
// node moves to where the alpha exists); tanh is a plain activation.
TEST(FuseEpilogues, PReluAndTanhFuseWithTheirOperands) {
  const Graph g = parse(after_conv(R"(
  const %alpha: f32[4,1,1] = random(7)
  %p = prelu(%c, %alpha): f32[1,4,6,6]
  %y = tanh(%p): f32[1,4,6,6]
  %c2 = conv2d(%x, %w) {pad=[1,1,1,1]}: f32[1,4,6,6]
  %computed = sigmoid(%c2): f32[1,4,6,6]
  %q = prelu(%y, %computed): f32[1,4,6,6]
  output %q
)"));
  PassCounters counters;
  const Graph after = fuse(g, counters);
  ASSERT_EQ(after.nodes.size(), 2u) << print_graph(after);
  const Node& conv = after.nodes[1];
  EXPECT_EQ(kinds(conv), (std::vector{PostOpKind::kPRelu, PostOpKind::kTanh, PostOpKind::kPRelu}));
  EXPECT_EQ(after.tensor(conv.post_op_operands(conv.epilogue[0])[0]).name, "alpha");
  EXPECT_EQ(after.tensor(conv.post_op_operands(conv.epilogue[2])[0]).name, "computed");
  EXPECT_EQ(counters.get("conv2d+prelu"), 2);
  EXPECT_EQ(counters.get("conv2d+tanh"), 1);
  expect_same_results(g, after);
}

TEST(FuseEpilogues, AddOfTwoComputedTensorsFusesIntoTheLaterProducer) {
  const Graph g = parse(after_conv(R"(
  const %w2: f32[4,3,1,1] = random(5)
  %d = conv2d(%x, %w2): f32[1,4,6,6]
  %sum = add(%c, %d): f32[1,4,6,6]
  %r = relu(%sum): f32[1,4,6,6]
  output %r
)"));
  PassCounters counters;
  const Graph after = fuse(g, counters);
  EXPECT_EQ(counters.get("conv2d+add"), 1);
  EXPECT_EQ(counters.get("conv2d+relu"), 1);
  EXPECT_EQ(count_ops(after, OpKind::Add), 0);
  ASSERT_EQ(count_ops(after, OpKind::Conv2d), 2);
  const Node& fused = producer_of(after, "r");
  EXPECT_EQ(after.tensor(fused.inputs[1]).name, "w2");  // %d, the later conv
  EXPECT_EQ(kinds(fused), (std::vector{PostOpKind::kAdd, PostOpKind::kRelu}));
  EXPECT_EQ(after.tensor(fused.post_op_operands(fused.epilogue[0])[0]).name, "c");
  expect_same_results(g, after);
}

TEST(FuseEpilogues, ProducerWithAnotherUserDoesNotFuse) {
  const Graph g = parse(after_conv(R"(
  %r = relu(%c): f32[1,4,6,6]
  %m = max_pool2d(%c) {kernel=[2,2], stride=[2,2]}: f32[1,4,3,3]
  output %r
  output %m
)"));
  PassCounters counters;
  const Graph after = fuse(g, counters);
  EXPECT_EQ(counters.get("conv2d+relu"), 0);
  EXPECT_EQ(count_ops(after, OpKind::Relu), 1);
}

TEST(FuseEpilogues, ProducerThatIsAGraphOutputDoesNotFuse) {
  const Graph g = parse(after_conv("  %r = relu(%c): f32[1,4,6,6]\n  output %c\n  output %r\n"));
  PassCounters counters;
  const Graph after = fuse(g, counters);
  EXPECT_EQ(count_ops(after, OpKind::Relu), 1);
  EXPECT_TRUE(producer_of(after, "c").epilogue.empty());
}

TEST(FuseEpilogues, ConstantAddAndMulFuseEitherOperandOrder) {
  const Graph g = parse(after_conv(R"(
  const %k: f32[4,1,1] = random(6)
  const %m: f32[1,4,1,1] = random(7)
  %a = add(%c, %k): f32[1,4,6,6]
  %p = mul(%m, %a): f32[1,4,6,6]
  output %p
)"));
  PassCounters counters;
  const Graph after = fuse(g, counters);
  EXPECT_EQ(counters.get("conv2d+add"), 1);
  EXPECT_EQ(counters.get("conv2d+mul"), 1);
  ASSERT_EQ(after.nodes.size(), 1u);
  const Node& conv = after.nodes[0];
  EXPECT_EQ(kinds(conv), (std::vector{PostOpKind::kAdd, PostOpKind::kMul}));
  EXPECT_EQ(after.tensor(conv.post_op_operands(conv.epilogue[1])[0]).name, "m");
  expect_same_results(g, after);
}

TEST(FuseEpilogues, ConstantThatWidensTheResultDoesNotFuse) {
  const Graph g = parse(R"(graph t {
  input %x: f32[1,3,6,6]
  const %w: f32[4,3,6,6] = random(1)
  const %k: f32[1,4,2,2] = random(2)
  %c = conv2d(%x, %w): f32[1,4,1,1]
  %a = add(%c, %k): f32[1,4,2,2]
  output %a
})");
  PassCounters counters;
  const Graph after = fuse(g, counters);
  EXPECT_EQ(count_ops(after, OpKind::Add), 1);
  EXPECT_TRUE(producer_of(after, "c").epilogue.empty());
}

TEST(FuseEpilogues, LinearAbsorbsActivations) {
  const Graph g = parse(R"(graph t {
  input %x: f32[2,8]
  const %w: f32[5,8] = random(1)
  %fc = linear(%x, %w): f32[2,5]
  %h = hardswish(%fc): f32[2,5]
  %s = sigmoid(%h): f32[2,5]
  output %s
})");
  PassCounters counters;
  const Graph after = fuse(g, counters);
  EXPECT_EQ(counters.get("linear+hardswish"), 1);
  EXPECT_EQ(counters.get("linear+sigmoid"), 1);
  ASSERT_EQ(after.nodes.size(), 1u);
  expect_same_results(g, after);
}

TEST(FuseEpilogues, NonAnchorProducersKeepTheirActivation) {
  const Graph g = parse(R"(graph t {
  input %x: f32[1,3,6,6]
  %m = max_pool2d(%x) {kernel=[2,2], stride=[2,2]}: f32[1,3,3,3]
  %r = relu(%m): f32[1,3,3,3]
  %s = sigmoid(%x): f32[1,3,6,6]
  output %r
  output %s
})");
  PassCounters counters;
  const Graph after = fuse(g, counters);
  EXPECT_TRUE(counters.all().empty());
  EXPECT_EQ(after.nodes.size(), 3u);
}

TEST(FuseEpilogues, AffineAfterConcatAbsorbsRelu) {
  const Graph g = parse(R"(graph t {
  input %x: f32[1,2,4,4]
  input %y: f32[1,2,4,4]
  const %s: f32[4] = random(1)
  const %t: f32[4] = random(2)
  %cat = concat(%x, %y) {axis=1}: f32[1,4,4,4]
  %a = affine(%cat, %s, %t): f32[1,4,4,4]
  %r = relu(%a): f32[1,4,4,4]
  output %r
})");
  PassCounters counters;
  const Graph after = fuse(g, counters);
  EXPECT_EQ(counters.get("affine+relu"), 1);
  const Node& affine = producer_of(after, "r");
  EXPECT_EQ(affine.op, OpKind::Affine);
  EXPECT_EQ(kinds(affine), (std::vector{PostOpKind::kRelu}));
  expect_same_results(g, after);
}

TEST(FuseEpilogues, ElementwiseNodeBringsItsOwnEpilogue) {
  const Graph g = parse(after_conv(R"(
  const %k: f32[4,1,1] = random(6)
  %a = affine(%c, %s, %t) epilogue[add(%k), relu]: f32[1,4,6,6]
  output %a
)"));
  PassCounters counters;
  const Graph after = fuse(g, counters);
  ASSERT_EQ(after.nodes.size(), 1u);
  const Node& conv = after.nodes[0];
  EXPECT_EQ(kinds(conv), (std::vector{PostOpKind::kAffine, PostOpKind::kAdd, PostOpKind::kRelu}));
  EXPECT_EQ(after.tensor(conv.post_op_operands(conv.epilogue[1])[0]).name, "k");
  EXPECT_EQ(counters.get("conv2d+relu"), 1);
  expect_same_results(g, after);
}

TEST(FuseEpilogues, OperandComputedAfterTheProducerKeepsTheOrderValid) {
  // The affine's scale is computed after the conv: the fused conv must run after it.
  const Graph g = parse(after_conv(R"(
  input %v: f32[1,4]
  %scale = reshape(%v) {shape=[4]}: f32[4]
  %a = affine(%c, %scale, %t): f32[1,4,6,6]
  output %a
)"));
  PassCounters counters;
  const Graph after = fuse(g, counters);
  EXPECT_EQ(counters.get("conv2d+affine"), 1);
  ASSERT_EQ(after.nodes.size(), 2u);
  EXPECT_EQ(after.nodes[0].op, OpKind::Reshape);
  EXPECT_EQ(after.nodes[1].op, OpKind::Conv2d);
  expect_same_results(g, after);
}

TEST(FuseEpilogues, RunningTwiceChangesNothing) {
  const Graph g = parse(after_conv(R"(
  const %w2: f32[4,3,1,1] = random(5)
  %d = conv2d(%x, %w2): f32[1,4,6,6]
  %rd = relu(%d): f32[1,4,6,6]
  %sum = add(%c, %rd): f32[1,4,6,6]
  %r = relu(%sum): f32[1,4,6,6]
  output %r
)"));
  PassCounters first, second;
  const Graph once = fuse(g, first);
  const Graph twice = fuse(once, second);
  EXPECT_EQ(first.get("conv2d+relu"), 2);
  EXPECT_EQ(first.get("conv2d+add"), 1);
  EXPECT_TRUE(second.all().empty());
  EXPECT_EQ(print_graph(once), print_graph(twice));
  expect_same_results(g, twice);
}

}  // namespace
}  // namespace aotc
