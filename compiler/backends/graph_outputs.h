// What every backend does with the graph's interface: it names the inputs and
// outputs as the graph does, and a node writes a graph output into the caller's
// buffer of its first listing; every other output buffer is filled by a copy after
// the last node.
#pragma once

#include <vector>

#include "backends/lowered_model.h"
#include "ir/graph.h"

namespace aotc {

// The position of the first listing of `id` among the graph outputs, or -1.
int first_output_index(const Graph& g, TensorId id);

// The graph outputs (by position) that need that copy: those no node computes (a
// graph input or a constant) and the later listings of a tensor listed more than once.
std::vector<size_t> outputs_to_copy(const Graph& g);

// Names and shapes of `ids` (the graph's inputs or outputs), in order.
std::vector<TensorInfo> tensor_infos(const Graph& g, const std::vector<TensorId>& ids);

}  // namespace aotc
