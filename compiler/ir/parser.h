// Reads the text form written by ir/printer.h back into a Graph, so that pass
// tests can be written as small .air files (see tests/lit/). Constants are given
// inline: `= [1, 2, 3]` (exactly num_elements values), `= splat(0.5)`, or
// `= random(SEED)` (uniform in [-1, 1), deterministic for a seed). Shapes of
// node outputs are checked with infer_node_shapes().
#pragma once

#include <string>

#include "ir/graph.h"

namespace aotc {

// Throws UserError(kInvalidModel) with "file:line:col: message" on bad input.
Graph parse_graph(const std::string& text, const std::string& filename);

}  // namespace aotc
