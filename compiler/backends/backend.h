// The backends behind one interface: each lowers the optimised graph for its
// kind of target, compiles what it lowered into objects, and hands the packager
// (package/package.h) the same LibraryParts: objects, the generated header, the
// weights and the report. Halide CPU (backends/halide/halide_library.h) builds
// a CPU library; the CUDA stubs with the Halide CUDA kernels chosen per group
// (backends/cuda_stubs/cuda_library.h) build a GPU library.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "backends/halide/halide_backend.h"
#include "ir/graph.h"
#include "package/package.h"

namespace aotc {

struct BackendOptions {
  std::string target;    // canonical Halide target string (halide_target_string)
  std::string work_dir;  // objects and intermediate files
  int jobs = 1;          // worker processes compiling kernels
  std::string kernel_cache;  // directory of the kernel cache (kernel_cache.h); empty: none
  std::ostream* progress = nullptr;
  std::string producer;  // "aotc 0.1.0 from resnet18.fb", for the header and the report
  const TuningCache* tuning = nullptr;  // measured times to choose by, or null
  // CPU targets.
  HalideLoweringOptions lowering;
  std::string cxx;                // C++ compiler of the generated runner
  bool external_weights = false;  // <name>.weights beside the library instead of embedded
  // CUDA targets: "auto", "halide" or "cudnn" (aotc --gpu-backends).
  std::string gpu_backends = "auto";
};

// Throws UserError(kUnsupported) listing, with `integer_kernels` (the Halide CPU backend's),
// the graph inputs and outputs quantized per channel (a library's header states one scale
// and zero point each); without, every quantized node and integer input and output
// (`--emit=run` evaluates such graphs).
void require_float_graph(const Graph& g, bool integer_kernels);

// compile_halide_objects' objects as library members: the kernels, then the
// Halide runtime.
std::vector<LibraryObject> library_objects(const CompiledObjects& objects);

// The parts of `g`'s library for options.target, by the backend that builds its
// kind of target. Throws UserError for what that backend cannot build.
LibraryParts build_library_parts(const Graph& g, const BackendOptions& options);

// What build_library_parts would compile, counted without compiling it (aotc
// --emit=check): the layers a run executes and the distinct kernels compiled
// for them (a GPU library's: its Halide CUDA kernels). Throws UserError as
// build_library_parts does for what the backend cannot build.
struct LoweredCounts {
  size_t layers = 0;
  size_t kernels = 0;
};
LoweredCounts count_lowered(const Graph& g, const BackendOptions& options);

}  // namespace aotc
