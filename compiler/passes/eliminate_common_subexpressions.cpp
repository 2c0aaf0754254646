#include "passes/eliminate_common_subexpressions.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <string_view>
#include <unordered_map>

namespace aotc {
namespace {

size_t hash_combine(size_t seed, size_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2));
}

size_t hash_constant(const Tensor& t) {
  size_t h = std::hash<std::string_view>{}(std::string_view(
      reinterpret_cast<const char*>(t.data->data()), t.data->size() * sizeof(float)));
  for (int64_t d : t.shape) h = hash_combine(h, std::hash<int64_t>{}(d));
  return h;
}

// Bitwise equal data: +0 and -0 (or two NaN payloads) are not interchangeable.
bool same_constant(const Tensor& a, const Tensor& b) {
  return same_element_type(a, b) && a.layout == b.layout && a.shape == b.shape &&
         (a.data == b.data ||
          std::memcmp(a.data->data(), b.data->data(), a.data->size() * sizeof(float)) == 0);
}

size_t hash_node(const Node& node) {
  size_t h = std::hash<int>{}(static_cast<int>(node.op));
  for (TensorId in : node.inputs) h = hash_combine(h, std::hash<TensorId>{}(in));
  for (const PostOp& p : node.epilogue) h = hash_combine(h, std::hash<int>{}(static_cast<int>(p.kind)));
  return h;
}

bool same_computation(const Graph& g, const Node& a, const Node& b) {
  if (a.op != b.op || a.attrs != b.attrs || a.inputs != b.inputs || a.epilogue != b.epilogue ||
      a.outputs.size() != b.outputs.size())
    return false;
  for (size_t i = 0; i < a.outputs.size(); ++i) {
    const Tensor& x = g.tensor(a.outputs[i]);
    const Tensor& y = g.tensor(b.outputs[i]);
    if (!same_element_type(x, y) || x.layout != y.layout || x.shape != y.shape) return false;
  }
  return true;
}

// Every reader of `dup`'s outputs reads `kept`'s instead, unless that would
// make graph outputs alias; returns whether it did.
bool forward_outputs(Graph& g, const std::vector<TensorId>& dup, const std::vector<TensorId>& kept) {
  for (size_t i = 0; i < dup.size(); ++i)
    if (!can_forward_uses(g, dup[i], kept[i])) return false;
  for (size_t i = 0; i < dup.size(); ++i) forward_uses(g, dup[i], kept[i]);
  return true;
}

void merge_constants(Graph& g, PassCounters& counters) {
  const std::vector<int> uses = use_counts(g);
  std::unordered_map<size_t, std::vector<TensorId>> seen;
  for (TensorId id = 0; id < static_cast<TensorId>(g.tensors.size()); ++id) {
    const Tensor& t = g.tensor(id);
    if (!t.is_constant() || (uses[static_cast<size_t>(id)] == 0 && !is_graph_output(g, id))) continue;
    std::vector<TensorId>& bucket = seen[hash_constant(t)];
    auto same = std::find_if(bucket.begin(), bucket.end(),
                             [&](TensorId other) { return same_constant(g.tensor(other), t); });
    if (same == bucket.end()) {
      bucket.push_back(id);
    } else if (forward_outputs(g, {id}, {*same})) {
      counters.add("constants_merged");
    }
  }
}

// Nodes are visited in execution order, so the inputs of a node already name
// the merged producers when it is looked at, and the kept node is the earliest.
void merge_nodes(Graph& g, PassCounters& counters) {
  std::unordered_map<size_t, std::vector<size_t>> seen;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    std::vector<size_t>& bucket = seen[hash_node(g.nodes[n])];
    auto same = std::find_if(bucket.begin(), bucket.end(),
                             [&](size_t other) { return same_computation(g, g.nodes[other], g.nodes[n]); });
    if (same == bucket.end()) {
      bucket.push_back(n);
    } else if (forward_outputs(g, g.nodes[n].outputs, g.nodes[*same].outputs)) {
      counters.add("nodes_merged");  // the duplicate is now dead; dce removes it
    }
  }
}

}  // namespace

Graph eliminate_common_subexpressions(Graph g, PassCounters& counters) {
  merge_constants(g, counters);
  merge_nodes(g, counters);
  return g;
}

}  // namespace aotc
