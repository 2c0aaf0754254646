#include "passes/eliminate_dead_code.h"

namespace aotc {

// SCAFFOLD: to be implemented (placeholder returns the graph unchanged).
Graph eliminate_dead_code(Graph g, PassCounters& /*counters*/) { return g; }

}  // namespace aotc
