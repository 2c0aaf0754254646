// The CUDA fallback-stub backend: turns an optimised graph into one readable
// CUDA C++ file, one function per fused group, that runs the whole model on an
// NVIDIA GPU. Convolutions go to cuDNN (loaded with dlopen at create time), the
// other ops to the small kernels of sdk/runtime/aotc_cuda_runtime.cuh, fused
// epilogues to one elementwise kernel after the op. Tensors keep the graph's
// NCHW layout and the memory plan's offsets, in one device arena that also
// holds the weights (uploaded once, at create) and, for runs from host
// pointers, the inputs and outputs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/lowered_model.h"
#include "ir/graph.h"
#include "plan/memory_plan.h"

namespace aotc {

struct CudaStubLayer {
  std::string name;  // the group's output tensor
  std::string ops;   // "conv2d+relu"
  std::string call;  // what runs it: "cudnnConvolutionForward + elementwise", "pool2d kernel", ...
  double flops = 0;
};

struct CudaStubModel {
  std::string name;
  std::vector<TensorInfo> inputs, outputs;
  std::vector<CudaStubLayer> layers;  // in execution order
  std::string source;                 // the .cu file
  std::vector<uint8_t> weights;       // row-major constants, each 64-byte aligned
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
CudaStubModel lower_to_cuda_stubs(const Graph& g, const MemoryPlan& plan);

}  // namespace aotc
