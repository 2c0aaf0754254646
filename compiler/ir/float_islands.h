// The float islands of a quantized graph: the nodes that compute in float32 between a
// dequantize and a quantize (an add, a concat, an average pool... that quantize-ops gave no
// integer form), grouped where they connect. The report and --stats list them, so that
// nothing of a quantized model runs in float unseen (docs/int8.md).
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace aotc {

// Each island's nodes as "name (op)", in execution order; islands in the order of their first node.
std::vector<std::vector<std::string>> float_islands(const Graph& g);

// "float islands (2, 3 nodes): /Add (add); /Concat (concat), /Relu (relu)\n", or "" for none.
std::string float_islands_text(const std::vector<std::vector<std::string>>& islands);

}  // namespace aotc
