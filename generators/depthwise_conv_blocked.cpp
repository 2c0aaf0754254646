#include "generators/depthwise_conv_blocked.h"

#include <algorithm>

#include "generators/conv2d.h"
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
  require(std::all_of(s.epilogue.begin(), s.epilogue.end(), reads_by_channel),
          "depthwise_conv_blocked: no post-op operand but affine's");
  blocked_depthwise_output_shape(s);  // checks kernel, stride, dilation, padding and a non-empty output
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
  require(s.input_shape.size() == 4, "depthwise_conv_blocked: needs [N, C, H, W]");
  Conv2dSpec conv;
  conv.input_shape = s.input_shape;
  conv.out_channels = s.input_shape[1];
  conv.kernel = s.kernel;
  conv.stride = s.stride;
  conv.pad = s.pad;
  conv.dilation = s.dilation;
  conv.groups = static_cast<int>(s.input_shape[1]);
  return conv2d_output_shape(conv);
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
