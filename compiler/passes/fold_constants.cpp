#include "passes/fold_constants.h"

#include <algorithm>
#include <memory>

#include "reference/evaluator.h"
#include "support/error.h"

namespace aotc {
namespace {

bool all_inputs_constant(const Graph& g, const Node& node) {
  return std::all_of(node.inputs.begin(), node.inputs.end(), [&](TensorId id) {
    return g.tensor(id).is_constant() && !is_graph_input(g, id);
  });
}

// Evaluates `node` on its constant inputs and attaches the results to its
// output tensors, which keep their names and shapes.
void fold(Graph& g, const Node& node) {
  std::vector<Value> values;
  values.reserve(node.inputs.size());
  for (TensorId id : node.inputs) values.push_back({g.tensor(id).shape, *g.tensor(id).data});
  std::vector<const Value*> args;
  for (const Value& v : values) args.push_back(&v);
  std::vector<Value> results = evaluate_node(g, node, args);
  AOTC_CHECK(results.size() == node.outputs.size(), node.name);
  for (size_t i = 0; i < results.size(); ++i) {
    Tensor& out = g.tensor(node.outputs[i]);
    AOTC_CHECK(results[i].shape == out.shape, node.name, ": evaluated ", to_string(results[i].shape),
               ", declared ", to_string(out.shape));
    out.data = std::make_shared<const std::vector<float>>(std::move(results[i].data));
  }
}

}  // namespace

Graph fold_constants(Graph g, PassCounters& counters) {
  // In execution order, so a folded result makes its consumers foldable too.
  std::vector<bool> folded(g.nodes.size(), false);
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    const Node& node = g.nodes[n];
    if (node.inputs.empty() || !all_inputs_constant(g, node)) continue;
    fold(g, node);
    folded[n] = true;
    counters.add("nodes_folded");
  }
  // The folded nodes no longer define their outputs: drop them.
  erase_nodes(g, folded);
  return g;
}

}  // namespace aotc
