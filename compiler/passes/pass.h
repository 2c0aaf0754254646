// The pass interface. A pass is one free function, value in and value out:
//
//   [[nodiscard]] Graph fold_batch_norm(Graph g, PassCounters& counters);
//
// declared in its own header (compiler/passes/<name>.h) with a comment saying
// what it does and what must run before it, and listed once in registry.cpp.
// Counters record what the pass did ("folded", "fused.relu", ...); --stats and
// the report print them.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace aotc {

class PassCounters {
 public:
  void add(const std::string& name, int64_t n = 1);
  int64_t get(const std::string& name) const;  // 0 if never added
  // In the order they were first added.
  const std::vector<std::pair<std::string, int64_t>>& all() const { return counters_; }

 private:
  std::vector<std::pair<std::string, int64_t>> counters_;
};

using PassFn = Graph (*)(Graph, PassCounters&);

struct PassInfo {
  const char* name;     // command-line name, e.g. "fold-batch-norm"
  const char* summary;  // one line for --help
  PassFn run;
};

// Every pass, in the order the default pipeline runs them.
const std::vector<PassInfo>& pass_registry();
// nullptr if there is no pass called `name`.
const PassInfo* find_pass(const std::string& name);

}  // namespace aotc
