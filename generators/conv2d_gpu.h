// 2-D convolution (dense, grouped, depthwise) with a fused epilogue for a GPU
// target (CUDA; OpenCL in tests/gpu_schedules): the same semantics and spec as conv2d.h, but weights in PyTorch's
// own layout [O, C/groups, KH, KW] (the row-major constants the GPU backend
// uploads; no packing) and a GPU schedule:
//  - dense and grouped: a thread computes kGpuChannelTile output channels of
//    one output pixel in registers (each input value it loads feeds them all;
//    the weights it reads are the same for every thread of a warp, so they are
//    broadcast), blocks of up to 128 consecutive pixels of kGpuChannelTile channels;
//    with few outputs and a long reduction (1x1 and 3x3 convs of many channels on
//    small maps, where that schedule's few threads each run a long serial chain),
//    the block's threads also split the input channels into up to kGpuMaxSlices
//    slices whose partial sums meet in shared memory (blocks of 8x4 pixels);
//    otherwise, ungrouped with a window (3x3 and larger) whose input tile and
//    halo over all input channels fits in kGpuStagedBytes, a block of up to
//    32x4 threads first copies that tile into shared memory and its threads
//    read their taps from there (staged); otherwise, with rows a multiple of 4
//    wide and threads enough (kGpuSplitThreads even at 4 pixels each), a thread
//    computes kGpuChannelTile channels of 4 neighbouring pixels of a row
//    (float4 input reads where they are dense and aligned);
//  - depthwise (groups == C == O): a thread computes kGpuDepthwiseRows rows of
//    one output column, neighbouring threads neighbouring columns (coalesced
//    reads), blocks of 32 x 4 threads.
// Windows that reach outside the input read zeros through a bounds check.
// Kernel inputs: (input [N,C,H,W], weights [O,C/groups,KH,KW], bias [O] if
// has_bias, epilogue operands...); output [N,O,OH,OW].
#pragma once

#include "generators/conv2d.h"

namespace aotc::gen {

// Output rows per thread of the depthwise schedule.
constexpr int kGpuDepthwiseRows = 4;
// The split schedule (few outputs, long reductions): pixels per block (x, y), at most
// this many slices of the reduction, the threads of all slices it stays under (also
// the threads the 4-pixel schedule keeps at least), and the fewest taps a slice sums.
constexpr int kGpuSplitTile[2] = {8, 4};
constexpr int kGpuMaxSlices = 8;
constexpr int64_t kGpuSplitThreads = 64 * 1024;
constexpr int64_t kGpuSplitMinTaps = 32;
// The staged schedule (dense convs with a window): a block's tile of pixels (up to
// kGpuWarp columns x kGpuStagedRows rows), and the shared memory its input window
// may take.
constexpr int kGpuWarp = 32;
constexpr int kGpuStagedRows = 4;
constexpr int64_t kGpuStagedBytes = 32 * 1024;

// Throws std::invalid_argument unless `target` has the CUDA feature.
Kernel conv2d_gpu(const Conv2dSpec& spec, const Halide::Target& target);

}  // namespace aotc::gen
