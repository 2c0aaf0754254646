// `aotc --tune` for a CUDA target: measures both backends of every group that
// has two (a Halide CUDA kernel and the stubs' call) on this machine's GPU, and
// remembers the times in the tuning cache, keyed as the report's choices are.
// It builds the all-Halide and all-cuDNN libraries in the work directory, links
// each into a small profiling program (generated here) and runs it: the
// library's profile_layers replays each layer alone as a CUDA graph, as a run's
// graph replays it (bench/gpu measures the same way on a lent GPU machine,
// which has no Halide and so no aotc).
#pragma once

#include <ostream>
#include <string>

#include "backends/cuda_stubs/choose_gpu_backends.h"
#include "ir/graph.h"
#include "tune/tuning_cache.h"

namespace aotc {

struct GpuTuneOptions {
  std::string target;      // canonical CUDA target string
  std::string work_dir;    // the variants' libraries and programs
  int jobs = 1;            // worker processes compiling kernels
  std::string sdk_header;  // sdk/include/aotc/aotc.h
  std::string producer;
  std::ostream* log = nullptr;
};

// Measures the groups `cache` lacks a time of. Throws UserError(kUsage) when
// this machine has no usable GPU (the library's create says why), and
// UserError(kIo) when a variant cannot be built or profiled.
void tune_gpu(const Graph& g, const GpuTuneOptions& options, TuningCache& cache);

// Records the profiling program's "layer NAME US" lines in `cache` as the times
// of `backend` for the groups of `plan` (each layer's choice key); other layers
// and lines are ignored. Returns how many groups it recorded.
int record_gpu_profile(const std::string& profile_output, const GpuBackendPlan& plan, GpuBackend backend,
                       TuningCache& cache);

}  // namespace aotc
