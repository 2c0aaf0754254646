// linear kernels against the reference evaluator: feature counts that are and
// are not multiples of a vector, batches, with and without bias, epilogues.
#include <gtest/gtest.h>

#include "generators/linear.h"
#include "kernel_test_support.h"

namespace aotc::kernel_test {
namespace {

struct LinearCase {
  std::string name;
  Shape input;  // [N, ...]: the kernel sees it flattened to [N, K]
  int64_t out_features;
  bool bias = true;
  std::vector<PostOpCase> epilogue = {};
};

void PrintTo(const LinearCase& c, std::ostream* os) { *os << c.name; }

class LinearKernel : public ::testing::TestWithParam<LinearCase> {};

TEST_P(LinearKernel, MatchesReference) {
  const LinearCase& c = GetParam();
  const int64_t features = num_elements(c.input) / c.input[0];
  NodeUnderTest node(OpKind::Linear, NoAttrs{}, 13);
  node.add_operand(c.input);
  node.add_operand({c.out_features, features});
  if (c.bias) node.add_operand({c.out_features});
  node.add_post_ops(c.epilogue);

  gen::LinearSpec spec;
  spec.batch = c.input[0];
  spec.in_features = features;
  spec.out_features = c.out_features;
  spec.has_bias = c.bias;
  spec.epilogue = node.epilogue_specs();
  const Halide::Target target = host_target();
  gen::Kernel kernel = gen::linear(spec, target);
  const gen::PackedWeights packed = gen::pack_linear_weights(spec, node.value(1).data.data());
  const Value x{{spec.batch, features}, node.value(0).data};
  const Value weights{packed.shape, packed.data};
  std::vector<const Value*> inputs = {&x, &weights};
  for (size_t i = 2; i < kernel.inputs.size(); ++i) inputs.push_back(&node.value(i));
  SCOPED_TRACE(kernel.schedule);
  expect_matches(node.reference(), run_kernel(kernel, inputs, node.output_shape(), target));
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(All, LinearKernel, ::testing::Values(
    LinearCase{"classifier_512_to_1000", {1, 512}, 1000, true, {relu()}},
    LinearCase{"batch3_flattened_4d", {3, 8, 3, 3}, 10},
    LinearCase{"features_128_no_bias", {2, 100}, 128, false},
    LinearCase{"odd_17_to_7", {5, 17}, 7, true, {clamp(-0.2f, 0.3f)}},
    LinearCase{"one_output", {4, 33}, 1},
    LinearCase{"prime_outputs_19", {1, 64}, 19, true, {sigmoid()}},
    LinearCase{"batch6_residual", {6, 48}, 48, true, {add({6, 48}), hardswish()}},
    LinearCase{"mul_broadcast_row", {2, 20}, 40, true, {mul({40})}}
), [](const auto& info) { return info.param.name; });
// clang-format on

TEST(LinearPacking, BlocksOutputFeatures) {
  // M=8 (block 8), K=3: packed[0][k][m] = w[m][k].
  gen::LinearSpec spec;
  spec.in_features = 3;
  spec.out_features = 8;
  std::vector<float> mk(24);
  for (size_t i = 0; i < mk.size(); ++i) mk[i] = static_cast<float>(i);  // w[m][k] = 3m + k
  const gen::PackedWeights packed = gen::pack_linear_weights(spec, mk.data());
  EXPECT_EQ(packed.shape, (gen::Shape{1, 3, 8}));
  EXPECT_EQ(packed.data[1], 3.0f);   // w[1][0]
  EXPECT_EQ(packed.data[8], 1.0f);   // w[0][1]
  EXPECT_EQ(packed.data[23], 23.0f);  // w[7][2]
}

}  // namespace
}  // namespace aotc::kernel_test
