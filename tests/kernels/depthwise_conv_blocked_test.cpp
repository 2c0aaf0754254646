// depthwise_conv_blocked (NCHWc) against the reference evaluator's conv2d with
// groups = channels: input and output converted on the host between NCHW and
// NCHWc (layout.h). Strides 1 and 2, padding on every side, dilation, rows
// that are not a multiple of the register tile, batch 2, post-ops, and the
// narrower blocks of AVX2 (8) and SSE 4.1 (4).
#include <gtest/gtest.h>

#include "generators/depthwise_conv_blocked.h"
#include "generators/layout.h"
#include "kernel_test_support.h"

namespace aotc::kernel_test {
namespace {

struct BlockedCase {
  std::string name;
  Shape input;  // [N, C, H, W]
  std::array<int, 2> kernel{3, 3}, stride{1, 1};
  std::array<int, 4> pad{1, 1, 1, 1};
  std::array<int, 2> dilation{1, 1};
  bool bias = true;
  std::vector<PostOpCase> epilogue = {};
  std::string target = "host";
};

void PrintTo(const BlockedCase& c, std::ostream* os) { *os << c.name; }

class DepthwiseConvBlockedKernel : public ::testing::TestWithParam<BlockedCase> {};

TEST_P(DepthwiseConvBlockedKernel, MatchesReferenceConv) {
  const BlockedCase& c = GetParam();
  const int64_t channels = c.input[1];
  NodeUnderTest node(OpKind::Conv2d, Conv2dAttrs{c.stride, c.pad, c.dilation, static_cast<int>(channels)}, 29);
  node.add_operand(c.input);
  node.add_operand({channels, 1, c.kernel[0], c.kernel[1]});
  if (c.bias) node.add_operand({channels});
  node.add_post_ops(c.epilogue);

  const Halide::Target target = target_named(c.target);
  gen::BlockedDepthwiseSpec spec;
  spec.input_shape = c.input;
  spec.block = gen::channel_block(target);
  spec.kernel = c.kernel;
  spec.stride = c.stride;
  spec.pad = c.pad;
  spec.dilation = c.dilation;
  spec.has_bias = c.bias;
  spec.epilogue = node.epilogue_specs();
  ASSERT_TRUE(gen::blocked_depthwise_fits(spec));
  ASSERT_EQ(gen::blocked_depthwise_output_shape(spec), node.output_shape());

  gen::Kernel kernel = gen::depthwise_conv_blocked(spec, target);
  const gen::PackedWeights packed = gen::pack_blocked_depthwise_weights(spec, node.value(1).data.data());
  const Value input{gen::blocked_shape(c.input, spec.block),
                    gen::convert_layout_on_host({gen::LayoutSpec::Conversion::kNchwToBlocked, c.input, spec.block},
                                                node.value(0).data)};
  const Value weights{packed.shape, packed.data};
  std::vector<const Value*> inputs = {&input, &weights};
  for (size_t i = 2; i < kernel.inputs.size(); ++i) inputs.push_back(&node.value(i));
  const Shape out = node.output_shape();
  SCOPED_TRACE(kernel.schedule);
  KernelRun run = run_kernel(kernel, inputs, gen::blocked_shape(out, spec.block), target);
  run.output = gen::convert_layout_on_host({gen::LayoutSpec::Conversion::kBlockedToNchw, out, spec.block}, run.output);
  expect_matches(node.reference(), run);
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(Shapes, DepthwiseConvBlockedKernel, ::testing::Values(
    BlockedCase{"mobilenet_3x3_s1", {1, 32, 28, 28}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, true, {clamp(0.0f, 6.0f)}},
    BlockedCase{"mobilenet_3x3_s2", {1, 48, 28, 28}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, true, {clamp(0.0f, 6.0f)}},
    BlockedCase{"s2_odd_input_row_tail", {1, 16, 15, 19}, {3, 3}, {2, 2}},
    BlockedCase{"row_shorter_than_tile", {1, 16, 5, 3}},
    BlockedCase{"uneven_pads_5x5", {1, 32, 12, 13}, {5, 5}, {1, 1}, {2, 0, 1, 3}},
    BlockedCase{"no_pad_rect_kernel_2x1_stride", {1, 16, 9, 10}, {3, 2}, {2, 1}, {0, 0, 0, 0}},
    BlockedCase{"dilation_2", {1, 16, 14, 14}, {3, 3}, {1, 1}, {2, 2, 2, 2}, {2, 2}},
    BlockedCase{"batch2_no_bias_affine_relu", {2, 32, 9, 11}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, false, {affine(), relu()}},
    BlockedCase{"hardswish", {1, 16, 7, 7}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, true, {hardswish()}},
    BlockedCase{"avx2_block_8_s2", {1, 24, 14, 17}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, true, {relu()}, kAvx2},
    BlockedCase{"sse41_block_4", {1, 12, 8, 9}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, true, {}, kSse41}
), [](const auto& info) { return info.param.name; });
// clang-format on

TEST(DepthwiseConvBlocked, FitsOnlyWholeBlocksSmallStridesAndChannelEpilogues) {
  gen::BlockedDepthwiseSpec spec;
  spec.input_shape = {1, 32, 8, 8};
  EXPECT_TRUE(gen::blocked_depthwise_fits(spec));
  spec.input_shape = {1, 24, 8, 8};
  EXPECT_FALSE(gen::blocked_depthwise_fits(spec));  // 24 channels in blocks of 16
  spec.input_shape = {1, 32, 8, 8};
  spec.stride = {1, 3};
  EXPECT_FALSE(gen::blocked_depthwise_fits(spec));
  spec.stride = {1, 1};
  gen::PostOpSpec add;
  add.kind = gen::PostOpSpec::Kind::kAdd;
  add.operand_shape = {1, 32, 8, 8};
  spec.epilogue = {add};
  EXPECT_FALSE(gen::blocked_depthwise_fits(spec));
}

}  // namespace
}  // namespace aotc::kernel_test
