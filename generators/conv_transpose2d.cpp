#include "generators/conv_transpose2d.h"

#include <algorithm>

#include "generators/epilogue.h"

namespace aotc::gen {
namespace {

using Halide::Expr;
using Halide::Func;
using Halide::Var;

// Most vectors along a phase row in one register tile: two keep 24 AVX-512
// accumulators for 2x2 strides (2 vectors x 4 phases x 3 channels); the other
// registers go to output channels, which share each input vector load.
constexpr int64_t kMaxTransposedRowVectors = 2;

struct TransposedGeometry {
  int64_t n, c, h, w, o, oh, ow;
  int sy, sx;
  int taps_y, taps_x;          // ceil(K/s): taps per phase
  int64_t phase_rows, phase_w;  // ceil(OH/sy), ceil(OW/sx): rows and columns per phase
  bool padded;                 // some tap reads outside the input
};

int ceil_div(int64_t a, int64_t b) { return static_cast<int>((a + b - 1) / b); }

// Whether phase reads along one axis leave [0, in): columns q + (p + pad) / s - j
// for q < phase extent, p < s, j < taps.
bool reads_outside(int64_t in, int64_t phase_extent, int stride, int pad_begin, int taps) {
  const int64_t first = pad_begin / stride - (taps - 1);
  const int64_t last = phase_extent - 1 + (stride - 1 + pad_begin) / stride;
  return first < 0 || last >= in;
}

TransposedGeometry geometry(const ConvTranspose2dSpec& s) {
  require(s.input_shape.size() == 4, "conv_transpose2d: input must be NCHW, got " + to_string(s.input_shape));
  require(s.out_channels >= 1, "conv_transpose2d: out_channels must be positive");
  for (int i = 0; i < 2; ++i)
    require(s.kernel[i] >= 1 && s.stride[i] >= 1, "conv_transpose2d: kernel and stride must be positive");
  for (int p : s.pad) require(p >= 0, "conv_transpose2d: padding must be non-negative");
  TransposedGeometry g{};
  g.n = s.input_shape[0];
  g.c = s.input_shape[1];
  g.h = s.input_shape[2];
  g.w = s.input_shape[3];
  g.o = s.out_channels;
  g.sy = s.stride[0];
  g.sx = s.stride[1];
  g.oh = (g.h - 1) * g.sy + s.kernel[0] - s.pad[0] - s.pad[2];
  g.ow = (g.w - 1) * g.sx + s.kernel[1] - s.pad[1] - s.pad[3];
  require(g.oh >= 1 && g.ow >= 1, "conv_transpose2d: the padding crops the whole output");
  g.taps_y = ceil_div(s.kernel[0], g.sy);
  g.taps_x = ceil_div(s.kernel[1], g.sx);
  g.phase_rows = ceil_div(g.oh, g.sy);
  g.phase_w = ceil_div(g.ow, g.sx);
  g.padded = reads_outside(g.h, g.phase_rows, g.sy, s.pad[0], g.taps_y) ||
             reads_outside(g.w, g.phase_w, g.sx, s.pad[1], g.taps_x);
  return g;
}

Shape packed_shape(const TransposedGeometry& g) {
  return {g.c, int64_t{g.taps_y} * g.sy, int64_t{g.taps_x} * g.sx, g.o};
}

}  // namespace

Shape conv_transpose2d_output_shape(const ConvTranspose2dSpec& spec) {
  const TransposedGeometry g = geometry(spec);
  return {g.n, g.o, g.oh, g.ow};
}

PackedWeights pack_conv_transpose2d_weights(const ConvTranspose2dSpec& spec, const float* weight) {
  const TransposedGeometry g = geometry(spec);
  PackedWeights packed;
  packed.shape = packed_shape(g);
  packed.data.assign(static_cast<size_t>(num_elements(packed.shape)), 0.0f);
  const int64_t kh = spec.kernel[0], kw = spec.kernel[1], rows = packed.shape[1], cols = packed.shape[2];
  for (int64_t c = 0; c < g.c; ++c)
    for (int64_t o = 0; o < g.o; ++o)
      for (int64_t ky = 0; ky < kh; ++ky)
        for (int64_t kx = 0; kx < kw; ++kx)
          packed.data[static_cast<size_t>(((c * rows + ky) * cols + kx) * g.o + o)] =
              weight[((c * g.o + o) * kh + ky) * kw + kx];
  return packed;
}

Kernel conv_transpose2d(const ConvTranspose2dSpec& spec, const Halide::Target& target) {
  const TransposedGeometry g = geometry(spec);
  const Shape out_shape{g.n, g.o, g.oh, g.ow};
  Kernel kernel;
  Halide::ImageParam input = dense_input("input", spec.input_shape);
  Halide::ImageParam weights = dense_input("weights", packed_shape(g));
  kernel.inputs = {input, weights};
  if (spec.has_bias) kernel.inputs.push_back(dense_input("bias", {g.o}));

  /* algorithm */
  // conv(qx, px, qy, py, o, n) is the output at x = qx*sx + px, y = qy*sy + py.
  Var x("x"), y("y"), o("o"), n("n"), qx("qx"), px("px"), qy("qy"), py("py");
  Func padded("padded"), conv("conv"), output("conv_transpose2d");
  if (g.padded)
    padded = Halide::BoundaryConditions::constant_exterior(
        input, 0.0f, {{0, static_cast<int>(g.w)}, {0, static_cast<int>(g.h)}});
  else
    padded(x, y, o, n) = input(x, y, o, n);  // inlined: reads the input directly
  Halide::RDom r(0, g.taps_x, 0, g.taps_y, 0, static_cast<int>(g.c), "r");  // jx, jy, input channel
  const int pad_top = spec.pad[0], pad_left = spec.pad[1];
  const Expr in_x = qx + (px + pad_left) / g.sx - r.x, kx = (px + pad_left) % g.sx + r.x * g.sx;
  const Expr in_y = qy + (py + pad_top) / g.sy - r.y, ky = (py + pad_top) % g.sy + r.y * g.sy;
  conv(qx, px, qy, py, o, n) = spec.has_bias ? kernel.inputs[2](o) : Expr(0.0f);
  conv(qx, px, qy, py, o, n) += padded(in_x, in_y, r.z, n) * weights(o, kx, ky, r.z);
  output(x, y, o, n) = apply_epilogue(conv(x / g.sx, x % g.sx, y / g.sy, y % g.sy, o, n), spec.epilogue,
                                      {n, o, y, x}, out_shape, kernel.inputs);
  constrain_output(output, out_shape);

  /* schedule */
  if (target.has_gpu_feature()) {
    // A thread: up to kGpuChannelTile output channels of one pixel, accumulated
    // in registers over (c, taps) of its phase; threads along output rows,
    // 32-128 pixels per block.
    const int threads = gpu_threads_for(g.oh * g.ow, 32, 128);
    const int channels = static_cast<int>(std::min<int64_t>(kGpuChannelTile, g.o));
    const Var pi = schedule_gpu_channel_tile(output, x, y, o, n, threads, channels);
    conv.compute_at(output, pi).store_in(Halide::MemoryType::Register).unroll(o);
    conv.update().reorder(o, r.x, r.y, r.z, qx, px, qy, py, n).unroll(o);
    kernel.schedule = "conv_transpose2d phases " + std::to_string(g.sy) + "x" + std::to_string(g.sx) + " gpu: " +
                      std::to_string(channels) + " channels x 1 pixel per thread, " + std::to_string(threads) +
                      " pixels per block, " + (g.padded ? "bounds-checked reads at the borders" : "no padding") +
                      (spec.epilogue.empty() ? "" : ", epilogue " + epilogue_suffix(spec.epilogue));
    kernel.output = output;
    return kernel;
  }
  const int lanes = lanes_for_extent(g.phase_w, native_lanes(target));
  const int phases = g.sx * g.sy, registers = accumulator_registers(target);
  const int row_vectors = static_cast<int>(
      std::clamp<int64_t>(std::min<int64_t>(g.phase_w / lanes, registers / phases), 1, kMaxTransposedRowVectors));
  const int channel_tile = static_cast<int>(largest_divisor_at_most(g.o, std::max(1, registers / (phases * row_vectors))));
  // A phase split that does not divide the output guards its last columns/rows.
  auto tail = [](int64_t extent, int stride) {
    return extent % stride == 0 ? Halide::TailStrategy::RoundUp : Halide::TailStrategy::GuardWithIf;
  };
  Var xq("xq"), xp("xp"), yq("yq"), yp("yp"), xo("xo"), xv("xv"), xvo("xvo"), xvi("xvi"), oo("oo"), oi("oi");
  Var rows("rows"), tasks("tasks");
  output.split(x, xq, xp, g.sx, tail(g.ow, g.sx))
      .split(y, yq, yp, g.sy, tail(g.oh, g.sy))
      .split(xq, xo, xv, lanes * row_vectors)
      .split(xv, xvo, xvi, lanes)
      .split(o, oo, oi, channel_tile)
      .reorder(xp, xvi, xvo, yp, oi, xo, yq, oo, n)
      .unroll(xp)
      .vectorize(xvi)
      .unroll(xvo)
      .unroll(yp)
      .unroll(oi)
      .fuse(yq, oo, rows)
      .fuse(rows, n, tasks)
      .parallel(tasks);
  // The whole tile, also where the phase guard skips some of it: a tile of
  // constant size stays on the stack (else each tile is a heap allocation).
  conv.compute_at(output, xo).bound_extent(qx, lanes * row_vectors).bound_extent(qy, 1);
  conv.bound(px, 0, g.sx).bound(py, 0, g.sy);
  conv.vectorize(qx, lanes).unroll(qx).unroll(px).unroll(py).unroll(o);
  conv.update()
      .reorder(qx, px, py, o, r.x, r.y, r.z, qy, n)
      .vectorize(qx, lanes)
      .unroll(qx)
      .unroll(px)
      .unroll(py)
      .unroll(o)
      .unroll(r.x)
      .unroll(r.y);
  kernel.schedule = "conv_transpose2d phases " + std::to_string(g.sy) + "x" + std::to_string(g.sx) + ": tile " +
                    std::to_string(row_vectors) + "x" + std::to_string(lanes) + " lanes x " + std::to_string(phases) +
                    " phases x " + std::to_string(channel_tile) + " channels, " +
                    (g.padded ? "bounds-checked reads at the borders" : "no padding") +
                    (spec.epilogue.empty() ? "" : ", epilogue " + epilogue_suffix(spec.epilogue));
  kernel.output = output;
  return kernel;
}

}  // namespace aotc::gen
