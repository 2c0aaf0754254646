// The reference evaluator: naive, obviously-correct loops for every op and
// post-op of the IR, accumulating in double. It runs any graph, before or after
// passes; it is the oracle that proves passes preserve meaning and (later) the
// differential check for generated code. Speed is not a goal.
#pragma once

#include <vector>

#include "ir/graph.h"

namespace aotc {

struct Value {
  Shape shape;
  std::vector<float> data;  // row-major, num_elements(shape) floats
};

// Evaluates the graph on `inputs` (one per graph input, in order, shapes must
// match) and returns one Value per graph output, in order.
// Throws UserError(kInvalidModel) on a count or shape mismatch.
std::vector<Value> evaluate(const Graph& g, const std::vector<Value>& inputs);

// Evaluates one node (including its epilogue) on explicit input values, one per
// node input. Used by constant folding.
std::vector<Value> evaluate_node(const Graph& g, const Node& node,
                                 const std::vector<const Value*>& inputs);

}  // namespace aotc
