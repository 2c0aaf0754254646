// The Halide CPU backend: every node of the optimised graph becomes one Halide
// kernel built from generators/, specialised to the node's exact shapes and
// epilogue, compiled ahead of time for the target. Identical kernels (same op,
// shapes, attributes, epilogue) are compiled once: weights are kernel arguments,
// pre-packed into the blob of the LoweredModel.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "backends/lowered_model.h"
#include "plan/memory_plan.h"

namespace aotc {

// "host" or any Halide target string, validated; throws UserError(kUsage).
// "host" is this machine without the features Halide 14 wrongly claims for it
// (AVX-VNNI on AMD Zen 4).
std::string halide_target_string(const std::string& requested);
// The compute capability a CUDA target builds for (75 when it names none), or 0
// for a CPU target.
int cuda_capability(const std::string& target);

// The C++ compiler that builds code for `target` next to the kernels: c++ for
// the host's own architecture, else Debian's cross compiler (aarch64-linux-gnu-g++
// for arm-64-linux, arm-linux-gnueabihf-g++ for arm-32-linux). Throws
// UserError(kUnsupported) for a target aotc cannot package (another OS or arch).
std::string default_runner_compiler(const std::string& target);

// The ELF class and machine of `target`'s objects, which the packager checks
// every member of the library against.
ObjectFormat target_object_format(const std::string& target);

struct TuningCache;

// What the lowering may choose per node.
struct HalideLoweringOptions {
  // Winograd F(4x4, 3x3) is a candidate for 3x3 stride-1 convolutions; false:
  // direct convolution everywhere (aotc --conv-algorithm=direct).
  bool winograd = true;
  // Channel-blocked (NCHWc) convolutions are candidates too (aotc
  // --layouts=auto); the plan over the chain (group_plan.h) weighs them with
  // the layout conversions they cause.
  bool blocked_layouts = false;
  // Measured times of candidates (aotc --tuning-cache): where it times every
  // candidate of a node, the fastest runs; elsewhere the cost model or the
  // rules choose (backends/halide/candidates.h, choose()).
  const TuningCache* tuning = nullptr;
  // The target the cost model sees (vector lanes, registers): a Halide target string or "host".
  std::string target = "host";
};

struct GroupPlan;

// The arena scratch the kernels `groups` chose for the node at `step` need
// during that step (plan_memory's ScratchBytes): a Winograd convolution's
// transformed input and output, tensors converted to another layout.
int64_t halide_scratch_bytes(const GroupPlan& groups, size_t step);
// The memory plan of a CPU library: plan_memory with the scratch `groups` need.
MemoryPlan plan_halide_memory(const Graph& g, const GroupPlan& groups);

// Maps each node to kernel calls over the memory plan, which must have been
// made with halide_scratch_bytes of `groups` (group_plan.h: plan_groups() of
// `g`). Throws UserError(kUnsupported) naming the node for an op with no
// generator. Kernel symbols are kernel_symbol()s for `target` (support/names.h).
LoweredModel lower_to_halide(const Graph& g, const MemoryPlan& plan, const GroupPlan& groups,
                             const std::string& target);

struct CompiledObjects {
  std::vector<std::string> objects;         // kernel objects, then the Halide runtime's
  std::vector<std::string> schedules;       // per kernel of the model, in order
  std::vector<double> kernel_seconds;       // per kernel of the model
  bool cache_used = false;                  // compiled with a kernel cache
  size_t kernels_from_cache = 0;            // of which this many were copied from it
};

// Compiles every kernel of a model (LoweredModel::kernels, CudaStubModel::
// halide_kernels), and the Halide runtime once, for `target` into `work_dir`,
// in `jobs` worker processes, through the kernel cache in
// `cache_dir` (empty: none; kernel_cache.h), printing a line per kernel to
// `progress` (may be null). Throws InternalError if a kernel fails to compile.
CompiledObjects compile_halide_objects(const std::vector<KernelSource>& kernels, const std::string& target,
                                       const std::string& work_dir, int jobs, const std::string& cache_dir,
                                       std::ostream* progress);

}  // namespace aotc
