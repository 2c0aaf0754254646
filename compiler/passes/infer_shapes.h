// infer-shapes: Checks every node's attributes against its input shapes and sets the shapes of its
// outputs. A declared output shape that disagrees is a UserError naming the node.
// Runs first: every later pass may rely on correct shapes.
#pragma once

#include "passes/pass.h"

namespace aotc {

[[nodiscard]] Graph infer_shapes(Graph g, PassCounters& counters);

}  // namespace aotc
