// What a backend makes of an optimised graph, and what the packager turns into
// a library: the kernels to compile (each distinct one once), the calls the
// generated runner makes in execution order, and the constant-data blob holding
// the pre-packed weights. No Halide types here: the packager does not need them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace aotc {

// Where a kernel argument's bytes are at run time.
struct BufferRef {
  enum class Source { kArena, kInput, kOutput, kWeights };
  Source source = Source::kArena;
  int64_t offset = 0;  // bytes into the arena or the weights blob
  int index = 0;       // which graph input / output (kInput, kOutput)
  Shape shape;         // the dense row-major shape the kernel sees, outermost first
  DType dtype = DType::F32;  // its elements
};

// One distinct kernel. `compile` writes an object file defining `function`
// (int function(void* user_context, halide_buffer_t*... args)) and its argv
// entry point `function`_argv (int (void** args), which the runner calls) for `target`,
// copied from the kernel cache in `cache_dir` when that holds it (empty: no
// cache; backends/halide/kernel_cache.h).
struct KernelSource {
  struct Compiled {
    std::string schedule;  // a one-line description of the schedule it chose
    bool from_cache = false;
  };
  std::string function;
  std::string description;  // op and shapes, e.g. "conv2d+relu 1x64x56x56 -> 1x64x56x56 k3x3 s1"
  std::function<Compiled(const std::string& target, const std::string& object_path, const std::string& cache_dir)>
      compile;
};

// One call of a kernel by the runner.
struct KernelCall {
  std::string layer;  // the output tensor's name, for timing and messages
  std::string ops;    // "conv2d+relu"
  int kernel = 0;     // index into LoweredModel::kernels
  std::vector<BufferRef> args;  // inputs in the kernel's order, then the output
  double flops = 0;
  int64_t bytes = 0;  // bytes read and written by the call
};

// Which implementation a node runs among the candidates, and why
// (backends/halide/candidates.h).
struct ChoiceRecord {
  struct Option {
    std::string name;
    double measured_us;   // from the tuning cache; NaN without
    double predicted_us;  // by the cost model; NaN without
  };
  std::string node;         // its output tensor's name
  std::string description;  // the tuning cache's key
  std::string chosen;
  std::string by;     // "tuning cache", "cost model", "rules", "only candidate"
  std::string rules;  // what the rules would choose
  std::string fastest_alone;  // the fastest by itself, ignoring the layout conversions it would cause
  std::vector<std::string> conversions;  // the layout conversions the chosen one makes
  std::vector<Option> candidates;
};

// The plan over the whole chain (backends/halide/group_plan.h), in µs of one
// run on one thread, summed over the groups whose every candidate has a time
// (measured by the tuning cache or predicted by the cost model).
struct PlanTotals {
  int groups = 0;  // groups with candidates
  int costed = 0;  // of which every candidate has a time
  double chosen_us = 0;         // the plan's choices, with the layout conversions they cost
  double all_direct_us = 0;     // every group a direct convolution in NCHW
  double fastest_alone_us = 0;  // each group's fastest candidate, conversions ignored
};

struct TensorInfo {
  std::string name;
  Shape shape;
  DType dtype = DType::F32;
  float scale = 0;  // an integer tensor's quantization (per tensor)
  int64_t zero_point = 0;
};

struct LoweredModel {
  std::string name;
  std::vector<TensorInfo> inputs, outputs;
  std::vector<KernelSource> kernels;
  std::vector<KernelCall> calls;
  std::vector<ChoiceRecord> choices;  // per node with candidates, in execution order
  PlanTotals plan;
  std::vector<uint8_t> weights;  // pre-packed constants; every entry 64-byte aligned
  int64_t arena_bytes = 0;
  int64_t lower_bound_bytes = 0;  // the memory plan's liveness lower bound
  // The nodes computing in float between a dequantize and a quantize (ir/float_islands.h).
  std::vector<std::vector<std::string>> float_islands;
};

// What every object of a target's library is: ELF class (32 or 64) and e_machine.
struct ObjectFormat {
  int elf_class = 64;
  int machine = 0;
  std::string name;  // "x86-64", "AArch64", "32-bit ARM"
};

}  // namespace aotc
