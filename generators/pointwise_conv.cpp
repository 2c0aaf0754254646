#include "generators/pointwise_conv.h"

#include <algorithm>
#include <limits>

#include "generators/epilogue.h"

namespace aotc::gen {
namespace {

using Halide::Func;
using Halide::Var;

// Output channels per packed block and register tile, broadcast weights per
// input channel: with 32 vector registers 8, and three vectors of pixels fill
// 24 accumulators (AVX-512, AArch64); with 16, 4 and three vectors 12 (AVX2:
// 8 channels left room for one vector, 51-64 GFLOP/s on ResNet-50's 1x1 convs
// on one Zen 3 core against 56-68 with 4 x 3).
int64_t max_block(const Halide::Target& target) { return many_vector_registers(target) ? 8 : 4; }

void require_valid(const PointwiseConvSpec& s) {
  require(s.batch >= 1 && s.in_channels >= 1 && s.pixels >= 1 && s.out_channels >= 1 && s.weight_sets >= 1,
          "pointwise_conv: extents must be positive");
  require(s.batch % s.weight_sets == 0, "pointwise_conv: the batch must be a multiple of the weight sets");
}

int64_t block_size(const PointwiseConvSpec& s, const Halide::Target& target) {
  return largest_divisor_at_most(s.out_channels, max_block(target));
}

// The smallest L2 of a core aotc targets (Zen 2 and 3), and the weights that
// stay in L3 from one pixel tile to the next: on one Zen 3 core (32 MB of L3)
// ResNet-50's strided 1x1 GEMMs re-read 2 MB at L3 speed (3.1 ms against 4.7
// direct), 8 MB no faster than memory (5.4-6.5 ms against 4.0-5.3).
constexpr int64_t kL2Bytes = 512 * 1024;
constexpr int64_t kL3Bytes = 4 * 1024 * 1024;

// Below this many input channels a tile of one pixel vector runs fastest with
// 32 registers.
constexpr int64_t kFewInputChannels = 64;
// Estimated slowdown per pixel vector fewer than the registers allow.
constexpr double kSmallerTileCost = 0.05;

// Pixel vectors per register tile. Measured on one AVX-512 core against the
// three that fill the accumulators: one was 1.02-1.10x faster with 16-32
// input channels (loads and stores of the accumulators weigh more than the
// FMAs); with more, fewer vectors lost 4-10% on whole tiles, but won on maps
// that tiles of three cover badly (14x14: 196 pixels in 240, 1.16x with one).
// So: one below kFewInputChannels, else the count that computes the fewest
// pixels, each vector fewer counted kSmallerTileCost slower. With 16 registers
// a vector holds only 4 accumulators, too few chains for two FMA pipes: 16-24
// input channels ran at 50% of the peak with one and 62-66% with three (AVX2,
// one Zen 3 core), so there every count is chosen the same way, from two up.
int pixel_vectors(const PointwiseConvSpec& s, const Halide::Target& target, int lanes, int max_vectors) {
  const bool many_registers = many_vector_registers(target);
  if (many_registers && s.in_channels < kFewInputChannels) return 1;
  const int min_vectors = many_registers ? 1 : std::min(max_vectors, 2);
  int best = max_vectors;
  double best_cost = std::numeric_limits<double>::infinity();
  for (int v = max_vectors; v >= min_vectors; --v) {  // ties keep the larger tile
    const int64_t tile = int64_t{lanes} * v;
    const double cost = static_cast<double>((s.pixels + tile - 1) / tile * tile) * (1 + kSmallerTileCost * (max_vectors - v));
    if (cost < best_cost) {
      best = v;
      best_cost = cost;
    }
  }
  return best;
}

// Pixels per register tile, and the lanes of its vectors.
struct PixelTile {
  int lanes, vectors;
};
PixelTile pixel_tile(const PointwiseConvSpec& s, const Halide::Target& target) {
  const int lanes = lanes_for_extent(s.pixels, native_lanes(target));
  const int64_t max_vectors = std::clamp<int64_t>(accumulator_registers(target) / block_size(s, target), 1, s.pixels / lanes);
  return {lanes, pixel_vectors(s, target, lanes, static_cast<int>(max_vectors))};
}

}  // namespace

ScheduleShape pointwise_conv_schedule_shape(const PointwiseConvSpec& spec, const Halide::Target& target) {
  require_valid(spec);
  const PixelTile t = pixel_tile(spec, target);
  ScheduleShape shape;
  shape.family = "pointwise";
  // Vectors narrower than the target's leave the rest of its lanes idle.
  const int64_t tile_p = int64_t{t.lanes} * t.vectors;
  shape.lane_use = tile_use(spec.pixels, tile_p) * t.lanes / native_lanes(target);
  // With pixel tiles outside channel blocks (16 registers), a weight set
  // larger than L2 comes from L3 (or memory) again for every tile after the
  // first.
  const int64_t set_bytes = spec.in_channels * spec.out_channels * 4;
  if (!many_vector_registers(target) && set_bytes > kL2Bytes) {
    const auto reread = static_cast<double>(set_bytes * spec.weight_sets * ((spec.pixels + tile_p - 1) / tile_p - 1));
    (set_bytes <= kL3Bytes ? shape.l3_bytes : shape.memory_bytes) = reread;
  }
  return shape;
}

bool use_pointwise_conv(int64_t pixels, int64_t out_channels) {
  // conv2d's vectorise-channels tiles need 16 channels to a block; without
  // them it vectorises short rows.
  return pixels >= 160 || (pixels >= 64 && out_channels % 16 != 0);
}

PackedWeights pack_pointwise_conv_weights(const PointwiseConvSpec& spec, const Halide::Target& target, const float* oc) {
  require_valid(spec);
  const int64_t matrix = spec.out_channels * spec.in_channels;
  PackedWeights packed;
  for (int64_t s = 0; s < spec.weight_sets; ++s) {
    PackedWeights set = pack_in_row_blocks(oc + s * matrix, spec.out_channels, spec.in_channels, block_size(spec, target));
    packed.shape = std::move(set.shape);
    packed.data.insert(packed.data.end(), set.data.begin(), set.data.end());
  }
  if (spec.weight_sets > 1) packed.shape.insert(packed.shape.begin(), spec.weight_sets);
  return packed;
}

Kernel pointwise_conv(const PointwiseConvSpec& spec, const Halide::Target& target) {
  require_valid(spec);
  const int64_t block = block_size(spec, target);
  const Shape out_shape{spec.batch, spec.out_channels, spec.pixels};
  Kernel kernel;
  Halide::ImageParam input = dense_input("input", {spec.batch, spec.in_channels, spec.pixels});
  Shape weights_shape{spec.weight_sets, spec.out_channels / block, spec.in_channels, block};
  if (spec.weight_sets == 1) weights_shape.erase(weights_shape.begin());
  Halide::ImageParam weights = dense_input("weights", weights_shape);
  kernel.inputs = {input, weights};
  if (spec.has_bias) kernel.inputs.push_back(dense_input("bias", {spec.out_channels}));

  /* algorithm */
  Var p("p"), o("o"), n("n");
  Func acc("acc"), output("pointwise_conv");
  Halide::RDom c(0, static_cast<int>(spec.in_channels), "c");
  const int b = static_cast<int>(block);
  acc(p, o, n) = spec.has_bias ? kernel.inputs[2](o) : Halide::Expr(0.0f);
  if (spec.weight_sets == 1) acc(p, o, n) += input(p, c, n) * weights(o % b, c, o / b);
  else acc(p, o, n) += input(p, c, n) * weights(o % b, c, o / b, n % static_cast<int>(spec.weight_sets));
  output(p, o, n) = apply_epilogue(acc(p, o, n), spec.epilogue, {n, o, p}, out_shape, kernel.inputs);
  constrain_output(output, out_shape);

  /* schedule */
  const auto [lanes, vectors] = pixel_tile(spec, target);
  const int tile_p = lanes * vectors;
  Var po("po"), pi("pi"), oo("oo"), oi("oi"), tiles("tiles");
  // With 32 registers, channel blocks outside pixel tiles: a block's weights
  // (C x B) stay in L1 while the tiles stream the input. With 16, pixel tiles
  // go outside, so that a tile's input (C rows of a few vectors, one stream
  // per row) is read from L1 by every block while the weights stream in one
  // run: on AVX2, one Zen 3 core, ResNet-50's 64->256 at 56x56 ran at 56
  // GFLOP/s the first way and 76 this way, its 128->512 at 28x28 at 68 and 84,
  // its 1024->256 at 14x14 1.8x faster. Weights larger than L2 are re-read
  // from L3 for every tile (pointwise_conv_schedule_shape counts them).
  // (32-register targets keep the order measured on Zen 4, AVX-512.) The last
  // pixel tile shifts inwards (recomputing a few pixels; the output never
  // overwrites an input).
  output.split(p, po, pi, tile_p).split(o, oo, oi, b).vectorize(pi, lanes).unroll(pi).unroll(oi);
  Var tasks("tasks"), tile("tile");
  if (many_vector_registers(target)) output.reorder(pi, oi, po, oo, n).fuse(po, oo, tiles);
  else output.reorder(pi, oi, oo, po, n).fuse(oo, po, tiles);
  output.fuse(tiles, n, tasks);
  const int64_t tile_count = (spec.pixels + tile_p - 1) / tile_p * (spec.out_channels / block) * spec.batch;
  const std::string parallel =
      parallel_in_tasks(output, tasks, tile_count, tile_p * block * spec.in_channels / kMacsPerElement, tile);
  acc.compute_at(output, tile).vectorize(p, lanes).unroll(p).unroll(o);
  acc.update().reorder(p, o, c, n).vectorize(p, lanes).unroll(p).unroll(o);
  kernel.output = output;
  kernel.schedule = "pointwise conv: tile " + std::to_string(vectors) + "x" + std::to_string(lanes) + " lanes (pixels) x " +
                    std::to_string(block) + " channels, tiles " + parallel +
                    (spec.epilogue.empty() ? "" : ", epilogue " + epilogue_suffix(spec.epilogue));
  return kernel;
}

}  // namespace aotc::gen
