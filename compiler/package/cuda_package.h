// The packager of the CUDA stub backend (backends/cuda_stubs): compiles the
// generated .cu with nvcc and archives it with the weights object, the Halide
// CUDA kernels' objects and Halide's runtime (where some group runs one), and
// the static CUDA runtime into lib<name>.a, beside <name>.h and
// <name>.report.json.
// cuDNN is not linked: the library loads libcudnn.so.9 when a model is created.
#pragma once

#include <string>

#include "backends/cuda_stubs/lower_cuda_stubs.h"
#include "backends/halide/halide_backend.h"
#include "package/package.h"

namespace aotc {

struct CudaPackageOptions {
  std::string out_dir;
  std::string work_dir;
  std::string target;       // canonical Halide target string (host-cuda-cuda_capability_NN)
  int cuda_capability = 75;  // the SASS nvcc builds (PTX of it rides along for newer GPUs)
  std::string sdk_header;
  std::string producer;
  double compile_seconds_so_far = 0;
};

// The generated public header <name>.h of a GPU library.
std::string cuda_model_header(const CudaStubModel& model, const std::string& producer);
// Files appear only when complete, as with write_library.
// `halide` holds the compiled model.halide_kernels, then Halide's runtime
// (compile_halide_objects), or nothing when there are none.
PackageResult write_cuda_library(const CudaStubModel& model, const CompiledObjects& halide,
                                 const CudaPackageOptions& options);

}  // namespace aotc
