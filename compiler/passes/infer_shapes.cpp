#include "passes/infer_shapes.h"

#include "ir/shape_rules.h"
#include "support/error.h"

namespace aotc {

Graph infer_shapes(Graph g, PassCounters& counters) {
  // In execution order, so every node sees its inputs' inferred shapes.
  for (const Node& node : g.nodes) {
    const std::vector<Shape> shapes = infer_node_shapes(g, node);
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      Tensor& out = g.tensor(node.outputs[i]);
      // An empty declared shape means "not declared yet".
      if (!out.shape.empty() && out.shape != shapes[i])
        fail(ExitCode::kInvalidModel, "node '", node.name, "' (", op_name(node.op), "): output '", out.name,
             "' is declared as ", to_string(out.shape), " but the op produces ", to_string(shapes[i]));
      out.shape = shapes[i];
      set_element_type(out, infer_element_type(g, node));
    }
    counters.add("nodes");
  }
  return g;
}

}  // namespace aotc
