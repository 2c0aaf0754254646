// The CUDA fallback-stub backend: turns an optimised graph into one readable
// C++ file (host code only, built by the host compiler), one function per fused
// group, that runs the whole model on an NVIDIA GPU. A group the backend plan (choose_gpu_backends.h) gives to Halide
// calls its Halide CUDA kernel (compiled by the packager); of the others,
// convolutions go to cuDNN (loaded with dlopen at create time), the other ops
// to the small kernels of sdk/runtime/aotc_cuda_runtime.cu, fused epilogues
// to one elementwise kernel after the op. Tensors keep the graph's
// NCHW layout and the memory plan's offsets, in one device arena that also
// holds the weights (uploaded once, at create, from the library or from the
// caller's weights file) and, for runs from host pointers, the inputs and
// outputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/cuda_stubs/choose_gpu_backends.h"
#include "backends/lowered_model.h"
#include "ir/graph.h"
#include "package/weights_file.h"
#include "plan/memory_plan.h"

namespace aotc {

struct CudaStubLayer {
  std::string name;  // the group's output tensor
  std::string ops;   // "conv2d+relu"
  std::string call;  // what runs it: "cudnnConvolutionForward + elementwise", "pool2d kernel", ...
  double flops = 0;
  GpuBackend backend = GpuBackend::kCudnn;
  int halide_kernel = -1;  // index into CudaStubModel::halide_kernels (halide-cuda layers)
};

struct CudaStubModel {
  std::string name;
  std::vector<TensorInfo> inputs, outputs;
  std::vector<CudaStubLayer> layers;  // in execution order
  std::string source;                 // the .cu file
  std::vector<uint8_t> weights;       // row-major constants, each 64-byte aligned
  // With external weights, create takes them from the caller's <name>.weights,
  // which this identifies (package/weights_file.h).
  bool external_weights = false;
  WeightsIdentity weights_identity;
  // The Halide CUDA kernels the source calls (each distinct one once; the
  // packager compiles them for the target's GPU), and the backend plan.
  std::vector<KernelSource> halide_kernels;
  std::vector<ChoiceRecord> choices;
  GpuPlanTotals totals;
  // The device arena: activations (the memory plan's arena), then the staging
  // buffers of the inputs and outputs, then the weights.
  int64_t activation_bytes = 0;
  int64_t io_bytes = 0;
  int64_t device_arena_bytes = 0;
};

// The memory plan the stubs run over: scratch only where a convolution's
// padding is asymmetric (cuDNN pads symmetrically), for the padded input.
MemoryPlan plan_cuda_stub_memory(const Graph& g);
// Throws UserError (kUnsupported) for an op or shape the stubs cannot run.
// `backends` is choose_gpu_backends(g, ...). With `external_weights`, create
// takes the weights file's image instead of an embedded blob. Halide kernel
// symbols are kernel_symbol()s for `target` (support/names.h).
CudaStubModel lower_to_cuda_stubs(const Graph& g, const MemoryPlan& plan, const GpuBackendPlan& backends,
                                  bool external_weights, const std::string& target);

}  // namespace aotc
