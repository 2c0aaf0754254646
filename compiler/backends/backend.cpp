#include "backends/backend.h"

#include <set>

#include "backends/cuda_stubs/cuda_library.h"
#include "backends/halide/halide_library.h"

namespace aotc {

std::vector<LibraryObject> library_objects(const CompiledObjects& objects) {
  std::vector<LibraryObject> members;
  for (size_t i = 0; i < objects.objects.size(); ++i)
    members.push_back({objects.objects[i], i + 1 == objects.objects.size() ? ObjectRole::kRuntime : ObjectRole::kKernel});
  return members;
}

LibraryParts build_library_parts(const Graph& g, const BackendOptions& options) {
  if (cuda_capability(options.target) > 0) return build_cuda_library(g, options);
  return build_halide_library(g, options);
}

LoweredCounts count_lowered(const Graph& g, const BackendOptions& options) {
  if (cuda_capability(options.target) > 0) {
    const CudaStubModel model = lower_cuda_library(g, options);
    return {model.layers.size(), model.halide_kernels.size()};
  }
  const LoweredModel model = lower_halide_library(g, options);
  std::set<std::string> layers;  // a Winograd convolution's three calls are one layer's
  for (const KernelCall& call : model.calls) layers.insert(call.layer);
  return {layers.size(), model.kernels.size()};
}

}  // namespace aotc
