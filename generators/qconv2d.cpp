#include "generators/qconv2d.h"

#include <algorithm>

namespace aotc::gen {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

// Output channels per register tile (unrolled), each a vector of accumulators along the row.
constexpr int64_t kChannelTile = 8;

int64_t extent(int64_t in, int kernel, int stride, int pad_begin, int pad_end, int dilation) {
  const int64_t span = in + pad_begin + pad_end - int64_t{dilation} * (kernel - 1) - 1;
  return span < 0 ? 0 : span / stride + 1;
}

void check(const QConv2dSpec& s) {
  require(s.input_shape.size() == 4, "qconv2d: input must be NCHW, got " + to_string(s.input_shape));
  require(s.groups >= 1 && s.out_channels >= 1 && s.input_shape[1] % s.groups == 0 && s.out_channels % s.groups == 0,
          "qconv2d: groups must divide the input and output channels");
  for (int i = 0; i < 2; ++i)
    require(s.kernel[i] >= 1 && s.stride[i] >= 1 && s.dilation[i] >= 1,
            "qconv2d: kernel, stride and dilation must be positive");
  for (int p : s.pad) require(p >= 0, "qconv2d: padding must be non-negative");
  for (const Halide::Type& t : {s.input_type, s.out_type})
    require(t == Halide::Int(8) || t == Halide::UInt(8), "qconv2d: int8 or uint8 activations only");
  require(s.weight_type == Halide::Int(8) || s.weight_type == Halide::Int(32), "qconv2d: int8 or int32 packed weights");
  const int64_t lowest = s.out_type.is_int() ? -128 : 0;
  require(s.min <= s.max && s.min >= lowest && s.max <= lowest + 255, "qconv2d: saturation bounds outside the output type");
}

}  // namespace

Shape qconv2d_output_shape(const QConv2dSpec& s) {
  check(s);
  const int64_t oh = extent(s.input_shape[2], s.kernel[0], s.stride[0], s.pad[0], s.pad[2], s.dilation[0]);
  const int64_t ow = extent(s.input_shape[3], s.kernel[1], s.stride[1], s.pad[1], s.pad[3], s.dilation[1]);
  require(oh >= 1 && ow >= 1, "qconv2d: the kernel is larger than the padded input");
  return {s.input_shape[0], s.out_channels, oh, ow};
}

PackedWeights pack_qconv2d_weights(const QConv2dSpec& s, const float* oihw, const std::vector<int64_t>& zero_points) {
  PackedWeights p;
  p.shape = {s.out_channels, s.input_shape[1] / s.groups, s.kernel[0], s.kernel[1]};
  p.type = s.weight_type;
  const int64_t per_channel = num_elements(p.shape) / s.out_channels;
  p.data.resize(static_cast<size_t>(num_elements(p.shape)));
  for (int64_t i = 0; i < num_elements(p.shape); ++i) {
    const int64_t zero = zero_points.size() == 1 ? zero_points[0] : zero_points.at(static_cast<size_t>(i / per_channel));
    p.data[static_cast<size_t>(i)] = oihw[i] - static_cast<float>(zero);
    require(s.weight_type == Halide::Int(32) || (p.data[static_cast<size_t>(i)] >= -128 && p.data[static_cast<size_t>(i)] <= 127),
            "qconv2d: weights with non-zero zero points need Int(32)");
  }
  return p;
}

Kernel qconv2d(const QConv2dSpec& s, const Halide::Target& target) {
  const Shape out_shape = qconv2d_output_shape(s);
  const int64_t o_count = out_shape[1], oh = out_shape[2], ow = out_shape[3];
  const int64_t in_per_group = s.input_shape[1] / s.groups, out_per_group = s.out_channels / s.groups;
  const Shape weight_shape{s.out_channels, in_per_group, s.kernel[0], s.kernel[1]};

  Kernel kernel;
  Halide::ImageParam input = dense_input("input", s.input_shape, s.input_type);
  Halide::ImageParam weights = dense_input("weights", weight_shape, s.weight_type);
  Halide::ImageParam bias = dense_input("bias", {o_count}, Halide::Int(32));
  Halide::ImageParam multiplier = dense_input("multiplier", {o_count}, Halide::Float(32));
  kernel.inputs = {input, weights, bias, multiplier};

  /* algorithm */
  Var x("x"), y("y"), o("o"), n("n");
  const int h = static_cast<int>(s.input_shape[2]), w = static_cast<int>(s.input_shape[3]);
  Func padded = Halide::BoundaryConditions::constant_exterior(
      input, Halide::cast(s.input_type, static_cast<int>(s.in_zero)), {{0, w}, {0, h}});
  Func shifted("shifted");
  shifted(x, y, o, n) = Halide::cast<int16_t>(padded(x, y, o, n)) - static_cast<int16_t>(s.in_zero);
  Halide::RDom r(0, static_cast<int>(s.kernel[1]), 0, static_cast<int>(s.kernel[0]), 0, static_cast<int>(in_per_group),
                 "r");
  const Expr c = o / static_cast<int>(out_per_group) * static_cast<int>(in_per_group) + r.z;
  Func acc("acc");
  acc(x, y, o, n) = bias(o);
  acc(x, y, o, n) += Halide::cast<int32_t>(shifted(x * s.stride[1] + r.x * s.dilation[1] - s.pad[1],
                                                   y * s.stride[0] + r.y * s.dilation[0] - s.pad[0], c, n)) *
                     Halide::cast<int32_t>(weights(r.x, r.y, r.z, o));
  const Expr scaled = Halide::round(Halide::cast<float>(acc(x, y, o, n)) * multiplier(o));  // ties to even
  Func output("qconv2d");
  output(x, y, o, n) = Halide::cast(
      s.out_type, Halide::clamp(Halide::cast<int32_t>(scaled) + static_cast<int32_t>(s.out_zero),
                                static_cast<int32_t>(s.min), static_cast<int32_t>(s.max)));
  constrain_output(output, out_shape);

  /* schedule */
  const int lanes = lanes_for_extent(ow, native_lanes(target));
  const int tile = static_cast<int>(largest_divisor_at_most(out_per_group, kChannelTile));
  Var xo("xo"), xi("xi"), oo("oo"), oi("oi");
  output.split(x, xo, xi, lanes, Halide::TailStrategy::ShiftInwards)
      .split(o, oo, oi, tile)
      .reorder(xi, oi, xo, y, oo, n)
      .vectorize(xi)
      .unroll(oi);
  Var plane("plane");
  output.fuse(oo, n, plane);
  const std::string parallel = parallel_in_tasks(
      output, plane, o_count / tile * s.input_shape[0], oh * ow * tile * in_per_group * s.kernel[0] * s.kernel[1] / kMacsPerElement);
  acc.compute_at(output, xo).vectorize(x).unroll(o);
  acc.update().reorder(x, o, r.x, r.y, r.z).vectorize(x).unroll(o);
  kernel.schedule = "qconv2d: rows vectorised (" + std::to_string(lanes) + " int32 lanes) x " + std::to_string(tile) +
                    " channels per register tile, " + parallel;
  kernel.output = output;
  return kernel;
}

}  // namespace aotc::gen
