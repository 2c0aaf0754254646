#include "generators/conv2d_gpu.h"

#include <algorithm>

#include "generators/epilogue.h"

namespace aotc::gen {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

struct GpuConvFuncs {
  Var x{"x"}, y{"y"}, o{"o"}, n{"n"};
  Func conv{"conv"};  // bias plus the window's sum, before the epilogue
  Func output{"conv2d_gpu"};
  Halide::RDom r;  // (kx, ky, c within the group)
};

bool depthwise(const Conv2dSpec& s) { return s.groups > 1 && s.groups == s.input_shape[1] && s.groups == s.out_channels; }

// A thread: kGpuChannelTile channels x one pixel, accumulated in registers,
// the channels innermost and unrolled so each input load feeds all of them.
std::string schedule_dense(GpuConvFuncs& f, const Shape& out) {
  const int threads = gpu_threads_for(out[2] * out[3], 32, 128);
  const int channels = static_cast<int>(std::min<int64_t>(kGpuChannelTile, out[1]));
  Var p("p"), po("po"), pi("pi"), oo("oo"), oi("oi");
  f.output.fuse(f.x, f.y, p)
      .split(p, po, pi, threads, Halide::TailStrategy::GuardWithIf)
      .split(f.o, oo, oi, channels, Halide::TailStrategy::GuardWithIf)
      .reorder(oi, pi, po, oo, f.n)
      .gpu_blocks(po, oo, f.n)
      .gpu_threads(pi)
      .unroll(oi);
  f.conv.compute_at(f.output, pi).store_in(Halide::MemoryType::Register).unroll(f.o);
  f.conv.update().reorder(f.o, f.r.x, f.r.y, f.r.z, f.x, f.y, f.n).unroll(f.o);
  return "conv2d gpu: " + std::to_string(channels) + " channels x 1 pixel per thread, " + std::to_string(threads) +
         " pixels per block";
}

// A thread: kGpuDepthwiseRows rows of one column; warps along the row.
std::string schedule_depthwise(GpuConvFuncs& f, const Shape& out) {
  const int rows = static_cast<int>(std::min<int64_t>(kGpuDepthwiseRows, out[2]));
  const int columns = gpu_threads_for(out[3], 8, 32);
  Var xo("xo"), xi("xi"), yo("yo"), yt("yt"), yi("yi"), ty("ty"), plane("plane");
  f.output.split(f.x, xo, xi, columns, Halide::TailStrategy::GuardWithIf)
      .split(f.y, yo, yi, rows, Halide::TailStrategy::GuardWithIf)
      .split(yo, yt, ty, 4, Halide::TailStrategy::GuardWithIf)
      .reorder(yi, xi, ty, xo, yt, f.o, f.n)
      .fuse(f.o, f.n, plane)
      .gpu_blocks(xo, yt, plane)
      .gpu_threads(xi, ty)
      .unroll(yi);
  f.conv.compute_at(f.output, xi).store_in(Halide::MemoryType::Register).unroll(f.y);
  f.conv.update().reorder(f.y, f.r.x, f.r.y, f.r.z, f.x, f.o, f.n).unroll(f.y).unroll(f.r.x).unroll(f.r.y);
  return "conv2d gpu depthwise: " + std::to_string(rows) + " rows x 1 column per thread, " +
         std::to_string(columns) + "x4 threads per block";
}

}  // namespace

Kernel conv2d_gpu(const Conv2dSpec& spec, const Halide::Target& target) {
  require(target.has_gpu_feature(), "conv2d_gpu: the target must have a GPU feature (cuda; opencl in tests)");
  const Shape out_shape = conv2d_output_shape(spec);
  const int64_t c_per_group = spec.input_shape[1] / spec.groups;
  const int64_t o_per_group = spec.out_channels / spec.groups;
  Kernel kernel;
  Halide::ImageParam input = dense_input("input", spec.input_shape);
  Halide::ImageParam weights =
      dense_input("weights", {spec.out_channels, c_per_group, spec.kernel[0], spec.kernel[1]});
  kernel.inputs = {input, weights};
  if (spec.has_bias) kernel.inputs.push_back(dense_input("bias", {spec.out_channels}));

  /* algorithm */
  GpuConvFuncs f;
  const int h = static_cast<int>(spec.input_shape[2]), w = static_cast<int>(spec.input_shape[3]);
  const Func source = Halide::BoundaryConditions::constant_exterior(input, 0.0f, {{0, w}, {0, h}});
  f.r = Halide::RDom(0, spec.kernel[1], 0, spec.kernel[0], 0, static_cast<int>(c_per_group), "r");
  const Expr in_x = f.x * spec.stride[1] - spec.pad[1] + f.r.x * spec.dilation[1];
  const Expr in_y = f.y * spec.stride[0] - spec.pad[0] + f.r.y * spec.dilation[0];
  const Expr in_c = spec.groups == 1 ? Expr(f.r.z)
                                     : f.o / static_cast<int>(o_per_group) * static_cast<int>(c_per_group) + f.r.z;
  f.conv(f.x, f.y, f.o, f.n) = spec.has_bias ? kernel.inputs[2](f.o) : Expr(0.0f);
  f.conv(f.x, f.y, f.o, f.n) += source(in_x, in_y, in_c, f.n) * weights(f.r.x, f.r.y, f.r.z, f.o);
  f.output(f.x, f.y, f.o, f.n) =
      apply_epilogue(f.conv(f.x, f.y, f.o, f.n), spec.epilogue, {f.n, f.o, f.y, f.x}, out_shape, kernel.inputs);
  constrain_output(f.output, out_shape);

  /* schedule */
  const std::string tile = depthwise(spec) ? schedule_depthwise(f, out_shape) : schedule_dense(f, out_shape);
  kernel.schedule = tile + (spec.epilogue.empty() ? "" : ", epilogue " + epilogue_suffix(spec.epilogue));
  kernel.output = f.output;
  return kernel;
}

}  // namespace aotc::gen
