#include "ir/float_islands.h"

#include <numeric>

#include "ir/printer.h"

namespace aotc {

std::vector<std::vector<std::string>> float_islands(const Graph& g) {
  const size_t n = g.nodes.size();
  const auto computes_float = [&g](const Node& node) {
    return node.op != OpKind::Dequantize && g.tensor(node.outputs[0]).dtype == DType::F32;
  };
  // Forward: tensors computed in float from a dequantized value.
  std::vector<bool> from_dequantize(g.tensors.size(), false);
  for (const Node& node : g.nodes) {
    bool reads = node.op == OpKind::Dequantize;
    for (const TensorId in : node.inputs) reads = reads || from_dequantize[static_cast<size_t>(in)];
    if (reads && (node.op == OpKind::Dequantize || computes_float(node)))
      from_dequantize[static_cast<size_t>(node.outputs[0])] = true;
  }
  // Backward: tensors a quantize reads, directly or through float nodes.
  std::vector<bool> to_quantize(g.tensors.size(), false);
  for (size_t i = n; i-- > 0;) {
    const Node& node = g.nodes[i];
    if (node.op == OpKind::Quantize || (computes_float(node) && to_quantize[static_cast<size_t>(node.outputs[0])]))
      for (const TensorId in : node.inputs) to_quantize[static_cast<size_t>(in)] = true;
  }
  // Island nodes, joined where one reads another's output (union-find over node indices).
  std::vector<size_t> parent(n);
  std::iota(parent.begin(), parent.end(), size_t{0});
  const auto root = [&parent](size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  std::vector<bool> in_island(n, false);
  std::vector<int> island_node_of(g.tensors.size(), -1);
  for (size_t i = 0; i < n; ++i) {
    const Node& node = g.nodes[i];
    const auto out = static_cast<size_t>(node.outputs[0]);
    if (!computes_float(node) || node.op == OpKind::Quantize || !from_dequantize[out] || !to_quantize[out]) continue;
    in_island[i] = true;
    island_node_of[out] = static_cast<int>(i);
    for (const TensorId in : node.inputs)
      if (const int producer = island_node_of[static_cast<size_t>(in)]; producer >= 0)
        parent[root(static_cast<size_t>(producer))] = root(i);
  }
  std::vector<std::vector<std::string>> islands;
  std::vector<int> index_of_root(n, -1);
  for (size_t i = 0; i < n; ++i) {
    if (!in_island[i]) continue;
    int& index = index_of_root[root(i)];
    if (index < 0) {
      index = static_cast<int>(islands.size());
      islands.emplace_back();
    }
    islands[static_cast<size_t>(index)].push_back(g.nodes[i].name + " (" + op_signature(g.nodes[i]) + ")");
  }
  return islands;
}

std::string float_islands_text(const std::vector<std::vector<std::string>>& islands) {
  if (islands.empty()) return "";
  size_t nodes = 0;
  for (const auto& island : islands) nodes += island.size();
  std::string text = "float islands (" + std::to_string(islands.size()) + ", " + std::to_string(nodes) + " nodes):";
  for (size_t i = 0; i < islands.size(); ++i) {
    text += i ? "; " : " ";
    for (size_t j = 0; j < islands[i].size(); ++j) text += (j ? ", " : "") + islands[i][j];
  }
  return text + "\n";
}

}  // namespace aotc
