// Kernels that move values between positions, against the reference evaluator:
// transpose (ranks 2-5, every schedule: copy, interleaved, tiled, with tails);
// resize, bilinear and nearest, with every flag combination, up and down,
// integer and fractional ratios; depth_to_space of blocks 1 to 9.
#include <gtest/gtest.h>

#include "generators/depth_to_space.h"
#include "generators/resize.h"
#include "generators/transpose.h"
#include "kernel_test_support.h"

namespace aotc::kernel_test {
namespace {

// ---- transpose ----

struct TransposeCase {
  std::string name;
  Shape input;
  std::vector<int> perm;
  std::string schedule;  // the start of the schedule the shapes should pick
  std::vector<PostOpCase> epilogue = {};
};
void PrintTo(const TransposeCase& c, std::ostream* os) { *os << c.name; }

class TransposeKernel : public ::testing::TestWithParam<TransposeCase> {};

TEST_P(TransposeKernel, MatchesReference) {
  const TransposeCase& c = GetParam();
  NodeUnderTest node(OpKind::Transpose, TransposeAttrs{c.perm}, 31);
  node.add_operand(c.input);
  node.add_post_ops(c.epilogue);
  gen::TransposeSpec spec{c.input, c.perm, node.epilogue_specs()};
  ASSERT_EQ(gen::transpose_output_shape(spec), node.output_shape());
  gen::Kernel kernel = gen::transpose(spec, host_target());
  EXPECT_EQ(kernel.schedule.rfind(c.schedule, 0), 0u) << kernel.schedule;
  run_and_compare(node, kernel, node.output_shape());
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(All, TransposeKernel, ::testing::Values(
    // NHWC <-> NCHW at model boundaries: RGB images, a 1-channel mask, feature maps.
    TransposeCase{"nhwc_to_nchw_rgb", {1, 30, 37, 3}, {0, 3, 1, 2}, "transpose interleaved"},
    TransposeCase{"nchw_to_nhwc_rgb", {1, 3, 30, 37}, {0, 2, 3, 1}, "transpose interleaved"},
    TransposeCase{"nchw_to_nhwc_mask", {1, 1, 20, 36}, {0, 2, 3, 1}, "transpose copy"},
    TransposeCase{"nhwc_to_nchw_features", {1, 14, 14, 32}, {0, 3, 1, 2}, "transpose tiled"},
    TransposeCase{"nchw_to_nhwc_features", {1, 32, 14, 14}, {0, 2, 3, 1}, "transpose tiled"},
    TransposeCase{"nhwc_to_nchw_odd_tails", {2, 7, 9, 19}, {0, 3, 1, 2}, "transpose tiled", {relu()}},
    TransposeCase{"nchw_to_nhwc_odd_tails", {2, 19, 5, 13}, {0, 2, 3, 1}, "transpose tiled", {add({19})}},
    TransposeCase{"rank2_matrix", {37, 20}, {1, 0}, "transpose tiled"},
    TransposeCase{"rank3_rotate", {4, 6, 5}, {2, 0, 1}, "transpose tiled"},
    TransposeCase{"rank5", {2, 3, 4, 5, 6}, {0, 4, 2, 1, 3}, "transpose tiled"},
    TransposeCase{"outer_dims_only", {3, 4, 2, 21}, {1, 0, 2, 3}, "transpose copy", {mul({4, 3, 2, 21})}},
    TransposeCase{"identity", {2, 5, 7}, {0, 1, 2}, "transpose copy"},
    TransposeCase{"short_inner_both", {5, 2, 3}, {0, 2, 1}, "transpose interleaved"},
    TransposeCase{"short_inner_dims_apart", {5, 3, 7}, {2, 0, 1}, "transpose interleaved"},
    TransposeCase{"rank1", {11}, {0}, "transpose copy"}
), [](const auto& info) { return info.param.name; });
// clang-format on

TEST(TransposeKernel, RejectsANonPermutation) {
  EXPECT_THROW(gen::transpose_output_shape({{2, 3, 4}, {0, 0, 1}, {}}), std::invalid_argument);
  EXPECT_THROW(gen::transpose_output_shape({{2, 3, 4}, {0, 1}, {}}), std::invalid_argument);
  EXPECT_THROW(gen::transpose_output_shape({{2, 3}, {0, 2}, {}}), std::invalid_argument);
}

// ---- resize ----

enum class Sampling { kPlain, kAlignCorners, kHalfPixelCenters };

struct ResizeCase {
  std::string name;
  OpKind op;
  Shape input;
  std::array<int, 2> size;
  Sampling sampling;
  std::vector<PostOpCase> epilogue = {};
};
void PrintTo(const ResizeCase& c, std::ostream* os) { *os << c.name; }

class ResizeKernel : public ::testing::TestWithParam<ResizeCase> {};

TEST_P(ResizeKernel, MatchesReference) {
  const ResizeCase& c = GetParam();
  ResizeAttrs attrs;
  attrs.size = c.size;
  attrs.align_corners = c.sampling == Sampling::kAlignCorners;
  attrs.half_pixel_centers = c.sampling == Sampling::kHalfPixelCenters;
  NodeUnderTest node(c.op, attrs, 37);
  node.add_operand(c.input);
  node.add_post_ops(c.epilogue);
  gen::ResizeSpec spec;
  spec.kind = c.op == OpKind::ResizeBilinear ? gen::ResizeSpec::Kind::kBilinear : gen::ResizeSpec::Kind::kNearest;
  spec.input_shape = c.input;
  spec.size = {c.size[0], c.size[1]};
  spec.align_corners = attrs.align_corners;
  spec.half_pixel_centers = attrs.half_pixel_centers;
  spec.epilogue = node.epilogue_specs();
  ASSERT_EQ(gen::resize_output_shape(spec), node.output_shape());
  gen::Kernel kernel = gen::resize(spec, host_target());
  const gen::PackedWeights tables = gen::resize_tables(spec);
  const Value table_value{tables.shape, tables.data};
  std::vector<const Value*> inputs = {&node.value(0), &table_value};
  for (size_t i = 2; i < kernel.inputs.size(); ++i) inputs.push_back(&node.value(i - 1));
  SCOPED_TRACE(kernel.schedule);
  expect_matches(node.reference(), run_kernel(kernel, inputs, node.output_shape(), host_target()));
}

constexpr OpKind kBilinear = OpKind::ResizeBilinear, kNearest = OpKind::ResizeNearest;
constexpr Sampling kPlain = Sampling::kPlain, kAlign = Sampling::kAlignCorners, kHalf = Sampling::kHalfPixelCenters;

// clang-format off
INSTANTIATE_TEST_SUITE_P(All, ResizeKernel, ::testing::Values(
    ResizeCase{"bilinear_2x_half_pixel", kBilinear, {1, 16, 8, 8}, {16, 16}, kHalf},
    ResizeCase{"bilinear_2x_plain_odd", kBilinear, {1, 3, 5, 7}, {10, 14}, kPlain},
    ResizeCase{"bilinear_align_corners", kBilinear, {2, 3, 5, 7}, {9, 13}, kAlign, {relu()}},
    ResizeCase{"bilinear_3x_half_pixel", kBilinear, {1, 2, 4, 5}, {12, 15}, kHalf},
    ResizeCase{"bilinear_4x_plain", kBilinear, {1, 2, 3, 6}, {12, 24}, kPlain},
    ResizeCase{"bilinear_fractional_up", kBilinear, {1, 4, 6, 9}, {10, 20}, kPlain},
    ResizeCase{"bilinear_down_half_pixel", kBilinear, {1, 2, 17, 23}, {5, 7}, kHalf, {add({2, 1, 1})}},
    ResizeCase{"bilinear_down_align", kBilinear, {1, 2, 17, 23}, {6, 4}, kAlign},
    ResizeCase{"bilinear_to_one_align", kBilinear, {1, 2, 4, 4}, {1, 1}, kAlign},
    ResizeCase{"bilinear_from_one", kBilinear, {1, 3, 1, 1}, {4, 5}, kHalf},
    ResizeCase{"bilinear_wide_rows_unstaged", kBilinear, {1, 1, 2, 2100}, {3, 2101}, kHalf},
    ResizeCase{"nearest_2x_plain", kNearest, {1, 8, 6, 6}, {12, 12}, kPlain},
    ResizeCase{"nearest_2x_half_pixel", kNearest, {2, 3, 5, 7}, {10, 14}, kHalf},
    ResizeCase{"nearest_align_corners", kNearest, {1, 3, 5, 7}, {9, 13}, kAlign, {sigmoid()}},
    ResizeCase{"nearest_3x_plain", kNearest, {1, 2, 4, 5}, {12, 15}, kPlain},
    ResizeCase{"nearest_3x_half_pixel", kNearest, {1, 2, 4, 5}, {11, 15}, kHalf},
    ResizeCase{"nearest_fractional_up", kNearest, {1, 2, 6, 9}, {10, 20}, kHalf},
    ResizeCase{"nearest_down_plain", kNearest, {1, 2, 17, 23}, {5, 7}, kPlain},
    ResizeCase{"nearest_down_align", kNearest, {1, 2, 17, 23}, {6, 4}, kAlign},
    ResizeCase{"nearest_to_one_half_pixel", kNearest, {1, 2, 4, 4}, {1, 1}, kHalf}
), [](const auto& info) { return info.param.name; });
// clang-format on

// ---- depth_to_space ----

struct DepthToSpaceCase {
  std::string name;
  Shape input;
  int block;
  std::vector<PostOpCase> epilogue = {};
};
void PrintTo(const DepthToSpaceCase& c, std::ostream* os) { *os << c.name; }

class DepthToSpaceKernel : public ::testing::TestWithParam<DepthToSpaceCase> {};

TEST_P(DepthToSpaceKernel, MatchesReference) {
  const DepthToSpaceCase& c = GetParam();
  NodeUnderTest node(OpKind::DepthToSpace, DepthToSpaceAttrs{c.block}, 41);
  node.add_operand(c.input);
  node.add_post_ops(c.epilogue);
  gen::DepthToSpaceSpec spec{c.input, c.block, node.epilogue_specs()};
  ASSERT_EQ(gen::depth_to_space_output_shape(spec), node.output_shape());
  run_and_compare(node, gen::depth_to_space(spec, host_target()), node.output_shape());
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(All, DepthToSpaceKernel, ::testing::Values(
    DepthToSpaceCase{"block2", {1, 16, 5, 7}, 2},
    DepthToSpaceCase{"block2_wide", {1, 8, 3, 37}, 2, {add({2, 6, 74})}},
    DepthToSpaceCase{"block3_batch_relu", {2, 18, 4, 5}, 3, {relu()}},
    DepthToSpaceCase{"block4", {1, 32, 3, 9}, 4},
    DepthToSpaceCase{"block1_identity", {1, 3, 4, 5}, 1},
    DepthToSpaceCase{"block9_gathers", {1, 81, 2, 3}, 9}
), [](const auto& info) { return info.param.name; });
// clang-format on

TEST(DepthToSpaceKernel, RejectsChannelsNotDivisibleByBlockSquared) {
  EXPECT_THROW(gen::depth_to_space_output_shape({{1, 6, 2, 2}, 2, {}}), std::invalid_argument);
}

}  // namespace
}  // namespace aotc::kernel_test
