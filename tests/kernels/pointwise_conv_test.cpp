// pointwise_conv (1x1 convolution as a GEMM over flattened pixels) against the
// reference evaluator's conv2d: maps whose pixel count is and is not a multiple
// of the tile, batch 2, channel counts that are not a multiple of the block
// (10, 1000) or are one, every post-op with operands flattened like the
// lowering flattens them, and targets with narrower vectors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "generators/pointwise_conv.h"
#include "kernel_test_support.h"

namespace aotc::kernel_test {
namespace {

struct PointwiseCase {
  std::string name;
  Shape input;  // [N, C, H, W]
  int64_t out_channels;
  bool bias = true;
  std::vector<PostOpCase> epilogue = {};
  std::string target = "host";
};

void PrintTo(const PointwiseCase& c, std::ostream* os) { *os << c.name; }

// [a, b, h, w] -> [a, b, h*w]; lower ranks first aligned to 4 from the right.
Shape flattened(Shape s) {
  s.insert(s.begin(), 4 - s.size(), 1);
  return {s[0], s[1], s[2] * s[3]};
}

class PointwiseConvKernel : public ::testing::TestWithParam<PointwiseCase> {};

TEST_P(PointwiseConvKernel, MatchesReferenceConv) {
  const PointwiseCase& c = GetParam();
  NodeUnderTest node(OpKind::Conv2d, Conv2dAttrs{}, 13);
  node.add_operand(c.input);
  node.add_operand({c.out_channels, c.input[1], 1, 1});
  if (c.bias) node.add_operand({c.out_channels});
  node.add_post_ops(c.epilogue);

  gen::PointwiseConvSpec spec;
  spec.batch = c.input[0];
  spec.in_channels = c.input[1];
  spec.pixels = c.input[2] * c.input[3];
  spec.out_channels = c.out_channels;
  spec.has_bias = c.bias;
  spec.epilogue = node.epilogue_specs();
  for (gen::PostOpSpec& p : spec.epilogue)
    if (!p.operand_shape.empty()) p.operand_shape = flattened(p.operand_shape);

  const Halide::Target target = target_named(c.target);
  gen::Kernel kernel = gen::pointwise_conv(spec, target);
  const gen::PackedWeights packed = gen::pack_pointwise_conv_weights(spec, target, node.value(1).data.data());
  // The same bytes under the kernel's 3-D views.
  const Value input{flattened(c.input), node.value(0).data}, weights{packed.shape, packed.data};
  std::vector<Value> operands;  // bias and affine vectors as they are, the others flattened
  for (size_t i = 2; i < kernel.inputs.size(); ++i) {
    const Value& v = node.value(i);
    operands.push_back({kernel.inputs[i].dimensions() == 3 ? flattened(v.shape) : v.shape, v.data});
  }
  std::vector<const Value*> inputs = {&input, &weights};
  for (const Value& v : operands) inputs.push_back(&v);
  const Shape out{spec.batch, spec.out_channels, spec.pixels};
  SCOPED_TRACE(kernel.schedule);
  expect_matches(node.reference(), run_kernel(kernel, inputs, out, target));
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(Maps, PointwiseConvKernel, ::testing::Values(
    PointwiseCase{"tile_multiple_384", {1, 16, 16, 24}, 32},
    PointwiseCase{"squeezenet_55x55_tail", {1, 16, 55, 55}, 64, true, {relu()}},
    PointwiseCase{"mobilenet_expand_28", {1, 32, 28, 28}, 192, true, {clamp(0.0f, 6.0f)}},
    PointwiseCase{"mobilenet_expand_56_parallel_tasks", {1, 32, 56, 56}, 192, true, {clamp(0.0f, 6.0f)}},
    PointwiseCase{"batch2_no_bias", {2, 24, 20, 21}, 16, false},
    PointwiseCase{"odd_out_channels_10", {1, 7, 25, 17}, 10},
    PointwiseCase{"classifier_1000", {1, 13, 20, 20}, 1000},
    PointwiseCase{"squeezenet_classifier_13x13", {1, 32, 13, 13}, 1000, true, {relu()}},
    PointwiseCase{"map_8x8_one_vector_tiles", {1, 24, 8, 8}, 10},
    PointwiseCase{"one_output_channel", {1, 5, 24, 17}, 1, true, {sigmoid()}},
    PointwiseCase{"one_input_channel", {1, 1, 30, 30}, 24},
    // 64+ input channels: tiles of three, two or one pixel vectors, whichever computes fewest pixels
    PointwiseCase{"deep_three_vector_tiles", {1, 64, 20, 24}, 32, true, {relu()}},
    PointwiseCase{"deep_two_vector_tiles_tail", {1, 128, 15, 17}, 16},
    PointwiseCase{"deep_14x14_one_vector_tiles", {1, 96, 14, 14}, 24, true, {clamp(0.0f, 6.0f)}}
), [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(Epilogues, PointwiseConvKernel, ::testing::Values(
    PointwiseCase{"residual_add_relu", {1, 16, 28, 28}, 32, true, {add({1, 32, 28, 28}), relu()}},
    PointwiseCase{"channel_mul_affine", {1, 8, 20, 20}, 24, true, {mul({1, 24, 1, 1}), affine()}},
    PointwiseCase{"prelu_tanh_hardswish", {1, 8, 20, 20}, 16, false, {prelu({16, 1, 1}), tanh(), hardswish()}},
    PointwiseCase{"scalar_add", {1, 8, 20, 20}, 16, true, {add({1})}}
), [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(Targets, PointwiseConvKernel, ::testing::Values(
    PointwiseCase{"avx2_55x55", {1, 16, 55, 55}, 24, true, {relu()}, kAvx2},
    PointwiseCase{"sse41_odd", {1, 9, 21, 23}, 12, true, {add({1, 12, 21, 23})}, kSse41}
), [](const auto& info) { return info.param.name; });
// clang-format on

// The register tile each layer gets, for an AVX-512 target (16 lanes, 24 accumulators).
TEST(PointwiseConvSchedule, PixelVectorsPerTile) {
  const Halide::Target avx512("x86-64-linux-sse41-avx-avx2-fma-f16c-avx512-avx512_skylake");
  auto schedule = [&](int64_t in_channels, int64_t pixels, int64_t out_channels) {
    gen::PointwiseConvSpec s;
    s.in_channels = in_channels;
    s.pixels = pixels;
    s.out_channels = out_channels;
    return gen::pointwise_conv(s, avx512).schedule;
  };
  using ::testing::HasSubstr;
  EXPECT_THAT(schedule(24, 56 * 56, 144), HasSubstr("tile 1x16 lanes"));      // few input channels
  EXPECT_THAT(schedule(256, 56 * 56, 64), HasSubstr("tile 3x16 lanes"));      // 3136 = 65.3 tiles of 48
  EXPECT_THAT(schedule(512, 28 * 28, 128), HasSubstr("tile 3x16 lanes"));     // 816 for 784 pixels still pays
  EXPECT_THAT(schedule(576, 14 * 14, 96), HasSubstr("tile 1x16 lanes"));      // 240 for 196 pixels does not
  EXPECT_THAT(schedule(128, 15 * 17, 16), HasSubstr("tile 2x16 lanes"));      // 256 for 255
}

}  // namespace
}  // namespace aotc::kernel_test
