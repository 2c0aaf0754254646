// The Halide backend's plan over the whole chain: every convolution's
// candidates (conv_candidates.h), with their costs and the layouts they read
// and write, chosen together by the dynamic program of plan/choose_layouts.h,
// which counts the layout conversions between neighbours. Each planned node
// keeps its choice and the candidate it runs: the chosen one with the
// conversions it owes (reading a tensor stored in another layout, or writing
// an output whose consumers need another) as kernel steps of its own through
// its scratch.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "backends/halide/candidates.h"
#include "backends/halide/halide_backend.h"

namespace aotc {

struct PlannedGroup {
  Choice choice;  // candidates, their costs, the chosen one
  Candidate run;  // the chosen candidate with its conversion steps
  // The candidate each would choose alone, ignoring the conversions it causes.
  size_t fastest_alone = 0;
  std::vector<std::string> conversions;  // "input nchw -> nchw16c", for the report
};

struct GroupPlan {
  std::map<size_t, PlannedGroup> groups;  // by step, for every node with candidates
  PlanTotals totals;
};

// Where a conversion of tensor `shape` between layouts is timed in the tuning
// cache (under kConversionCandidate), and what the cost model predicts for it.
std::string conversion_description(const Shape& shape, Layout from, Layout to, int block);
constexpr const char* kConversionCandidate = "transpose";
double predicted_conversion_us(const Shape& shape);

// The kernel step converting a tensor of logical `shape` from layout `from`
// (read through `in`) to `to` (written through `out`), blocks of `block`.
KernelStep conversion_step(const Shape& shape, Layout from, Layout to, int block, StepArg in, StepArg out);

GroupPlan plan_groups(const Graph& g, const HalideLoweringOptions& options);

}  // namespace aotc
