// Builds the kernels of tests/gpu_schedules: each case's generator for an OpenCL
// target (its GPU schedule, as a CUDA library's Halide kernel takes it) and, as the
// reference, for the host (its CPU schedule, which tests/kernels checks against the
// reference evaluator); conv2d_gpu, whose weights no CPU kernel reads unpacked, is
// checked against run_gpu_kernels.cpp's direct convolution instead. Writes into DIR
// the objects (no runtime), the Halide runtime for host-opencl, and cases.inc: the
// table of cases, with every argument's shape, that run_gpu_kernels.cpp includes.
//
//   build_gpu_kernels DIR
//
// The two programs are apart because libHalide's LLVM and the OpenCL device's
// (POCL's) cannot share one process.
#include <Halide.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>

#include "generators/concat.h"
#include "generators/conv2d_gpu.h"
#include "generators/conv_transpose2d.h"
#include "generators/depth_to_space.h"
#include "generators/elementwise.h"
#include "generators/linear.h"
#include "generators/pad.h"
#include "generators/pool2d.h"
#include "generators/resize.h"
#include "generators/softmax.h"
#include "generators/transpose.h"

namespace {

using aotc::gen::Kernel;
using aotc::gen::PostOpSpec;
using aotc::gen::Shape;
using Build = std::function<Kernel(const Halide::Target&)>;

struct Case {
  std::string name;
  Build build;
  const aotc::gen::Conv2dSpec* conv = nullptr;  // conv2d_gpu: checked against the direct convolution
  // Arguments whose values are given (resize's sample tables), by index; the others are random.
  std::vector<std::pair<size_t, aotc::gen::PackedWeights>> fixed = {};
};

PostOpSpec post_op(PostOpSpec::Kind kind, float min = 0, float max = 0, Shape operand = {}) {
  return PostOpSpec{kind, min, max, std::move(operand)};
}

aotc::gen::Conv2dSpec conv(Shape input, int64_t out, int k, int stride, int pad, int groups, PostOpSpec epilogue) {
  aotc::gen::Conv2dSpec s;
  s.input_shape = std::move(input);
  s.out_channels = out;
  s.kernel = {k, k};
  s.stride = {stride, stride};
  s.pad = {pad, pad, pad, pad};
  s.groups = groups;
  s.has_bias = true;
  s.epilogue = {epilogue};
  return s;
}

// The convolutions of conv2d_gpu's schedules: split (3x3, 1x1 of a small map and a long
// reduction), staged (a strided RGB stem whose channels do not fill a tile), grouped,
// depthwise. An asymmetric padding (TFLite's SAME with stride 2) and a dilated one.
aotc::gen::Conv2dSpec with(aotc::gen::Conv2dSpec s, std::array<int, 4> pad, std::array<int, 2> dilation) {
  s.pad = pad;
  s.dilation = dilation;
  return s;
}

const aotc::gen::Conv2dSpec kConvs[] = {
    conv({1, 16, 14, 14}, 24, 3, 1, 1, 1, post_op(PostOpSpec::Kind::kRelu)),
    conv({1, 96, 7, 7}, 20, 1, 1, 0, 1, post_op(PostOpSpec::Kind::kRelu)),
    conv({1, 3, 23, 23}, 5, 7, 2, 3, 1, post_op(PostOpSpec::Kind::kClamp, 0, 6)),
    conv({2, 8, 9, 9}, 12, 3, 2, 1, 4, post_op(PostOpSpec::Kind::kRelu)),
    conv({1, 12, 19, 37}, 12, 3, 1, 1, 12, post_op(PostOpSpec::Kind::kClamp, 0, 6)),
    conv({1, 12, 19, 37}, 12, 3, 2, 1, 12, post_op(PostOpSpec::Kind::kRelu)),
    with(conv({1, 8, 16, 16}, 8, 3, 2, 0, 8, post_op(PostOpSpec::Kind::kRelu)), {0, 0, 1, 1}, {1, 1}),
    with(conv({1, 6, 15, 17}, 10, 3, 1, 0, 1, post_op(PostOpSpec::Kind::kRelu)), {2, 2, 2, 2}, {2, 2}),
    // The split schedule's: few outputs, long reductions (8 slices; an odd channel
    // count; a batch of two; grouped; stride 2).
    conv({1, 256, 7, 7}, 64, 1, 1, 0, 1, post_op(PostOpSpec::Kind::kRelu)),
    conv({1, 100, 9, 11}, 19, 3, 1, 1, 1, post_op(PostOpSpec::Kind::kClamp, 0, 6)),
    conv({2, 128, 6, 5}, 24, 3, 1, 1, 2, post_op(PostOpSpec::Kind::kRelu)),
    conv({1, 64, 13, 13}, 32, 3, 2, 1, 1, post_op(PostOpSpec::Kind::kRelu)),
    // The staged schedule's (the stem and the dilated case above are staged too): a
    // window on many outputs (stride 2; dilation 2; 32 input channels, odd tiles at the
    // edges). The dense schedule's: a 1x1 on a large map.
    conv({1, 4, 20, 40}, 16, 3, 2, 1, 1, post_op(PostOpSpec::Kind::kRelu)),
    with(conv({1, 6, 30, 34}, 8, 3, 1, 0, 1, post_op(PostOpSpec::Kind::kRelu)), {2, 2, 2, 2}, {2, 2}),
    conv({1, 32, 66, 66}, 64, 3, 1, 1, 1, post_op(PostOpSpec::Kind::kClamp, 0, 6)),
    conv({1, 8, 40, 40}, 20, 1, 1, 0, 1, post_op(PostOpSpec::Kind::kRelu)),
    // Four pixels a thread (float4s), with threads enough: a 1x1, and a padded, dilated
    // 3x3 whose window does not fit in shared memory.
    conv({1, 4, 256, 256}, 32, 1, 1, 0, 1, post_op(PostOpSpec::Kind::kRelu)),
    with(conv({1, 18, 128, 256}, 64, 3, 1, 0, 1, post_op(PostOpSpec::Kind::kClamp, 0, 6)), {4, 4, 4, 4}, {4, 4}),
    // Staged without padding (no bounds check): the edge tiles' windows stay inside.
    conv({1, 6, 22, 37}, 16, 3, 1, 0, 1, post_op(PostOpSpec::Kind::kRelu)),
};

std::vector<Case> cases() {
  using namespace aotc::gen;
  std::vector<Case> c;
  for (const Conv2dSpec& s : kConvs)
    c.push_back({"conv" + std::to_string(c.size()), [&s](const Halide::Target& t) { return conv2d_gpu(s, t); }, &s});
  auto add = [&c](const std::string& name, Build build) { c.push_back({name, std::move(build)}); };

  ElementwiseSpec broadcast_add;
  broadcast_add.kind = ElementwiseSpec::Kind::kAdd;
  broadcast_add.input_shapes = {{2, 8, 5, 7}, {1, 8, 1, 7}};
  broadcast_add.output_shape = {2, 8, 5, 7};
  broadcast_add.epilogue = {post_op(PostOpSpec::Kind::kRelu)};
  add("elementwise_add", [broadcast_add](const Halide::Target& t) { return elementwise(broadcast_add, t); });
  ElementwiseSpec affine;
  affine.kind = ElementwiseSpec::Kind::kAffine;
  affine.input_shapes = {{1, 6, 9, 11}, {6}, {6}};
  affine.output_shape = {1, 6, 9, 11};
  affine.epilogue = {post_op(PostOpSpec::Kind::kHardSwish), post_op(PostOpSpec::Kind::kMul, 0, 0, {1, 6, 1, 1})};
  add("elementwise_affine", [affine](const Halide::Target& t) { return elementwise(affine, t); });
  ElementwiseSpec tanh_rank1;
  tanh_rank1.kind = ElementwiseSpec::Kind::kTanh;
  tanh_rank1.input_shapes = {{1000}};
  tanh_rank1.output_shape = {1000};
  add("elementwise_tanh", [tanh_rank1](const Halide::Target& t) { return elementwise(tanh_rank1, t); });
  // float4s that straddle channels (18 elements a plane): the scale and shift per lane.
  ElementwiseSpec affine_float4 = affine;
  affine_float4.input_shapes = {{2, 4, 3, 6}, {4}, {4}};
  affine_float4.output_shape = {2, 4, 3, 6};
  affine_float4.epilogue = {post_op(PostOpSpec::Kind::kHardSwish), post_op(PostOpSpec::Kind::kMul, 0, 0, {1, 4, 1, 1})};
  add("elementwise_affine_float4", [affine_float4](const Halide::Target& t) { return elementwise(affine_float4, t); });
  // A copy into a slice that may start misaligned: a thread per element.
  ElementwiseSpec copy_unaligned;
  copy_unaligned.input_shapes = {{1, 400}};
  copy_unaligned.output_shape = {1, 400};
  copy_unaligned.aligned = false;
  add("elementwise_copy_unaligned",
      [copy_unaligned](const Halide::Target& t) { return elementwise(copy_unaligned, t); });

  PadSpec pad4{{1, 3, 10, 13}, {0, 0, 2, 1, 0, 0, 1, 3}, 0.5f, {post_op(PostOpSpec::Kind::kSigmoid)}};
  add("pad", [pad4](const Halide::Target& t) { return pad(pad4, t); });
  // 1x2x12x12 outputs: float4s, some across the padding's edge.
  PadSpec pad_float4{{1, 2, 9, 10}, {0, 0, 1, 1, 0, 0, 2, 1}, -1.0f, {}};
  add("pad_float4", [pad_float4](const Halide::Target& t) { return pad(pad_float4, t); });

  for (const auto& [name, spec] : std::vector<std::pair<std::string, TransposeSpec>>{
           {"transpose_nhwc_to_nchw", {{1, 19, 23, 24}, {0, 3, 1, 2}, {}}},
           {"transpose_nchw_to_nhwc", {{1, 24, 19, 23}, {0, 2, 3, 1}, {post_op(PostOpSpec::Kind::kRelu)}}},
           {"transpose_rgb", {{1, 37, 29, 3}, {0, 3, 1, 2}, {}}},
           {"transpose_rank5", {{2, 3, 5, 7, 4}, {4, 2, 0, 3, 1}, {}}},
           {"transpose_copy", {{1, 4, 1, 9}, {0, 2, 1, 3}, {}}},
       })
    add(name, [spec = spec](const Halide::Target& t) { return transpose(spec, t); });

  for (const auto& [name, spec] : std::vector<std::pair<std::string, SoftmaxSpec>>{
           {"softmax_classes", {{1, 1000}, 1, {}}},
           {"softmax_rows_per_block", {{1, 21, 8, 8}, 1, {}}},
           {"softmax_row_per_thread", {{1, 21, 40, 40}, 1, {}}},
           {"softmax_innermost", {{3, 50}, 1, {post_op(PostOpSpec::Kind::kMul, 0, 0, {1})}}},
           {"softmax_rank1", {{300}, 0, {}}},
       })
    add(name, [spec = spec](const Halide::Target& t) { return softmax(spec, t); });

  for (const auto& [name, spec] : std::vector<std::pair<std::string, LinearSpec>>{
           {"linear_classifier", {1, 512, 1000, true, {}}},
           {"linear_long", {1, 2304, 96, true, {post_op(PostOpSpec::Kind::kRelu)}}},
           {"linear_batch", {8, 256, 100, true, {}}},
           {"linear_odd", {3, 1001, 13, false, {post_op(PostOpSpec::Kind::kAdd, 0, 0, {13})}}},
       })
    add(name, [spec = spec](const Halide::Target& t) { return linear(spec, t); });

  ConvTranspose2dSpec up2;
  up2.input_shape = {1, 8, 9, 11};
  up2.out_channels = 6;
  up2.kernel = {2, 2};
  up2.stride = {2, 2};
  up2.has_bias = true;
  up2.epilogue = {post_op(PostOpSpec::Kind::kRelu)};
  add("conv_transpose_k2s2", [up2](const Halide::Target& t) { return conv_transpose2d(up2, t); });
  ConvTranspose2dSpec up3 = up2;
  up3.out_channels = 11;
  up3.kernel = {3, 3};
  up3.pad = {1, 1, 0, 0};
  add("conv_transpose_k3s2_padded", [up3](const Halide::Target& t) { return conv_transpose2d(up3, t); });

  DepthToSpaceSpec d2s{{1, 12, 7, 9}, 2, {}};
  add("depth_to_space", [d2s](const Halide::Target& t) { return depth_to_space(d2s, t); });

  Pool2dSpec max_pool;
  max_pool.input_shape = {1, 8, 21, 21};
  max_pool.output_shape = {1, 8, 11, 11};
  max_pool.kernel = {3, 3};
  max_pool.stride = {2, 2};
  max_pool.pad = {1, 1, 1, 1};
  add("max_pool", [max_pool](const Halide::Target& t) { return pool2d(max_pool, t); });
  Pool2dSpec avg_pool = max_pool;
  avg_pool.kind = Pool2dSpec::Kind::kAverage;
  avg_pool.count_include_pad = false;
  add("avg_pool", [avg_pool](const Halide::Target& t) { return pool2d(avg_pool, t); });
  Pool2dSpec adaptive;
  adaptive.kind = Pool2dSpec::Kind::kAdaptiveAverage;
  adaptive.input_shape = {2, 5, 13, 10};
  adaptive.output_shape = {2, 5, 4, 3};
  add("adaptive_pool", [adaptive](const Halide::Target& t) { return pool2d(adaptive, t); });
  // More planes than a grid's y or z dimension holds (65535).
  Pool2dSpec many_planes = max_pool;
  many_planes.input_shape = {1, 70000, 2, 2};
  many_planes.output_shape = {1, 70000, 1, 1};
  many_planes.kernel = {2, 2};
  many_planes.pad = {0, 0, 0, 0};
  add("max_pool_many_planes", [many_planes](const Halide::Target& t) { return pool2d(many_planes, t); });

  // Concat: along channels (three inputs, an epilogue), along the innermost dim, rank 2.
  for (const auto& [name, spec] : std::vector<std::pair<std::string, ConcatSpec>>{
           {"concat_channels", {1, {{1, 8, 9, 11}, {1, 3, 9, 11}, {1, 5, 9, 11}}, {post_op(PostOpSpec::Kind::kRelu)}}},
           {"concat_innermost", {3, {{2, 3, 4, 7}, {2, 3, 4, 2}}, {}}},
           {"concat_rank2_batch", {0, {{3, 20}, {5, 20}}, {}}},
       })
    add(name, [spec = spec](const Halide::Target& t) { return concat(spec, t); });

  // Resize: its sample tables are an input with given values.
  auto resize_case = [&c](const std::string& name, ResizeSpec::Kind kind, Shape input, std::array<int64_t, 2> size,
                          bool align_corners, bool half_pixel_centers) {
    ResizeSpec spec;
    spec.kind = kind;
    spec.input_shape = std::move(input);
    spec.size = size;
    spec.align_corners = align_corners;
    spec.half_pixel_centers = half_pixel_centers;
    c.push_back({name, [spec](const Halide::Target& t) { return resize(spec, t); }, nullptr, {{1, resize_tables(spec)}}});
  };
  resize_case("resize_bilinear_2x", ResizeSpec::Kind::kBilinear, {1, 4, 8, 9}, {16, 18}, false, true);
  resize_case("resize_bilinear_align", ResizeSpec::Kind::kBilinear, {2, 3, 7, 5}, {9, 13}, true, false);
  resize_case("resize_bilinear_down", ResizeSpec::Kind::kBilinear, {1, 2, 17, 23}, {5, 7}, false, false);
  resize_case("resize_nearest_3x", ResizeSpec::Kind::kNearest, {1, 3, 4, 5}, {12, 15}, false, true);
  resize_case("resize_nearest_fractional", ResizeSpec::Kind::kNearest, {1, 2, 6, 9}, {10, 20}, false, false);
  return c;
}

int64_t extent(const Halide::Internal::Parameter& p, int dim) {
  const int64_t* e = Halide::Internal::as_const_int(p.extent_constraint(dim));
  if (e == nullptr) throw std::runtime_error(p.name() + ": no constant extent");
  return *e;
}

// "{rank, {outermost, ..., innermost}}"
std::string shape_entry(const Halide::Internal::Parameter& p) {
  std::ostringstream os;
  os << "{" << p.dimensions() << ", {";
  for (int d = p.dimensions(); d-- > 0;) os << extent(p, d) << (d ? ", " : "");
  os << "}}";
  return os.str();
}

std::string compile(const Build& build, const Halide::Target& target, const std::string& function,
                    const std::filesystem::path& dir, std::ostringstream& shapes) {
  Kernel k = build(target.with_feature(Halide::Target::NoRuntime));
  std::vector<Halide::Argument> arguments(k.inputs.begin(), k.inputs.end());
  k.output.compile_to_object((dir / (function + ".o")).string(), arguments, function,
                             target.with_feature(Halide::Target::NoRuntime));
  shapes.str("");
  for (const Halide::ImageParam& p : k.inputs) shapes << shape_entry(p.parameter()) << ", ";
  shapes << shape_entry(k.output.output_buffer().parameter());
  return k.schedule;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: build_gpu_kernels DIR\n";
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  const Halide::Target host = Halide::get_host_target();
  const Halide::Target gpu = host.with_feature(Halide::Target::OpenCL);
  Halide::compile_standalone_runtime((dir / "runtime.o").string(), gpu);
  std::ostringstream table, declarations, shapes;
  declarations << std::hexfloat;  // exact
  for (const Case& c : cases()) {
    const std::string schedule = compile(c.build, gpu, c.name + "_gpu", dir, shapes);
    if (schedule.find("gpu") == std::string::npos) {
      std::cerr << c.name << ": not a GPU schedule: " << schedule << "\n";
      return 1;
    }
    declarations << "int " << c.name << "_gpu_argv(void**);\n";
    std::string reference = "nullptr";
    if (c.conv == nullptr) {
      std::ostringstream cpu_shapes;
      compile(c.build, host, c.name + "_cpu", dir, cpu_shapes);
      declarations << "int " << c.name << "_cpu_argv(void**);\n";
      reference = c.name + "_cpu_argv";
    }
    table << "    {\"" << c.name << "\", \"" << schedule << "\", " << c.name << "_gpu_argv, " << reference << ", {"
          << shapes.str() << "}, ";
    if (c.conv != nullptr) {
      const aotc::gen::Conv2dSpec& s = *c.conv;
      const PostOpSpec& e = s.epilogue.at(0);
      table << "{true, " << s.stride[0] << ", " << s.pad[0] << ", " << s.pad[1] << ", " << s.dilation[0] << ", "
            << s.groups << ", "
            << (e.kind == PostOpSpec::Kind::kRelu ? "0.0f, INFINITY" : std::to_string(e.min) + "f, " + std::to_string(e.max) + "f")
            << "}";
    } else {
      table << "{}";
    }
    table << ", {";
    for (size_t i = 0, next = 0; next < c.fixed.size(); ++i) {
      if (c.fixed[next].first != i) {
        table << "nullptr, ";
        continue;
      }
      const std::string array = "k" + c.name + "_arg" + std::to_string(i);
      declarations << "static const float " << array << "[] = {";
      for (float v : c.fixed[next++].second.data) declarations << v << ", ";
      declarations << "};\n";
      table << array << ", ";
    }
    table << "}},\n";
  }
  std::ofstream out(dir / "cases.inc");
  out << "// Generated by build_gpu_kernels: the kernels and their arguments' shapes.\n"
      << "extern \"C\" {\n" << declarations.str() << "}\n"
      << "const Case kCases[] = {\n" << table.str() << "};\n";
  return out ? 0 : 1;
}
