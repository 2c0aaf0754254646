// Shape rules (ir/shape_rules.h) and the infer-shapes pass. Expected extents
// were computed by hand and checked against torch.nn.functional (PyTorch 1.13).
#include <gtest/gtest.h>

#include <cmath>

#include "ir/shape_rules.h"
#include "passes/infer_shapes.h"
#include "support/error.h"

namespace aotc {
namespace {

// A graph with one input tensor per shape and one node `n` reading them all.
Graph one_node(OpKind op, Attrs attrs, const std::vector<Shape>& input_shapes) {
  Graph g;
  Node node{.name = "n", .op = op, .attrs = std::move(attrs)};
  for (size_t i = 0; i < input_shapes.size(); ++i) {
    TensorId id = g.add_tensor({.name = "in" + std::to_string(i), .shape = input_shapes[i]});
    g.inputs.push_back(id);
    node.inputs.push_back(id);
  }
  node.outputs = {g.add_tensor({.name = "out"})};
  g.outputs = node.outputs;
  g.nodes.push_back(std::move(node));
  return g;
}

Shape infer(const Graph& g) {
  std::vector<Shape> shapes = infer_node_shapes(g, g.nodes.at(0));
  EXPECT_EQ(shapes.size(), 1u);
  return shapes.at(0);
}

// Expects infer_node_shapes to reject the node with kInvalidModel and a message
// naming the node and containing `fragment`.
void expect_invalid(const Graph& g, const std::string& fragment) {
  try {
    infer_node_shapes(g, g.nodes.at(0));
    ADD_FAILURE() << "accepted; expected an error containing: " << fragment;
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), ExitCode::kInvalidModel);
    const std::string message = e.what();
    EXPECT_NE(message.find("node 'n' ("), std::string::npos) << message;
    EXPECT_NE(message.find(fragment), std::string::npos) << message;
  }
}

Conv2dAttrs conv(std::array<int, 2> stride, std::array<int, 4> pad, std::array<int, 2> dilation, int groups) {
  return {.stride = stride, .pad = pad, .dilation = dilation, .groups = groups};
}

Pool2dAttrs pool(std::array<int, 2> kernel, std::array<int, 2> stride, std::array<int, 4> pad, bool ceil_mode,
                 std::array<int, 2> dilation = {1, 1}) {
  return {.kernel = kernel, .stride = stride, .pad = pad, .dilation = dilation, .ceil_mode = ceil_mode};
}

// ---- window_output_extent and broadcast_shapes --------------------------------

TEST(WindowOutputExtent, MatchesPyTorch) {
  EXPECT_EQ(window_output_extent(112, 3, 2, 1, 1, 1, false), 56);  // ResNet stem max pool
  EXPECT_EQ(window_output_extent(5, 2, 2, 0, 0, 1, false), 2);
  EXPECT_EQ(window_output_extent(5, 2, 2, 0, 0, 1, true), 3);
  // ceil mode with padding: (5+2-2+1)/2+1 = 4, but window 3 would start at 6 >= 5+1: dropped.
  EXPECT_EQ(window_output_extent(5, 2, 2, 1, 1, 1, true), 3);
  // Asymmetric padding: the end padding lets windows go further than the begin padding.
  EXPECT_EQ(window_output_extent(5, 3, 1, 0, 2, 1, false), 5);
  EXPECT_EQ(window_output_extent(5, 3, 1, 1, 0, 1, false), 4);
  EXPECT_EQ(window_output_extent(5, 3, 2, 0, 2, 1, true), 3);
  // Dilation 2 makes a 3-tap kernel span 5.
  EXPECT_EQ(window_output_extent(10, 3, 2, 0, 0, 2, false), 3);
  // A kernel larger than the input gives no output (floor division rounds down).
  EXPECT_EQ(window_output_extent(2, 4, 1, 0, 0, 1, false), -1);
  EXPECT_EQ(window_output_extent(2, 4, 3, 0, 0, 1, false), 0);
}

TEST(BroadcastShapes, NumPyRules) {
  EXPECT_EQ(broadcast_shapes({2, 3, 4}, {3, 1}, "t"), (Shape{2, 3, 4}));
  EXPECT_EQ(broadcast_shapes({1, 4}, {3, 1}, "t"), (Shape{3, 4}));
  EXPECT_EQ(broadcast_shapes({}, {2, 3}, "t"), (Shape{2, 3}));
  EXPECT_EQ(broadcast_shapes({1, 64, 1, 1}, {8, 64, 7, 7}, "t"), (Shape{8, 64, 7, 7}));
  try {
    broadcast_shapes({2, 3}, {4}, "node 'x' (add)");
    ADD_FAILURE() << "accepted [2,3] + [4]";
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), ExitCode::kInvalidModel);
    EXPECT_STREQ(e.what(), "node 'x' (add): shapes [2,3] and [4] do not broadcast");
  }
}

// ---- conv2d ----------------------------------------------------------------------

TEST(ShapeRules, Conv2d) {
  EXPECT_EQ(infer(one_node(OpKind::Conv2d, conv({1, 1}, {1, 1, 1, 1}, {1, 1}, 1), {{1, 3, 8, 8}, {4, 3, 3, 3}, {4}})),
            (Shape{1, 4, 8, 8}));
  // Strided, dilated (span 5): (10-5)/2+1 = 3; width (9-5)/2+1 = 3.
  EXPECT_EQ(infer(one_node(OpKind::Conv2d, conv({2, 2}, {0, 0, 0, 0}, {2, 2}, 1), {{2, 3, 10, 9}, {5, 3, 3, 3}})),
            (Shape{2, 5, 3, 3}));
  // Asymmetric padding: height 5+0+2-3+1 = 5, width 5+1+0-3+1 = 4.
  EXPECT_EQ(infer(one_node(OpKind::Conv2d, conv({1, 1}, {0, 1, 2, 0}, {1, 1}, 1), {{1, 1, 5, 5}, {1, 1, 3, 3}})),
            (Shape{1, 1, 5, 4}));
  // Grouped and depthwise.
  EXPECT_EQ(infer(one_node(OpKind::Conv2d, conv({1, 1}, {0, 0, 0, 0}, {1, 1}, 2), {{1, 8, 5, 5}, {6, 4, 1, 1}})),
            (Shape{1, 6, 5, 5}));
  EXPECT_EQ(infer(one_node(OpKind::Conv2d, conv({2, 2}, {1, 1, 1, 1}, {1, 1}, 8), {{1, 8, 6, 6}, {8, 1, 3, 3}})),
            (Shape{1, 8, 3, 3}));
}

TEST(ShapeRules, Conv2dErrors) {
  const Conv2dAttrs plain = conv({1, 1}, {0, 0, 0, 0}, {1, 1}, 1);
  expect_invalid(one_node(OpKind::Conv2d, plain, {{1, 3, 8, 8}}), "expected 2 to 3 inputs, got 1");
  expect_invalid(one_node(OpKind::Conv2d, plain, {{1, 3, 8, 8}, {4, 3, 3, 3}, {4}, {4}}), "expected 2 to 3 inputs, got 4");
  expect_invalid(one_node(OpKind::Conv2d, plain, {{3, 8, 8}, {4, 3, 3, 3}}), "input 'in0' must have rank 4");
  expect_invalid(one_node(OpKind::Conv2d, plain, {{1, 3, 8, 8}, {4, 27}}), "weight 'in1' must have rank 4");
  expect_invalid(one_node(OpKind::Conv2d, plain, {{1, 32, 8, 8}, {4, 64, 3, 3}}),
                 "input has 32 channels but weight expects 64 (groups=1)");
  expect_invalid(one_node(OpKind::Conv2d, conv({1, 1}, {0, 0, 0, 0}, {1, 1}, 2), {{1, 8, 8, 8}, {4, 2, 3, 3}}),
                 "input has 8 channels but weight expects 4 (groups=2)");
  expect_invalid(one_node(OpKind::Conv2d, conv({1, 1}, {0, 0, 0, 0}, {1, 1}, 3), {{1, 8, 8, 8}, {3, 2, 3, 3}}),
                 "input channels 8 are not divisible by groups=3");
  expect_invalid(one_node(OpKind::Conv2d, conv({1, 1}, {0, 0, 0, 0}, {1, 1}, 2), {{1, 8, 8, 8}, {3, 4, 3, 3}}),
                 "output channels 3 are not divisible by groups=2");
  expect_invalid(one_node(OpKind::Conv2d, conv({1, 1}, {0, 0, 0, 0}, {1, 1}, 0), {{1, 8, 8, 8}, {3, 4, 3, 3}}),
                 "groups must be positive, got 0");
  expect_invalid(one_node(OpKind::Conv2d, conv({0, 1}, {0, 0, 0, 0}, {1, 1}, 1), {{1, 3, 8, 8}, {4, 3, 3, 3}}),
                 "stride must be positive, got [0,1]");
  expect_invalid(one_node(OpKind::Conv2d, conv({1, 1}, {0, 0, 0, 0}, {1, -1}, 1), {{1, 3, 8, 8}, {4, 3, 3, 3}}),
                 "dilation must be positive, got [1,-1]");
  expect_invalid(one_node(OpKind::Conv2d, conv({1, 1}, {0, -1, 0, 0}, {1, 1}, 1), {{1, 3, 8, 8}, {4, 3, 3, 3}}),
                 "padding must be non-negative");
  expect_invalid(one_node(OpKind::Conv2d, plain, {{1, 3, 2, 8}, {4, 3, 3, 3}}), "output height would be 0");
  expect_invalid(one_node(OpKind::Conv2d, conv({1, 1}, {0, 0, 0, 0}, {1, 5}, 1), {{1, 3, 8, 8}, {4, 3, 3, 3}}),
                 "output width would be -2");
  expect_invalid(one_node(OpKind::Conv2d, plain, {{1, 3, 8, 8}, {4, 3, 3, 3}, {3}}), "bias 'in2' must have shape [4], got [3]");
}

// ---- normalisation and elementwise ----------------------------------------------

TEST(ShapeRules, BatchNormAndAffine) {
  EXPECT_EQ(infer(one_node(OpKind::BatchNorm, BatchNormAttrs{}, {{2, 3, 4, 4}, {3}, {3}})), (Shape{2, 3, 4, 4}));
  EXPECT_EQ(infer(one_node(OpKind::BatchNorm, BatchNormAttrs{}, {{2, 3}, {3}, {3}, {3}, {3}})), (Shape{2, 3}));
  expect_invalid(one_node(OpKind::BatchNorm, BatchNormAttrs{}, {{2, 3}, {3}, {3}, {3}}), "expected 3 or 5 inputs, got 4");
  expect_invalid(one_node(OpKind::BatchNorm, BatchNormAttrs{}, {{2, 3}, {3}, {3}, {3}, {2}}),
                 "beta 'in4' must have shape [3], got [2]");
  expect_invalid(one_node(OpKind::BatchNorm, BatchNormAttrs{}, {{3}, {3}, {3}}), "input 'in0' must have rank >= 2");
  expect_invalid(one_node(OpKind::BatchNorm, BatchNormAttrs{.eps = -1}, {{2, 3}, {3}, {3}}),
                 "eps must be finite and non-negative");

  EXPECT_EQ(infer(one_node(OpKind::Affine, NoAttrs{}, {{1, 5, 2}, {5}, {5}})), (Shape{1, 5, 2}));
  expect_invalid(one_node(OpKind::Affine, NoAttrs{}, {{1, 5, 2}, {5}, {1, 5}}), "shift 'in2' must have shape [5]");
  expect_invalid(one_node(OpKind::Affine, NoAttrs{}, {{1, 5, 2}, {5}}), "expected 3 inputs, got 2");
}

TEST(ShapeRules, UnaryOpsKeepShape) {
  for (OpKind op : {OpKind::Relu, OpKind::HardSwish, OpKind::Sigmoid, OpKind::Softplus, OpKind::Dropout}) {
    EXPECT_EQ(infer(one_node(op, NoAttrs{}, {{2, 7, 1}})), (Shape{2, 7, 1})) << op_name(op);
    expect_invalid(one_node(op, NoAttrs{}, {{2, 7, 1}, {2, 7, 1}}), "expected 1 input, got 2");
  }
  EXPECT_EQ(infer(one_node(OpKind::Clamp, ClampAttrs{0, 6}, {{3, 4}})), (Shape{3, 4}));
  expect_invalid(one_node(OpKind::Clamp, ClampAttrs{0, std::nanf("")}, {{3, 4}}), "clamp bounds must not be NaN");
  EXPECT_EQ(infer(one_node(OpKind::Elu, EluAttrs{0.5f}, {{3, 4}})), (Shape{3, 4}));
  expect_invalid(one_node(OpKind::Elu, EluAttrs{INFINITY}, {{3, 4}}), "elu alpha must be finite");
}

TEST(ShapeRules, AddMulBroadcast) {
  for (OpKind op : {OpKind::Add, OpKind::Mul, OpKind::Max, OpKind::Min, OpKind::Div}) {
    EXPECT_EQ(infer(one_node(op, NoAttrs{}, {{2, 3, 4}, {3, 1}})), (Shape{2, 3, 4}));
    EXPECT_EQ(infer(one_node(op, NoAttrs{}, {{1, 4}, {3, 1}})), (Shape{3, 4}));
    EXPECT_EQ(infer(one_node(op, NoAttrs{}, {{}, {2, 3}})), (Shape{2, 3}));
    expect_invalid(one_node(op, NoAttrs{}, {{2, 3}, {4}}), "shapes [2,3] and [4] do not broadcast");
    expect_invalid(one_node(op, NoAttrs{}, {{2, 3}}), "expected 2 inputs, got 1");
  }
}

// ---- pooling -----------------------------------------------------------------------

TEST(ShapeRules, Pool2d) {
  for (OpKind op : {OpKind::MaxPool2d, OpKind::AvgPool2d}) {
    EXPECT_EQ(infer(one_node(op, pool({3, 3}, {2, 2}, {1, 1, 1, 1}, false), {{1, 64, 112, 112}})),
              (Shape{1, 64, 56, 56}));
    EXPECT_EQ(infer(one_node(op, pool({2, 2}, {2, 2}, {0, 0, 0, 0}, true), {{1, 1, 5, 5}})), (Shape{1, 1, 3, 3}));
    EXPECT_EQ(infer(one_node(op, pool({2, 2}, {2, 2}, {1, 1, 1, 1}, true), {{1, 1, 5, 5}})), (Shape{1, 1, 3, 3}));
    // Asymmetric: height (5+0+2-3)/1+1 = 5, width (5+1+0-3)+1 = 4.
    EXPECT_EQ(infer(one_node(op, pool({3, 3}, {1, 1}, {0, 1, 2, 0}, false), {{1, 2, 5, 5}})), (Shape{1, 2, 5, 4}));
  }
  EXPECT_EQ(infer(one_node(OpKind::MaxPool2d, pool({3, 3}, {1, 1}, {0, 0, 0, 0}, false, {2, 1}), {{1, 1, 9, 9}})),
            (Shape{1, 1, 5, 7}));
}

TEST(ShapeRules, Pool2dErrors) {
  expect_invalid(one_node(OpKind::AvgPool2d, pool({3, 3}, {1, 1}, {0, 0, 0, 0}, false, {2, 2}), {{1, 1, 9, 9}}),
                 "average pooling has no dilation");
  expect_invalid(one_node(OpKind::MaxPool2d, pool({0, 3}, {1, 1}, {0, 0, 0, 0}, false), {{1, 1, 9, 9}}),
                 "kernel must be positive, got [0,3]");
  expect_invalid(one_node(OpKind::MaxPool2d, pool({3, 3}, {1, 0}, {0, 0, 0, 0}, false), {{1, 1, 9, 9}}),
                 "stride must be positive");
  expect_invalid(one_node(OpKind::MaxPool2d, pool({3, 3}, {1, 1}, {0, 0, 0, -2}, false), {{1, 1, 9, 9}}),
                 "padding must be non-negative");
  expect_invalid(one_node(OpKind::MaxPool2d, pool({3, 3}, {1, 1}, {0, 0, 0, 0}, false), {{1, 9, 9}}),
                 "must have rank 4");
  expect_invalid(one_node(OpKind::AvgPool2d, pool({3, 3}, {1, 1}, {0, 0, 0, 0}, false), {{1, 1, 2, 9}}),
                 "output height would be 0");
  // A window wholly in the begin padding (pad 3 >= kernel 3), or in the end padding.
  expect_invalid(one_node(OpKind::AvgPool2d, pool({3, 3}, {1, 1}, {3, 0, 0, 0}, false), {{1, 1, 4, 4}}),
                 "a pooling window along the height reads no input element");
  expect_invalid(one_node(OpKind::MaxPool2d, pool({2, 2}, {1, 1}, {0, 0, 0, 2}, false), {{1, 1, 4, 4}}),
                 "a pooling window along the width reads no input element");
  // A dilated window straddling a one-row input: its taps at -1 and +1 both miss it
  // (found by aotc-fuzz: the reference gave -inf, the kernel NaN).
  expect_invalid(one_node(OpKind::MaxPool2d, pool({2, 1}, {3, 1}, {1, 0, 1, 0}, false, {2, 2}), {{1, 17, 1, 33}}),
                 "a pooling window along the height reads no input element, only padding (input 1, kernel 2, "
                 "stride 3, padding before 1, dilation 2)");
  // The same window on a two-row input reads row 1: valid.
  EXPECT_EQ(infer(one_node(OpKind::MaxPool2d, pool({2, 1}, {3, 1}, {1, 0, 1, 0}, false, {2, 2}), {{1, 17, 2, 33}})),
            (Shape{1, 17, 1, 33}));
  expect_invalid(one_node(OpKind::MaxPool2d, pool({2, 2}, {2, 2}, {0, 0, 0, 0}, false), {{1, 1, 4, 4}, {1}}),
                 "expected 1 input, got 2");
}

TEST(ShapeRules, AdaptiveAndGlobalPool) {
  EXPECT_EQ(infer(one_node(OpKind::AdaptiveAvgPool2d, AdaptiveAvgPool2dAttrs{{3, 2}}, {{1, 2, 7, 5}})),
            (Shape{1, 2, 3, 2}));
  EXPECT_EQ(infer(one_node(OpKind::AdaptiveAvgPool2d, AdaptiveAvgPool2dAttrs{{9, 9}}, {{1, 2, 7, 5}})),
            (Shape{1, 2, 9, 9}));
  expect_invalid(one_node(OpKind::AdaptiveAvgPool2d, AdaptiveAvgPool2dAttrs{{0, 2}}, {{1, 2, 7, 5}}),
                 "output_size must be positive");
  EXPECT_EQ(infer(one_node(OpKind::GlobalAvgPool, NoAttrs{}, {{2, 3, 5, 4}})), (Shape{2, 3, 1, 1}));
  expect_invalid(one_node(OpKind::GlobalAvgPool, NoAttrs{}, {{2, 3}}), "input 'in0' must have rank 4, got [2,3]");
}

// ---- linear, flatten, reshape, concat, softmax, pad -------------------------------

TEST(ShapeRules, Linear) {
  EXPECT_EQ(infer(one_node(OpKind::Linear, NoAttrs{}, {{2, 3, 4}, {5, 12}, {5}})), (Shape{2, 5}));
  EXPECT_EQ(infer(one_node(OpKind::Linear, NoAttrs{}, {{1, 512, 1, 1}, {10, 512}})), (Shape{1, 10}));
  expect_invalid(one_node(OpKind::Linear, NoAttrs{}, {{2, 3, 4}, {5, 4}}),
                 "input [2,3,4] has 12 features per row but weight [5,4] expects 4");
  expect_invalid(one_node(OpKind::Linear, NoAttrs{}, {{2, 12}, {5, 12}, {12}}), "bias 'in2' must have shape [5]");
  expect_invalid(one_node(OpKind::Linear, NoAttrs{}, {{2, 12}, {5, 12, 1}}), "weight 'in1' must have rank 2");
  expect_invalid(one_node(OpKind::Linear, NoAttrs{}, {{12}, {5, 12}}), "input 'in0' must have rank >= 2");
}

TEST(ShapeRules, FlattenAndReshape) {
  EXPECT_EQ(infer(one_node(OpKind::Flatten, FlattenAttrs{}, {{2, 3, 4, 5}})), (Shape{2, 60}));
  EXPECT_EQ(infer(one_node(OpKind::Flatten, FlattenAttrs{2, 3}, {{2, 3, 4, 5}})), (Shape{2, 3, 20}));
  EXPECT_EQ(infer(one_node(OpKind::Flatten, FlattenAttrs{0, -2}, {{2, 3, 4, 5}})), (Shape{24, 5}));
  EXPECT_EQ(infer(one_node(OpKind::Flatten, FlattenAttrs{1, 1}, {{2, 3, 4}})), (Shape{2, 3, 4}));
  expect_invalid(one_node(OpKind::Flatten, FlattenAttrs{4, -1}, {{2, 3, 4, 5}}), "start_dim=4, end_dim=-1");
  expect_invalid(one_node(OpKind::Flatten, FlattenAttrs{2, 1}, {{2, 3, 4, 5}}), "are not a valid dim range");
  expect_invalid(one_node(OpKind::Flatten, FlattenAttrs{0, -5}, {{2, 3, 4, 5}}), "are not a valid dim range");

  EXPECT_EQ(infer(one_node(OpKind::Reshape, ReshapeAttrs{{3, 4}}, {{2, 6}})), (Shape{3, 4}));
  expect_invalid(one_node(OpKind::Reshape, ReshapeAttrs{{3, 5}}, {{2, 6}}), "cannot reshape [2,6] (12 elements) to [3,5]");
  expect_invalid(one_node(OpKind::Reshape, ReshapeAttrs{{-1, 12}}, {{2, 6}}), "must be fully resolved");
}

TEST(ShapeRules, Concat) {
  EXPECT_EQ(infer(one_node(OpKind::Concat, AxisAttrs{1}, {{1, 2, 3}, {1, 4, 3}, {1, 1, 3}})), (Shape{1, 7, 3}));
  EXPECT_EQ(infer(one_node(OpKind::Concat, AxisAttrs{0}, {{2, 3}})), (Shape{2, 3}));
  expect_invalid(one_node(OpKind::Concat, AxisAttrs{1}, {{1, 2, 3}, {1, 4, 2}}),
                 "input 'in1' [1,4,2] does not match [1,2,3] except along axis 1");
  expect_invalid(one_node(OpKind::Concat, AxisAttrs{1}, {{1, 2, 3}, {1, 4}}), "does not match");
  expect_invalid(one_node(OpKind::Concat, AxisAttrs{3}, {{1, 2, 3}}), "axis 3 is out of range for input [1,2,3]");
  expect_invalid(one_node(OpKind::Concat, AxisAttrs{-1}, {{1, 2, 3}}), "axis -1 is out of range");
  expect_invalid(one_node(OpKind::Concat, AxisAttrs{0}, {}), "expected at least 1 input, got 0");
}

TEST(ShapeRules, Softmax) {
  EXPECT_EQ(infer(one_node(OpKind::Softmax, AxisAttrs{1}, {{2, 10}})), (Shape{2, 10}));
  EXPECT_EQ(infer(one_node(OpKind::Softmax, AxisAttrs{0}, {{2, 10}})), (Shape{2, 10}));
  expect_invalid(one_node(OpKind::Softmax, AxisAttrs{2}, {{2, 10}}), "axis 2 is out of range for input [2,10]");
}

TEST(ShapeRules, Pad) {
  EXPECT_EQ(infer(one_node(OpKind::Pad, PadAttrs{{0, 1, 2, 0, 3, 4}, 0}, {{1, 2, 3}})), (Shape{1, 6, 9}));
  expect_invalid(one_node(OpKind::Pad, PadAttrs{{1, 1}, 0}, {{1, 2, 3}}), "pads has 2 values but input [1,2,3] needs 6");
  EXPECT_EQ(infer(one_node(OpKind::Pad, PadAttrs{{-1, 2, 0, -3}, 0}, {{4, 5}})), (Shape{3, 4}));  // crops
  expect_invalid(one_node(OpKind::Pad, PadAttrs{{-2, -2}, 0}, {{4}}),
                 "pads [-2,-2] leave dim 0 of input [4] with extent 0 (negative pads crop");
  expect_invalid(one_node(OpKind::Pad, PadAttrs{{0, int64_t{1} << 40}, 0}, {{4}}),
                 "pad amounts must be in [-2^31, 2^31], got 1099511627776");
}

// ---- sizes, structure and epilogues ------------------------------------------------

TEST(ShapeRules, AbsurdSizes) {
  expect_invalid(one_node(OpKind::Relu, NoAttrs{}, {{0, 3}}), "input 'in0' has invalid shape [0,3]");
  expect_invalid(one_node(OpKind::Relu, NoAttrs{}, {{65536, 65536, 2}}), "has invalid shape [65536,65536,2]");
  EXPECT_EQ(infer(one_node(OpKind::Relu, NoAttrs{}, {{65536, 32768}})), (Shape{65536, 32768}));  // exactly 2^31
  expect_invalid(one_node(OpKind::Pad, PadAttrs{{1, 0}, 0}, {{int64_t{1} << 31}}), "output shape [2147483649] is absurd");
  expect_invalid(one_node(OpKind::Reshape, ReshapeAttrs{{int64_t{1} << 40, int64_t{1} << 40}}, {{4}}), "cannot reshape");
}

TEST(ShapeRules, Structure) {
  Graph g = one_node(OpKind::Relu, NoAttrs{}, {{2}});
  g.nodes[0].outputs.push_back(g.add_tensor({.name = "extra"}));
  expect_invalid(g, "expected 1 output, got 2");

  g = one_node(OpKind::Relu, NoAttrs{}, {{2}});
  g.nodes[0].inputs[0] = 42;
  expect_invalid(g, "input tensor id 42 is out of range");
}

TEST(ShapeRules, Epilogue) {
  const Conv2dAttrs plain = conv({1, 1}, {0, 0, 0, 0}, {1, 1}, 1);
  auto conv_with = [&](PostOp op, const std::vector<Shape>& operand_shapes) {
    Graph g = one_node(OpKind::Conv2d, plain, {{1, 3, 4, 4}, {8, 3, 1, 1}});
    std::vector<TensorId> operands;
    for (const Shape& s : operand_shapes) operands.push_back(g.add_tensor({.name = "e", .shape = s}));
    g.nodes[0].append_post_op(op, operands);
    return g;
  };
  const PostOp affine{.kind = PostOpKind::kAffine}, add{.kind = PostOpKind::kAdd}, mul{.kind = PostOpKind::kMul};
  EXPECT_EQ(infer(conv_with(affine, {{8}, {8}})), (Shape{1, 8, 4, 4}));
  EXPECT_EQ(infer(conv_with(add, {{1, 8, 4, 4}})), (Shape{1, 8, 4, 4}));
  EXPECT_EQ(infer(conv_with(mul, {{8, 1, 1}})), (Shape{1, 8, 4, 4}));
  EXPECT_EQ(infer(conv_with(PostOp{.kind = PostOpKind::kRelu}, {})), (Shape{1, 8, 4, 4}));
  expect_invalid(conv_with(affine, {{8}, {3}}), "epilogue affine shift 'e' must have shape [8], got [3]");
  expect_invalid(conv_with(add, {{2, 8, 4, 4}}), "epilogue add operand 'e' [2,8,4,4] would change the output shape [1,8,4,4]");
  expect_invalid(conv_with(mul, {{8, 4}}), "do not broadcast");
  expect_invalid(conv_with(PostOp{.kind = PostOpKind::kClamp, .min = std::nanf(""), .max = 1}, {}),
                 "epilogue clamp bounds must not be NaN");

  Graph g = conv_with(add, {{1, 8, 4, 4}});
  g.nodes[0].epilogue[0].input = 0;
  expect_invalid(g, "epilogue add refers to input 0 but its operands are at input 2");
  g = conv_with(affine, {{8}, {8}});
  g.nodes[0].inputs.resize(1);
  expect_invalid(g, "epilogue needs 2 operands but the node has only 1 inputs");
}

// ---- the infer-shapes pass ----------------------------------------------------------

TEST(InferShapesPass, SetsShapesInOrderAndCountsNodes) {
  Graph g = one_node(OpKind::MaxPool2d, pool({2, 2}, {2, 2}, {0, 0, 0, 0}, false), {{1, 3, 8, 8}});
  const TensorId pooled = g.nodes[0].outputs[0];
  const TensorId flat = g.add_tensor({.name = "flat"});
  g.nodes.push_back({.name = "f", .op = OpKind::Flatten, .attrs = FlattenAttrs{}, .inputs = {pooled}, .outputs = {flat}});
  g.outputs = {flat};
  PassCounters counters;
  g = infer_shapes(std::move(g), counters);
  EXPECT_EQ(g.tensor(pooled).shape, (Shape{1, 3, 4, 4}));
  EXPECT_EQ(g.tensor(flat).shape, (Shape{1, 48}));
  EXPECT_EQ(counters.get("nodes"), 2);
}

TEST(InferShapesPass, RejectsADeclaredShapeThatDisagrees) {
  Graph g = one_node(OpKind::GlobalAvgPool, NoAttrs{}, {{1, 3, 8, 8}});
  g.tensor(g.nodes[0].outputs[0]).shape = {1, 3};
  PassCounters counters;
  try {
    (void)infer_shapes(std::move(g), counters);
    ADD_FAILURE() << "accepted a wrong declared shape";
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), ExitCode::kInvalidModel);
    EXPECT_STREQ(e.what(), "node 'n' (global_avg_pool): output 'out' is declared as [1,3] but the op produces [1,3,1,1]");
  }
}

TEST(InferShapesPass, AcceptsAMatchingDeclaredShape) {
  Graph g = one_node(OpKind::GlobalAvgPool, NoAttrs{}, {{1, 3, 8, 8}});
  g.tensor(g.nodes[0].outputs[0]).shape = {1, 3, 1, 1};
  PassCounters counters;
  g = infer_shapes(std::move(g), counters);
  EXPECT_EQ(g.tensor(g.nodes[0].outputs[0]).shape, (Shape{1, 3, 1, 1}));
}

}  // namespace
}  // namespace aotc
