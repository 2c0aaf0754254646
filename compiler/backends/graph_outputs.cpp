#include "backends/graph_outputs.h"

namespace aotc {

int first_output_index(const Graph& g, TensorId id) {
  for (size_t i = 0; i < g.outputs.size(); ++i)
    if (g.outputs[i] == id) return static_cast<int>(i);
  return -1;
}

std::vector<size_t> outputs_to_copy(const Graph& g) {
  std::vector<bool> computed(g.tensors.size(), false);
  for (const Node& node : g.nodes)
    for (TensorId out : node.outputs) computed[static_cast<size_t>(out)] = true;
  std::vector<size_t> copies;
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const TensorId id = g.outputs[i];
    if (!computed[static_cast<size_t>(id)] || first_output_index(g, id) != static_cast<int>(i)) copies.push_back(i);
  }
  return copies;
}

std::vector<TensorInfo> tensor_infos(const Graph& g, const std::vector<TensorId>& ids) {
  std::vector<TensorInfo> infos;
  for (TensorId id : ids) {
    const Tensor& t = g.tensor(id);
    TensorInfo info{t.name, t.shape, t.dtype};
    if (t.quant) {  // per tensor: the backends refuse per-channel graph inputs and outputs
      info.scale = t.quant->scale[0];
      info.zero_point = t.quant->zero_point[0];
    }
    infos.push_back(std::move(info));
  }
  return infos;
}

}  // namespace aotc
