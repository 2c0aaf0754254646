#include "generators/winograd_conv.h"

#include <functional>

#include "generators/epilogue.h"

namespace aotc::gen {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

// F(4x4, 3x3) with the points 0, 1, -1, 2, -2 and infinity.
constexpr int kTile = 4;   // output pixels per tile side
constexpr int kPatch = 6;  // input pixels per patch side: kTile + 3 - 1
constexpr double kBT[kPatch][kPatch] = {
    {4, 0, -5, 0, 1, 0}, {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
    {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1},
};
constexpr double kG[kPatch][3] = {
    {1.0 / 4, 0, 0},           {-1.0 / 6, -1.0 / 6, -1.0 / 6}, {-1.0 / 6, 1.0 / 6, -1.0 / 6},
    {1.0 / 24, 1.0 / 12, 1.0 / 6}, {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0, 0, 1},
};
constexpr double kAT[kTile][kPatch] = {
    {1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1},
};

// sum_k coefficients[k] * term(k), leaving out zero terms and multiplies by +-1.
Expr combine(const double* coefficients, int count, const std::function<Expr(int)>& term) {
  Expr sum;
  for (int k = 0; k < count; ++k) {
    const double a = coefficients[k];
    if (a == 0) continue;
    Expr v = term(k);
    if (a == -1) v = -v;
    else if (a != 1) v = v * static_cast<float>(a);
    sum = sum.defined() ? sum + v : v;
  }
  return sum;
}

// One Expr per row of `matrix`: mux(row, ...) picks it once the row loop is unrolled.
template <int Rows, int Cols>
Expr rows_of(const double (&matrix)[Rows][Cols], const Expr& row, const std::function<Expr(int)>& term) {
  std::vector<Expr> rows;
  for (int r = 0; r < Rows; ++r) rows.push_back(combine(matrix[r], Cols, term));
  return Halide::mux(row, rows);
}

void require_applies(const Conv2dSpec& spec) {
  require(winograd_applies(spec), "winograd_conv: needs a 3x3 convolution with stride 1, dilation 1 and groups 1");
}

int64_t tiles_along(int64_t extent) { return (extent + kTile - 1) / kTile; }

// The input transform stages the padded input rows of bands of `tile_rows`
// rows of tiles: 4 * tile_rows + 2 rows.
int64_t staged_rows_bytes(const Conv2dSpec& spec, int64_t tile_rows = 1) {
  return (kTile * tiles_along(conv2d_output_shape(spec)[3]) + kPatch) * (kTile * tile_rows + kPatch - kTile) * 4;
}

}  // namespace

bool winograd_applies(const Conv2dSpec& spec) {
  return spec.kernel == std::array<int, 2>{3, 3} && spec.stride == std::array<int, 2>{1, 1} &&
         spec.dilation == std::array<int, 2>{1, 1} && spec.groups == 1;
}

// Measured on this 2-core AVX-512 machine, one layer against its direct
// convolution at 1 and 2 threads (docs in generators/README.md): Winograd was
// 1.8-2.8x faster on every ResNet, SqueezeNet, GoogLeNet and DenseNet layer of
// 13x13 maps and more; on fewer than 16 tiles (7x7 maps) the GEMMs are too
// narrow, and it only won from ~8M multiply-adds (512x512 channels 1.4x,
// 96x192 1.15x at 2 threads; 128x128 0.94x, DenseNet's 128x32 0.8x). Below 16
// channels in or out, or below ~1M multiply-adds, two threads lost.
constexpr int64_t kMinChannels = 16;
constexpr int64_t kMinTiles = 16;
constexpr int64_t kMinMacs = int64_t{1} << 20;
constexpr int64_t kMinMacsFewTiles = int64_t{1} << 23;

bool winograd_fits(const Conv2dSpec& spec) {
  return winograd_applies(spec) && staged_rows_bytes(spec) <= kMaxStagedBytes;
}

bool use_winograd(const Conv2dSpec& spec) {
  if (!winograd_fits(spec) || spec.input_shape[1] < kMinChannels || spec.out_channels < kMinChannels) return false;
  const Shape out = conv2d_output_shape(spec);
  const int64_t macs = num_elements(out) * spec.input_shape[1] * 9;
  return macs >= (winograd_tiles(spec) >= kMinTiles ? kMinMacs : kMinMacsFewTiles);
}

Shape winograd_tile_view(const Conv2dSpec& spec, int64_t channels) {
  const Shape out = conv2d_output_shape(spec);
  return {out[0], kPatch, kPatch, channels, tiles_along(out[2]), tiles_along(out[3])};
}

int64_t winograd_tiles(const Conv2dSpec& spec) {
  const Shape out = conv2d_output_shape(spec);
  return tiles_along(out[2]) * tiles_along(out[3]);
}

Shape winograd_transformed_input_shape(const Conv2dSpec& spec) {
  return {spec.input_shape[0] * kWinogradPoints, spec.input_shape[1], winograd_tiles(spec)};
}

Shape winograd_transformed_output_shape(const Conv2dSpec& spec) {
  return {spec.input_shape[0] * kWinogradPoints, spec.out_channels, winograd_tiles(spec)};
}

PointwiseConvSpec winograd_gemm_spec(const Conv2dSpec& spec) {
  require_applies(spec);
  PointwiseConvSpec gemm;
  gemm.batch = spec.input_shape[0] * kWinogradPoints;
  gemm.in_channels = spec.input_shape[1];
  gemm.pixels = winograd_tiles(spec);
  gemm.out_channels = spec.out_channels;
  gemm.weight_sets = kWinogradPoints;
  return gemm;
}

PackedWeights pack_winograd_weights(const Conv2dSpec& spec, const Halide::Target& target, const float* oihw) {
  require_applies(spec);
  const int64_t o_count = spec.out_channels, c_count = spec.input_shape[1];
  // U[xi][o][c] = (G g G^T)[i][j], xi = 6i + j, as 36 matrices [O, C].
  std::vector<float> u(static_cast<size_t>(kWinogradPoints * o_count * c_count));
  for (int64_t o = 0; o < o_count; ++o)
    for (int64_t c = 0; c < c_count; ++c) {
      const float* g = oihw + (o * c_count + c) * 9;
      double gg[kPatch][3] = {};  // G g
      for (int i = 0; i < kPatch; ++i)
        for (int kx = 0; kx < 3; ++kx)
          for (int ky = 0; ky < 3; ++ky) gg[i][kx] += kG[i][ky] * g[ky * 3 + kx];
      for (int i = 0; i < kPatch; ++i)
        for (int j = 0; j < kPatch; ++j) {
          double sum = 0;
          for (int kx = 0; kx < 3; ++kx) sum += gg[i][kx] * kG[j][kx];
          u[static_cast<size_t>(((i * kPatch + j) * o_count + o) * c_count + c)] = static_cast<float>(sum);
        }
    }
  return pack_pointwise_conv_weights(winograd_gemm_spec(spec), target, u.data());
}

Kernel winograd_input_transform(const Conv2dSpec& spec, const Halide::Target& target) {
  require_applies(spec);
  const Shape& in_shape = spec.input_shape;
  const Shape view = winograd_tile_view(spec, in_shape[1]);
  Kernel kernel;
  Halide::ImageParam input = dense_input("input", in_shape);
  kernel.inputs = {input};

  /* algorithm: V = B^T d B, rows (i) first, then columns (j) */
  Var tx("tx"), ty("ty"), c("c"), n("n"), i("i"), j("j"), kx("kx");
  Func padded = Halide::BoundaryConditions::constant_exterior(
      input, 0.0f, {{0, static_cast<int>(in_shape[3])}, {0, static_cast<int>(in_shape[2])}});
  const int pad_top = spec.pad[0], pad_left = spec.pad[1];
  Var x("x"), y("y");
  Func staged("staged"), rows("rows"), transformed("winograd_input_transform");
  staged(x, y, c, n) = padded(x, y, c, n);
  rows(kx, i, tx, ty, c, n) = rows_of(kBT, i, [&](int ky) {
    return staged(kTile * tx + kx - pad_left, kTile * ty + ky - pad_top, c, n);
  });
  transformed(tx, ty, c, j, i, n) = rows_of(kBT, j, [&](int k) { return rows(k, i, tx, ty, c, n); });
  constrain_output(transformed, view);

  /* schedule: per channel, a vector of tiles along a row of tiles computes all 36 points */
  const int lanes = lanes_for_extent(view[5], native_lanes(target));
  // The zero-padded input rows of a band of rows of tiles (4*TW + 2 floats
  // each) are staged on the stack, so that the patches' stride-4 loads need
  // no bounds checks: rows of tiles one or two vectors wide have no steady
  // state for Halide's loop partitioning. Bands are as tall as fit: a row of
  // tiles then loads rows staged long before (loads that straddle two
  // just-stored vectors cannot be forwarded from the store buffer and stall).
  // Row sums are stored tiles innermost, so that the column sums load them as
  // dense vectors.
  require(staged_rows_bytes(spec) <= kMaxStagedBytes, "winograd_conv: rows too wide to stage (over ~330 pixels)");
  int64_t band = 1;
  while (band < view[4] && staged_rows_bytes(spec, band + 1) <= kMaxStagedBytes) ++band;
  Var txo("txo"), txi("txi"), bands("bands"), tasks("tasks");
  transformed.split(tx, txo, txi, lanes)
      .split(ty, bands, ty, static_cast<int>(band), Halide::TailStrategy::GuardWithIf)
      .reorder(j, i, txi, txo, ty, bands, c, n)
      .vectorize(txi)
      .unroll(i)
      .unroll(j);
  transformed.fuse(c, n, tasks);
  const std::string parallel =
      parallel_in_tasks(transformed, tasks, in_shape[0] * in_shape[1], kWinogradPoints * view[4] * view[5]);
  staged.compute_at(transformed, bands);
  stage_on_stack(staged, lanes);
  rows.compute_at(transformed, txo).reorder_storage(tx, kx, i).vectorize(tx).unroll(kx).unroll(i);
  kernel.output = transformed;
  kernel.schedule = "winograd F(4x4,3x3) input transform: " + std::to_string(lanes) + " tiles a vector, rows staged for " +
                    std::to_string(band) + " rows of tiles at once, channels " + parallel;
  return kernel;
}

Kernel winograd_output_transform(const Conv2dSpec& spec, const Halide::Target& target) {
  require_applies(spec);
  const Shape out_shape = conv2d_output_shape(spec);
  const Shape view = winograd_tile_view(spec, spec.out_channels);
  Kernel kernel;
  Halide::ImageParam transformed = dense_input("transformed", view);
  kernel.inputs = {transformed};
  if (spec.has_bias) kernel.inputs.push_back(dense_input("bias", {spec.out_channels}));

  /* algorithm: Y = A^T M A, columns (j) first, then rows (i), then bias and epilogue */
  Var x("x"), y("y"), o("o"), n("n"), tx("tx"), ty("ty"), a("a"), b("b"), i("i");
  Func columns("columns"), output("winograd_output_transform");
  columns(b, i, tx, ty, o, n) = rows_of(kAT, b, [&](int j) { return transformed(tx, ty, o, j, i, n); });
  Expr value = rows_of(kAT, y % kTile, [&](int k) { return columns(x % kTile, k, x / kTile, y / kTile, o, n); });
  if (spec.has_bias) value += kernel.inputs[1](o);
  output(x, y, o, n) = apply_epilogue(value, spec.epilogue, {n, o, y, x}, out_shape, kernel.inputs);
  constrain_output(output, out_shape);

  /* schedule: per channel and row of tiles, a vector of tiles writes its 4x4 blocks */
  const int lanes = lanes_for_extent(view[5], native_lanes(target));
  Var txo("txo"), txi("txi"), tasks("tasks");
  output.split(x, tx, b, kTile, Halide::TailStrategy::GuardWithIf)
      .split(y, ty, a, kTile, Halide::TailStrategy::GuardWithIf)
      .split(tx, txo, txi, lanes)
      .reorder(b, a, txi, txo, ty, o, n)
      .vectorize(txi)
      .unroll(b)
      .unroll(a);
  output.fuse(o, n, tasks);
  const std::string parallel =
      parallel_in_tasks(output, tasks, out_shape[0] * out_shape[1], kWinogradPoints * view[4] * view[5]);
  // Column sums stored tiles innermost: the row sums load them as dense vectors.
  columns.compute_at(output, txo).reorder_storage(tx, b, i).vectorize(tx).unroll(b).unroll(i);
  kernel.output = output;
  kernel.schedule = "winograd F(4x4,3x3) output transform: " + std::to_string(lanes) + " tiles a vector, channels " +
                    parallel + (spec.epilogue.empty() ? "" : ", epilogue " + epilogue_suffix(spec.epilogue));
  return kernel;
}

}  // namespace aotc::gen
