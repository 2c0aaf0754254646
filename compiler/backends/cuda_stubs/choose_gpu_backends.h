// The backend of each fused group of a GPU library: a Halide CUDA kernel
// (generators/conv2d_gpu.h, or the GPU schedule of another op's generator) or the CUDA stubs' own call (cuDNN for
// convolutions, aotc's small kernels for the rest), the "cudnn" backend.
//
// Both backends read and write the same NCHW tensors in the same device arena,
// so a change of backend between neighbours costs no transfer or layout
// conversion: the plan over the chain is then each group's fastest candidate,
// and its total the sum of the groups' times. Times come from the tuning cache
// (measured on the GPU: aotc --tune, or bench/gpu where aotc cannot run) where
// it has both candidates of a group, else from a roofline cost model of the
// target's GPU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/lowered_model.h"
#include "ir/graph.h"

namespace aotc {

struct TuningCache;

enum class GpuBackend { kCudnn, kHalideCuda };

// "cudnn", "halide-cuda" (the report's and the tuning cache's names).
const char* gpu_backend_name(GpuBackend backend);

struct GpuBackendOptions {
  // "auto": each group's fastest; "halide": every group that has a Halide CUDA
  // kernel runs it; "cudnn": none does (aotc --gpu-backends).
  std::string mode = "auto";
  int cuda_capability = 80;
  const TuningCache* tuning = nullptr;
};

// The plan's time of one run, µs, summed over the groups with both backends
// whose times are known (measured where the tuning cache times both, else
// predicted), for the choices made and for both pure variants; every other
// layer runs the stubs' kernel in all three.
struct GpuPlanTotals {
  int groups = 0;    // nodes with a Halide CUDA candidate
  int costed = 0;    // of which both candidates have a time
  int measured = 0;  // of which the tuning cache timed both candidates
  double hybrid_us = 0;      // the choices made
  double all_halide_us = 0;  // every such group on its Halide kernel
  double all_cudnn_us = 0;   // every such group on the stubs' call
};

struct GpuBackendPlan {
  std::vector<GpuBackend> backend;   // per node of the graph
  std::vector<ChoiceRecord> choices;  // per node with two candidates, in execution order
  GpuPlanTotals totals;
};

// Whether `node` has a Halide CUDA kernel: convolutions (generators/conv2d_gpu.h)
// and every op with a node_kernel() (its generator's GPU schedule).
bool has_halide_cuda_kernel(const Node& node);

// Whether predict_gpu_us() has a model of `node`: convolutions and pooling,
// the groups the H100's times were measured on. The others keep the stubs'
// call unless the tuning cache times both backends.
bool has_gpu_cost_model(const Node& node);

// Whether the stubs run conv2d `node` as one cuDNN fused call: bias then relu,
// or bias, add of a tensor of the output's shape, then relu (cuDNN fuses
// nothing else; the stubs run any other epilogue as a second kernel).
bool cudnn_fuses_epilogue(const Graph& g, const Node& node);

// Floating-point operations of conv2d `node`: 2 per multiply-add.
double conv2d_flops(const Graph& g, const Node& node);

// Predicted time of `node` on `backend`, µs, on the GPU of `cuda_capability`
// (NaN without has_gpu_cost_model()):
// one launch plus the largest of its arithmetic at the backend's efficiency, its
// memory traffic, and (convolutions) its taps per output at the backend's
// latency per tap; a cuDNN convolution whose epilogue it cannot fuse pays a
// second, elementwise kernel. The backends' constants are fitted to an H100's
// measured layer times.
double predict_gpu_us(const Graph& g, const Node& node, GpuBackend backend, int cuda_capability);

// Throws UserError(kUsage) for an unknown mode.
GpuBackendPlan choose_gpu_backends(const Graph& g, const GpuBackendOptions& options);

}  // namespace aotc
