#include "generators/conv2d.h"

#include <algorithm>

#include "generators/epilogue.h"

namespace aotc::gen {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

// ---- Schedule knobs ----------------------------------------------------------------

// Output channels per packed weight block when the channels per group allow
// it: one AVX-512 vector (two AVX2, four NEON) in the vectorise-channels tile.
constexpr int64_t kChannelBlock = 16;
// Output rows narrower than this leave lanes of a 16-lane vector idle, so they
// vectorise over output channels instead (when the block is a full 16).
constexpr int64_t kNarrowRow = 16;
// Channel blocks per vectorise-channels register tile, where the channels per
// group allow and the target has 32 vector registers: each broadcast input
// value then feeds two vectors (measured 140 vs 120 GFLOP/s on ResNet-18's
// 14x14 layer, one AVX-512 core). With 16 registers (AVX2, 32-bit NEON) one,
// and at most kFewRegistersBroadcastAccumulators: two blocks' 4 AVX2 vectors
// x 3 pixels spilled (MobileNetV2's and ResNet's 7x7 1x1 convs at 36-38
// GFLOP/s against 76-88 with one block, 3x3 convs 1.0-1.15x slower; AVX2 code
// on one Zen 4 core).
constexpr int64_t kChannelBlocksPerTile = 2;
// Most vectors along an output row in one vectorise-width register tile: two
// keep a 56-wide row to 2 tiles with 16 lanes; the other accumulator
// registers go to more output channels, which share each input vector load.
constexpr int kMaxRowVectors = 2;
// Channel tiles from which vectorize-channels runs whole planes per task.
constexpr int64_t kMinChannelTileTasks = 4;
// Most output rows in one depthwise register tile (they share input rows).
constexpr int kMaxDepthwiseRows = 4;
// The accumulator block of a conv whose padded input is staged in chunks of
// channels: like the staged input, it must stay on the stack (kernel.h).
constexpr int64_t kAccumulatorBytes = 8 * 1024;

struct Geometry {
  int64_t n, c, h, w;                   // input
  int64_t o, oh, ow;                    // output
  int64_t in_per_group, out_per_group;  // Cg, Og
  int64_t block;                        // B, output channels per packed weight block
  bool padded;                          // some window reads outside the input
};

// How a schedule handles windows that reach outside the input.
enum class Padding {
  kNone,           // no window does
  kStagedRows,     // a zero-padded copy of the rows a tile reads, all channels, on the stack
  kStagedChunks,   // the same per chunk of input channels; partial sums accumulate in a block
  kBoundsChecked,  // every read checks its coordinates (when no staging fits the budget)
};

// A schedule's choices for one layer; see the schedule_* functions.
struct Plan {
  enum class Kind { kVectorizeWidth, kVectorizeChannels, kDepthwise } kind = Kind::kVectorizeWidth;
  int lanes = 1;         // of the register tile's vectors
  int tile_w = 1;        // output pixels of a row per register tile
  int tile_rows = 1;     // output rows per register tile
  int channel_tile = 1;  // output channels per register tile
  Padding padding = Padding::kNone;
  int64_t chunk = 0;                   // input channels per chunk (the group's all, unless kStagedChunks)
  int64_t block_o = 0, block_h = 1, block_w = 0;  // the accumulator block of kStagedChunks
  int staging_lanes = 1;
  int64_t staged_bytes = 0;
  bool phases = false;  // stride-S rows staged as S phases, columns x = p mod S (staged_phase_width)
  bool masked_rows = false;  // depthwise rows narrower than a vector: one vector each, its tail lanes masked
  int64_t band_tiles = 1;  // depthwise: row tiles whose padded input rows are staged at once
};

int64_t output_extent(int64_t in, int kernel, int stride, int pad_begin, int pad_end, int dilation) {
  const int64_t span = in + pad_begin + pad_end - int64_t{dilation} * (kernel - 1) - 1;
  return span < 0 ? 0 : span / stride + 1;
}

// Whether a window along one dim reads before the start or past the end.
bool reads_outside(int64_t in, int64_t out, int kernel, int stride, int pad_begin, int dilation) {
  const int64_t last = (out - 1) * stride - pad_begin + int64_t{dilation} * (kernel - 1);
  return pad_begin > 0 || last >= in;
}

Geometry geometry(const Conv2dSpec& s) {
  require(s.input_shape.size() == 4, "conv2d: input must be NCHW, got " + to_string(s.input_shape));
  require(s.groups >= 1 && s.out_channels >= 1, "conv2d: groups and out_channels must be positive");
  require(s.input_shape[1] % s.groups == 0 && s.out_channels % s.groups == 0,
          "conv2d: groups must divide the input and output channels");
  for (int i = 0; i < 2; ++i)
    require(s.kernel[i] >= 1 && s.stride[i] >= 1 && s.dilation[i] >= 1,
            "conv2d: kernel, stride and dilation must be positive");
  for (int p : s.pad) require(p >= 0, "conv2d: padding must be non-negative");
  Geometry g{};
  g.n = s.input_shape[0];
  g.c = s.input_shape[1];
  g.h = s.input_shape[2];
  g.w = s.input_shape[3];
  g.o = s.out_channels;
  g.oh = output_extent(g.h, s.kernel[0], s.stride[0], s.pad[0], s.pad[2], s.dilation[0]);
  g.ow = output_extent(g.w, s.kernel[1], s.stride[1], s.pad[1], s.pad[3], s.dilation[1]);
  require(g.oh >= 1 && g.ow >= 1, "conv2d: the kernel is larger than the padded input");
  g.in_per_group = g.c / s.groups;
  g.out_per_group = g.o / s.groups;
  g.block = g.out_per_group % kChannelBlock == 0 ? kChannelBlock
                                                 : largest_divisor_at_most(g.out_per_group, kChannelBlock);
  g.padded = reads_outside(g.h, g.oh, s.kernel[0], s.stride[0], s.pad[0], s.dilation[0]) ||
             reads_outside(g.w, g.ow, s.kernel[1], s.stride[1], s.pad[1], s.dilation[1]);
  return g;
}

Shape packed_shape(const Conv2dSpec& s, const Geometry& g) {
  return {g.o / g.block, g.in_per_group, s.kernel[0], s.kernel[1], g.block};
}

int64_t round_up(int64_t v, int64_t multiple) { return (v + multiple - 1) / multiple * multiple; }

// Input columns that `width` output pixels of a row read.
int64_t input_width(const Conv2dSpec& s, int64_t width) {
  return (width - 1) * s.stride[1] + int64_t{s.dilation[1]} * (s.kernel[1] - 1) + 1;
}

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Whether a vectorise-width tile stages strided rows as S = stride phases
// (columns x = p mod S; for stride 2 the even and the odd columns): each tap
// then loads whole vectors of one phase, where reading every S-th column costs
// shuffles (for stride 2 one vpermt2ps on AVX-512) per vector per tap. Measured
// on one AVX-512 core, it paid on tiles of two row vectors (first convs: 7x7
// stride 2 with padding 1.17x, 3x3 without 1.23x, 3x3 with 1.05x; AlexNet's
// 11x11 stride 4 with padding 1.3x) and lost on tiles of one (ResNet's 3x3 stride-2 convs
// on 28-wide rows: 0.85x), where the staging outweighs the few shuffles saved.
bool stages_phases(const Conv2dSpec& s, const Plan& p) {
  return p.kind == Plan::Kind::kVectorizeWidth && p.tile_w >= 2 * p.lanes && s.stride[1] >= 2 && s.dilation[1] == 1;
}

// Columns of each phase that `width` output pixels read: output x reads
// phase (kx - pad) mod S at column x + floor((kx - pad) / S).
int64_t staged_phase_width(const Conv2dSpec& s, int64_t width) {
  return width + floor_div(s.kernel[1] - 1 - s.pad[1], s.stride[1]) - floor_div(-s.pad[1], s.stride[1]);
}

// Bytes of one channel of padded input staged for `rows` x `width` outputs
// (rows padded to whole vectors, as stage_on_stack stores them).
int64_t staged_channel_bytes(const Conv2dSpec& s, int64_t rows, int64_t width, int lanes, bool phases) {
  const int64_t in_rows = (rows - 1) * s.stride[0] + int64_t{s.dilation[0]} * (s.kernel[0] - 1) + 1;
  const int64_t row = phases ? s.stride[1] * round_up(staged_phase_width(s, width), lanes)
                             : round_up(input_width(s, width), lanes);
  return in_rows * row * 4;
}

// The register tile of each schedule kind.
Plan plan_tiles(const Conv2dSpec& s, const Geometry& g, const Halide::Target& target) {
  const int native = native_lanes(target), registers = accumulator_registers(target);
  Plan p;
  if (s.groups > 1 && g.in_per_group == 1) {
    p.kind = Plan::Kind::kDepthwise;
    p.lanes = lanes_for_extent(g.ow, native);
    const int row_vectors = static_cast<int>(std::clamp<int64_t>(g.ow / p.lanes, 1, kMaxRowVectors));
    p.tile_w = p.lanes * row_vectors;
    p.tile_rows = static_cast<int>(std::min<int64_t>({g.oh, kMaxDepthwiseRows, registers / row_vectors}));
  } else if (g.ow < kNarrowRow && g.block == kChannelBlock) {
    p.kind = Plan::Kind::kVectorizeChannels;
    p.lanes = lanes_for_extent(g.block, native);
    const bool many = many_vector_registers(target);
    const int64_t blocks =
        many && g.out_per_group % (kChannelBlocksPerTile * g.block) == 0 ? kChannelBlocksPerTile : 1;
    p.channel_tile = static_cast<int>(g.block * blocks);
    const int accumulators = many ? registers : kFewRegistersBroadcastAccumulators;
    const int64_t max_pixels = std::max(1, accumulators / (p.channel_tile / p.lanes));
    const int64_t row_tiles = (g.ow + max_pixels - 1) / max_pixels;
    p.tile_w = static_cast<int>((g.ow + row_tiles - 1) / row_tiles);  // evens the tiles out
    p.tile_rows = static_cast<int>(std::clamp<int64_t>(max_pixels / p.tile_w, 1, g.oh));
  } else {
    p.kind = Plan::Kind::kVectorizeWidth;
    p.lanes = lanes_for_extent(g.ow, native);
    const int row_vectors = static_cast<int>(std::clamp<int64_t>(g.ow / p.lanes, 1, kMaxRowVectors));
    p.tile_w = p.lanes * row_vectors;
    p.channel_tile = static_cast<int>(largest_divisor_at_most(g.block, registers / row_vectors));
  }
  return p;
}

// Staging that saves more than usual may take up to this much, still under
// Halide's 16 KiB stack limit (kernel.h):
//  - a reduction of at most kShortReductionMacs multiply-adds per output
//    (image stems: 3 channels x 3x3) would spend about as long loading and
//    storing a chunked accumulator block as on its multiply-adds, so it stages
//    all its channels at once (MobileNetV2's stem: 9 KiB, 1.4x faster in the
//    model than per-channel chunks);
//  - phases of strides above 2 save several shuffles per vector per tap
//    (AlexNet's 11x11 stride-4 first conv: 4 phases in 8.2 KiB, 1.3x).
constexpr int64_t kMaxWideStagedBytes = 12 * 1024;
constexpr int64_t kShortReductionMacs = 32;

bool short_reduction(const Conv2dSpec& s, const Geometry& g) {
  return g.in_per_group * s.kernel[0] * s.kernel[1] <= kShortReductionMacs;
}

// How padding is staged, within the stack budgets. Phases that fit no budget
// give way to plain staged rows (allow_phases = false).
void plan_padding(const Conv2dSpec& s, const Geometry& g, const Halide::Target& target, Plan& p,
                  bool allow_phases = true) {
  p.chunk = g.in_per_group;
  p.phases = allow_phases && stages_phases(s, p);
  if (!g.padded && !p.phases) return;
  // Where no staging fits: reads check their coordinates, or read the input
  // itself where no window reaches outside it.
  const auto unstaged = [&] {
    p.phases = false;
    p.padding = g.padded ? Padding::kBoundsChecked : Padding::kNone;
  };
  // Rows of a larger stride are staged only as phases, whose loads are dense
  // (kernel.h, stage_on_stack).
  if (!p.phases && s.stride[1] > kMaxStagedLoadStride) {
    unstaged();
    return;
  }
  const int native = native_lanes(target);
  p.staging_lanes = lanes_for_extent(p.phases ? staged_phase_width(s, g.ow) : input_width(s, g.ow), native);
  if (p.kind == Plan::Kind::kDepthwise) {
    // A row narrower than a native vector (MobileNetV2's 14 and 7) takes one
    // vector whose lanes past the row read staged zeros and store nothing,
    // not two vectors of half or a quarter of the width.
    const int row_lanes = lanes_for_extent(2 * g.ow - 1, native);
    const int row_staging_lanes = lanes_for_extent(input_width(s, row_lanes), native);
    if (g.padded && row_lanes > p.lanes &&
        staged_channel_bytes(s, 1, row_lanes, row_staging_lanes, p.phases) <= kMaxStagedBytes) {
      p.lanes = p.tile_w = row_lanes;
      p.masked_rows = true;
      p.staging_lanes = row_staging_lanes;
    }
    // One channel at a time: fewer rows per tile until they fit.
    const int64_t width = p.masked_rows ? p.tile_w : g.ow;
    while (p.tile_rows > 1 && staged_channel_bytes(s, p.tile_rows, width, p.staging_lanes, p.phases) > kMaxStagedBytes) --p.tile_rows;
    p.staged_bytes = staged_channel_bytes(s, p.tile_rows, width, p.staging_lanes, p.phases);
    // Rows are staged for bands of row tiles, whole planes where they fit: a
    // tile's loads then come long after the stores that staged them (loads
    // that straddle two just-stored vectors cannot be forwarded from the
    // store buffer and stall; staging per tile made 7x7 and 14x14 planes
    // 1.7x slower). Bands divide the tiles, so none is computed twice.
    const int64_t row_tiles = (g.oh + p.tile_rows - 1) / p.tile_rows;
    for (int64_t band = row_tiles; band > 1; --band) {
      const int64_t bytes = staged_channel_bytes(s, std::min(g.oh, band * p.tile_rows), width, p.staging_lanes, p.phases);
      if (row_tiles % band == 0 && bytes <= kMaxStagedBytes) {
        p.band_tiles = band;
        p.staged_bytes = bytes;
        break;
      }
    }
    if (p.staged_bytes <= kMaxStagedBytes) p.padding = Padding::kStagedRows;
    else unstaged();
    return;
  }
  const int64_t budget = p.phases && s.stride[1] > 2 ? kMaxWideStagedBytes : kMaxStagedBytes;
  p.staged_bytes = g.c * staged_channel_bytes(s, p.tile_rows, g.ow, p.staging_lanes, p.phases);
  if (p.staged_bytes <= budget || (short_reduction(s, g) && p.staged_bytes <= kMaxWideStagedBytes)) {
    p.padding = Padding::kStagedRows;
    return;
  }
  if (!g.padded) {  // phases alone are not worth an accumulator block
    unstaged();
    return;
  }
  // Chunks of input channels. The accumulator block is whole rows of as many
  // channel tiles as fit, else a part of one row; on narrow rows (deep layers,
  // where the weights outweigh the activations) whole planes where they fit, so
  // that a chunk's weights serve every row before the next chunk's are loaded.
  p.tile_rows = 1;
  const int64_t accumulators = kAccumulatorBytes / 4;
  const int64_t tile_row = p.channel_tile * round_up(g.ow, p.tile_w);
  if (p.kind == Plan::Kind::kVectorizeChannels && tile_row * g.oh <= accumulators &&
      staged_channel_bytes(s, g.oh, g.ow, p.staging_lanes, p.phases) <= budget)
    p.block_h = g.oh;
  if (tile_row * p.block_h <= accumulators) {
    p.block_w = g.ow;
    p.block_o = p.channel_tile *
                largest_divisor_at_most(g.out_per_group / p.channel_tile, accumulators / (tile_row * p.block_h));
  } else {
    p.block_o = p.channel_tile;
    p.block_w = std::min(g.ow, p.tile_w * std::max<int64_t>(1, accumulators / (p.channel_tile * p.tile_w)));
  }
  while (p.block_w > p.tile_w && staged_channel_bytes(s, 1, p.block_w, p.staging_lanes, p.phases) > budget)
    p.block_w = std::max<int64_t>(p.tile_w, p.block_w - p.tile_w);
  const int64_t channel_bytes = staged_channel_bytes(s, p.block_h, p.block_w, p.staging_lanes, p.phases);
  // (The vectorise-channels schedule accumulates whole rows only.)
  if (channel_bytes > budget || (p.kind == Plan::Kind::kVectorizeChannels && p.block_w < g.ow)) {
    if (p.phases) return plan_padding(s, g, target, p, false);
    unstaged();
    return;
  }
  p.padding = Padding::kStagedChunks;
  p.chunk = largest_divisor_at_most(g.in_per_group, budget / channel_bytes);
  p.staged_bytes = p.chunk * channel_bytes;
}

// The Funcs and variables the schedules work on. `conv` is the register tile's
// reduction over one chunk k of input channels (the only chunk, k = 0, unless
// padding is staged in chunks; then `acc` sums the chunks).
struct ConvFuncs {
  Func output{"conv2d"}, conv{"conv"}, acc{"acc"}, padded{"padded"};
  Var x{"x"}, y{"y"}, o{"o"}, n{"n"}, k{"k"};
  Var phase{"phase"};  // of `padded` when plan.phases: columns x = phase mod stride
  Halide::RDom r;       // r.x = kx, r.y = ky, r.z = input channel within the chunk
  Halide::RDom chunks;  // over k, when chunked
};

std::string kib(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f KiB", static_cast<double>(bytes) / 1024);
  return text;
}

std::string padding_description(const Conv2dSpec& s, const Plan& p) {
  const std::string rows = !p.phases          ? "padded rows staged"
                           : s.stride[1] == 2 ? "rows staged as even/odd columns"
                                              : "rows staged as " + std::to_string(s.stride[1]) + " column phases";
  switch (p.padding) {
    case Padding::kNone: return "no padding";
    case Padding::kStagedRows: return rows + " (" + kib(p.staged_bytes) + ")";
    case Padding::kStagedChunks:
      return rows + " per " + std::to_string(p.chunk) + " input channels (" + kib(p.staged_bytes) +
             "), accumulated in blocks of " + std::to_string(p.block_o) + " channels x " + std::to_string(p.block_h) +
             " x " + std::to_string(p.block_w) + " pixels";
    case Padding::kBoundsChecked: return "bounds-checked reads (no staging fits)";
  }
  return "?";
}

// Vectors along output rows; a register tile of tile_w pixels (whole vectors)
// times channel_tile output channels accumulating over (c, ky, kx).
void schedule_vectorize_width(ConvFuncs& f, const Plan& p) {
  Var xo("xo"), xi("xi"), oo("oo"), oi("oi"), xb("xb"), ob("ob"), rows("rows"), tasks("tasks");
  // The Func that owns the register tiles: the output itself, or the accumulator block.
  Halide::Stage tiled = f.output;
  Func tile_owner = f.output;
  if (p.padding == Padding::kStagedChunks) {
    Var x_in("x_in"), o_in("o_in");
    f.output.split(f.o, ob, o_in, static_cast<int>(p.block_o))
        .split(f.x, xb, x_in, static_cast<int>(p.block_w))
        .reorder(x_in, o_in, xb, ob, f.y, f.n)
        .vectorize(x_in, p.lanes)
        .fuse(ob, f.y, rows)
        .fuse(rows, f.n, tasks)
        .parallel(tasks);
    f.acc.compute_at(f.output, xb).vectorize(f.x, p.lanes);
    tiled = f.acc.update();
    tile_owner = f.acc;
  }
  // Loops are ordered before vectorize/unroll split them again.
  tiled.split(f.x, xo, xi, p.tile_w).split(f.o, oo, oi, p.channel_tile);
  if (p.padding == Padding::kStagedChunks) {
    tiled.reorder(xi, oi, xo, oo, f.chunks.x, f.y, f.n);
    f.padded.compute_at(f.acc, f.chunks.x);
  } else {
    tiled.reorder(xi, oi, xo, oo, f.y, f.n);
    f.output.fuse(f.y, f.n, tasks).parallel(tasks);
    if (p.padding == Padding::kStagedRows) f.padded.compute_at(f.output, tasks);
  }
  tiled.vectorize(xi, p.lanes).unroll(oi);
  f.conv.compute_at(tile_owner, xo).vectorize(f.x, p.lanes).unroll(f.x).unroll(f.o);
  f.conv.update()
      .reorder(f.x, f.o, f.r.x, f.r.y, f.r.z, f.y, f.n, f.k)
      .vectorize(f.x, p.lanes)
      .unroll(f.x)
      .unroll(f.o)
      .unroll(f.r.x);
}

// Vectors over output channels (rows narrower than a vector); a register tile
// of channel_tile channels times tile_w pixels times tile_rows rows.
void schedule_vectorize_channels(ConvFuncs& f, const Plan& p, const Geometry& g) {
  Var xo("xo"), xi("xi"), yo("yo"), yi("yi"), oo("oo"), oi("oi"), ob("ob"), rows("rows"), tasks("tasks");
  Halide::Stage tiled = f.output;
  Func tile_owner = f.output;
  if (p.padding == Padding::kStagedChunks) {
    Var o_in("o_in"), y_in("y_in"), yb("yb");
    f.output.split(f.o, ob, o_in, static_cast<int>(p.block_o))
        .split(f.y, yb, y_in, static_cast<int>(p.block_h))
        .reorder(o_in, f.x, y_in, yb, ob, f.n)
        .vectorize(o_in, p.lanes)
        .fuse(yb, ob, rows)
        .fuse(rows, f.n, tasks)
        .parallel(tasks);
    f.acc.compute_at(f.output, tasks).reorder_storage(f.o, f.x, f.y, f.n).vectorize(f.o, p.lanes);
    tiled = f.acc.update();
    tile_owner = f.acc;
  }
  // Loops are ordered before vectorize/unroll split them again.
  tiled.split(f.o, oo, oi, p.channel_tile).split(f.x, xo, xi, p.tile_w).split(f.y, yo, yi, p.tile_rows);
  if (p.padding == Padding::kStagedChunks) {
    tiled.reorder(oi, xi, yi, xo, yo, oo, f.chunks.x, f.n);
    f.padded.compute_at(f.acc, f.chunks.x);
  } else if ((g.o + p.channel_tile - 1) / p.channel_tile >= kMinChannelTileTasks) {
    // Whole planes per task, parallel over channel tiles: rows this narrow
    // share cache lines (a 64-byte line holds 2-3 rows of 7), and lines that
    // both cores write migrate between them at every task (MobileNetV2's 7x7
    // 1x1 convs ran 2-3x slower on two threads than on one). Each row tile
    // stages the padded rows it reads. (Measured on a 7x7 160 -> 960 -> 160
    // -> 1536 chain at 2 threads: 95/92/165 us against 145/83/238 us.)
    tiled.reorder(oi, xi, yi, xo, yo, oo, f.n);
    f.output.fuse(oo, f.n, tasks).parallel(tasks);
    if (p.padding == Padding::kStagedRows) f.padded.compute_at(f.output, yo);
  } else {
    // Few channel tiles (DenseNet's 3x3 convs: one): parallel over row tiles
    // too, or a second core stays idle. Each task stages the padded rows it reads.
    Var row_tiles("row_tiles");
    tiled.reorder(oi, xi, yi, xo, yo, oo, f.n);
    f.output.fuse(yo, oo, row_tiles).fuse(row_tiles, f.n, tasks).parallel(tasks);
    if (p.padding == Padding::kStagedRows) f.padded.compute_at(f.output, tasks);
  }
  tiled.vectorize(oi, p.lanes).unroll(oi).unroll(xi).unroll(yi);
  f.conv.compute_at(tile_owner, xo)
      .reorder_storage(f.o, f.x, f.y, f.n, f.k)
      .vectorize(f.o, p.lanes)
      .unroll(f.o)
      .unroll(f.x)
      .unroll(f.y);
  f.conv.update()
      .reorder(f.o, f.x, f.y, f.r.x, f.r.y, f.r.z, f.n, f.k)
      .vectorize(f.o, p.lanes)
      .unroll(f.o)
      .unroll(f.x)
      .unroll(f.y)
      .unroll(f.r.x);
}

// One input channel per output channel: vectors along rows times tile_rows
// rows; the channel's padded rows staged per band of row tiles; parallel over channels
// in tasks (deep layers have hundreds of 7x7 planes). Returns how it is parallel.
std::string schedule_depthwise(ConvFuncs& f, const Plan& p, const Conv2dSpec& s, const Geometry& g) {
  Var xo("xo"), xi("xi"), yo("yo"), yi("yi"), band("band"), planes("planes");
  // Masked rows: the output stores only the row's lanes; the register tile
  // computes whole vectors (from staged zeros past the row).
  const auto row_tail = p.masked_rows ? Halide::TailStrategy::GuardWithIf : Halide::TailStrategy::Auto;
  const auto tile_tail = p.masked_rows ? Halide::TailStrategy::RoundUp : Halide::TailStrategy::Auto;
  f.output.split(f.x, xo, xi, p.tile_w, row_tail)
      .split(f.y, yo, yi, p.tile_rows)
      .split(yo, band, yo, static_cast<int>(p.band_tiles))
      .reorder(xi, yi, xo, yo, band, f.o, f.n)
      .vectorize(xi, p.lanes)
      .unroll(yi)
      .fuse(f.o, f.n, planes);
  const std::string parallel =
      parallel_in_tasks(f.output, planes, g.n * g.o, g.oh * g.ow * s.kernel[0] * s.kernel[1] / kMacsPerElement);
  f.conv.compute_at(f.output, xo).vectorize(f.x, p.lanes, tile_tail).unroll(f.x).unroll(f.y);
  f.conv.update()
      .reorder(f.x, f.y, f.r.x, f.r.y, f.r.z, f.o, f.n, f.k)
      .vectorize(f.x, p.lanes, tile_tail)
      .unroll(f.x)
      .unroll(f.y)
      .unroll(f.r.x)
      .unroll(f.r.y);
  if (p.padding == Padding::kStagedRows) f.padded.compute_at(f.output, band);
  return parallel;
}

}  // namespace

Shape conv2d_output_shape(const Conv2dSpec& spec) {
  const Geometry g = geometry(spec);
  return {g.n, g.o, g.oh, g.ow};
}

PackedWeights pack_conv2d_weights(const Conv2dSpec& spec, const float* oihw) {
  const Geometry g = geometry(spec);
  PackedWeights packed;
  packed.shape = packed_shape(spec, g);
  packed.data.resize(static_cast<size_t>(num_elements(packed.shape)));
  const int64_t taps = int64_t{spec.kernel[0]} * spec.kernel[1];
  for (int64_t o = 0; o < g.o; ++o)
    for (int64_t c = 0; c < g.in_per_group; ++c)
      for (int64_t t = 0; t < taps; ++t) {
        const int64_t to = ((o / g.block * g.in_per_group + c) * taps + t) * g.block + o % g.block;
        packed.data[static_cast<size_t>(to)] = oihw[(o * g.in_per_group + c) * taps + t];
      }
  return packed;
}

ScheduleShape conv2d_schedule_shape(const Conv2dSpec& spec, const Halide::Target& target) {
  const Geometry g = geometry(spec);
  const Plan p = plan_tiles(spec, g, target);
  // Vectors narrower than the target's leave the rest of its lanes idle.
  const double row_use = tile_use(g.ow, p.tile_w) * p.lanes / native_lanes(target);
  switch (p.kind) {
    case Plan::Kind::kVectorizeWidth: return {"vectorize-width", row_use};
    case Plan::Kind::kVectorizeChannels:
      return {"vectorize-channels", row_use * tile_use(g.oh, p.tile_rows) * tile_use(g.out_per_group, p.channel_tile)};
    case Plan::Kind::kDepthwise: return {"depthwise", row_use * tile_use(g.oh, p.tile_rows)};
  }
  return {};
}

Kernel conv2d(const Conv2dSpec& spec, const Halide::Target& target) {
  const Geometry g = geometry(spec);
  Plan plan = plan_tiles(spec, g, target);
  plan_padding(spec, g, target, plan);
  const Shape out_shape{g.n, g.o, g.oh, g.ow};
  Kernel kernel;
  Halide::ImageParam input = dense_input("input", spec.input_shape);
  Halide::ImageParam weights = dense_input("weights", packed_shape(spec, g));
  kernel.inputs = {input, weights};
  if (spec.has_bias) kernel.inputs.push_back(dense_input("bias", {g.o}));

  /* algorithm */
  ConvFuncs f;
  const bool chunked = plan.padding == Padding::kStagedChunks;
  const int chunk = static_cast<int>(plan.chunk);
  f.r = Halide::RDom(0, spec.kernel[1], 0, spec.kernel[0], 0, chunk, "r");
  Func source("source");  // inlined into what reads it
  // (Phases stage the same columns of every phase, so some may read past the input.)
  if (g.padded || plan.phases)
    source = Halide::BoundaryConditions::constant_exterior(
        input, 0.0f, {{0, static_cast<int>(g.w)}, {0, static_cast<int>(g.h)}});
  else
    source(f.x, f.y, f.o, f.n) = input(f.x, f.y, f.o, f.n);
  const Expr in_y = f.y * spec.stride[0] - spec.pad[0] + f.r.y * spec.dilation[0];
  const Expr c = f.k * chunk + f.r.z;  // input channel within the group
  // With groups, channel o reads the input channels of its group; dense convs
  // skip the division so that a tile's channels visibly share each input load.
  const Expr in_c = spec.groups == 1 ? c : f.o / static_cast<int>(g.out_per_group) *
                                               static_cast<int>(g.in_per_group) + c;
  const int block = static_cast<int>(g.block);
  const Expr bias = spec.has_bias ? kernel.inputs[2](f.o) : Expr(0.0f);
  f.conv(f.x, f.y, f.o, f.n, f.k) = chunked ? Expr(0.0f) : bias;
  Expr window;  // the input value tap r reads
  if (plan.phases) {
    const int phases = spec.stride[1];
    f.padded(f.x, f.phase, f.y, f.o, f.n) = source(phases * f.x + f.phase, f.y, f.o, f.n);
    const Expr q = f.r.x - spec.pad[1];  // input column S*x + q (Halide's / and % round down)
    window = f.padded(f.x + q / phases, q % phases, in_y, in_c, f.n);
  } else {
    f.padded(f.x, f.y, f.o, f.n) = source(f.x, f.y, f.o, f.n);
    window = f.padded(f.x * spec.stride[1] - spec.pad[1] + f.r.x * spec.dilation[1], in_y, in_c, f.n);
  }
  f.conv(f.x, f.y, f.o, f.n, f.k) += window * weights(f.o % block, f.r.x, f.r.y, c, f.o / block);
  Expr value = f.conv(f.x, f.y, f.o, f.n, 0);
  if (chunked) {
    f.chunks = Halide::RDom(0, static_cast<int>(g.in_per_group / chunk), "chunks");
    f.acc(f.x, f.y, f.o, f.n) = bias;
    f.acc(f.x, f.y, f.o, f.n) += f.conv(f.x, f.y, f.o, f.n, f.chunks.x);
    value = f.acc(f.x, f.y, f.o, f.n);
  }
  f.output(f.x, f.y, f.o, f.n) = apply_epilogue(value, spec.epilogue, {f.n, f.o, f.y, f.x}, out_shape, kernel.inputs);
  constrain_output(f.output, out_shape);

  /* schedule */
  std::string tile;
  switch (plan.kind) {
    case Plan::Kind::kVectorizeWidth:
      schedule_vectorize_width(f, plan);
      tile = "conv2d vectorize-width: tile " + std::to_string(plan.tile_w / plan.lanes) + "x" +
             std::to_string(plan.lanes) + " lanes (w) x " + std::to_string(plan.channel_tile) + " channels";
      break;
    case Plan::Kind::kVectorizeChannels:
      schedule_vectorize_channels(f, plan, g);
      tile = "conv2d vectorize-channels: tile " + std::to_string(plan.channel_tile / plan.lanes) + "x" +
             std::to_string(plan.lanes) + " lanes (o) x " + std::to_string(plan.tile_w) + " pixels x " +
             std::to_string(plan.tile_rows) + " rows";
      break;
    case Plan::Kind::kDepthwise: {
      const std::string parallel = schedule_depthwise(f, plan, spec, g);
      tile = "conv2d depthwise: tile " + std::to_string(plan.tile_w / plan.lanes) + "x" + std::to_string(plan.lanes) +
             " lanes (w" + (plan.masked_rows ? ", masked past the row" : "") + ") x " + std::to_string(plan.tile_rows) +
             " rows, bands of " + std::to_string(std::min(g.oh, plan.band_tiles * plan.tile_rows)) + " rows, planes " +
             parallel;
      break;
    }
  }
  if (plan.padding == Padding::kStagedRows || chunked) {
    stage_on_stack(f.padded, plan.staging_lanes);
    if (plan.phases) f.padded.unroll(f.phase);
  }
  kernel.schedule = tile + ", " + padding_description(spec, plan) +
                    (spec.epilogue.empty() ? "" : ", epilogue " + epilogue_suffix(spec.epilogue));
  kernel.output = f.output;
  return kernel;
}

}  // namespace aotc::gen
