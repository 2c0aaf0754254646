#include "backends/backend.h"

#include "backends/cuda_stubs/cuda_library.h"
#include "backends/halide/halide_library.h"

namespace aotc {

LibraryParts build_library_parts(const Graph& g, const BackendOptions& options) {
  if (cuda_capability(options.target) > 0) return build_cuda_library(g, options);
  return build_halide_library(g, options);
}

}  // namespace aotc
