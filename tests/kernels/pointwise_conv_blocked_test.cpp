// pointwise_conv_blocked (1x1 convolution writing NCHWc) against the reference
// evaluator's conv2d: inputs in NCHW and in NCHWc, converted on the host
// (layout.h), pixel counts that are not a multiple of the tile, 1, 2, 3 and 5
// output blocks per tile choice, batch 2, residual add and mul operands in
// NCHWc, affine by channel, and the narrower blocks of AVX2 (8) and SSE 4.1 (4).
#include <gtest/gtest.h>

#include "generators/depthwise_conv_blocked.h"  // channel_block
#include "generators/layout.h"
#include "generators/pointwise_conv_blocked.h"
#include "kernel_test_support.h"

namespace aotc::kernel_test {
namespace {

struct BlockedPointwiseCase {
  std::string name;
  Shape input;  // [N, C, H, W]
  int64_t out_channels;
  bool input_blocked;
  bool bias = true;
  std::vector<PostOpCase> epilogue = {};
  std::string target = "host";
};

void PrintTo(const BlockedPointwiseCase& c, std::ostream* os) { *os << c.name; }

class PointwiseConvBlockedKernel : public ::testing::TestWithParam<BlockedPointwiseCase> {};

// `v` ([N, C, H, W]) in NCHWc, as the kernel's view [N, C/B, H*W, B].
Value blocked(const Value& v, int block) {
  const Shape& s = v.shape;
  return {{s[0], s[1] / block, s[2] * s[3], block},
          gen::convert_layout_on_host({gen::LayoutSpec::Conversion::kNchwToBlocked, s, block}, v.data)};
}

TEST_P(PointwiseConvBlockedKernel, MatchesReferenceConv) {
  const BlockedPointwiseCase& c = GetParam();
  NodeUnderTest node(OpKind::Conv2d, Conv2dAttrs{}, 31);
  node.add_operand(c.input);
  node.add_operand({c.out_channels, c.input[1], 1, 1});
  if (c.bias) node.add_operand({c.out_channels});
  node.add_post_ops(c.epilogue);
  const Shape out = node.output_shape();

  const Halide::Target target = target_named(c.target);
  const int block = gen::channel_block(target);
  gen::BlockedPointwiseSpec spec;
  spec.batch = c.input[0];
  spec.in_channels = c.input[1];
  spec.pixels = c.input[2] * c.input[3];
  spec.out_channels = c.out_channels;
  spec.block = block;
  spec.input_blocked = c.input_blocked;
  spec.has_bias = c.bias;
  spec.epilogue = node.epilogue_specs();
  for (gen::PostOpSpec& p : spec.epilogue)
    if (!p.operand_shape.empty()) p.operand_shape = {out[0], out[1], out[2] * out[3]};
  ASSERT_TRUE(gen::blocked_pointwise_fits(spec));

  gen::Kernel kernel = gen::pointwise_conv_blocked(spec, target);
  const gen::PackedWeights packed = gen::pack_blocked_pointwise_weights(spec, node.value(1).data.data());
  const Value input = c.input_blocked ? blocked(node.value(0), block)
                                      : Value{{spec.batch, spec.in_channels, spec.pixels}, node.value(0).data};
  const Value weights{packed.shape, packed.data};
  std::vector<Value> operands;  // bias and affine vectors as they are, whole-output operands in NCHWc
  for (size_t i = 2; i < kernel.inputs.size(); ++i) {
    const Value& v = node.value(i);
    operands.push_back(v.shape.size() == 4 ? blocked(v, block) : v);
  }
  std::vector<const Value*> inputs = {&input, &weights};
  for (const Value& v : operands) inputs.push_back(&v);
  SCOPED_TRACE(kernel.schedule);
  KernelRun run = run_kernel(kernel, inputs, {spec.batch, spec.out_channels / block, spec.pixels, block}, target);
  run.output = gen::convert_layout_on_host({gen::LayoutSpec::Conversion::kBlockedToNchw, out, block}, run.output);
  expect_matches(node.reference(), run);
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(Shapes, PointwiseConvBlockedKernel, ::testing::Values(
    BlockedPointwiseCase{"expand_nchw_in_tail", {1, 24, 13, 11}, 144, false, true, {clamp(0.0f, 6.0f)}},
    BlockedPointwiseCase{"expand_blocked_in", {1, 32, 14, 14}, 192, true, true, {clamp(0.0f, 6.0f)}},
    BlockedPointwiseCase{"project_residual_add", {1, 192, 7, 9}, 32, true, true, {add({1, 32, 7, 9})}},
    BlockedPointwiseCase{"five_blocks_mul_relu", {1, 16, 6, 6}, 80, false, true, {mul({1, 80, 6, 6}), relu()}},
    BlockedPointwiseCase{"one_block_few_pixels", {1, 48, 2, 3}, 16, true, false},
    BlockedPointwiseCase{"batch2_affine", {2, 32, 5, 7}, 48, true, true, {affine()}},
    BlockedPointwiseCase{"avx2_block_8", {1, 24, 9, 9}, 40, true, true, {add({1, 40, 9, 9}), relu()}, kAvx2},
    BlockedPointwiseCase{"sse41_block_4", {1, 10, 5, 5}, 12, false, true, {hardswish()}, kSse41}
), [](const auto& info) { return info.param.name; });
// clang-format on

TEST(PointwiseConvBlocked, FitsOnlyWholeBlocksAndWholeOutputOperands) {
  gen::BlockedPointwiseSpec spec;
  spec.in_channels = 24;
  spec.pixels = 49;
  spec.out_channels = 32;
  EXPECT_TRUE(gen::blocked_pointwise_fits(spec));  // an NCHW input of any channel count
  spec.input_blocked = true;
  EXPECT_FALSE(gen::blocked_pointwise_fits(spec));  // 24 channels in blocks of 16
  spec.input_blocked = false;
  spec.out_channels = 24;
  EXPECT_FALSE(gen::blocked_pointwise_fits(spec));
  spec.out_channels = 32;
  gen::PostOpSpec add;
  add.kind = gen::PostOpSpec::Kind::kAdd;
  add.operand_shape = {1, 32, 1};  // broadcast along pixels
  spec.epilogue = {add};
  EXPECT_FALSE(gen::blocked_pointwise_fits(spec));
  spec.epilogue[0].operand_shape = {1, 32, 49};
  EXPECT_TRUE(gen::blocked_pointwise_fits(spec));
}

}  // namespace
}  // namespace aotc::kernel_test
