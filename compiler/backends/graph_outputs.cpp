#include "backends/graph_outputs.h"

namespace aotc {

int first_output_index(const Graph& g, TensorId id) {
  for (size_t i = 0; i < g.outputs.size(); ++i)
    if (g.outputs[i] == id) return static_cast<int>(i);
  return -1;
}

std::vector<size_t> outputs_to_copy(const Graph& g, const std::vector<bool>& computed) {
  std::vector<size_t> copies;
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const TensorId id = g.outputs[i];
    if (!computed[static_cast<size_t>(id)] || first_output_index(g, id) != static_cast<int>(i)) copies.push_back(i);
  }
  return copies;
}

}  // namespace aotc
