// fold-pad: which pads fold into conv2d / max_pool2d / avg_pool2d, the resulting
// padding, and numerically (reference evaluator, before vs after,
// |diff| <= 1e-5 * max(1, |ref|)) that every fold keeps the values, including
// average pooling's divisor under ceil_mode. Golden text: tests/lit/passes/fold-pad/.
#include <gtest/gtest.h>

#include "pass_test_support.h"
#include "passes/fold_pad.h"

namespace aotc {
namespace {

using testing::count_ops;
using testing::expect_same_results;
using testing::parse;
using testing::producer_of;
using testing::run_pass;

Graph fold_pads(const Graph& g, PassCounters& counters) { return run_pass(g, fold_pad, counters); }

// A graph: input %x [1,2,6,6] -> %p = pad(...) -> `consumer` named %y.
std::string pad_then(const std::string& pad_attrs, const std::string& pad_shape, const std::string& consumer) {
  return R"(graph t {
  input %x: f32[1,2,6,6]
  const %w: f32[3,2,3,3] = random(1)
  const %b: f32[3] = random(2)
  %p = pad(%x) {)" + pad_attrs + "}: f32" + pad_shape + "\n  " + consumer + "\n  output %y\n}\n";
}

TEST(FoldPad, ZeroPadFoldsIntoConvPadding) {
  const Graph g = parse(pad_then("pads=[0,0,1,0,0,0,2,1], value=0", "[1,2,9,7]",
                                 "%y = conv2d(%p, %w, %b) {pad=[1,1,1,1]}: f32[1,3,9,7]"));
  PassCounters counters;
  const Graph after = fold_pads(g, counters);
  EXPECT_EQ(counters.get("folded"), 1);
  EXPECT_EQ(count_ops(after, OpKind::Pad), 0);
  const Node& conv = producer_of(after, "y");
  EXPECT_EQ(after.tensor(conv.inputs[0]).name, "x");
  // top, left, bottom, right: own [1,1,1,1] + pad's H begin 1, W begin 0, H end 2, W end 1.
  EXPECT_EQ(conv.attr<Conv2dAttrs>().pad, (std::array<int, 4>{2, 1, 3, 2}));
  expect_same_results(g, after);
}

TEST(FoldPad, StridedDilatedConv) {
  const Graph g = parse(pad_then("pads=[0,0,2,1,0,0,2,3], value=0", "[1,2,10,10]",
                                 "%y = conv2d(%p, %w) {stride=[2,3], dilation=[2,1]}: f32[1,3,3,3]"));
  PassCounters counters;
  const Graph after = fold_pads(g, counters);
  EXPECT_EQ(counters.get("folded"), 1);
  expect_same_results(g, after);
}

TEST(FoldPad, NonZeroValueDoesNotFoldIntoConv) {
  const Graph g = parse(pad_then("pads=[0,0,1,1,0,0,1,1], value=0.5", "[1,2,8,8]",
                                 "%y = conv2d(%p, %w): f32[1,3,6,6]"));
  PassCounters counters;
  const Graph after = fold_pads(g, counters);
  EXPECT_EQ(counters.get("folded"), 0);
  EXPECT_EQ(count_ops(after, OpKind::Pad), 1);
}

TEST(FoldPad, ChannelPaddingDoesNotFold) {
  const Graph g = parse(R"(graph t {
  input %x: f32[1,1,6,6]
  const %w: f32[3,2,3,3] = random(1)
  %p = pad(%x) {pads=[0,1,1,1,0,0,1,1], value=0}: f32[1,2,8,8]
  %y = conv2d(%p, %w): f32[1,3,6,6]
  output %y
})");
  PassCounters counters;
  const Graph after = fold_pads(g, counters);
  EXPECT_EQ(counters.get("folded"), 0);
  EXPECT_EQ(count_ops(after, OpKind::Pad), 1);
}

TEST(FoldPad, MinusInfinityPadFoldsIntoMaxPool) {
  const Graph g = parse(pad_then("pads=[0,0,1,0,0,0,0,1], value=-inf", "[1,2,7,7]",
                                 "%y = max_pool2d(%p) {kernel=[3,3], stride=[2,2]}: f32[1,2,3,3]"));
  PassCounters counters;
  const Graph after = fold_pads(g, counters);
  EXPECT_EQ(counters.get("folded"), 1);
  EXPECT_EQ(producer_of(after, "y").attr<Pool2dAttrs>().pad, (std::array<int, 4>{1, 0, 0, 1}));
  expect_same_results(g, after);
}

TEST(FoldPad, ZeroPadDoesNotFoldIntoMaxPool) {
  // max over a window of negatives and padded zeros is 0, not the largest negative.
  const Graph g = parse(pad_then("pads=[0,0,1,1,0,0,1,1], value=0", "[1,2,8,8]",
                                 "%y = max_pool2d(%p) {kernel=[3,3], stride=[2,2]}: f32[1,2,3,3]"));
  PassCounters counters;
  const Graph after = fold_pads(g, counters);
  EXPECT_EQ(counters.get("folded"), 0);
  EXPECT_EQ(count_ops(after, OpKind::Pad), 1);
}

TEST(FoldPad, MaxPoolWindowWhollyInPaddingDoesNotFold) {
  // The first row of windows reads only the pad's -inf rows; a pool may not have
  // such windows in its own padding (shape rules), so the pad stays.
  const Graph g = parse(pad_then("pads=[0,0,2,0,0,0,0,0], value=-inf", "[1,2,8,6]",
                                 "%y = max_pool2d(%p) {kernel=[2,2], stride=[2,2]}: f32[1,2,4,3]"));
  PassCounters counters;
  const Graph after = fold_pads(g, counters);
  EXPECT_EQ(counters.get("folded"), 0);
  EXPECT_EQ(count_ops(after, OpKind::Pad), 1);
}

TEST(FoldPad, ZeroPadFoldsIntoAvgPoolCountingPadding) {
  const Graph g = parse(pad_then("pads=[0,0,1,1,0,0,1,1], value=0", "[1,2,8,8]",
                                 "%y = avg_pool2d(%p) {kernel=[3,3], stride=[2,2], count_include_pad=false}: f32[1,2,3,3]"));
  PassCounters counters;
  const Graph after = fold_pads(g, counters);
  EXPECT_EQ(counters.get("folded"), 1);
  const Pool2dAttrs& a = producer_of(after, "y").attr<Pool2dAttrs>();
  EXPECT_EQ(a.pad, (std::array<int, 4>{1, 1, 1, 1}));
  EXPECT_TRUE(a.count_include_pad);
  expect_same_results(g, after);
}

TEST(FoldPad, AvgPoolWithOwnPaddingCountedFolds) {
  const Graph g = parse(pad_then("pads=[0,0,1,0,0,0,1,1], value=0", "[1,2,8,7]",
                                 "%y = avg_pool2d(%p) {kernel=[3,3], stride=[1,1], pad=[1,1,1,1]}: f32[1,2,8,7]"));
  PassCounters counters;
  const Graph after = fold_pads(g, counters);
  EXPECT_EQ(counters.get("folded"), 1);
  EXPECT_EQ(producer_of(after, "y").attr<Pool2dAttrs>().pad, (std::array<int, 4>{2, 1, 2, 2}));
  expect_same_results(g, after);
}

TEST(FoldPad, AvgPoolWithOwnPaddingNotCountedDoesNotFold) {
  // Explicit zeros count in the divisor, the pool's own padding does not: not mergeable.
  const Graph g = parse(pad_then("pads=[0,0,1,1,0,0,1,1], value=0", "[1,2,8,8]",
                                 "%y = avg_pool2d(%p) {kernel=[3,3], pad=[1,1,1,1], count_include_pad=false}: f32[1,2,8,8]"));
  PassCounters counters;
  const Graph after = fold_pads(g, counters);
  EXPECT_EQ(counters.get("folded"), 0);
  EXPECT_EQ(count_ops(after, OpKind::Pad), 1);
}

TEST(FoldPad, AvgPoolCeilModeWithSameExtentFolds) {
  // H: 6 + 1 + 1 = 8, kernel 3, stride 2, ceil -> 4 rows; the last window overhangs
  // the padded input by one row in both forms, so both divide by 2 rows there.
  const Graph g = parse(pad_then("pads=[0,0,1,1,0,0,1,1], value=0", "[1,2,8,8]",
                                 "%y = avg_pool2d(%p) {kernel=[3,3], stride=[2,2], ceil_mode=true}: f32[1,2,4,4]"));
  PassCounters counters;
  const Graph after = fold_pads(g, counters);
  EXPECT_EQ(counters.get("folded"), 1);
  expect_same_results(g, after);
}

TEST(FoldPad, CeilModeThatWouldLoseTheLastWindowDoesNotFold) {
  // Before: 6 + 2 = 8 rows, kernel 2, stride 2, ceil -> 4 (the last window starts at
  // row 6, inside the padded input). Folded, row 6 would be in the pool's end padding,
  // where PyTorch's rule drops a window: 3 rows.
  const Graph g = parse(pad_then("pads=[0,0,0,0,0,0,2,2], value=0", "[1,2,8,8]",
                                 "%y = avg_pool2d(%p) {kernel=[2,2], stride=[2,2], ceil_mode=true}: f32[1,2,4,4]"));
  PassCounters counters;
  const Graph after = fold_pads(g, counters);
  EXPECT_EQ(counters.get("folded"), 0);
  EXPECT_EQ(count_ops(after, OpKind::Pad), 1);
}

TEST(FoldPad, PadWithAnotherUserStays) {
  const Graph g = parse(pad_then("pads=[0,0,1,1,0,0,1,1], value=0", "[1,2,8,8]",
                                 "%c = conv2d(%p, %w): f32[1,3,6,6]\n  %r = relu(%p): f32[1,2,8,8]\n"
                                 "  output %r\n  %y = avg_pool2d(%c) {kernel=[2,2], stride=[2,2]}: f32[1,3,3,3]"));
  PassCounters counters;
  const Graph after = fold_pads(g, counters);
  EXPECT_EQ(counters.get("folded"), 1);
  EXPECT_EQ(count_ops(after, OpKind::Pad), 1);
  EXPECT_EQ(after.tensor(producer_of(after, "c").inputs[0]).name, "x");
  EXPECT_EQ(after.tensor(producer_of(after, "r").inputs[0]).name, "p");
  expect_same_results(g, after);
}

TEST(FoldPad, PadFeedingTwoConvsFoldsIntoBoth) {
  const Graph g = parse(pad_then("pads=[0,0,1,1,0,0,1,1], value=0", "[1,2,8,8]",
                                 "%c1 = conv2d(%p, %w): f32[1,3,6,6]\n  %c2 = conv2d(%p, %w, %b) {stride=[2,2]}: f32[1,3,3,3]\n"
                                 "  output %c1\n  %y = relu(%c2): f32[1,3,3,3]"));
  PassCounters counters;
  const Graph after = fold_pads(g, counters);
  EXPECT_EQ(counters.get("folded"), 2);
  EXPECT_EQ(count_ops(after, OpKind::Pad), 0);
  expect_same_results(g, after);
}

}  // namespace
}  // namespace aotc
