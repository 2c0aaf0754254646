// Where every backend puts the graph's outputs: a node writes a graph output into
// the caller's buffer of its first listing; every other output buffer is filled by
// a copy after the last node.
#pragma once

#include <vector>

#include "ir/graph.h"

namespace aotc {

// The position of the first listing of `id` among the graph outputs, or -1.
int first_output_index(const Graph& g, TensorId id);

// The graph outputs (by position) that need that copy, given which tensors the
// nodes compute (`computed`, by tensor id): those no node computes (a graph input
// or a constant) and the later listings of a tensor listed more than once.
std::vector<size_t> outputs_to_copy(const Graph& g, const std::vector<bool>& computed);

}  // namespace aotc
