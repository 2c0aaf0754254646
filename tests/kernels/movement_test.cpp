// Data movement and normalisation kernels against the reference evaluator:
// concat (any axis and rank), softmax (any axis), constant pad (any rank);
// and the NCHW <-> NCHWc layout conversions and the strided subsample against
// index arithmetic.
#include <gtest/gtest.h>

#include "generators/concat.h"
#include "generators/layout.h"
#include "generators/pad.h"
#include "generators/softmax.h"
#include "generators/subsample.h"
#include "kernel_test_support.h"

namespace aotc::kernel_test {
namespace {

// ---- concat ----

struct ConcatCase {
  std::string name;
  int axis;
  std::vector<Shape> inputs;
  std::vector<PostOpCase> epilogue = {};
};
void PrintTo(const ConcatCase& c, std::ostream* os) { *os << c.name; }

class ConcatKernel : public ::testing::TestWithParam<ConcatCase> {};

TEST_P(ConcatKernel, MatchesReference) {
  const ConcatCase& c = GetParam();
  NodeUnderTest node(OpKind::Concat, AxisAttrs{c.axis}, 19);
  for (const Shape& s : c.inputs) node.add_operand(s);
  node.add_post_ops(c.epilogue);
  gen::ConcatSpec spec{c.axis, c.inputs, node.epilogue_specs()};
  ASSERT_EQ(gen::concat_output_shape(spec), node.output_shape());
  run_and_compare(node, gen::concat(spec, host_target()), node.output_shape());
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(All, ConcatKernel, ::testing::Values(
    ConcatCase{"channels_densenet", 1, {{1, 32, 14, 14}, {1, 8, 14, 14}, {1, 8, 14, 14}}},
    ConcatCase{"channels_odd_relu", 1, {{2, 3, 5, 7}, {2, 5, 5, 7}}, {relu()}},
    ConcatCase{"batch_axis", 0, {{1, 4, 3, 17}, {2, 4, 3, 17}}},
    ConcatCase{"innermost_axis", 3, {{1, 2, 3, 20}, {1, 2, 3, 5}, {1, 2, 3, 1}}},
    ConcatCase{"rank2_features", 1, {{3, 10}, {3, 30}}, {add({3, 40})}},
    ConcatCase{"single_input", 2, {{1, 6, 9, 4}}},
    ConcatCase{"rank5_axis2", 2, {{1, 2, 3, 4, 5}, {1, 2, 1, 4, 5}}, {affine()}}
), [](const auto& info) { return info.param.name; });
// clang-format on

// ---- softmax ----

struct SoftmaxCase {
  std::string name;
  Shape shape;
  int axis;
  std::vector<PostOpCase> epilogue = {};
};
void PrintTo(const SoftmaxCase& c, std::ostream* os) { *os << c.name; }

class SoftmaxKernel : public ::testing::TestWithParam<SoftmaxCase> {};

TEST_P(SoftmaxKernel, MatchesReference) {
  const SoftmaxCase& c = GetParam();
  NodeUnderTest node(OpKind::Softmax, AxisAttrs{c.axis}, 23);
  node.add_operand(c.shape);
  node.add_post_ops(c.epilogue);
  gen::SoftmaxSpec spec{c.shape, c.axis, node.epilogue_specs()};
  run_and_compare(node, gen::softmax(spec, host_target()), c.shape);
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(All, SoftmaxKernel, ::testing::Values(
    SoftmaxCase{"classifier_1000", {1, 1000}, 1},
    SoftmaxCase{"batch_classes_odd", {3, 7}, 1},
    SoftmaxCase{"channels_of_nchw", {2, 5, 3, 20}, 1},
    SoftmaxCase{"innermost_of_nchw", {1, 3, 4, 9}, 3},
    SoftmaxCase{"outermost_axis", {4, 6}, 0},
    SoftmaxCase{"rank1", {13}, 0, {mul({13})}}
), [](const auto& info) { return info.param.name; });
// clang-format on

TEST(SoftmaxKernel, StableForLargeLogits) {
  // exp(1000) overflows float: only the max-subtracted form gives [0.5, 0.5, 0].
  gen::SoftmaxSpec spec{{1, 3}, 1, {}};
  gen::Kernel kernel = gen::softmax(spec, host_target());
  const Value x{{1, 3}, {1000.0f, 1000.0f, -1000.0f}};
  const KernelRun run = run_kernel(kernel, {&x}, {1, 3}, host_target());
  ASSERT_EQ(run.output.size(), 3u);
  EXPECT_FLOAT_EQ(run.output[0], 0.5f);
  EXPECT_FLOAT_EQ(run.output[1], 0.5f);
  EXPECT_FLOAT_EQ(run.output[2], 0.0f);
}

// ---- pad ----

struct PadCase {
  std::string name;
  Shape input;
  std::vector<int64_t> pads;
  float value = 0;
  std::vector<PostOpCase> epilogue = {};
};
void PrintTo(const PadCase& c, std::ostream* os) { *os << c.name; }

class PadKernel : public ::testing::TestWithParam<PadCase> {};

TEST_P(PadKernel, MatchesReference) {
  const PadCase& c = GetParam();
  PadAttrs attrs;
  attrs.pads = c.pads;
  attrs.value = c.value;
  NodeUnderTest node(OpKind::Pad, attrs, 29);
  node.add_operand(c.input);
  node.add_post_ops(c.epilogue);
  gen::PadSpec spec{c.input, c.pads, c.value, node.epilogue_specs()};
  ASSERT_EQ(gen::pad_output_shape(spec), node.output_shape());
  run_and_compare(node, gen::pad(spec, host_target()), node.output_shape());
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(All, PadKernel, ::testing::Values(
    PadCase{"spatial_asymmetric", {1, 3, 10, 17}, {0, 0, 1, 2, 0, 0, 3, 1}},
    PadCase{"value_and_relu", {2, 4, 5, 5}, {0, 1, 1, 1, 1, 2, 0, 1}, -1.5f, {relu()}},
    PadCase{"rank2", {3, 20}, {1, 0, 2, 5}, 0.25f},
    PadCase{"rank5", {1, 2, 3, 2, 4}, {0, 1, 0, 2, 1, 1, 0, 1, 0, 3}},
    PadCase{"no_pads", {1, 4, 6, 6}, {0, 0, 0, 0, 0, 0, 0, 0}},
    // Negative pads crop: a channel split, a spatial window, and a crop on one side with a pad on the other.
    PadCase{"crop_channels", {1, 8, 5, 7}, {0, -3, 0, 0, 0, -1, 0, 0}},
    PadCase{"crop_window_relu", {2, 3, 9, 20}, {0, 0, -2, -5, 0, 0, -1, -3}, 0, {relu()}},
    PadCase{"crop_and_pad", {1, 2, 6, 6}, {0, 0, -1, 2, 0, 0, 3, -4}, 0.5f}
), [](const auto& info) { return info.param.name; });
// clang-format on

// ---- layout ----

struct LayoutCase {
  std::string name;
  gen::LayoutSpec::Conversion conversion;
  Shape nchw;
  int block;
};
void PrintTo(const LayoutCase& c, std::ostream* os) { *os << c.name; }

class LayoutKernel : public ::testing::TestWithParam<LayoutCase> {};

// The kernel and the host conversion against index arithmetic:
// NCHW [n][c][h][w] <-> NCHWc [n][c / B][h][w][c % B].
TEST_P(LayoutKernel, BlocksChannels) {
  const LayoutCase& c = GetParam();
  const gen::LayoutSpec spec{c.conversion, c.nchw, c.block};
  const Shape in_view = gen::layout_input_view(spec), out_view = gen::layout_output_view(spec);
  Value x{in_view, std::vector<float>(static_cast<size_t>(num_elements(in_view)))};
  for (size_t i = 0; i < x.data.size(); ++i) x.data[i] = static_cast<float>(i);  // each element names its index
  const bool to_blocked = c.conversion == gen::LayoutSpec::Conversion::kNchwToBlocked;
  std::vector<float> expected(x.data.size());
  const int64_t b = c.block, channels = c.nchw[1], h_count = c.nchw[2], w_count = c.nchw[3];
  for (int64_t n = 0; n < c.nchw[0]; ++n)
    for (int64_t ch = 0; ch < channels; ++ch)
      for (int64_t h = 0; h < h_count; ++h)
        for (int64_t w = 0; w < w_count; ++w) {
          const int64_t nchw = ((n * channels + ch) * h_count + h) * w_count + w;
          const int64_t blocked = (((n * channels / b + ch / b) * h_count + h) * w_count + w) * b + ch % b;
          expected[static_cast<size_t>(to_blocked ? blocked : nchw)] = x.data[static_cast<size_t>(to_blocked ? nchw : blocked)];
        }
  EXPECT_EQ(gen::convert_layout_on_host(spec, x.data), expected);
  gen::Kernel kernel = gen::convert_layout(spec, host_target());
  SCOPED_TRACE(kernel.schedule);
  const KernelRun run = run_kernel(kernel, {&x}, out_view, host_target());
  EXPECT_EQ(run.output, expected);
  EXPECT_EQ(run.heap_allocations, 0);
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(All, LayoutKernel, ::testing::Values(
    LayoutCase{"to_blocked_16", gen::LayoutSpec::Conversion::kNchwToBlocked, {1, 32, 14, 14}, 16},
    LayoutCase{"to_blocked_8_batch2_odd", gen::LayoutSpec::Conversion::kNchwToBlocked, {2, 24, 5, 7}, 8},
    LayoutCase{"to_nchw_16", gen::LayoutSpec::Conversion::kBlockedToNchw, {1, 144, 28, 28}, 16},
    LayoutCase{"to_nchw_4_odd", gen::LayoutSpec::Conversion::kBlockedToNchw, {2, 12, 7, 3}, 4}
), [](const auto& info) { return info.param.name; });
// clang-format on

// ---- subsample ----

struct SubsampleCase {
  std::string name;
  Shape input;
  std::array<int, 2> stride;
};
void PrintTo(const SubsampleCase& c, std::ostream* os) { *os << c.name; }

class SubsampleKernel : public ::testing::TestWithParam<SubsampleCase> {};

// out[n][c][y][x] = in[n][c][y * sy][x * sx], with the last row and column
// kept when H or W is not a multiple of the stride.
TEST_P(SubsampleKernel, KeepsEveryStridePixel) {
  const SubsampleCase& c = GetParam();
  const gen::SubsampleSpec spec{c.input, c.stride};
  const Shape out = gen::subsample_output_shape(spec);
  Value x{c.input, std::vector<float>(static_cast<size_t>(num_elements(c.input)))};
  for (size_t i = 0; i < x.data.size(); ++i) x.data[i] = static_cast<float>(i);  // each element names its index
  std::vector<float> expected;
  for (int64_t plane = 0; plane < c.input[0] * c.input[1]; ++plane)
    for (int64_t y = 0; y < c.input[2]; y += c.stride[0])
      for (int64_t w = 0; w < c.input[3]; w += c.stride[1])
        expected.push_back(x.data[static_cast<size_t>((plane * c.input[2] + y) * c.input[3] + w)]);
  ASSERT_EQ(static_cast<int64_t>(expected.size()), num_elements(out));
  gen::Kernel kernel = gen::subsample(spec, host_target());
  SCOPED_TRACE(kernel.schedule);
  const KernelRun run = run_kernel(kernel, {&x}, out, host_target());
  EXPECT_EQ(run.output, expected);
  EXPECT_EQ(run.heap_allocations, 0);
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(All, SubsampleKernel, ::testing::Values(
    SubsampleCase{"resnet_downsample", {1, 256, 56, 56}, {2, 2}},
    SubsampleCase{"odd_extents_batch2", {2, 3, 7, 13}, {2, 2}},
    SubsampleCase{"stride3_by_1", {1, 5, 10, 9}, {3, 1}},
    SubsampleCase{"narrow_rows", {1, 4, 5, 3}, {1, 4}}
), [](const auto& info) { return info.param.name; });
// clang-format on

}  // namespace
}  // namespace aotc::kernel_test
