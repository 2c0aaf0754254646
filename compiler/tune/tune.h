// `aotc --tune`: times every candidate implementation of the graph's groups on
// this machine and remembers the times in a tuning cache.
#pragma once

#include <ostream>
#include <string>

#include "backends/halide/halide_backend.h"
#include "tune/tuning_cache.h"

namespace aotc {

// For every conv2d node of `g` whose description `cache` lacks a time of some
// candidate for (backends/halide/conv_candidates.h, with `options`): JIT-compiles
// each candidate's kernels for `target` (this machine's), runs them on random
// inputs and the node's own weights, checks the output against the reference
// evaluator, and records the median time of one run on one thread in `cache`;
// a candidate taking a tensor in NCHWc gets it converted on the host, and the
// conversions of such tensors are timed both ways (group_plan.h).
// Prints a line per node to `log`. Throws InternalError when a candidate's
// output is wrong (a bug in its kernels).
void tune(const Graph& g, const HalideLoweringOptions& options, const std::string& target, TuningCache& cache,
          std::ostream& log);

}  // namespace aotc
