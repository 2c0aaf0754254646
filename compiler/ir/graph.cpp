#include "ir/graph.h"

#include <algorithm>
#include <cmath>
#include <queue>
#include <sstream>
#include <unordered_set>
#include <utility>

#include "support/error.h"

namespace aotc {

int64_t num_elements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string to_string(const Shape& shape) {
  std::ostringstream os;
  os << '[';
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? "," : "") << shape[i];
  os << ']';
  return os.str();
}

namespace {
struct DTypeEntry {
  DType dtype;
  const char* name;
  int64_t bytes, min, max;
};
constexpr DTypeEntry kDTypes[] = {
    {DType::F32, "f32", 4, -(int64_t{1} << 24), int64_t{1} << 24},
    {DType::I8, "i8", 1, -128, 127},
    {DType::U8, "u8", 1, 0, 255},
    {DType::I32, "i32", 4, -(int64_t{1} << 31), (int64_t{1} << 31) - 1},
};
const DTypeEntry& dtype_entry(DType dtype) { return kDTypes[static_cast<size_t>(dtype)]; }
}  // namespace

const char* dtype_name(DType dtype) { return dtype_entry(dtype).name; }
int64_t dtype_bytes(DType dtype) { return dtype_entry(dtype).bytes; }
bool is_integer(DType dtype) { return dtype != DType::F32; }
int64_t dtype_min(DType dtype) { return dtype_entry(dtype).min; }
int64_t dtype_max(DType dtype) { return dtype_entry(dtype).max; }

bool dtype_from_name(const std::string& name, DType* dtype) {
  for (const DTypeEntry& e : kDTypes) {
    if (name == e.name) {
      *dtype = e.dtype;
      return true;
    }
  }
  return false;
}

const char* arithmetic_name(Arithmetic a) { return a == Arithmetic::kTflite ? "tflite" : "onnx"; }

bool arithmetic_from_name(const std::string& name, Arithmetic* a) {
  for (const Arithmetic candidate : {Arithmetic::kOnnx, Arithmetic::kTflite}) {
    if (name == arithmetic_name(candidate)) {
      *a = candidate;
      return true;
    }
  }
  return false;
}

bool same_element_type(const Tensor& a, const Tensor& b) {
  if (a.dtype != b.dtype || (a.quant == nullptr) != (b.quant == nullptr)) return false;
  return a.quant == nullptr || *a.quant == *b.quant;
}

void check_element_type(const Tensor& t, const std::string& context) {
  auto error = [&](const auto&... args) {
    fail(ExitCode::kInvalidModel, context, context.empty() ? "" : ": ", "tensor '", t.name, "' (", dtype_name(t.dtype),
         "): ", args...);
  };
  if (!is_integer(t.dtype)) {
    if (t.quant) error("a float tensor has no quantization");
    return;
  }
  if (!t.quant) error("an integer tensor needs a scale and a zero point");
  const Quantization& q = *t.quant;
  size_t channels = 1;
  if (q.axis >= 0) {
    if (static_cast<size_t>(q.axis) >= t.shape.size())
      error("quantization axis ", q.axis, " is not a dimension of ", to_string(t.shape));
    channels = static_cast<size_t>(t.shape[static_cast<size_t>(q.axis)]);
  } else if (q.axis != -1) {
    error("quantization axis ", q.axis, " is neither -1 (per tensor) nor a dimension");
  }
  if (q.scale.size() != channels || q.zero_point.size() != channels)
    error(q.scale.size(), " scales and ", q.zero_point.size(), " zero points, expected ", channels,
          q.axis >= 0 ? detail::concat(" (dimension ", q.axis, " of ", to_string(t.shape), ")") : std::string(" (per tensor)"));
  for (size_t c = 0; c < channels; ++c) {
    if (!(std::isfinite(q.scale[c]) && q.scale[c] > 0)) error("scale ", q.scale[c], " is not finite and positive");
    if (q.zero_point[c] < dtype_min(t.dtype) || q.zero_point[c] > dtype_max(t.dtype))
      error("zero point ", q.zero_point[c], " is outside [", dtype_min(t.dtype), ", ", dtype_max(t.dtype), "]");
  }
  if (!t.data) return;
  // Constants hold integers as floats (graph.h): exact up to 2^24.
  const double lo = static_cast<double>(std::max(dtype_min(t.dtype), dtype_min(DType::F32)));
  const double hi = static_cast<double>(std::min(dtype_max(t.dtype), dtype_max(DType::F32)));
  for (size_t i = 0; i < t.data->size(); ++i) {
    const double v = (*t.data)[i];
    if (!(v >= lo && v <= hi && v == std::floor(v)))
      error("value ", v, " at ", i, " is not an integer in [", static_cast<int64_t>(lo), ", ", static_cast<int64_t>(hi), "]");
  }
}

namespace {
struct OpEntry {
  OpKind op;
  const char* name;
  OpClass op_class;
};
constexpr OpEntry kOps[] = {
#define AOTC_X(e, s, c) {OpKind::e, s, OpClass::c},
    AOTC_OP_KINDS(AOTC_X)
#undef AOTC_X
};
}  // namespace

const char* op_name(OpKind op) { return kOps[static_cast<size_t>(op)].name; }

OpClass op_class(OpKind op) { return kOps[static_cast<size_t>(op)].op_class; }

bool op_from_name(const std::string& name, OpKind* op) {
  for (const auto& e : kOps) {
    if (name == e.name) {
      *op = e.op;
      return true;
    }
  }
  return false;
}

const char* post_op_name(PostOpKind kind) {
  switch (kind) {
    case PostOpKind::kRelu: return "relu";
    case PostOpKind::kClamp: return "clamp";
    case PostOpKind::kHardSwish: return "hardswish";
    case PostOpKind::kSigmoid: return "sigmoid";
    case PostOpKind::kTanh: return "tanh";
    case PostOpKind::kAffine: return "affine";
    case PostOpKind::kAdd: return "add";
    case PostOpKind::kMul: return "mul";
    case PostOpKind::kPRelu: return "prelu";
    case PostOpKind::kElu: return "elu";
    case PostOpKind::kSoftplus: return "softplus";
  }
  return "?";
}

int post_op_operand_count(PostOpKind kind) {
  switch (kind) {
    case PostOpKind::kAffine: return 2;
    case PostOpKind::kAdd:
    case PostOpKind::kMul:
    case PostOpKind::kPRelu: return 1;
    default: return 0;
  }
}

size_t Node::op_operand_count() const {
  size_t epilogue_operands = 0;
  for (const PostOp& p : epilogue) epilogue_operands += static_cast<size_t>(post_op_operand_count(p.kind));
  AOTC_CHECK(epilogue_operands <= inputs.size(), name);
  return inputs.size() - epilogue_operands;
}

void Node::append_post_op(PostOp op, const std::vector<TensorId>& operands) {
  AOTC_CHECK(static_cast<int>(operands.size()) == post_op_operand_count(op.kind), name);
  op.input = operands.empty() ? -1 : static_cast<int>(inputs.size());
  inputs.insert(inputs.end(), operands.begin(), operands.end());
  epilogue.push_back(op);
}

std::vector<TensorId> Node::post_op_operands(const PostOp& p) const {
  const auto count = static_cast<size_t>(post_op_operand_count(p.kind));
  if (count == 0) return {};
  AOTC_CHECK(p.input >= 0 && static_cast<size_t>(p.input) + count <= inputs.size(), name);
  const auto first = inputs.begin() + p.input;
  return {first, first + static_cast<std::ptrdiff_t>(count)};
}

TensorId Graph::add_tensor(Tensor t) {
  tensors.push_back(std::move(t));
  return static_cast<TensorId>(tensors.size() - 1);
}

TensorId Graph::add_constant(std::string name, Shape shape, std::vector<float> data) {
  AOTC_CHECK(static_cast<int64_t>(data.size()) == num_elements(shape), name);
  Tensor t;
  t.name = std::move(name);
  t.shape = std::move(shape);
  t.data = std::make_shared<const std::vector<float>>(std::move(data));
  return add_tensor(std::move(t));
}

std::string Graph::unique_name(const std::string& base) const {
  std::unordered_set<std::string> used;
  for (const Tensor& t : tensors) used.insert(t.name);
  if (!used.count(base)) return base;
  for (int i = 1;; ++i) {
    std::string candidate = base + "." + std::to_string(i);
    if (!used.count(candidate)) return candidate;
  }
}

std::vector<int> defining_nodes(const Graph& g) {
  std::vector<int> def(g.tensors.size(), -1);
  for (size_t n = 0; n < g.nodes.size(); ++n)
    for (TensorId out : g.nodes[n].outputs) def[static_cast<size_t>(out)] = static_cast<int>(n);
  return def;
}

std::vector<int> use_counts(const Graph& g) {
  std::vector<int> uses(g.tensors.size(), 0);
  for (const Node& node : g.nodes)
    for (TensorId in : node.inputs) ++uses[static_cast<size_t>(in)];
  return uses;
}

bool is_graph_output(const Graph& g, TensorId id) {
  return std::find(g.outputs.begin(), g.outputs.end(), id) != g.outputs.end();
}

bool is_graph_input(const Graph& g, TensorId id) {
  return std::find(g.inputs.begin(), g.inputs.end(), id) != g.inputs.end();
}

void replace_all_uses(Graph& g, TensorId from, TensorId to) {
  for (Node& node : g.nodes)
    std::replace(node.inputs.begin(), node.inputs.end(), from, to);
  std::replace(g.outputs.begin(), g.outputs.end(), from, to);
}

bool can_forward_uses(const Graph& g, TensorId from, TensorId to) {
  return !is_graph_output(g, from) || (!is_graph_input(g, to) && !is_graph_output(g, to));
}

void forward_uses(Graph& g, TensorId from, TensorId to) {
  AOTC_CHECK(can_forward_uses(g, from, to), g.tensor(from).name, " -> ", g.tensor(to).name);
  if (is_graph_output(g, from)) std::swap(g.tensor(from).name, g.tensor(to).name);
  replace_all_uses(g, from, to);
}

void erase_nodes(Graph& g, const std::vector<bool>& erase) {
  AOTC_CHECK(erase.size() == g.nodes.size());
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!erase[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
}

bool topological_sort(Graph& g) {
  // Kahn's algorithm, always taking the lowest-index ready node so that an
  // already ordered graph keeps its order.
  const std::vector<int> def = defining_nodes(g);
  const size_t n = g.nodes.size();
  std::vector<int> pending(n, 0);
  std::vector<std::vector<int>> consumers(n);
  for (size_t i = 0; i < n; ++i) {
    for (TensorId in : g.nodes[i].inputs) {
      int producer = def[static_cast<size_t>(in)];
      if (producer < 0) continue;
      ++pending[i];
      consumers[static_cast<size_t>(producer)].push_back(static_cast<int>(i));
    }
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (size_t i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push(static_cast<int>(i));
  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int c : consumers[static_cast<size_t>(i)])
      if (--pending[static_cast<size_t>(c)] == 0) ready.push(c);
  }
  if (order.size() != n) return false;  // a cycle: g is left unchanged
  std::vector<Node> sorted;
  sorted.reserve(n);
  for (int i : order) sorted.push_back(std::move(g.nodes[static_cast<size_t>(i)]));
  g.nodes = std::move(sorted);
  return true;
}

}  // namespace aotc
