// The three kernels of a Winograd F(4x4, 3x3) convolution (input transform,
// 36 GEMMs, output transform), run one after the other as the lowering calls
// them, against the reference evaluator's conv2d: maps whose sides are and are
// not multiples of the 4x4 tile (55, 13, 7, 1), no and asymmetric padding,
// batch 2, epilogues with operands, and narrower targets. Then the error
// Winograd adds, against a direct convolution in double, measured and bounded.
#include <gtest/gtest.h>

#include <cmath>

#include "generators/winograd_conv.h"
#include "kernel_test_support.h"

namespace aotc::kernel_test {
namespace {

struct WinogradCase {
  std::string name;
  Shape input;  // [N, C, H, W]
  int64_t out_channels;
  std::array<int, 4> pad{1, 1, 1, 1};  // top, left, bottom, right
  bool bias = true;
  std::vector<PostOpCase> epilogue = {};
  std::string target = "host";
};

void PrintTo(const WinogradCase& c, std::ostream* os) { *os << c.name; }

struct WinogradRun {
  Value reference;
  KernelRun run;
  Value input, weights, bias;  // for the error check
  std::string schedules;
};

WinogradRun run_winograd(const WinogradCase& c, unsigned seed) {
  Conv2dAttrs attrs;
  attrs.pad = c.pad;
  NodeUnderTest node(OpKind::Conv2d, attrs, seed);
  node.add_operand(c.input);
  node.add_operand({c.out_channels, c.input[1], 3, 3});
  if (c.bias) node.add_operand({c.out_channels});
  node.add_post_ops(c.epilogue);

  gen::Conv2dSpec spec;
  spec.input_shape = c.input;
  spec.out_channels = c.out_channels;
  spec.kernel = {3, 3};
  spec.pad = c.pad;
  spec.has_bias = c.bias;
  spec.epilogue = node.epilogue_specs();
  EXPECT_TRUE(gen::winograd_applies(spec));

  const Halide::Target target = target_named(c.target);
  gen::Kernel input_transform = gen::winograd_input_transform(spec, target);
  gen::Kernel gemm = gen::pointwise_conv(gen::winograd_gemm_spec(spec), target);
  gen::Kernel output_transform = gen::winograd_output_transform(spec, target);
  WinogradRun result;
  result.schedules = input_transform.schedule + "; " + gemm.schedule + "; " + output_transform.schedule;
  const gen::PackedWeights packed = gen::pack_winograd_weights(spec, target, node.value(1).data.data());
  const Value weights{packed.shape, packed.data};

  // The transforms see V and M as [N, 6, 6, channels, TH, TW], the GEMM as
  // [N*36, channels, TH*TW]: the same bytes.
  const Shape out_shape = node.output_shape();
  const int64_t n = c.input[0], th = (out_shape[2] + 3) / 4, tw = (out_shape[3] + 3) / 4;
  const KernelRun v = run_kernel(input_transform, {&node.value(0)}, {n, 6, 6, c.input[1], th, tw}, target);
  const Value v_flat{gen::winograd_transformed_input_shape(spec), v.output};
  const KernelRun m = run_kernel(gemm, {&v_flat, &weights}, gen::winograd_transformed_output_shape(spec), target);
  const Value m_view{{n, 6, 6, c.out_channels, th, tw}, m.output};
  std::vector<const Value*> inputs = {&m_view};
  for (size_t i = 1; i < output_transform.inputs.size(); ++i) inputs.push_back(&node.value(i + 1));
  result.run = run_kernel(output_transform, inputs, out_shape, target);
  result.run.heap_allocations += v.heap_allocations + m.heap_allocations;
  result.reference = node.reference();
  result.input = node.value(0);
  result.weights = node.value(1);
  if (c.bias) result.bias = node.value(2);
  return result;
}

class WinogradConvKernels : public ::testing::TestWithParam<WinogradCase> {};

TEST_P(WinogradConvKernels, MatchReferenceConv) {
  const WinogradRun r = run_winograd(GetParam(), 17);
  SCOPED_TRACE(r.schedules);
  expect_matches(r.reference, r.run);
}

// The choice: model layers it wins on, and the ones it must not take.
TEST(WinogradChoice, TakesMeasuredWinsOnly) {
  auto conv = [](Shape input, int64_t out_channels, int stride = 1) {
    gen::Conv2dSpec spec;
    spec.input_shape = std::move(input);
    spec.out_channels = out_channels;
    spec.kernel = {3, 3};
    spec.stride = {stride, stride};
    spec.pad = {1, 1, 1, 1};
    return spec;
  };
  EXPECT_TRUE(gen::use_winograd(conv({1, 64, 56, 56}, 64)));    // ResNet-18 layer1
  EXPECT_TRUE(gen::use_winograd(conv({1, 512, 7, 7}, 512)));    // ResNet-18 layer4: 115M MACs on 4 tiles
  EXPECT_FALSE(gen::use_winograd(conv({1, 128, 7, 7}, 32)));    // DenseNet block 4: 1.8M MACs on 4 tiles
  EXPECT_FALSE(gen::use_winograd(conv({1, 3, 112, 112}, 16)));  // too few channels
  EXPECT_FALSE(gen::use_winograd(conv({1, 64, 56, 56}, 64, 2)));  // stride 2
  // Rows too wide for the input transform's staged rows go direct, never throw.
  EXPECT_FALSE(gen::use_winograd(conv({1, 32, 40, 400}, 32)));
  EXPECT_THROW(gen::winograd_input_transform(conv({1, 32, 40, 400}, 32), host_target()), std::invalid_argument);
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(Maps, WinogradConvKernels, ::testing::Values(
    WinogradCase{"resnet_56x56", {1, 16, 56, 56}, 16, {1, 1, 1, 1}, true, {relu()}},
    WinogradCase{"squeezenet_55x55_tails", {1, 16, 55, 55}, 24, {1, 1, 1, 1}, true, {relu()}},
    WinogradCase{"map_13x13_no_bias", {1, 24, 13, 13}, 32, {1, 1, 1, 1}, false},
    WinogradCase{"map_7x7_deep", {1, 64, 7, 7}, 48},
    WinogradCase{"map_1x1", {1, 8, 1, 1}, 8},
    WinogradCase{"valid_no_pad_10x12", {1, 5, 10, 12}, 7, {0, 0, 0, 0}},
    WinogradCase{"asymmetric_pad", {1, 6, 9, 11}, 10, {0, 1, 2, 0}},
    WinogradCase{"wide_pad", {1, 3, 6, 5}, 4, {2, 2, 2, 2}},
    WinogradCase{"batch2", {2, 12, 18, 20}, 16},
    WinogradCase{"one_channel", {1, 1, 17, 19}, 1}
), [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(Epilogues, WinogradConvKernels, ::testing::Values(
    WinogradCase{"residual_add_relu", {1, 16, 28, 28}, 16, {1, 1, 1, 1}, true, {add({1, 16, 28, 28}), relu()}},
    WinogradCase{"affine_clamp", {1, 8, 14, 14}, 24, {1, 1, 1, 1}, true, {affine(), clamp(0.0f, 6.0f)}},
    WinogradCase{"prelu_sigmoid_tails", {1, 8, 15, 9}, 8, {1, 1, 1, 1}, false, {prelu({8, 1, 1}), sigmoid()}}
), [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(Targets, WinogradConvKernels, ::testing::Values(
    WinogradCase{"avx2_27x27", {1, 16, 27, 27}, 16, {1, 1, 1, 1}, true, {relu()}, kAvx2},
    WinogradCase{"sse41_odd", {1, 9, 21, 23}, 12, {1, 1, 1, 1}, true, {add({1, 12, 21, 23})}, kSse41}
), [](const auto& info) { return info.param.name; });
// clang-format on

// Winograd's extra error: against the same convolution computed directly in
// double, relative to the output's largest magnitude, on shapes of the real
// models' layers (deep inputs make the longest sums). Measured: F(4x4, 3x3)
// 5e-6 to 1.1e-5, the reference evaluator's direct float convolution
// 4e-8 to 5e-8 (both printed by the test). Bound: 3x the worst measured.
constexpr double kWinogradRelativeError = 3e-5;

// max |got - direct conv in double| / max |direct conv in double|.
double error_against_double(const WinogradCase& c, const WinogradRun& r, const std::vector<float>& got_all) {
  const int64_t n_count = c.input[0], c_count = c.input[1], h = c.input[2], w = c.input[3];
  const Shape& out = r.reference.shape;
  double max_abs_ref = 0, max_err = 0;
  for (int64_t n = 0; n < n_count; ++n)
    for (int64_t o = 0; o < out[1]; ++o)
      for (int64_t y = 0; y < out[2]; ++y)
        for (int64_t x = 0; x < out[3]; ++x) {
          double sum = c.bias ? r.bias.data[static_cast<size_t>(o)] : 0.0;
          for (int64_t ci = 0; ci < c_count; ++ci)
            for (int ky = 0; ky < 3; ++ky)
              for (int kx = 0; kx < 3; ++kx) {
                const int64_t iy = y + ky - c.pad[0], ix = x + kx - c.pad[1];
                if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
                sum += static_cast<double>(r.input.data[static_cast<size_t>(((n * c_count + ci) * h + iy) * w + ix)]) *
                       r.weights.data[static_cast<size_t>(((o * c_count + ci) * 3 + ky) * 3 + kx)];
              }
          const double got = got_all[static_cast<size_t>(((n * out[1] + o) * out[2] + y) * out[3] + x)];
          max_abs_ref = std::max(max_abs_ref, std::fabs(sum));
          max_err = std::max(max_err, std::fabs(got - sum));
        }
  return max_err / max_abs_ref;
}

class WinogradError : public ::testing::TestWithParam<WinogradCase> {};

TEST_P(WinogradError, WithinBoundOfDirectConvInDouble) {
  const WinogradCase& c = GetParam();
  const WinogradRun r = run_winograd(c, 29);
  const double error = error_against_double(c, r, r.run.output);
  const double direct_float_error = error_against_double(c, r, r.reference.data);
  RecordProperty("relative_error", std::to_string(error));
  std::printf("%s: max |error| / max |output|: winograd %.3g, direct float %.3g\n", c.name.c_str(), error,
              direct_float_error);
  EXPECT_LE(error, kWinogradRelativeError);
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(ModelLayers, WinogradError, ::testing::Values(
    WinogradCase{"resnet18_layer1_64", {1, 64, 28, 28}, 64},
    WinogradCase{"resnet18_layer4_512", {1, 512, 7, 7}, 32},
    WinogradCase{"densenet_growth_128_to_32", {1, 128, 28, 28}, 32},
    WinogradCase{"squeezenet_expand_64", {1, 64, 27, 27}, 64}
), [](const auto& info) { return info.param.name; });
// clang-format on

}  // namespace
}  // namespace aotc::kernel_test
