#include "generators/depthwise_conv_blocked.h"

#include <algorithm>

#include "generators/epilogue.h"

namespace aotc::gen {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

// Affine's vectors are read by channel; add, mul and prelu operands are not taken.
bool reads_by_channel(const PostOpSpec& p) { return p.kind == PostOpSpec::Kind::kAffine || p.operand_shape.empty(); }

void require_valid(const BlockedDepthwiseSpec& s) {
  require(s.input_shape.size() == 4 && num_elements(s.input_shape) > 0, "depthwise_conv_blocked: needs [N, C, H, W]");
  require(s.block >= 1 && s.input_shape[1] % s.block == 0,
          "depthwise_conv_blocked: channels must be a multiple of the block");
  require(s.kernel[0] >= 1 && s.kernel[1] >= 1 && s.stride[0] >= 1 && s.stride[1] >= 1 && s.dilation[0] >= 1 &&
              s.dilation[1] >= 1,
          "depthwise_conv_blocked: kernel, stride and dilation must be positive");
  require(std::all_of(s.epilogue.begin(), s.epilogue.end(), reads_by_channel),
          "depthwise_conv_blocked: no post-op operand but affine's");
  const Shape out = blocked_depthwise_output_shape(s);
  require(out[2] >= 1 && out[3] >= 1, "depthwise_conv_blocked: the output is empty");
}

}  // namespace

int channel_block(const Halide::Target& target) { return native_lanes(target); }

Shape blocked_shape(const Shape& nchw, int block) {
  require(nchw.size() == 4 && block >= 1 && nchw[1] % block == 0,
          "blocked_shape: needs [N, C, H, W] with C a multiple of the block, got " + to_string(nchw));
  return {nchw[0], nchw[1] / block, nchw[2], nchw[3], block};
}

bool blocked_depthwise_fits(const BlockedDepthwiseSpec& s) {
  return s.input_shape.size() == 4 && s.input_shape[1] % s.block == 0 && s.stride[0] <= kMaxStagedLoadStride &&
         s.stride[1] <= kMaxStagedLoadStride && std::all_of(s.epilogue.begin(), s.epilogue.end(), reads_by_channel);
}

Shape blocked_depthwise_output_shape(const BlockedDepthwiseSpec& s) {
  const Shape& x = s.input_shape;
  auto extent = [](int64_t in, int k, int stride, int dilation, int before, int after) {
    return (in + before + after - int64_t{dilation} * (k - 1) - 1) / stride + 1;
  };
  return {x[0], x[1], extent(x[2], s.kernel[0], s.stride[0], s.dilation[0], s.pad[0], s.pad[2]),
          extent(x[3], s.kernel[1], s.stride[1], s.dilation[1], s.pad[1], s.pad[3])};
}

PackedWeights pack_blocked_depthwise_weights(const BlockedDepthwiseSpec& spec, const float* weights) {
  require_valid(spec);
  const int64_t c_count = spec.input_shape[1], kh = spec.kernel[0], kw = spec.kernel[1], b = spec.block;
  PackedWeights packed;
  packed.shape = {c_count / b, kh, kw, b};
  packed.data.resize(static_cast<size_t>(num_elements(packed.shape)));
  for (int64_t c = 0; c < c_count; ++c)
    for (int64_t i = 0; i < kh * kw; ++i)
      packed.data[static_cast<size_t>((c / b * kh * kw + i) * b + c % b)] = weights[c * kh * kw + i];
  return packed;
}

Kernel depthwise_conv_blocked(const BlockedDepthwiseSpec& spec, const Halide::Target& target) {
  require_valid(spec);
  const Shape& x_shape = spec.input_shape;
  const Shape out_nchw = blocked_depthwise_output_shape(spec);
  const int b_lanes = spec.block;
  Kernel kernel;
  Halide::ImageParam input = dense_input("input", blocked_shape(x_shape, b_lanes));
  Halide::ImageParam weights = dense_input("weights", {x_shape[1] / b_lanes, spec.kernel[0], spec.kernel[1], b_lanes});
  kernel.inputs = {input, weights};
  if (spec.has_bias) kernel.inputs.push_back(dense_input("bias", {x_shape[1]}));

  /* algorithm */
  Var b("b"), x("x"), y("y"), cb("cb"), n("n");
  const Expr channel = cb * b_lanes + b;
  // Zero outside the image in x and y only: every tap reads a whole vector of channels.
  Func padded = Halide::BoundaryConditions::constant_exterior(
      input, 0.0f,
      {{Expr(), Expr()}, {0, static_cast<int>(x_shape[3])}, {0, static_cast<int>(x_shape[2])}, {Expr(), Expr()},
       {Expr(), Expr()}});
  Halide::RDom tap(0, spec.kernel[1], 0, spec.kernel[0], "tap");
  Func acc("acc"), output("depthwise_conv_blocked");
  acc(b, x, y, cb, n) = spec.has_bias ? kernel.inputs[2](channel) : Expr(0.0f);
  acc(b, x, y, cb, n) += weights(b, tap.x, tap.y, cb) *
                         padded(b, x * spec.stride[1] + tap.x * spec.dilation[1] - spec.pad[1],
                                y * spec.stride[0] + tap.y * spec.dilation[0] - spec.pad[0], cb, n);
  output(b, x, y, cb, n) = apply_epilogue(acc(b, x, y, cb, n), spec.epilogue, {n, channel, y, x}, out_nchw, kernel.inputs);
  const Shape out_shape = blocked_shape(out_nchw, b_lanes);
  constrain_output(output, out_shape);

  /* schedule */
  // A register tile of `tile` output pixels, one vector of channels each,
  // accumulates over the unrolled taps; rows of channel blocks are the tasks.
  const int64_t out_w = out_nchw[3];
  const int tile = static_cast<int>(std::min<int64_t>(out_w, std::max(1, accumulator_registers(target) / 3)));
  Var xo("xo"), xi("xi"), rows("rows"), tasks("tasks");
  output.split(x, xo, xi, tile).reorder(b, xi, xo, y, cb, n).vectorize(b).unroll(xi);
  output.fuse(y, cb, rows).fuse(rows, n, tasks);
  const int64_t row_count = out_nchw[2] * out_nchw[1] / b_lanes * out_nchw[0];
  const std::string parallel =
      parallel_in_tasks(output, tasks, row_count, out_w * b_lanes * spec.kernel[0] * spec.kernel[1] / kMacsPerElement);
  acc.compute_at(output, xo).vectorize(b).unroll(x);
  acc.update().reorder(b, x, tap.x, tap.y, y, cb, n).vectorize(b).unroll(x).unroll(tap.x).unroll(tap.y);
  kernel.output = output;
  kernel.schedule = "depthwise nchw" + std::to_string(b_lanes) + "c: tile " + std::to_string(tile) +
                    " pixels x " + std::to_string(b_lanes) + " channels, rows " + parallel +
                    (spec.epilogue.empty() ? "" : ", epilogue " + epilogue_suffix(spec.epilogue));
  return kernel;
}

}  // namespace aotc::gen
