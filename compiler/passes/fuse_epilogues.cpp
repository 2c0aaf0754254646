#include "passes/fuse_epilogues.h"

#include <optional>

#include "ir/shape_rules.h"

namespace aotc {
namespace {

// Ops whose generated kernels can apply an epilogue to every value they store.
bool is_anchor(OpKind op) {
  switch (op) {
    case OpKind::Conv2d:
    case OpKind::ConvTranspose2d:
    case OpKind::Linear:
    case OpKind::Add:
    case OpKind::Mul:
    case OpKind::Affine:
    case OpKind::Transpose:
    case OpKind::ResizeBilinear:
    case OpKind::ResizeNearest:
    case OpKind::DepthToSpace: return true;
    default: return false;
  }
}

// An elementwise node seen as a post-op applied to its operand `x`.
struct PostOpForm {
  TensorId x;
  PostOp op;
  std::vector<TensorId> operands;
};

// The producer of `x` if it is an anchor that can take over a post-op on x:
// x has no other reader and is no graph output.
int fusable_producer(const Graph& g, const std::vector<int>& def, const std::vector<int>& uses, TensorId x) {
  const int producer = def[static_cast<size_t>(x)];
  if (producer < 0 || !is_anchor(g.nodes[static_cast<size_t>(producer)].op) || uses[static_cast<size_t>(x)] != 1 ||
      is_graph_output(g, x))
    return -1;
  return producer;
}

// add/mul of x and an operand that broadcasts into x's shape, as x's post-op;
// both are commutative, so either input may be x. A constant operand comes
// first; then a computed one (ResNet's and MobileNetV2's residual adds), fused
// into the producer that runs later, as TVM and XNNPACK do: the kernel adds
// the operand as it stores, saving a kernel and a pass over memory. The
// operand cannot depend on x, whose only reader is this node.
std::optional<PostOpForm> binary_as_post_op(const Graph& g, const Node& node, const std::vector<int>& def,
                                            const std::vector<int>& uses) {
  const PostOpKind kind = node.op == OpKind::Add ? PostOpKind::kAdd : PostOpKind::kMul;
  const std::vector<TensorId>& in = node.inputs;
  auto broadcasts_into = [&](TensorId operand, TensorId x) {
    const Shape& x_shape = g.tensor(x).shape;
    return broadcast_shapes(x_shape, g.tensor(operand).shape, node.name) == x_shape;
  };
  for (size_t c : {size_t{1}, size_t{0}})
    if (g.tensor(in[c]).is_constant() && broadcasts_into(in[c], in[1 - c]))
      return PostOpForm{in[1 - c], {.kind = kind}, {in[c]}};
  std::optional<PostOpForm> form;
  int latest = -1;
  for (size_t c : {size_t{1}, size_t{0}}) {
    const int producer = fusable_producer(g, def, uses, in[1 - c]);
    if (producer > latest && broadcasts_into(in[c], in[1 - c])) {  // (a constant operand returned above)
      latest = producer;
      form = PostOpForm{in[1 - c], {.kind = kind}, {in[c]}};
    }
  }
  return form;
}

std::optional<PostOpForm> as_post_op(const Graph& g, const Node& node, const std::vector<int>& def,
                                     const std::vector<int>& uses) {
  const std::vector<TensorId>& in = node.inputs;
  switch (node.op) {
    case OpKind::Relu: return PostOpForm{in[0], {.kind = PostOpKind::kRelu}, {}};
    case OpKind::HardSwish: return PostOpForm{in[0], {.kind = PostOpKind::kHardSwish}, {}};
    case OpKind::Sigmoid: return PostOpForm{in[0], {.kind = PostOpKind::kSigmoid}, {}};
    case OpKind::Tanh: return PostOpForm{in[0], {.kind = PostOpKind::kTanh}, {}};
    case OpKind::Elu: return PostOpForm{in[0], {.kind = PostOpKind::kElu, .alpha = node.attr<EluAttrs>().alpha}, {}};
    case OpKind::Softplus: return PostOpForm{in[0], {.kind = PostOpKind::kSoftplus}, {}};
    case OpKind::PRelu: return PostOpForm{in[0], {.kind = PostOpKind::kPRelu}, {in[1]}};
    case OpKind::Clamp: {
      const ClampAttrs& a = node.attr<ClampAttrs>();
      return PostOpForm{in[0], {.kind = PostOpKind::kClamp, .min = a.min, .max = a.max}, {}};
    }
    case OpKind::Affine: return PostOpForm{in[0], {.kind = PostOpKind::kAffine}, {in[1], in[2]}};
    case OpKind::Add:
    case OpKind::Mul: return binary_as_post_op(g, node, def, uses);
    default: return std::nullopt;
  }
}

}  // namespace

Graph fuse_epilogues(Graph g, PassCounters& counters) {
  std::vector<int> def = defining_nodes(g);
  const std::vector<int> uses = use_counts(g);
  std::vector<bool> fused_away(g.nodes.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const std::optional<PostOpForm> form = as_post_op(g, g.nodes[i], def, uses);
    if (!form) continue;
    const int producer = fusable_producer(g, def, uses, form->x);
    if (producer < 0) continue;

    const Node elementwise = std::move(g.nodes[i]);
    Node anchor = std::move(g.nodes[static_cast<size_t>(producer)]);
    anchor.append_post_op(form->op, form->operands);
    counters.add(std::string(op_name(anchor.op)) + "+" + post_op_name(form->op.kind));
    for (const PostOp& p : elementwise.epilogue) {
      anchor.append_post_op(p, elementwise.post_op_operands(p));
      counters.add(std::string(op_name(anchor.op)) + "+" + post_op_name(p.kind));
    }
    // Taking over the output keeps the names of graph outputs. The fused node goes
    // to the elementwise node's place, where all the operands it gained are defined.
    anchor.outputs = elementwise.outputs;
    g.nodes[i] = std::move(anchor);
    fused_away[static_cast<size_t>(producer)] = true;
    def[static_cast<size_t>(g.nodes[i].outputs[0])] = static_cast<int>(i);
  }
  erase_nodes(g, fused_away);
  return g;
}

}  // namespace aotc
