#include "passes/simplify_algebra.h"

namespace aotc {

// SCAFFOLD: to be implemented (placeholder returns the graph unchanged).
Graph simplify_algebra(Graph g, PassCounters& /*counters*/) { return g; }

}  // namespace aotc
