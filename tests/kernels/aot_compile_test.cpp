// Every generator compiles ahead of time, as the backend does it (an object
// without the runtime, taking a user context), for the host and for
// arm-64-linux: schedules chosen for AVX-512 must still lower for NEON.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include "generators/concat.h"
#include "kernel_test_support.h"
#include "generators/conv2d.h"
#include "generators/conv_transpose2d.h"
#include "generators/depth_to_space.h"
#include "generators/depthwise_conv_blocked.h"
#include "generators/elementwise.h"
#include "generators/layout.h"
#include "generators/linear.h"
#include "generators/pad.h"
#include "generators/pointwise_conv_blocked.h"
#include "generators/pool2d.h"
#include "generators/resize.h"
#include "generators/softmax.h"
#include "generators/transpose.h"

namespace aotc::kernel_test {
namespace {

using Generator = std::function<gen::Kernel(const Halide::Target&)>;

gen::Conv2dSpec conv(gen::Shape input, int64_t out, int k, int pad, int groups) {
  gen::Conv2dSpec s;
  s.input_shape = std::move(input);
  s.out_channels = out;
  s.kernel = {k, k};
  s.pad = {pad, pad, pad, pad};
  s.groups = groups;
  s.has_bias = true;
  s.epilogue = {gen::PostOpSpec{gen::PostOpSpec::Kind::kRelu, 0, 0, {}}};
  return s;
}

std::vector<std::pair<std::string, Generator>> generators() {
  gen::Pool2dSpec pool;
  pool.input_shape = {1, 8, 20, 20};
  pool.output_shape = {1, 8, 10, 10};
  pool.kernel = {3, 3};
  pool.stride = {2, 2};
  pool.pad = {1, 1, 1, 1};
  gen::LinearSpec linear{1, 64, 10, true, {}};
  gen::ElementwiseSpec add;
  add.kind = gen::ElementwiseSpec::Kind::kAdd;
  add.input_shapes = {{1, 8, 5, 5}, {1, 8, 1, 1}};
  add.output_shape = {1, 8, 5, 5};
  gen::ElementwiseSpec tanh_prelu = add;  // tanh, then a fused prelu
  tanh_prelu.kind = gen::ElementwiseSpec::Kind::kTanh;
  tanh_prelu.input_shapes = {{1, 8, 5, 5}};
  tanh_prelu.epilogue = {gen::PostOpSpec{gen::PostOpSpec::Kind::kPRelu, 0, 0, {8, 1, 1}}};
  gen::ConvTranspose2dSpec conv_transpose;
  conv_transpose.input_shape = {1, 8, 6, 9};
  conv_transpose.out_channels = 4;
  conv_transpose.kernel = {4, 4};
  conv_transpose.stride = {2, 2};
  conv_transpose.pad = {1, 1, 2, 2};  // an odd output: guarded phases
  conv_transpose.has_bias = true;
  conv_transpose.epilogue = {gen::PostOpSpec{gen::PostOpSpec::Kind::kRelu, 0, 0, {}}};
  gen::ResizeSpec bilinear;
  bilinear.input_shape = {1, 4, 6, 6};
  bilinear.size = {12, 12};
  bilinear.half_pixel_centers = true;
  gen::ResizeSpec nearest = bilinear;
  nearest.kind = gen::ResizeSpec::Kind::kNearest;
  return {
      {"conv_width_chunked", [](const Halide::Target& t) { return gen::conv2d(conv({1, 64, 30, 30}, 32, 3, 1, 1), t); }},
      {"conv_channels", [](const Halide::Target& t) { return gen::conv2d(conv({1, 32, 7, 7}, 32, 3, 1, 1), t); }},
      {"conv_depthwise", [](const Halide::Target& t) { return gen::conv2d(conv({1, 8, 20, 20}, 8, 3, 1, 8), t); }},
      {"conv_transpose", [conv_transpose](const Halide::Target& t) { return gen::conv_transpose2d(conv_transpose, t); }},
      {"pool", [pool](const Halide::Target& t) { return gen::pool2d(pool, t); }},
      {"linear", [linear](const Halide::Target& t) { return gen::linear(linear, t); }},
      {"elementwise", [add](const Halide::Target& t) { return gen::elementwise(add, t); }},
      {"elementwise_tanh_prelu", [tanh_prelu](const Halide::Target& t) { return gen::elementwise(tanh_prelu, t); }},
      {"concat", [](const Halide::Target& t) { return gen::concat({1, {{1, 4, 5, 5}, {1, 3, 5, 5}}, {}}, t); }},
      {"softmax", [](const Halide::Target& t) { return gen::softmax({{1, 10}, 1, {}}, t); }},
      {"pad", [](const Halide::Target& t) { return gen::pad({{1, 2, 4, 4}, {0, 0, 1, 1, 0, 0, 1, 1}, 0, {}}, t); }},
      {"layout", [](const Halide::Target& t) {
         return gen::convert_layout({gen::LayoutSpec::Conversion::kNchwToBlocked, {1, 8, 4, 4}, 4}, t);
       }},
      {"resize_bilinear", [bilinear](const Halide::Target& t) { return gen::resize(bilinear, t); }},
      {"resize_nearest", [nearest](const Halide::Target& t) { return gen::resize(nearest, t); }},
      {"depth_to_space", [](const Halide::Target& t) { return gen::depth_to_space({{1, 8, 5, 6}, 2, {}}, t); }},
      {"transpose_tiled", [](const Halide::Target& t) { return gen::transpose({{1, 9, 10, 12}, {0, 3, 1, 2}, {}}, t); }},
      {"transpose_interleaved", [](const Halide::Target& t) { return gen::transpose({{1, 3, 6, 20}, {0, 2, 3, 1}, {}}, t); }},
      {"depthwise_conv_blocked", [](const Halide::Target& t) {
         gen::BlockedDepthwiseSpec s;
         s.input_shape = {1, 32, 9, 9};
         s.block = gen::channel_block(t);
         s.stride = {2, 2};
         s.pad = {1, 1, 1, 1};
         return gen::depthwise_conv_blocked(s, t);
       }},
      {"pointwise_conv_blocked", [](const Halide::Target& t) {
         return gen::pointwise_conv_blocked({1, 32, 25, 48, gen::channel_block(t), true, true, {}}, t);
       }},
  };
}

void compile_all(const Halide::Target& base) {
  const Halide::Target target = base.with_feature(Halide::Target::NoRuntime).with_feature(Halide::Target::UserContext);
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / ("aot_" + target.to_string());
  std::filesystem::create_directories(dir);
  for (const auto& [name, generate] : generators()) {
    SCOPED_TRACE(name);
    gen::Kernel kernel = generate(target);
    std::vector<Halide::Argument> arguments(kernel.inputs.begin(), kernel.inputs.end());
    const std::string object = (dir / (name + ".o")).string();
    kernel.output.compile_to_object(object, arguments, "aotc_test_" + name, target);
    EXPECT_GT(std::filesystem::file_size(object), 0u);
  }
}

TEST(AotCompile, Host) { compile_all(host_target()); }

TEST(AotCompile, Arm64Linux) { compile_all(Halide::Target("arm-64-linux")); }

}  // namespace
}  // namespace aotc::kernel_test
