// pool2d kernels (max, average, adaptive and global average) against the
// reference evaluator: PyTorch's asymmetric padding, ceil_mode overhang,
// count_include_pad both ways, dilation, odd and narrow planes, epilogues.
#include <gtest/gtest.h>

#include "generators/pool2d.h"
#include "kernel_test_support.h"

namespace aotc::kernel_test {
namespace {

struct PoolCase {
  std::string name;
  OpKind op;
  Shape input;
  std::array<int, 2> kernel{1, 1};
  std::array<int, 2> stride{1, 1};
  std::array<int, 4> pad{0, 0, 0, 0};
  std::array<int, 2> dilation{1, 1};
  bool ceil_mode = false;
  bool count_include_pad = true;
  std::array<int, 2> adaptive_size{1, 1};  // AdaptiveAvgPool2d only
  std::vector<PostOpCase> epilogue = {};
  size_t nan_every = 0;  // when set, every nan_every-th input element is NaN
};

void PrintTo(const PoolCase& c, std::ostream* os) { *os << c.name; }

class Pool2dKernel : public ::testing::TestWithParam<PoolCase> {};

TEST_P(Pool2dKernel, MatchesReference) {
  const PoolCase& c = GetParam();
  Attrs attrs;
  gen::Pool2dSpec spec;
  if (c.op == OpKind::MaxPool2d || c.op == OpKind::AvgPool2d) {
    Pool2dAttrs a;
    a.kernel = c.kernel;
    a.stride = c.stride;
    a.pad = c.pad;
    a.dilation = c.dilation;
    a.ceil_mode = c.ceil_mode;
    a.count_include_pad = c.count_include_pad;
    attrs = a;
    spec.kind = c.op == OpKind::MaxPool2d ? gen::Pool2dSpec::Kind::kMax : gen::Pool2dSpec::Kind::kAverage;
    spec.kernel = c.kernel;
    spec.stride = c.stride;
    spec.pad = c.pad;
    spec.dilation = c.dilation;
    spec.count_include_pad = c.count_include_pad;
  } else if (c.op == OpKind::AdaptiveAvgPool2d) {
    attrs = AdaptiveAvgPool2dAttrs{c.adaptive_size};
    spec.kind = gen::Pool2dSpec::Kind::kAdaptiveAverage;
  } else {
    attrs = NoAttrs{};
    spec.kind = gen::Pool2dSpec::Kind::kAdaptiveAverage;  // global = adaptive to 1x1
  }
  NodeUnderTest node(c.op, attrs, 11);
  node.add_operand(c.input);
  node.add_post_ops(c.epilogue);
  if (c.nan_every) sprinkle_nans(node.value(0), 5, c.nan_every);
  spec.input_shape = c.input;
  spec.output_shape = node.output_shape();
  spec.epilogue = node.epilogue_specs();

  const Halide::Target target = host_target();
  gen::Kernel kernel = gen::pool2d(spec, target);
  std::vector<const Value*> inputs;
  for (size_t i = 0; i < kernel.inputs.size(); ++i) inputs.push_back(&node.value(i));
  SCOPED_TRACE(kernel.schedule);
  expect_matches(node.reference(), run_kernel(kernel, inputs, spec.output_shape, target));
}

// clang-format off
INSTANTIATE_TEST_SUITE_P(Max, Pool2dKernel, ::testing::Values(
    PoolCase{"resnet_3x3_s2_p1", OpKind::MaxPool2d, {1, 8, 40, 40}, {3, 3}, {2, 2}, {1, 1, 1, 1}},
    PoolCase{"2x2_s2", OpKind::MaxPool2d, {2, 5, 18, 34}, {2, 2}, {2, 2}},
    PoolCase{"ceil_mode_overhang", OpKind::MaxPool2d, {1, 4, 13, 21}, {3, 3}, {2, 2}, {0, 0, 0, 0}, {1, 1}, true},
    PoolCase{"asymmetric_pad", OpKind::MaxPool2d, {1, 3, 11, 19}, {3, 2}, {1, 2}, {0, 1, 2, 0}},
    PoolCase{"dilation2_ceil", OpKind::MaxPool2d, {1, 3, 17, 20}, {3, 3}, {2, 1}, {1, 1, 1, 1}, {2, 2}, true},
    PoolCase{"narrow_width5", OpKind::MaxPool2d, {1, 6, 9, 5}, {3, 3}, {1, 1}, {1, 1, 1, 1}},
    PoolCase{"stride1_same", OpKind::MaxPool2d, {1, 4, 14, 14}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, false, true, {1, 1}, {relu()}},
    // padded rows too wide to stage on the stack: bounds-checked reads
    PoolCase{"very_wide_rows", OpKind::MaxPool2d, {1, 2, 5, 2100}, {3, 3}, {1, 1}, {1, 1, 1, 1}},
    // A NaN in a window gives NaN, as in PyTorch, wherever it is in the window
    // and whatever the window's other values (x86's maxps alone would drop it).
    // Found by aotc-fuzz: stride 3 and dilation 2 over a staged row.
    PoolCase{"stride3_dilation2_staged", OpKind::MaxPool2d, {1, 2, 4, 37}, {1, 3}, {1, 3}, {0, 1, 0, 1}, {2, 2}},
    PoolCase{"nan_in_windows", OpKind::MaxPool2d, {1, 3, 19, 21}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, false, true, {1, 1}, {relu()}, 37}
), [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(Average, Pool2dKernel, ::testing::Values(
    PoolCase{"3x3_s1_p1_include_pad", OpKind::AvgPool2d, {1, 5, 17, 19}, {3, 3}, {1, 1}, {1, 1, 1, 1}},
    PoolCase{"3x3_s1_p1_exclude_pad", OpKind::AvgPool2d, {1, 5, 17, 19}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, false, false},
    PoolCase{"2x2_s2_densenet", OpKind::AvgPool2d, {1, 8, 28, 28}, {2, 2}, {2, 2}},
    PoolCase{"ceil_include_pad", OpKind::AvgPool2d, {1, 3, 10, 15}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, true, true},
    PoolCase{"ceil_exclude_pad", OpKind::AvgPool2d, {1, 3, 10, 15}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, true, false},
    PoolCase{"asymmetric_pad_exclude", OpKind::AvgPool2d, {2, 3, 9, 12}, {2, 3}, {1, 2}, {1, 0, 0, 2}, {1, 1}, false, false},
    PoolCase{"whole_plane_7x7", OpKind::AvgPool2d, {1, 16, 7, 7}, {7, 7}, {1, 1}, {0, 0, 0, 0}, {1, 1}, false, true, {1, 1}, {affine()}}
), [](const auto& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(Adaptive, Pool2dKernel, ::testing::Values(
    PoolCase{"global_7x7", OpKind::GlobalAvgPool, {2, 32, 7, 7}},
    PoolCase{"global_odd", OpKind::GlobalAvgPool, {1, 5, 13, 9}, {1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, false, true, {1, 1}, {sigmoid()}},
    PoolCase{"adaptive_to_1x1", OpKind::AdaptiveAvgPool2d, {1, 4, 6, 10}, {1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, false, true, {1, 1}},
    PoolCase{"adaptive_uneven_10_to_4", OpKind::AdaptiveAvgPool2d, {1, 3, 10, 11}, {1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, false, true, {4, 3}},
    PoolCase{"adaptive_7x7_of_13", OpKind::AdaptiveAvgPool2d, {1, 4, 13, 13}, {1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, false, true, {7, 7}},
    PoolCase{"adaptive_upsample_3_to_5", OpKind::AdaptiveAvgPool2d, {1, 2, 3, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, false, true, {5, 5}},
    PoolCase{"adaptive_wide_to_16", OpKind::AdaptiveAvgPool2d, {1, 2, 4, 40}, {1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, false, true, {2, 16}, {add({16})}}
), [](const auto& info) { return info.param.name; });
// clang-format on

}  // namespace
}  // namespace aotc::kernel_test
