// cse: Merges constants with identical shape and data, then nodes with the same op,
// attributes, epilogue and inputs, keeping the first in execution order.
#pragma once

#include "passes/pass.h"

namespace aotc {

[[nodiscard]] Graph eliminate_common_subexpressions(Graph g, PassCounters& counters);

}  // namespace aotc
