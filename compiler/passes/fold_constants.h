// fold-constants: Replaces every node whose inputs are all constants by constant outputs computed
// with the reference evaluator. Needs shapes.
#pragma once

#include "passes/pass.h"

namespace aotc {

[[nodiscard]] Graph fold_constants(Graph g, PassCounters& counters);

}  // namespace aotc
