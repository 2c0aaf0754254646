// conv2d_blocked (a dense convolution writing NCHWc) against the reference
// evaluator's conv2d: inputs in NCHW and NCHWc, padded on the host as the
// compiler's pad step does, 3x3 and 7x7 kernels, strides 1-2, dilation,
// strided 1x1, rows narrower than a tile and rows whose last tile shifts
// inwards, one and two output blocks per tile, batch 2, residual add and mul
// operands in NCHWc, affine by channel, and the narrower blocks of AVX2 (8)
// and SSE 4.1 (4).
#include <gtest/gtest.h>

#include "generators/conv2d_blocked.h"
#include "generators/depthwise_conv_blocked.h"  // channel_block, blocked_shape
#include "generators/layout.h"
#include "kernel_test_support.h"

namespace aotc::kernel_test {
namespace {

struct BlockedConvCase {
  std::string name;
  Shape input;  // [N, C, H, W]
  int64_t out_channels;
  std::array<int, 2> kernel;
  std::array<int, 2> stride{1, 1};
  std::array<int, 4> pad{0, 0, 0, 0};
  std::array<int, 2> dilation{1, 1};
  bool input_blocked = true;
  std::vector<PostOpCase> epilogue = {};
  std::string target = "host";
};

void PrintTo(const BlockedConvCase& c, std::ostream* os) { *os << c.name; }

class Conv2dBlockedKernel : public ::testing::TestWithParam<BlockedConvCase> {};

// `v` ([N, C, H, W]) with zeros around it: pad = top, left, bottom, right.
Value padded(const Value& v, const std::array<int, 4>& pad) {
  const Shape& s = v.shape;
  Value out{{s[0], s[1], s[2] + pad[0] + pad[2], s[3] + pad[1] + pad[3]}, {}};
  out.data.assign(static_cast<size_t>(num_elements(out.shape)), 0.0f);
  for (int64_t plane = 0; plane < s[0] * s[1]; ++plane)
    for (int64_t y = 0; y < s[2]; ++y)
      for (int64_t x = 0; x < s[3]; ++x)
        out.data[static_cast<size_t>((plane * out.shape[2] + y + pad[0]) * out.shape[3] + x + pad[1])] =
            v.data[static_cast<size_t>((plane * s[2] + y) * s[3] + x)];
  return out;
}

Value blocked(const Value& v, int block) {
  return {gen::blocked_shape(v.shape, block),
          gen::convert_layout_on_host({gen::LayoutSpec::Conversion::kNchwToBlocked, v.shape, block}, v.data)};
}

TEST_P(Conv2dBlockedKernel, MatchesReferenceConv) {
  const BlockedConvCase& c = GetParam();
  Conv2dAttrs attrs;
  attrs.stride = c.stride;
  attrs.pad = c.pad;
  attrs.dilation = c.dilation;
  NodeUnderTest node(OpKind::Conv2d, attrs, 43);
  node.add_operand(c.input);
  node.add_operand({c.out_channels, c.input[1], c.kernel[0], c.kernel[1]});
  node.add_operand({c.out_channels});
  node.add_post_ops(c.epilogue);
  const Shape out = node.output_shape();

  const Halide::Target target = target_named(c.target);
  const int block = gen::channel_block(target);
  const Value input = padded(node.value(0), c.pad);
  gen::BlockedConvSpec spec;
  spec.conv.input_shape = input.shape;
  spec.conv.out_channels = c.out_channels;
  spec.conv.kernel = c.kernel;
  spec.conv.stride = c.stride;
  spec.conv.dilation = c.dilation;
  spec.conv.has_bias = true;
  spec.conv.epilogue = node.epilogue_specs();
  spec.block = block;
  spec.input_blocked = c.input_blocked;
  ASSERT_TRUE(gen::blocked_conv_fits(spec));
  ASSERT_EQ(gen::conv2d_output_shape(spec.conv), out);

  gen::Kernel kernel = gen::conv2d_blocked(spec, target);
  const gen::PackedWeights packed = gen::pack_blocked_conv_weights(spec, node.value(1).data.data());
  const Value kernel_input = c.input_blocked ? blocked(input, block) : input;
  const Value weights{packed.shape, packed.data};
  std::vector<Value> operands;  // bias and affine vectors as they are, whole-output operands in NCHWc
  for (size_t i = 2; i < kernel.inputs.size(); ++i) {
    const Value& v = node.value(i);
    operands.push_back(v.shape.size() == 4 ? blocked(v, block) : v);
  }
  std::vector<const Value*> inputs = {&kernel_input, &weights};
  for (const Value& v : operands) inputs.push_back(&v);
  SCOPED_TRACE(kernel.schedule);
  KernelRun run = run_kernel(kernel, inputs, gen::blocked_shape(out, block), target);
  run.output = gen::convert_layout_on_host({gen::LayoutSpec::Conversion::kBlockedToNchw, out, block}, run.output);
  expect_matches(node.reference(), run);
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(Shapes, Conv2dBlockedKernel, ::testing::Values(
    BlockedConvCase{"resnet_3x3_stride2", {1, 32, 15, 17}, 64, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, true, {relu()}},
    BlockedConvCase{"3x3_row_in_one_tile", {1, 32, 7, 7}, 32, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, true,
                    {add({1, 32, 7, 7}), relu()}},
    BlockedConvCase{"stem_7x7_nchw_in", {1, 3, 29, 31}, 32, {7, 7}, {2, 2}, {3, 3, 3, 3}, {1, 1}, false, {relu()}},
    BlockedConvCase{"strided_1x1_add", {1, 48, 14, 13}, 32, {1, 1}, {2, 2}, {0, 0, 0, 0}, {1, 1}, true,
                    {add({1, 32, 7, 7}), relu()}},
    BlockedConvCase{"dilated_mul", {1, 16, 12, 19}, 16, {3, 3}, {1, 1}, {2, 2, 2, 2}, {2, 2}, true,
                    {mul({1, 16, 12, 19})}},
    BlockedConvCase{"asymmetric_pad_affine_batch2", {2, 16, 9, 11}, 48, {3, 2}, {1, 2}, {0, 1, 2, 0}, {1, 1}, false,
                    {affine(), clamp(0.0f, 6.0f)}},
    // Two post-ops of one kind (found by aotc-fuzz: their operands once had one name).
    BlockedConvCase{"two_affines_two_adds", {1, 16, 6, 9}, 32, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, true,
                    {affine(), affine(), add({1, 32, 6, 9}), add({1, 32, 6, 9}), relu()}},
    BlockedConvCase{"avx2_block_8", {1, 24, 11, 23}, 40, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, true, {relu()}, kAvx2},
    BlockedConvCase{"sse41_block_4", {1, 6, 9, 10}, 12, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, false, {hardswish()},
                    kSse41}
), [](const auto& info) { return info.param.name; });
// clang-format on

TEST(Conv2dBlocked, FitsOnlyUnpaddedDenseConvsInWholeBlocks) {
  gen::BlockedConvSpec spec;
  spec.conv.input_shape = {1, 24, 9, 9};
  spec.conv.out_channels = 32;
  spec.conv.kernel = {3, 3};
  EXPECT_TRUE(gen::blocked_conv_fits(spec));  // an NCHW input of any channel count
  spec.input_blocked = true;
  EXPECT_FALSE(gen::blocked_conv_fits(spec));  // 24 channels in blocks of 16
  spec.input_blocked = false;
  spec.conv.pad = {1, 1, 1, 1};
  EXPECT_FALSE(gen::blocked_conv_fits(spec));  // the caller pads
  spec.conv.pad = {0, 0, 0, 0};
  spec.conv.groups = 2;
  EXPECT_FALSE(gen::blocked_conv_fits(spec));
  spec.conv.groups = 1;
  gen::PostOpSpec add;
  add.kind = gen::PostOpSpec::Kind::kAdd;
  add.operand_shape = {1, 32, 1, 1};  // broadcast along pixels
  spec.conv.epilogue = {add};
  EXPECT_FALSE(gen::blocked_conv_fits(spec));
  spec.conv.epilogue[0].operand_shape = {1, 32, 7, 7};
  EXPECT_TRUE(gen::blocked_conv_fits(spec));
}

}  // namespace
}  // namespace aotc::kernel_test
