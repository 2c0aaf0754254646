#include "passes/quantize_ops.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "ir/shape_rules.h"
#include "reference/evaluator.h"
#include "support/error.h"

namespace aotc {
namespace {

// One walk over the quantize nodes. Each match appends the integer nodes that replace the
// quantize at its position (their inputs are defined earlier), or forwards the quantize's
// readers to an integer tensor that already holds its values (after the walk, which copies
// the nodes it has not reached yet); the float nodes they bypass lose their readers and are
// left to dce.
class QuantizeOps {
 public:
  QuantizeOps(Graph& g, PassCounters& counters)
      : g_(g), counters_(counters), def_(defining_nodes(g)), uses_(use_counts(g)) {}

  void run() {
    std::vector<Node> nodes;
    const std::vector<Node> original = g_.nodes;
    for (const Node& node : original) {
      const size_t before = nodes.size();
      if (node.op == OpKind::Quantize && node.epilogue.empty()) rewrite(node, nodes);
      if (nodes.size() == before) nodes.push_back(node);
    }
    g_.nodes = std::move(nodes);
    for (const auto& [from, to] : forwards_) forward_uses(g_, from, to);
  }

 private:
  // The bare node defining `id`, if `id` is read once (not a graph output) and it is one of `ops`.
  const Node* sole_producer(TensorId id, std::initializer_list<OpKind> ops) const {
    const int n = def_[static_cast<size_t>(id)];
    if (n < 0 || uses_[static_cast<size_t>(id)] != 1 || is_graph_output(g_, id)) return nullptr;
    const Node& p = g_.nodes[static_cast<size_t>(n)];
    if (!p.epilogue.empty() || std::find(ops.begin(), ops.end(), p.op) == ops.end()) return nullptr;
    return &p;
  }

  // The integer tensor a dequantize node makes `id` from (any number of readers).
  std::optional<TensorId> dequantized(TensorId id) const {
    const int n = def_[static_cast<size_t>(id)];
    if (n < 0) return std::nullopt;
    const Node& p = g_.nodes[static_cast<size_t>(n)];
    if (p.op != OpKind::Dequantize || !p.epilogue.empty()) return std::nullopt;
    return p.inputs[0];
  }

  // Replaces `q` by `node` (appended to `nodes`), which writes q's output.
  static void replace(const Node& q, Node node, std::vector<Node>& nodes) {
    node.name = q.name;
    nodes.push_back(std::move(node));
  }

  // The patterns of integer ops with kernels of their own; what none of them takes, a lookup
  // table where it can.
  void rewrite(const Node& q, std::vector<Node>& nodes) {
    if (q.attr<QuantizeAttrs>().quant.axis != -1) return;
    const size_t appended = nodes.size(), forwarded = forwards_.size();
    rewrite_ops(q, nodes);
    if (nodes.size() == appended && forwards_.size() == forwarded) rewrite_lookup(q, nodes);
  }

  void rewrite_ops(const Node& q, std::vector<Node>& nodes) {
    const auto& out = q.attr<QuantizeAttrs>();
    QConv2dAttrs bounds;
    bounds.out = out;
    bounds.min = dtype_min(out.dtype);
    bounds.max = dtype_max(out.dtype);
    TensorId v = q.inputs[0];
    if (const Node* act = sole_producer(v, {OpKind::Relu, OpKind::Clamp})) {
      if (fold_into_qconv2d(q, *act, nodes)) return;
      if (!fold_activation(*act, bounds)) return;
      v = act->inputs[0];
      if (const Node* op = sole_producer(v, {OpKind::Conv2d, OpKind::Linear})) rewrite_conv(q, *op, bounds, nodes);
      if (const Node* op = sole_producer(v, {OpKind::Add})) rewrite_add(q, *op, bounds, nodes);
      return;
    }
    if (const Node* op = sole_producer(v, {OpKind::Conv2d, OpKind::Linear})) return rewrite_conv(q, *op, bounds, nodes);
    if (const Node* op = sole_producer(v, {OpKind::Add})) return rewrite_add(q, *op, bounds, nodes);
    if (const Node* op = sole_producer(v, {OpKind::GlobalAvgPool})) {
      const std::optional<TensorId> x = dequantized(op->inputs[0]);
      if (!x) return;
      if (std::optional<Node> pool = accepted(OpKind::QGlobalAvgPool, out, {*x}, q.outputs[0])) {
        replace(q, std::move(*pool), nodes);
        counters_.add("qglobal_avg_pool");
      }
      return;
    }
    if (const Node* op = sole_producer(v, {OpKind::Reshape, OpKind::Flatten, OpKind::Dropout, OpKind::MaxPool2d})) {
      const std::optional<TensorId> x = dequantized(op->inputs[0]);
      if (!x || !same_quantization(*x, out)) return;
      if (std::optional<Node> integer = accepted(op->op, op->attrs, {*x}, q.outputs[0])) {
        replace(q, std::move(*integer), nodes);
        counters_.add(std::string("integer.") + op_name(op->op));
      }
      return;
    }
    const std::optional<TensorId> x = dequantized(v);
    if (x && same_quantization(*x, out) && can_forward_uses(g_, q.outputs[0], *x)) {
      forwards_.emplace_back(q.outputs[0], *x);
      nodes.push_back(q);  // unread after the walk: dce removes it
      counters_.add("quantize_dequantize");
    }
  }

  // quantize(relu|clamp(dequantize(x))) with x's own parameters, where x is written by a
  // qconv2d of this walk and read only here (PyTorch FX's conv -> ReLU6 of MobileNets): the
  // activation folds into the qconv2d's saturation bounds, exactly (fold_activation), and
  // x takes the quantize's readers.
  bool fold_into_qconv2d(const Node& q, const Node& act, std::vector<Node>& nodes) {
    const Node* dq = sole_producer(act.inputs[0], {OpKind::Dequantize});
    if (dq == nullptr) return false;
    const TensorId x = dq->inputs[0];
    if (!same_quantization(x, q.attr<QuantizeAttrs>()) || uses_[static_cast<size_t>(x)] != 1 ||
        is_graph_output(g_, x) || !can_forward_uses(g_, q.outputs[0], x))
      return false;
    const auto conv = std::find_if(nodes.rbegin(), nodes.rend(), [x](const Node& n) { return n.outputs[0] == x; });
    if (conv == nodes.rend() || conv->op != OpKind::QConv2d || !conv->epilogue.empty()) return false;
    QConv2dAttrs a = conv->attr<QConv2dAttrs>();
    if (!fold_activation(act, a)) return false;
    conv->attrs = a;
    forwards_.emplace_back(q.outputs[0], x);
    nodes.push_back(q);  // unread after the walk: dce removes it
    counters_.add("qconv2d_activation");
    return true;
  }

  bool same_quantization(TensorId x, const QuantizeAttrs& q) const {
    const Tensor& t = g_.tensor(x);
    return t.dtype == q.dtype && t.quant && *t.quant == q.quant;
  }

  // quantize(relu(v)) = max(quantize(v), zero_point) and quantize(clamp(v, lo, hi)) =
  // clamp(quantize(v), quantize(lo), quantize(hi)): quantization is monotonic.
  static bool fold_activation(const Node& act, QConv2dAttrs& a) {
    const float scale = a.out.quant.scale[0];
    const int64_t zero = a.out.quant.zero_point[0];
    const float lo = act.op == OpKind::Relu ? 0.0f : act.attr<ClampAttrs>().min;
    const float hi = act.op == OpKind::Relu ? INFINITY : act.attr<ClampAttrs>().max;
    a.min = std::max(a.min, quantize_value(lo, a.out.dtype, scale, zero, a.out.arithmetic));
    a.max = std::min(a.max, quantize_value(hi, a.out.dtype, scale, zero, a.out.arithmetic));
    return a.min <= a.max;
  }

  // quantize([act](conv2d|linear(dequantize(x), dequantize(w), dequantize(b)?))) -> qconv2d.
  void rewrite_conv(const Node& q, const Node& op, QConv2dAttrs a, std::vector<Node>& nodes) {
    const std::optional<TensorId> x = dequantized(op.inputs[0]);
    const std::optional<TensorId> w = dequantized(op.inputs[1]);
    if (!x || !w || !g_.tensor(*w).is_constant()) return;
    std::vector<TensorId> inputs = {*x, *w};
    if (op.op_operand_count() == 3) {
      const std::optional<TensorId> b = dequantized(op.inputs[2]);
      if (!b || !g_.tensor(*b).is_constant()) return;
      inputs.push_back(*b);
    }
    if (op.op == OpKind::Conv2d) {
      a.conv = op.attr<Conv2dAttrs>();
      if (std::optional<Node> conv = accepted(OpKind::QConv2d, a, inputs, q.outputs[0])) {
        replace(q, std::move(*conv), nodes);
        counters_.add("qconv2d");
      }
      return;
    }
    // linear(x[N,...], w[M,K]) as a 1x1 qconv2d of x[N,K,1,1] and w[M,K,1,1].
    const int64_t n = g_.tensor(*x).shape[0], m = g_.tensor(*w).shape[0], k = g_.tensor(*w).shape[1];
    inputs[1] = reshaped(*w, {m, k, 1, 1}, g_.tensor(*w).name + ".1x1", true);
    inputs[0] = reshaped(*x, {n, k, 1, 1}, q.name + ".input", false);
    const TensorId y4 = reshaped(q.outputs[0], {n, m, 1, 1}, q.name + ".1x1", false);
    // Unaccepted, the tensors made here stay unread: dce removes them.
    std::optional<Node> flatten = accepted(OpKind::Reshape, ReshapeAttrs{{n, k, 1, 1}}, {*x}, inputs[0]);
    std::optional<Node> conv = accepted(OpKind::QConv2d, a, inputs, y4);
    std::optional<Node> reshape = accepted(OpKind::Reshape, ReshapeAttrs{{n, m}}, {y4}, q.outputs[0]);
    if (!flatten || !conv || !reshape) return;
    nodes.push_back(std::move(*flatten));
    nodes.push_back(std::move(*conv));
    replace(q, std::move(*reshape), nodes);
    counters_.add("qlinear");
  }

  // quantize([act](add(dequantize(a), dequantize(b)))) -> qadd where the shape rules accept it
  // (one shape, one integer type, per tensor) and, with ONNX's arithmetic, the kernels compute
  // it exactly (qadd_exact_in_double).
  void rewrite_add(const Node& q, const Node& op, const QConv2dAttrs& bounds, std::vector<Node>& nodes) {
    const std::optional<TensorId> a = dequantized(op.inputs[0]);
    const std::optional<TensorId> b = dequantized(op.inputs[1]);
    if (!a || !b) return;
    const QAddAttrs attrs{bounds.out, bounds.min, bounds.max};
    std::optional<Node> add = accepted(OpKind::QAdd, attrs, {*a, *b}, q.outputs[0]);
    if (!add || (bounds.out.arithmetic == Arithmetic::kOnnx &&
                 !qadd_exact_in_double(
                     qadd_constants(*g_.tensor(*a).quant, *g_.tensor(*b).quant, bounds.out.quant, bounds.out.dtype))))
      return;
    replace(q, std::move(*add), nodes);
    counters_.add("qadd");
  }

  // The bare one-operand elementwise node (relu, sigmoid, hardswish...) defining `id`, read once.
  const Node* sole_unary_producer(TensorId id) const {
    const int n = def_[static_cast<size_t>(id)];
    if (n < 0 || uses_[static_cast<size_t>(id)] != 1 || is_graph_output(g_, id)) return nullptr;
    const Node& p = g_.nodes[static_cast<size_t>(n)];
    const bool unary = op_class(p.op) == OpClass::kElementwise && p.op_operand_count() == 1 && p.inputs.size() == 1;
    return unary && p.epilogue.empty() ? &p : nullptr;
  }

  // quantize(f(dequantize(x))) for a chain f of one-operand elementwise float ops (or none: a
  // requantization), x 8-bit per tensor -> qlookup(x), its table the reference evaluator's
  // result of the same nodes for each of x's 256 values: the float island's values, exactly.
  void rewrite_lookup(const Node& q, std::vector<Node>& nodes) {
    std::vector<const Node*> chain;
    TensorId v = q.inputs[0];
    while (const Node* op = sole_unary_producer(v)) {
      chain.push_back(op);
      v = op->inputs[0];
    }
    const std::optional<TensorId> x = dequantized(v);
    if (!x || g_.tensor(*x).dtype == DType::I32 || g_.tensor(*x).quant->axis != -1) return;
    Graph every_value;
    Tensor input = g_.tensor(*x);
    input.data = nullptr;
    input.shape = {256};
    TensorId t = every_value.add_tensor(std::move(input));
    every_value.inputs = {t};
    t = append_node(every_value, OpKind::Dequantize, NoAttrs{}, {t}, "dequantized", q.name);
    for (auto op = chain.rbegin(); op != chain.rend(); ++op)
      t = append_node(every_value, (*op)->op, (*op)->attrs, {t}, (*op)->name, q.name);
    every_value.outputs = {append_node(every_value, OpKind::Quantize, q.attrs, {t}, q.name, q.name)};
    Value values{{256}, {}};
    for (int64_t i = 0; i < 256; ++i) values.data.push_back(static_cast<float>(dtype_min(g_.tensor(*x).dtype) + i));
    QLookupAttrs lookup{q.attr<QuantizeAttrs>(), {}};
    const std::vector<Value> table = evaluate(every_value, {values});
    for (const float entry : table.at(0).data) lookup.table.push_back(static_cast<int64_t>(entry));
    if (std::optional<Node> node = accepted(OpKind::QLookup, lookup, {*x}, q.outputs[0])) {
      replace(q, std::move(*node), nodes);
      counters_.add("qlookup");
    }
  }

  // A new tensor of `id`'s element type and `shape`, with its data if `constant`.
  TensorId reshaped(TensorId id, Shape shape, const std::string& name, bool constant) {
    Tensor t;
    t.name = g_.unique_name(name);
    t.shape = std::move(shape);
    set_element_type(t, {g_.tensor(id).dtype, g_.tensor(id).quant});
    if (constant) t.data = g_.tensor(id).data;
    return g_.add_tensor(std::move(t));
  }

  // A node of `op` writing `out`, if the shape rules accept it (a weight with too many taps
  // for an int32 accumulator, a bias of another scale...: the pattern then stays in float).
  std::optional<Node> accepted(OpKind op, Attrs attrs, std::vector<TensorId> inputs, TensorId out) const {
    Node node;
    node.name = g_.tensor(out).name;
    node.op = op;
    node.attrs = std::move(attrs);
    node.inputs = std::move(inputs);
    node.outputs = {out};
    try {
      infer_node_shapes(g_, node);
    } catch (const UserError&) {
      return std::nullopt;
    }
    return node;
  }

  Graph& g_;
  PassCounters& counters_;
  const std::vector<int> def_;
  const std::vector<int> uses_;
  std::vector<std::pair<TensorId, TensorId>> forwards_;  // (from, to), applied after the walk
};

}  // namespace

Graph quantize_ops(Graph g, PassCounters& counters) {
  QuantizeOps(g, counters).run();
  return g;
}

}  // namespace aotc
