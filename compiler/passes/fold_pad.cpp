#include "passes/fold_pad.h"

namespace aotc {

// SCAFFOLD: to be implemented (placeholder returns the graph unchanged).
Graph fold_pad(Graph g, PassCounters& /*counters*/) { return g; }

}  // namespace aotc
