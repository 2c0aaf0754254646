#include "passes/eliminate_common_subexpressions.h"

namespace aotc {

// SCAFFOLD: to be implemented (placeholder returns the graph unchanged).
Graph eliminate_common_subexpressions(Graph g, PassCounters& /*counters*/) { return g; }

}  // namespace aotc
