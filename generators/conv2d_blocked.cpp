#include "generators/conv2d_blocked.h"

#include <algorithm>

#include "generators/depthwise_conv_blocked.h"  // blocked_shape
#include "generators/epilogue.h"

namespace aotc::gen {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

// Input channels per block of the input's layout: B in NCHWc, 1 in NCHW.
int input_block(const BlockedConvSpec& s) { return s.input_blocked ? s.block : 1; }

void require_valid(const BlockedConvSpec& s) {
  require(blocked_conv_fits(s), "conv2d_blocked: needs groups 1, no padding, channels in whole blocks and operands "
                                "of the output's whole shape");
}

// Channel blocks per register tile: two where the output's blocks pair up.
int blocks_per_tile(const BlockedConvSpec& s) { return (s.conv.out_channels / s.block) % 2 == 0 ? 2 : 1; }

// Output pixels per register tile along a row: as many as the accumulators
// allow, or down to half that where fewer cover the row with fewer pixels
// computed (the last tile of a row shifts inwards: 7 pixels take two tiles of
// 4 rather than of 5).
int tile_pixels(const BlockedConvSpec& s, const Halide::Target& target) {
  const int64_t width = conv2d_output_shape(s.conv)[3];
  const int most = broadcast_tile_accumulators(target) / blocks_per_tile(s);
  if (width <= most) return static_cast<int>(width);
  int best = most;
  for (int t = most - 1; t >= (most + 1) / 2; --t)
    if ((width + t - 1) / t * t < (width + best - 1) / best * best) best = t;
  return best;
}

}  // namespace

bool blocked_conv_fits(const BlockedConvSpec& s) {
  const Conv2dSpec& c = s.conv;
  if (c.input_shape.size() != 4 || c.groups != 1 || c.pad != std::array<int, 4>{0, 0, 0, 0} || s.block < 1 ||
      c.out_channels % s.block != 0 || (s.input_blocked && c.input_shape[1] % s.block != 0))
    return false;
  const Shape out = conv2d_output_shape(c);
  return std::all_of(c.epilogue.begin(), c.epilogue.end(), [&](const PostOpSpec& p) {
    if (p.kind == PostOpSpec::Kind::kAdd || p.kind == PostOpSpec::Kind::kMul) return p.operand_shape == out;
    return p.kind == PostOpSpec::Kind::kAffine || p.operand_shape.empty();
  });
}

PackedWeights pack_blocked_conv_weights(const BlockedConvSpec& spec, const float* oihw) {
  require_valid(spec);
  const int64_t o_count = spec.conv.out_channels, c_count = spec.conv.input_shape[1];
  const int64_t kh = spec.conv.kernel[0], kw = spec.conv.kernel[1], b = spec.block, bi = input_block(spec);
  PackedWeights packed;
  packed.shape = {o_count / b, c_count / bi, kh, kw, bi, b};
  packed.data.resize(static_cast<size_t>(num_elements(packed.shape)));
  for (int64_t o = 0; o < o_count; ++o)
    for (int64_t c = 0; c < c_count; ++c)
      for (int64_t ky = 0; ky < kh; ++ky)
        for (int64_t kx = 0; kx < kw; ++kx)
          packed.data[static_cast<size_t>(((((o / b * (c_count / bi) + c / bi) * kh + ky) * kw + kx) * bi + c % bi) * b +
                                          o % b)] = oihw[((o * c_count + c) * kh + ky) * kw + kx];
  return packed;
}

ScheduleShape conv2d_blocked_schedule_shape(const BlockedConvSpec& spec, const Halide::Target& target) {
  require_valid(spec);
  return {"direct-nchwc", tile_use(conv2d_output_shape(spec.conv)[3], tile_pixels(spec, target))};
}

Kernel conv2d_blocked(const BlockedConvSpec& spec, const Halide::Target& target) {
  require_valid(spec);
  const Conv2dSpec& conv = spec.conv;
  const Shape out_nchw = conv2d_output_shape(conv);
  const int b_lanes = spec.block, bi = input_block(spec);
  const int64_t out_blocks = conv.out_channels / b_lanes, in_blocks = conv.input_shape[1] / bi;
  const Shape out_shape = blocked_shape(out_nchw, b_lanes);
  Kernel kernel;
  Halide::ImageParam input =
      dense_input("input", spec.input_blocked ? blocked_shape(conv.input_shape, b_lanes) : conv.input_shape);
  Halide::ImageParam weights =
      dense_input("weights", {out_blocks, in_blocks, conv.kernel[0], conv.kernel[1], bi, b_lanes});
  kernel.inputs = {input, weights};
  if (conv.has_bias) kernel.inputs.push_back(dense_input("bias", {conv.out_channels}));

  /* algorithm */
  Var b("b"), x("x"), y("y"), ob("ob"), n("n");
  // Reduced block by block (r.w), tap by tap (r.z, r.y), lane by lane within
  // a block (r.x, extent 1 for an NCHW input): a block's lanes of one pixel
  // are adjacent, and so are the weights in that order.
  Halide::RDom r(0, bi, 0, conv.kernel[1], 0, conv.kernel[0], 0, static_cast<int>(in_blocks), "r");
  const Expr in_x = x * conv.stride[1] + r.y * conv.dilation[1], in_y = y * conv.stride[0] + r.z * conv.dilation[0];
  const Expr in_value = spec.input_blocked ? input(r.x, in_x, in_y, r.w, n) : input(in_x, in_y, r.w + r.x, n);
  const Expr channel = ob * b_lanes + b;
  Func acc("acc"), output("conv2d_blocked");
  acc(b, x, y, ob, n) = conv.has_bias ? kernel.inputs[2](channel) : Expr(0.0f);
  acc(b, x, y, ob, n) += weights(b, r.x, r.y, r.z, r.w, ob) * in_value;
  output(b, x, y, ob, n) = apply_blocked_epilogue(acc(b, x, y, ob, n), conv.epilogue, {n, ob, y, x, b}, out_shape,
                                                  {n, channel, y, x}, out_nchw, kernel.inputs);
  constrain_output(output, out_shape);

  /* schedule */
  const int blocks = blocks_per_tile(spec);
  const int tile_x = tile_pixels(spec, target);
  Var xo("xo"), xi("xi"), obo("obo"), obi("obi"), pixels("pixels"), tiles("tiles"), tasks("tasks"), tile("tile");
  // Channel blocks outside pixel tiles: their weights (C x taps x blocks x B)
  // stay in L2 while the tiles stream the input. A row's last tile shifts
  // inwards.
  output.split(x, xo, xi, tile_x)
      .split(ob, obo, obi, blocks)
      .reorder(b, xi, obi, xo, y, obo, n)
      .vectorize(b)
      .unroll(xi)
      .unroll(obi);
  output.fuse(xo, y, pixels).fuse(pixels, obo, tiles).fuse(tiles, n, tasks);
  const int64_t tile_count = (out_nchw[3] + tile_x - 1) / tile_x * out_nchw[2] * (out_blocks / blocks) * out_nchw[0];
  const int64_t macs_per_tile =
      int64_t{tile_x} * blocks * b_lanes * conv.input_shape[1] * conv.kernel[0] * conv.kernel[1];
  const std::string parallel = parallel_in_tasks(output, tasks, tile_count, macs_per_tile / kMacsPerElement, tile);
  acc.compute_at(output, tile).vectorize(b).unroll(x).unroll(ob);
  acc.update().reorder(b, x, ob, r.x, r.y, r.z, r.w, n).vectorize(b).unroll(x).unroll(ob);
  kernel.output = output;
  kernel.schedule = std::string("direct conv ") + (spec.input_blocked ? "nchwc" : "nchw") + " -> nchw" +
                    std::to_string(b_lanes) + "c: tile " + std::to_string(tile_x) + " pixels x " +
                    std::to_string(blocks) + "x" + std::to_string(b_lanes) + " channels, tiles " + parallel +
                    (conv.epilogue.empty() ? "" : ", epilogue " + epilogue_suffix(conv.epilogue));
  return kernel;
}

}  // namespace aotc::gen
