// The pass pipeline: runs the registered passes in order (or an explicit list),
// with dead-code elimination after each, and records what each pass did.
#pragma once

#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "passes/pass.h"

namespace aotc {

struct PipelineOptions {
  // If set, run exactly these passes in this order instead of the registry's
  // default pipeline (an empty list runs no pass at all).
  bool explicit_passes = false;
  std::vector<std::string> passes;
  std::set<std::string> disabled;     // skipped in the default pipeline
  std::set<std::string> print_after;  // dump the graph after these passes
  bool print_after_all = false;
  std::ostream* dump_stream = nullptr;  // where the dumps go (required if any are asked for)
};

struct PassRecord {
  std::string pass;
  PassCounters counters;
  double seconds = 0;
};

// Throws UserError(kUsage) for an unknown pass name in any option.
[[nodiscard]] Graph run_pipeline(Graph g, const PipelineOptions& options, std::vector<PassRecord>* records);

}  // namespace aotc
