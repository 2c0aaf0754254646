#include "passes/eliminate_dead_code.h"

#include "support/error.h"

namespace aotc {
namespace {

// Removes nodes none of whose outputs is needed; returns how many.
int64_t remove_dead_nodes(Graph& g) {
  std::vector<bool> needed(g.tensors.size(), false);
  for (TensorId id : g.outputs) needed[static_cast<size_t>(id)] = true;
  std::vector<bool> live(g.nodes.size(), false);
  // Nodes are in execution order, so one backward sweep sees every consumer
  // before its producers.
  for (size_t n = g.nodes.size(); n-- > 0;) {
    const Node& node = g.nodes[n];
    for (TensorId out : node.outputs) live[n] = live[n] || needed[static_cast<size_t>(out)];
    if (!live[n]) continue;
    for (TensorId in : node.inputs) needed[static_cast<size_t>(in)] = true;
  }
  std::vector<bool> dead(live.size());
  for (size_t n = 0; n < live.size(); ++n) dead[n] = !live[n];
  const size_t before = g.nodes.size();
  erase_nodes(g, dead);
  return static_cast<int64_t>(before - g.nodes.size());
}

// Drops tensors that nothing references (graph inputs are always kept) and
// renumbers the rest in their old order; returns how many were dropped.
int64_t compact_tensors(Graph& g) {
  std::vector<bool> referenced(g.tensors.size(), false);
  auto mark = [&](TensorId id) { referenced[static_cast<size_t>(id)] = true; };
  for (TensorId id : g.inputs) mark(id);
  for (TensorId id : g.outputs) mark(id);
  for (const Node& node : g.nodes) {
    for (TensorId id : node.inputs) mark(id);
    for (TensorId id : node.outputs) mark(id);
  }
  std::vector<TensorId> new_id(g.tensors.size(), kNoTensor);
  std::vector<Tensor> kept;
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    if (!referenced[t]) continue;
    new_id[t] = static_cast<TensorId>(kept.size());
    kept.push_back(std::move(g.tensors[t]));
  }
  const auto removed = static_cast<int64_t>(g.tensors.size() - kept.size());
  g.tensors = std::move(kept);
  auto renumber = [&](std::vector<TensorId>& ids) {
    for (TensorId& id : ids) {
      id = new_id[static_cast<size_t>(id)];
      AOTC_CHECK(id != kNoTensor);
    }
  };
  renumber(g.inputs);
  renumber(g.outputs);
  for (Node& node : g.nodes) {
    renumber(node.inputs);
    renumber(node.outputs);
  }
  return removed;
}

}  // namespace

Graph eliminate_dead_code(Graph g, PassCounters& counters) {
  if (int64_t n = remove_dead_nodes(g)) counters.add("nodes_removed", n);
  if (int64_t n = compact_tensors(g)) counters.add("tensors_removed", n);
  return g;
}

}  // namespace aotc
