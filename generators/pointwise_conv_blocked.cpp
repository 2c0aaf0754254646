#include "generators/pointwise_conv_blocked.h"

#include <algorithm>

#include "generators/epilogue.h"

namespace aotc::gen {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

bool whole_output_operand(const BlockedPointwiseSpec& s, const PostOpSpec& p) {
  return p.operand_shape == Shape{s.batch, s.out_channels, s.pixels};
}

void require_valid(const BlockedPointwiseSpec& s) {
  require(s.batch >= 1 && s.in_channels >= 1 && s.pixels >= 1 && s.out_channels >= 1 && s.block >= 1,
          "pointwise_conv_blocked: extents must be positive");
  require(blocked_pointwise_fits(s), "pointwise_conv_blocked: channels not in whole blocks, or an operand of "
                                     "another shape than the output's");
}

// Channel blocks per register tile: two where the output's blocks pair up.
int blocks_per_tile(const BlockedPointwiseSpec& s) { return (s.out_channels / s.block) % 2 == 0 ? 2 : 1; }

int tile_pixels(const BlockedPointwiseSpec& s, const Halide::Target& target) {
  return static_cast<int>(std::min<int64_t>(s.pixels, broadcast_tile_accumulators(target) / blocks_per_tile(s)));
}

}  // namespace

bool blocked_pointwise_fits(const BlockedPointwiseSpec& s) {
  if (s.block < 1 || s.out_channels % s.block != 0 || (s.input_blocked && s.in_channels % s.block != 0)) return false;
  return std::all_of(s.epilogue.begin(), s.epilogue.end(), [&](const PostOpSpec& p) {
    if (p.kind == PostOpSpec::Kind::kAdd || p.kind == PostOpSpec::Kind::kMul) return whole_output_operand(s, p);
    return p.kind == PostOpSpec::Kind::kAffine || p.operand_shape.empty();
  });
}

ScheduleShape pointwise_conv_blocked_schedule_shape(const BlockedPointwiseSpec& spec, const Halide::Target& target) {
  require_valid(spec);
  return {spec.input_blocked ? "pointwise-nchwc" : "pointwise-nchw-to-nchwc", tile_use(spec.pixels, tile_pixels(spec, target))};
}

PackedWeights pack_blocked_pointwise_weights(const BlockedPointwiseSpec& spec, const float* oc) {
  require_valid(spec);
  return pack_in_row_blocks(oc, spec.out_channels, spec.in_channels, spec.block);
}

Kernel pointwise_conv_blocked(const BlockedPointwiseSpec& spec, const Halide::Target& target) {
  require_valid(spec);
  const int b_lanes = spec.block;
  const int64_t out_blocks = spec.out_channels / b_lanes;
  const Shape out_shape{spec.batch, out_blocks, spec.pixels, b_lanes};
  Kernel kernel;
  Halide::ImageParam input =
      dense_input("input", spec.input_blocked ? Shape{spec.batch, spec.in_channels / b_lanes, spec.pixels, b_lanes}
                                              : Shape{spec.batch, spec.in_channels, spec.pixels});
  Halide::ImageParam weights = dense_input("weights", {out_blocks, spec.in_channels, b_lanes});
  kernel.inputs = {input, weights};
  if (spec.has_bias) kernel.inputs.push_back(dense_input("bias", {spec.out_channels}));

  /* algorithm */
  Var b("b"), p("p"), ob("ob"), n("n");
  // An NCHWc input is reduced block by block (r.y), lane by lane within (r.x):
  // with one flat channel index, every step recomputed c / B and c % B for
  // each pixel's address (the kernel ran at half the NCHW 1x1's speed).
  const int in_blocks = static_cast<int>(spec.input_blocked ? spec.in_channels / b_lanes : 1);
  Halide::RDom r(0, spec.input_blocked ? b_lanes : static_cast<int>(spec.in_channels), 0, in_blocks, "r");
  const Expr c = spec.input_blocked ? r.y * b_lanes + r.x : Expr(r.x);
  const Expr in_value = spec.input_blocked ? input(r.x, p, r.y, n) : input(p, r.x, n);
  const Expr channel = ob * b_lanes + b;
  Func acc("acc"), output("pointwise_conv_blocked");
  acc(b, p, ob, n) = spec.has_bias ? kernel.inputs[2](channel) : Expr(0.0f);
  acc(b, p, ob, n) += weights(b, c, ob) * in_value;
  const Expr value = apply_blocked_epilogue(acc(b, p, ob, n), spec.epilogue, {n, ob, p, b}, out_shape, {n, channel, p},
                                            {spec.batch, spec.out_channels, spec.pixels}, kernel.inputs);
  output(b, p, ob, n) = value;
  constrain_output(output, out_shape);

  /* schedule */
  const int blocks = blocks_per_tile(spec);
  const int tile_p = tile_pixels(spec, target);
  Var po("po"), pi("pi"), obo("obo"), obi("obi"), tiles("tiles"), tasks("tasks"), tile("tile");
  // Channel blocks outside pixel tiles: their weights (C x blocks x B) stay in
  // L1 while the tiles stream the input. The last pixel tile shifts inwards.
  output.split(p, po, pi, tile_p).split(ob, obo, obi, blocks).reorder(b, pi, obi, po, obo, n).vectorize(b).unroll(pi).unroll(obi);
  output.fuse(po, obo, tiles).fuse(tiles, n, tasks);
  const int64_t tile_count = (spec.pixels + tile_p - 1) / tile_p * (out_blocks / blocks) * spec.batch;
  const std::string parallel =
      parallel_in_tasks(output, tasks, tile_count, tile_p * blocks * b_lanes * spec.in_channels / kMacsPerElement, tile);
  acc.compute_at(output, tile).vectorize(b).unroll(p).unroll(ob);
  acc.update().reorder(b, p, ob, r.x, r.y, n).vectorize(b).unroll(p).unroll(ob);
  kernel.output = output;
  kernel.schedule = std::string("pointwise conv ") + (spec.input_blocked ? "nchwc" : "nchw") + " -> nchw" +
                    std::to_string(b_lanes) + "c: tile " + std::to_string(tile_p) + " pixels x " + std::to_string(blocks) +
                    "x" + std::to_string(b_lanes) + " channels, tiles " + parallel +
                    (spec.epilogue.empty() ? "" : ", epilogue " + epilogue_suffix(spec.epilogue));
  return kernel;
}

}  // namespace aotc::gen
