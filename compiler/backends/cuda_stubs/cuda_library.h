// The GPU library of the CUDA stub backend (backends/backend.h): chooses each
// group's backend (choose_gpu_backends.h), emits the stubs (lower_cuda_stubs.h),
// compiles its Halide CUDA kernels with Halide, and hands the packager those
// objects, the stubs (for the host compiler), aotc's CUDA runtime (for nvcc) and
// the static CUDA runtime to merge into lib<name>.a, beside <name>.h and
// <name>.report.json.
// cuDNN is not linked: the library loads libcudnn.so.9 when a model is created.
#pragma once

#include <string>

#include "backends/backend.h"
#include "backends/cuda_stubs/lower_cuda_stubs.h"

namespace aotc {

// Throws UserError(kUnsupported) when this aotc was built without the CUDA
// toolkit. With options.external_weights, the weights go to <name>.weights,
// which the app passes to create (uploaded there, not kept).
LibraryParts build_cuda_library(const Graph& g, const BackendOptions& options);
// What build_cuda_library compiles: each group's backend chosen, the stubs and
// Halide CUDA kernels of `g` lowered. Throws as build_cuda_library does.
CudaStubModel lower_cuda_library(const Graph& g, const BackendOptions& options);

// The generated public header <name>.h of a GPU library.
std::string cuda_model_header(const CudaStubModel& model, const std::string& producer);

}  // namespace aotc
