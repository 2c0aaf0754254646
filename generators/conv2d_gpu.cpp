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
  Func source;        // the input, zero outside its rows and columns
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
  const Var pi = schedule_gpu_channel_tile(f.output, f.x, f.y, f.o, f.n, threads, channels);
  f.conv.compute_at(f.output, pi).store_in(Halide::MemoryType::Register).unroll(f.o);
  f.conv.update().reorder(f.o, f.r.x, f.r.y, f.r.z, f.x, f.y, f.n).unroll(f.o);
  return "conv2d gpu: " + std::to_string(channels) + " channels x 1 pixel per thread, " + std::to_string(threads) +
         " pixels per block";
}

// Blocks of tile_x x tile_y threads, a thread per pixel of `channels` output
// channels (unrolled), accumulated in registers. Returns the loop over the blocks'
// tiles of pixels, where a schedule computes what the block shares.
Var schedule_pixel_tiles(GpuConvFuncs& f, int tile_x, int tile_y, int channels) {
  Var xo("xo"), xi("xi"), yo("yo"), yi("yi"), tile("tile"), oo("oo"), oi("oi");
  f.output.tile(f.x, f.y, xo, yo, xi, yi, tile_x, tile_y, Halide::TailStrategy::GuardWithIf)
      .split(f.o, oo, oi, channels, Halide::TailStrategy::GuardWithIf)
      .reorder(oi, xi, yi, xo, yo, oo, f.n)
      .fuse(xo, yo, tile)
      .gpu_blocks(tile, oo, f.n)
      .gpu_threads(xi, yi)
      .unroll(oi);
  f.conv.compute_at(f.output, xi).store_in(Halide::MemoryType::Register).unroll(f.o);
  return tile;
}

// The staged schedule's tile of pixels: staged_columns x kGpuStagedRows. Whether its
// input window (the tile, its halo, all the group's channels) fits in kGpuStagedBytes
// of shared memory.
int staged_columns(const Shape& out) { return gpu_threads_for(out[3], 8, kGpuWarp); }

bool window_fits(const Conv2dSpec& s, const Shape& out) {
  const int64_t rows = std::min<int64_t>(kGpuStagedRows, out[2]), columns = staged_columns(out);
  const int64_t window_x = (columns - 1) * s.stride[1] + (s.kernel[1] - 1) * s.dilation[1] + 1;
  const int64_t window_y = (rows - 1) * s.stride[0] + (s.kernel[0] - 1) * s.dilation[0] + 1;
  return 4 * window_x * window_y * (s.input_shape[1] / s.groups) <= kGpuStagedBytes;
}

// Dense convs with a window (3x3 and larger, ungrouped) whose input window fits in
// shared memory: a block of up to kGpuWarp x kGpuStagedRows threads first copies the input
// window its tile of pixels reads (the tile and its halo, every input channel) into
// shared memory, then each thread sums kGpuChannelTile channels of its pixel from
// there in registers, so neighbouring threads' overlapping windows are read from
// global memory once per block instead of once per thread and tap. (A copy per chunk
// of input channels would need the accumulators to live across the chunks at the
// block level, which Halide 14 keeps in registers only for a single warp's lanes,
// whose shared-memory copies it leaves without a barrier.)
std::string schedule_dense_staged(GpuConvFuncs& f, const Shape& out) {
  const int columns = staged_columns(out);
  const int rows = static_cast<int>(std::min<int64_t>(kGpuStagedRows, out[2]));
  const int channels = static_cast<int>(std::min<int64_t>(kGpuChannelTile, out[1]));
  const Var tile = schedule_pixel_tiles(f, columns, rows, channels);
  f.conv.update().reorder(f.o, f.r.x, f.r.y, f.r.z, f.x, f.y, f.n).unroll(f.o);
  Func window = f.source.in(f.conv);
  const std::vector<Var> w = window.args();
  Var wxo("wxo"), wxi("wxi"), wyo("wyo"), wyi("wyi");
  window.compute_at(f.output, tile)
      .store_in(Halide::MemoryType::GPUShared)
      .split(w[0], wxo, wxi, columns, Halide::TailStrategy::GuardWithIf)
      .split(w[1], wyo, wyi, rows, Halide::TailStrategy::GuardWithIf)
      .reorder(wxi, wyi, wxo, wyo, w[2], w[3])
      .gpu_threads(wxi, wyi);
  return "conv2d gpu staged: " + std::to_string(channels) + " channels x 1 pixel per thread, " +
         std::to_string(columns) + "x" + std::to_string(rows) +
         " threads per block, the tile's input window in shared memory";
}

// Dense convs whose output rows are a multiple of kGpuVectorLanes wide: a thread
// computes kGpuChannelTile channels x kGpuVectorLanes neighbouring pixels of a row in
// registers (32 accumulators), so each weight it loads feeds 4 pixels as each input
// load feeds 8 channels; the 4 pixels' input is one float4 load where it is dense and
// aligned (stride 1, no padding, rows a multiple of 4 wide: a 1x1 conv's usual case).
// Blocks of up to kGpuWarp threads along a row (as many rows as make up to 128 threads).
// Taken where a quarter of the dense schedule's threads still fill the GPU: with fewer,
// the layer waits on latency either way and the dense schedule's 4x threads hide more.
std::string schedule_dense_vectors(GpuConvFuncs& f, const Shape& out) {
  const int columns = gpu_threads_for(out[3] / kGpuVectorLanes, 8, kGpuWarp);
  const int rows = static_cast<int>(std::min<int64_t>(128 / columns, out[2]));
  const int channels = static_cast<int>(std::min<int64_t>(kGpuChannelTile, out[1]));
  Var xv("xv");
  f.output.split(f.x, f.x, xv, kGpuVectorLanes, Halide::TailStrategy::RoundUp).vectorize(xv);
  schedule_pixel_tiles(f, columns, rows, channels);
  f.conv.vectorize(f.x, kGpuVectorLanes);
  f.conv.update().reorder(f.x, f.o, f.r.x, f.r.y, f.r.z, f.y, f.n).vectorize(f.x, kGpuVectorLanes).unroll(f.o);
  return "conv2d gpu: " + std::to_string(channels) + " channels x " + std::to_string(kGpuVectorLanes) +
         " pixels (float4) per thread, " + std::to_string(columns) + "x" + std::to_string(rows) + " threads per block";
}

// Few outputs and a long reduction (a 1x1 conv of 1024 channels on a 14x14 map): the
// dense schedule has few threads, each a long serial chain of multiply-adds, so the
// layer waits on latency. Here a block's threads also split the reduction's input
// channels into `slices` interleaved slices (rfactor): each thread sums
// kGpuChannelTile channels x one pixel over its slice in registers, the partial sums
// meet in shared memory, and a thread per pixel adds them up and applies the bias and
// epilogue. Blocks are tiles of kGpuSplitTile[0] x kGpuSplitTile[1] pixels.
std::string schedule_dense_split(GpuConvFuncs& f, const Shape& out, int slices) {
  const int tile_x = static_cast<int>(std::min<int64_t>(kGpuSplitTile[0], out[3]));
  const int tile_y = static_cast<int>(std::min<int64_t>(kGpuSplitTile[1], out[2]));
  const int channels = static_cast<int>(std::min<int64_t>(kGpuChannelTile, out[1]));
  Halide::RVar rzo("rzo"), rzi("rzi");
  Var slice("slice");
  Func partial = f.conv.update().split(f.r.z, rzo, rzi, slices).rfactor(rzi, slice);
  Func staged = partial.in();  // the partial sums, once in shared memory
  const Var tile = schedule_pixel_tiles(f, tile_x, tile_y, channels);
  f.conv.update().unroll(f.o);
  staged.compute_at(f.output, tile)
      .store_in(Halide::MemoryType::GPUShared)
      .reorder(f.o, f.x, f.y, slice, f.n)
      .gpu_threads(f.x, f.y, slice)
      .unroll(f.o);
  partial.compute_at(staged, f.x).store_in(Halide::MemoryType::Register).unroll(f.o);
  partial.update().reorder(f.o, f.r.x, f.r.y, rzo, f.x, f.y, slice, f.n).unroll(f.o);
  return "conv2d gpu split: " + std::to_string(channels) + " channels x 1 pixel per thread, input channels in " +
         std::to_string(slices) + " slices, " + std::to_string(tile_x) + "x" + std::to_string(tile_y) + "x" +
         std::to_string(slices) + " threads per block, partial sums added in shared memory";
}

// The threads of the dense schedule: one per pixel and kGpuChannelTile channels.
int64_t channel_tile_threads(const Shape& out) {
  return out[0] * out[2] * out[3] * ((out[1] + kGpuChannelTile - 1) / kGpuChannelTile);
}

// How many slices schedule_dense_split cuts the reduction of a dense conv into (1: the
// dense schedule): while the threads of all slices stay under kGpuSplitThreads and each
// slice keeps kGpuSplitMinTaps taps and two input channels or more.
int reduction_slices(const Conv2dSpec& s, const Shape& out) {
  const int64_t thread_outputs = channel_tile_threads(out);
  const int64_t channels = s.input_shape[1] / s.groups;
  const int64_t taps = channels * s.kernel[0] * s.kernel[1];
  int slices = 1;
  while (slices < kGpuMaxSlices && thread_outputs * slices * 2 <= kGpuSplitThreads &&
         taps / (slices * 2) >= kGpuSplitMinTaps && channels / (slices * 2) >= 2)
    slices *= 2;
  return slices;
}

// A thread: kGpuDepthwiseRows rows of one column; warps along the row.
std::string schedule_depthwise(GpuConvFuncs& f, const Shape& out) {
  const int rows = static_cast<int>(std::min<int64_t>(kGpuDepthwiseRows, out[2]));
  const int columns = gpu_threads_for(out[3], 8, 32);
  Var xo("xo"), xi("xi"), yo("yo"), yt("yt"), yi("yi"), ty("ty"), plane("plane"), tile("tile"), block("block");
  f.output.split(f.x, xo, xi, columns, Halide::TailStrategy::GuardWithIf)
      .split(f.y, yo, yi, rows, Halide::TailStrategy::GuardWithIf)
      .split(yo, yt, ty, 4, Halide::TailStrategy::GuardWithIf)
      .reorder(yi, xi, ty, xo, yt, f.o, f.n)
      .fuse(f.o, f.n, plane)
      .fuse(xo, yt, tile)
      .fuse(tile, plane, block)  // one grid dimension: grid y and z stop at 65535
      .gpu_blocks(block)
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
  // Without padding the window never leaves the input: no bounds check, so dense
  // reads stay dense (float4s).
  const bool padded = std::any_of(spec.pad.begin(), spec.pad.end(), [](int p) { return p != 0; });
  if (padded) {
    f.source = Halide::BoundaryConditions::constant_exterior(input, 0.0f, {{0, w}, {0, h}});
  } else {
    f.source = Func("source");
    f.source(f.x, f.y, f.o, f.n) = input(f.x, f.y, f.o, f.n);
  }
  f.r = Halide::RDom(0, spec.kernel[1], 0, spec.kernel[0], 0, static_cast<int>(c_per_group), "r");
  const Expr in_x = f.x * spec.stride[1] - spec.pad[1] + f.r.x * spec.dilation[1];
  const Expr in_y = f.y * spec.stride[0] - spec.pad[0] + f.r.y * spec.dilation[0];
  const Expr in_c = spec.groups == 1 ? Expr(f.r.z)
                                     : f.o / static_cast<int>(o_per_group) * static_cast<int>(c_per_group) + f.r.z;
  f.conv(f.x, f.y, f.o, f.n) = spec.has_bias ? kernel.inputs[2](f.o) : Expr(0.0f);
  f.conv(f.x, f.y, f.o, f.n) += f.source(in_x, in_y, in_c, f.n) * weights(f.r.x, f.r.y, f.r.z, f.o);
  f.output(f.x, f.y, f.o, f.n) =
      apply_epilogue(f.conv(f.x, f.y, f.o, f.n), spec.epilogue, {f.n, f.o, f.y, f.x}, out_shape, kernel.inputs);
  constrain_output(f.output, out_shape);

  /* schedule */
  const int slices = depthwise(spec) ? 1 : reduction_slices(spec, out_shape);
  const bool staged = spec.kernel[0] * spec.kernel[1] > 1 && spec.groups == 1 && window_fits(spec, out_shape);
  // Four pixels a thread where that still leaves kGpuSplitThreads threads to fill the GPU.
  const bool row_vectors =
      out_shape[3] % kGpuVectorLanes == 0 && channel_tile_threads(out_shape) / kGpuVectorLanes >= kGpuSplitThreads;
  const std::string tile = depthwise(spec)  ? schedule_depthwise(f, out_shape)
                           : slices > 1     ? schedule_dense_split(f, out_shape, slices)
                           : staged         ? schedule_dense_staged(f, out_shape)
                           : row_vectors    ? schedule_dense_vectors(f, out_shape)
                                            : schedule_dense(f, out_shape);
  kernel.schedule = tile + (spec.epilogue.empty() ? "" : ", epilogue " + epilogue_suffix(spec.epilogue));
  kernel.output = f.output;
  return kernel;
}

}  // namespace aotc::gen
