#include "passes/infer_shapes.h"

namespace aotc {

// SCAFFOLD: to be implemented (placeholder returns the graph unchanged).
Graph infer_shapes(Graph g, PassCounters& /*counters*/) { return g; }

}  // namespace aotc
