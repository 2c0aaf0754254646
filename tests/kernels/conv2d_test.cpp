// conv2d kernels against the reference evaluator: every schedule (vectorise
// width, vectorise channels, depthwise; padding staged on the stack or per
// channel chunk), strides, dilations, groups, asymmetric padding, rows
// narrower than a vector, odd channel counts, every post-op, and targets with
// narrower vectors than the host's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "generators/conv2d.h"
#include "kernel_test_support.h"

namespace aotc::kernel_test {
namespace {

struct ConvCase {
  std::string name;
  Shape input;
  int64_t out_channels;
  std::array<int, 2> kernel;
  std::array<int, 2> stride{1, 1};
  std::array<int, 4> pad{0, 0, 0, 0};
  std::array<int, 2> dilation{1, 1};
  int groups = 1;
  bool bias = true;
  std::vector<PostOpCase> epilogue = {};
  std::string target = "host";
};

void PrintTo(const ConvCase& c, std::ostream* os) { *os << c.name; }

class Conv2dKernel : public ::testing::TestWithParam<ConvCase> {};

TEST_P(Conv2dKernel, MatchesReference) {
  const ConvCase& c = GetParam();
  Conv2dAttrs attrs;
  attrs.stride = c.stride;
  attrs.pad = c.pad;
  attrs.dilation = c.dilation;
  attrs.groups = c.groups;
  NodeUnderTest node(OpKind::Conv2d, attrs, 7);
  node.add_operand(c.input);
  node.add_operand({c.out_channels, c.input[1] / c.groups, c.kernel[0], c.kernel[1]});
  if (c.bias) node.add_operand({c.out_channels});
  node.add_post_ops(c.epilogue);

  gen::Conv2dSpec spec;
  spec.input_shape = c.input;
  spec.out_channels = c.out_channels;
  spec.kernel = c.kernel;
  spec.stride = c.stride;
  spec.pad = c.pad;
  spec.dilation = c.dilation;
  spec.groups = c.groups;
  spec.has_bias = c.bias;
  spec.epilogue = node.epilogue_specs();
  ASSERT_EQ(gen::conv2d_output_shape(spec), node.output_shape());

  const Halide::Target target = target_named(c.target);
  gen::Kernel kernel = gen::conv2d(spec, target);
  const gen::PackedWeights packed = gen::pack_conv2d_weights(spec, node.value(1).data.data());
  const Value weights{packed.shape, packed.data};
  std::vector<const Value*> inputs = {&node.value(0), &weights};
  for (size_t i = 2; i < kernel.inputs.size(); ++i) inputs.push_back(&node.value(i));
  SCOPED_TRACE(kernel.schedule);
  expect_matches(node.reference(), run_kernel(kernel, inputs, node.output_shape(), target));
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(Dense, Conv2dKernel, ::testing::Values(
    // vectorise width: rows of >= 16 outputs
    ConvCase{"resnet_3x3", {1, 16, 20, 20}, 32, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true, {relu()}},
    ConvCase{"no_pad_3x3", {1, 8, 20, 22}, 16, {3, 3}},
    ConvCase{"asymmetric_pad", {1, 5, 19, 23}, 16, {3, 3}, {1, 1}, {0, 1, 2, 1}},
    ConvCase{"end_pad_only", {1, 4, 17, 18}, 16, {2, 2}, {1, 1}, {0, 0, 1, 1}},
    ConvCase{"stride2_7x7_rgb", {1, 3, 45, 47}, 16, {7, 7}, {2, 2}, {3, 3, 3, 3}, {1, 1}, 1, true, {relu()}},
    // stride-2 rows of two-vector tiles staged as even/odd columns: per chunk, unpadded, odd left padding
    ConvCase{"stride2_7x7_phases_chunked", {1, 8, 61, 70}, 16, {7, 7}, {2, 2}, {3, 3, 3, 3}, {1, 1}, 1, true, {relu()}},
    ConvCase{"stride2_5x5_phases_unpadded", {1, 3, 41, 70}, 16, {5, 5}, {2, 2}, {0, 0, 0, 0}},
    ConvCase{"stride2_3x3_stem_all_channels_staged", {1, 3, 97, 230}, 32, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 1, true, {relu()}},
    ConvCase{"stride4_11x11_four_phases", {1, 3, 47, 150}, 16, {11, 11}, {4, 4}, {2, 2, 2, 2}, {1, 1}, 1, true, {relu()}},
    ConvCase{"stride3_5x5_three_phases_tail", {1, 2, 20, 110}, 16, {5, 5}, {3, 3}, {2, 2, 2, 2}},
    ConvCase{"stride2_phases_too_wide_staged_rows", {1, 2, 30, 70}, 16, {23, 3}, {1, 2}, {11, 1, 11, 1}},
    // Strides above 2 without phases read the input with bounds checks: Halide 14
    // faulted on their loads from staged rows (found by aotc-fuzz).
    ConvCase{"depthwise_stride3_dilated", {1, 24, 31, 13}, 24, {1, 3}, {1, 3}, {1, 1, 1, 1}, {3, 1}, 24},
    ConvCase{"depthwise_multiplier2_stride3", {2, 24, 11, 9}, 48, {5, 5}, {2, 3}, {3, 3, 3, 3}, {3, 1}, 24},
    ConvCase{"stride3_one_vector_tile", {1, 4, 9, 40}, 8, {3, 3}, {3, 3}, {1, 1, 1, 1}},
    ConvCase{"stride4_phases_too_wide_bounds_checked", {1, 2, 30, 140}, 16, {23, 3}, {1, 4}, {11, 1, 11, 1}},
    ConvCase{"stride2_3x3_phases_unpadded", {1, 3, 21, 69}, 16, {3, 3}, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1, true, {relu()}},
    ConvCase{"stride2_5x5_phases_asymmetric", {1, 4, 33, 70}, 16, {5, 5}, {2, 2}, {1, 1, 2, 4}},
    ConvCase{"stride2_3x3", {1, 16, 40, 40}, 32, {3, 3}, {2, 2}, {1, 1, 1, 1}},
    ConvCase{"stride2_1x1_downsample", {1, 16, 40, 40}, 32, {1, 1}, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1, false},
    ConvCase{"stride_3_by_1", {1, 4, 30, 50}, 16, {3, 3}, {3, 1}, {1, 1, 1, 1}},
    ConvCase{"dilation2", {1, 8, 24, 24}, 16, {3, 3}, {1, 1}, {2, 2, 2, 2}, {2, 2}},
    ConvCase{"dilation_2_by_3_stride2", {1, 4, 30, 40}, 8, {3, 3}, {2, 2}, {1, 3, 2, 0}, {2, 3}},
    ConvCase{"5x5_no_bias", {1, 6, 20, 20}, 16, {5, 5}, {1, 1}, {2, 2, 2, 2}, {1, 1}, 1, false},
    ConvCase{"1x3_kernel", {1, 8, 16, 33}, 16, {1, 3}, {1, 1}, {0, 1, 0, 1}},
    ConvCase{"pointwise_1x1", {1, 32, 16, 24}, 64, {1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, true, {relu()}},
    ConvCase{"odd_channels", {1, 3, 18, 21}, 13, {3, 3}, {1, 1}, {1, 1, 1, 1}},
    ConvCase{"out_channels_24", {1, 8, 18, 18}, 24, {3, 3}, {1, 1}, {1, 1, 1, 1}},
    ConvCase{"out_channels_1000_1x1", {1, 16, 3, 17}, 1000, {1, 1}},
    ConvCase{"batch3", {3, 8, 17, 19}, 16, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true, {relu()}},
    ConvCase{"single_output_channel", {1, 8, 16, 20}, 1, {3, 3}, {1, 1}, {1, 1, 1, 1}},
    // rows narrower than a vector: lanes shrink to the row
    ConvCase{"width7_odd_out", {1, 8, 9, 7}, 12, {3, 3}, {1, 1}, {1, 1, 1, 1}},
    ConvCase{"width3", {1, 4, 5, 3}, 8, {3, 3}, {1, 1}, {1, 1, 1, 1}},
    ConvCase{"width1", {1, 6, 4, 1}, 5, {3, 1}, {1, 1}, {1, 0, 1, 0}},
    ConvCase{"one_pixel_1x1", {2, 24, 1, 1}, 10, {1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, true, {sigmoid()}},
    // vectorise channels: rows < 16 and 16 | out channels per group
    ConvCase{"deep_7x7_3x3", {1, 64, 7, 7}, 64, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true, {relu()}},
    ConvCase{"deep_14_1x1", {1, 48, 14, 14}, 32, {1, 1}},
    ConvCase{"deep_width5_16ch", {2, 8, 6, 5}, 16, {3, 3}, {2, 1}, {1, 1, 1, 1}},
    ConvCase{"deep_stride2_to_4x4", {1, 32, 8, 8}, 48, {3, 3}, {2, 2}, {1, 1, 1, 1}},
    ConvCase{"deep_13x13_32ch", {1, 16, 13, 13}, 32, {3, 3}, {1, 1}, {0, 2, 1, 1}},
    // padded rows too big for the stack: padding staged per channel chunk
    ConvCase{"chunked_padding", {1, 256, 6, 70}, 16, {3, 3}, {1, 1}, {1, 1, 1, 1}},
    ConvCase{"chunked_padding_narrow", {1, 1024, 12, 12}, 16, {3, 3}, {1, 1}, {1, 1, 1, 1}},
    ConvCase{"chunked_padding_planes_batch2", {2, 96, 5, 5}, 32, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true, {relu()}},
    ConvCase{"chunked_padding_rows_split", {1, 8, 3, 300}, 16, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true, {relu()}},
    // no staging fits the stack: every read checks its coordinates
    ConvCase{"bounds_checked_dilation40", {1, 4, 90, 100}, 16, {3, 3}, {1, 1}, {40, 40, 40, 40}, {40, 40}}
), [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(Grouped, Conv2dKernel, ::testing::Values(
    ConvCase{"groups2", {1, 8, 18, 18}, 16, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 2},
    ConvCase{"groups4_resnext", {1, 16, 16, 17}, 32, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 4, true, {relu()}},
    ConvCase{"groups3_odd", {1, 9, 11, 20}, 6, {1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 3},
    ConvCase{"groups2_narrow_vectorize_channels", {1, 8, 6, 6}, 64, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 2},
    ConvCase{"depthwise_3x3", {1, 16, 20, 20}, 16, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 16, true, {clamp(0, 6)}},
    ConvCase{"depthwise_stride2", {1, 8, 23, 23}, 8, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 8},
    ConvCase{"depthwise_5x5_asymmetric", {1, 6, 17, 19}, 6, {5, 5}, {1, 1}, {1, 2, 3, 2}, {1, 1}, 6},
    ConvCase{"depthwise_dilated_narrow", {1, 5, 9, 7}, 5, {3, 3}, {1, 1}, {2, 2, 2, 2}, {2, 2}, 5},
    ConvCase{"depthwise_multiplier2", {2, 4, 12, 18}, 8, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 4, false},
    ConvCase{"depthwise_multiplier3_no_pad", {1, 3, 10, 21}, 9, {3, 3}, {1, 2}, {0, 0, 0, 0}, {1, 1}, 3},
    ConvCase{"depthwise_width1", {1, 4, 7, 1}, 4, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 4},
    // rows narrower than a vector: one masked vector per row, planes staged in bands
    ConvCase{"depthwise_14x14_masked_rows", {1, 24, 14, 14}, 24, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 24, true, {clamp(0, 6)}},
    ConvCase{"depthwise_7x7_masked_rows", {1, 16, 7, 7}, 16, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 16},
    ConvCase{"depthwise_stride2_to_9x9_masked", {1, 8, 17, 17}, 8, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 8},
    ConvCase{"depthwise_bands_of_tall_plane", {1, 3, 60, 40}, 3, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 3},
    ConvCase{"depthwise_bounds_checked_wide", {1, 2, 3, 700}, 2, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 2}
), [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(Epilogues, Conv2dKernel, ::testing::Values(
    ConvCase{"relu", {1, 4, 16, 16}, 16, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true, {relu()}},
    ConvCase{"clamp_relu6", {1, 4, 16, 16}, 16, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true, {clamp(0, 6)}},
    ConvCase{"hardswish", {1, 4, 16, 16}, 16, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true, {hardswish()}},
    ConvCase{"sigmoid", {1, 4, 16, 16}, 16, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true, {sigmoid()}},
    ConvCase{"affine_relu", {1, 4, 16, 16}, 16, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, false, {affine(), relu()}},
    ConvCase{"residual_add_relu", {1, 4, 16, 16}, 16, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true, {add({1, 16, 16, 16}), relu()}},
    ConvCase{"mul_broadcast_channels", {1, 4, 16, 16}, 16, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true, {mul({1, 16, 1, 1})}},
    ConvCase{"add_broadcast_rows_then_clamp", {1, 4, 16, 16}, 16, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true, {add({16, 1}), clamp(-0.5f, 0.5f)}},
    ConvCase{"add_scalar_like_then_hardswish", {1, 4, 16, 16}, 16, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true, {add({1}), hardswish()}},
    ConvCase{"chain_on_narrow_rows", {1, 32, 5, 5}, 32, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true, {affine(), add({1, 32, 5, 5}), relu()}},
    ConvCase{"depthwise_residual", {1, 8, 12, 20}, 8, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 8, true, {add({1, 8, 12, 20}), sigmoid()}},
    ConvCase{"elu_then_softplus", {1, 4, 16, 16}, 16, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true, {elu(0.5f), softplus()}},
    ConvCase{"prelu_per_channel_then_tanh", {1, 4, 16, 16}, 16, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true, {prelu({16, 1, 1}), tanh()}},
    ConvCase{"depthwise_prelu_computed_alpha", {1, 8, 12, 20}, 8, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 8, true, {prelu({1, 8, 12, 20})}}
), [](const auto& info) { return info.param.name; });

// Narrower vectors than the host's: the same schedules with 8 and 4 lanes.
INSTANTIATE_TEST_SUITE_P(Targets, Conv2dKernel, ::testing::Values(
    ConvCase{"avx2_resnet_3x3", {1, 16, 20, 20}, 32, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true, {relu()}, kAvx2},
    ConvCase{"avx2_deep_7x7", {1, 32, 7, 7}, 32, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true, {relu()}, kAvx2},
    ConvCase{"avx2_depthwise_stride2", {1, 8, 23, 23}, 8, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 8, true, {}, kAvx2},
    ConvCase{"avx2_depthwise_7x7_masked_rows", {1, 16, 7, 7}, 16, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 16, true, {}, kAvx2},
    ConvCase{"avx2_stride2_odd", {1, 3, 21, 25}, 13, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 1, true, {}, kAvx2},
    ConvCase{"avx2_stride2_7x7_phases", {1, 3, 45, 47}, 16, {7, 7}, {2, 2}, {3, 3, 3, 3}, {1, 1}, 1, true, {}, kAvx2},
    ConvCase{"sse41_stride2_7x7_phases", {1, 3, 45, 47}, 16, {7, 7}, {2, 2}, {3, 3, 3, 3}, {1, 1}, 1, true, {}, kSse41},
    ConvCase{"sse41_resnet_3x3", {1, 16, 20, 20}, 32, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true, {relu()}, kSse41},
    ConvCase{"sse41_deep_7x7", {1, 32, 7, 7}, 32, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true, {relu()}, kSse41},
    ConvCase{"sse41_depthwise_stride2", {1, 8, 23, 23}, 8, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 8, true, {}, kSse41},
    ConvCase{"sse41_depthwise_3x3_masked_rows", {1, 4, 3, 3}, 4, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 4, true, {}, kSse41}
), [](const auto& info) { return info.param.name; });
// clang-format on

// The schedule each kind of layer gets (built, not compiled), for an AVX-512
// target so that the lane counts are fixed.
TEST(Conv2dSchedule, FollowsTheLayerShape) {
  const Halide::Target avx512("x86-64-linux-sse41-avx-avx2-fma-f16c-avx512-avx512_skylake");
  auto schedule = [&](gen::Shape input, int64_t out, int k, int pad, int groups = 1, int dilation = 1, int stride = 1) {
    gen::Conv2dSpec s;
    s.stride = {stride, stride};
    s.input_shape = std::move(input);
    s.out_channels = out;
    s.kernel = {k, k};
    s.pad = {pad, pad, pad, pad};
    s.dilation = {dilation, dilation};
    s.groups = groups;
    return gen::conv2d(s, avx512).schedule;
  };
  using ::testing::HasSubstr;
  EXPECT_THAT(schedule({1, 64, 56, 56}, 64, 3, 1),
              AllOf(HasSubstr("vectorize-width: tile 2x16 lanes (w) x 8 channels"), HasSubstr("staged per 8 input channels"),
                    HasSubstr("blocks of 32 channels x 1 x 56 pixels")));
  EXPECT_THAT(schedule({1, 16, 20, 20}, 32, 3, 1), HasSubstr("padded rows staged (6.0 KiB)"));
  EXPECT_THAT(schedule({1, 64, 56, 56}, 256, 1, 0), AllOf(HasSubstr("vectorize-width"), HasSubstr("no padding")));
  // Deep layers accumulate whole planes: a chunk's weights serve every row.
  EXPECT_THAT(schedule({1, 512, 7, 7}, 512, 3, 1),
              AllOf(HasSubstr("vectorize-channels: tile 2x16 lanes (o) x 7 pixels"), HasSubstr("staged per 8 input"),
                    HasSubstr("blocks of 32 channels x 7 x 7 pixels")));
  EXPECT_THAT(schedule({1, 256, 14, 14}, 256, 3, 1), HasSubstr("blocks of 128 channels x 1 x 14 pixels"));
  // With 16 vector registers one channel block per tile (two spilled).
  gen::Conv2dSpec deep;
  deep.input_shape = {1, 160, 7, 7};
  deep.out_channels = 960;
  EXPECT_THAT(gen::conv2d(deep, Halide::Target("x86-64-linux-sse41-avx-avx2-fma-f16c")).schedule,
              HasSubstr("vectorize-channels: tile 2x8 lanes (o) x 4 pixels"));
  EXPECT_THAT(gen::conv2d(deep, avx512).schedule, HasSubstr("vectorize-channels: tile 2x16 lanes (o) x 7 pixels"));
  EXPECT_THAT(schedule({1, 24, 7, 7}, 24, 1, 0), HasSubstr("vectorize-width: tile 1x4 lanes"));  // 24 is no 16-block
  EXPECT_THAT(schedule({1, 144, 56, 56}, 144, 3, 1, 144),
              HasSubstr("depthwise: tile 2x16 lanes (w) x 4 rows, bands of 28 rows"));
  EXPECT_THAT(schedule({1, 576, 14, 14}, 576, 3, 1, 576),
              HasSubstr("depthwise: tile 1x16 lanes (w, masked past the row) x 4 rows, bands of 14 rows"));
  EXPECT_THAT(schedule({1, 8, 3, 300}, 16, 3, 1), HasSubstr("blocks of 8 channels x 1 x 256 pixels"));
  EXPECT_THAT(schedule({1, 4, 90, 100}, 16, 3, 40, 1, 40), HasSubstr("bounds-checked"));
  // Stride-2 rows: phases for tiles of two row vectors (first convs), plain
  // rows for tiles of one (ResNet's 3x3 stride-2 convs on 28-wide rows).
  EXPECT_THAT(schedule({1, 3, 224, 224}, 64, 7, 3, 1, 1, 2),
              HasSubstr("rows staged as even/odd columns per 1 input channels (7.0 KiB)"));
  EXPECT_THAT(schedule({1, 3, 224, 224}, 64, 3, 0, 1, 1, 2), HasSubstr("rows staged as even/odd columns (7.9 KiB)"));
  // A short reduction (3 channels x 3x3) stages all its channels past the
  // usual budget instead of accumulating per-channel chunks.
  EXPECT_THAT(schedule({1, 3, 224, 224}, 32, 3, 1, 1, 1, 2), HasSubstr("rows staged as even/odd columns (9.0 KiB)"));
  EXPECT_THAT(schedule({1, 64, 56, 56}, 128, 3, 1, 1, 1, 2),
              AllOf(HasSubstr("tile 1x16 lanes"), HasSubstr("padded rows staged per 8 input channels")));
}

// Strided rows are staged as one phase per column residue where the tile has
// two row vectors and the phases fit a budget; else as plain padded rows.
TEST(Conv2dSchedule, StagesStridedRowsAsPhases) {
  using ::testing::HasSubstr;
  const Halide::Target avx512("x86-64-linux-sse41-avx-avx2-fma-f16c-avx512-avx512_skylake");
  auto schedule = [&](gen::Shape input, std::array<int, 2> kernel, std::array<int, 2> stride, std::array<int, 4> pad) {
    gen::Conv2dSpec s;
    s.input_shape = std::move(input);
    s.out_channels = 64;
    s.kernel = kernel;
    s.stride = stride;
    s.pad = pad;
    return gen::conv2d(s, avx512).schedule;
  };
  // AlexNet's first conv: 4 phases within the wider budget of strides above 2.
  EXPECT_THAT(schedule({1, 3, 224, 224}, {11, 11}, {4, 4}, {2, 2, 2, 2}),
              HasSubstr("rows staged as 4 column phases per 1 input channels (11.0 KiB)"));
  EXPECT_THAT(schedule({1, 2, 20, 110}, {5, 5}, {3, 3}, {2, 2, 2, 2}), HasSubstr("rows staged as 3 column phases"));
  // Even/odd columns of 23 rows take 8.6 KiB a channel, over the 8 KiB budget
  // of stride 2; the plain rows (7.2 KiB) fit.
  EXPECT_THAT(schedule({1, 2, 30, 70}, {23, 3}, {1, 2}, {11, 1, 11, 1}),
              HasSubstr("padded rows staged per 1 input channels (7.2 KiB)"));
  // Rows of strides above 2 that no phases fit are read with bounds checks.
  EXPECT_THAT(schedule({1, 2, 30, 140}, {23, 3}, {1, 4}, {11, 1, 11, 1}), HasSubstr("bounds-checked reads"));
  EXPECT_THAT(schedule({1, 4, 9, 40}, {3, 3}, {3, 3}, {1, 1, 1, 1}), HasSubstr("bounds-checked reads"));
}

TEST(Conv2dPacking, BlocksOutputChannels) {
  // O=32 (block 16), C=2, 1x1: packed[b][c][0][0][i] = w[16b + i][c].
  gen::Conv2dSpec spec;
  spec.input_shape = {1, 2, 4, 4};
  spec.out_channels = 32;
  std::vector<float> oihw(64);
  for (size_t i = 0; i < oihw.size(); ++i) oihw[i] = static_cast<float>(i);  // w[o][c] = 2o + c
  const gen::PackedWeights packed = gen::pack_conv2d_weights(spec, oihw.data());
  EXPECT_EQ(packed.shape, (gen::Shape{2, 2, 1, 1, 16}));
  EXPECT_EQ(packed.data[0], 0.0f);    // w[0][0]
  EXPECT_EQ(packed.data[1], 2.0f);    // w[1][0]
  EXPECT_EQ(packed.data[16], 1.0f);   // w[0][1]
  EXPECT_EQ(packed.data[32], 32.0f);  // w[16][0]
  EXPECT_EQ(packed.data[63], 63.0f);  // w[31][1]
}

TEST(Conv2dSpec, RejectsInconsistentSpecs) {
  gen::Conv2dSpec spec;
  spec.input_shape = {1, 6, 8, 8};
  spec.out_channels = 4;
  spec.groups = 4;  // does not divide 6 input channels
  EXPECT_THROW(gen::conv2d_output_shape(spec), std::invalid_argument);
  spec.groups = 1;
  spec.kernel = {9, 9};  // larger than the unpadded input
  EXPECT_THROW(gen::conv2d(spec, host_target()), std::invalid_argument);
}

}  // namespace
}  // namespace aotc::kernel_test
