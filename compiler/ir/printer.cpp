#include "ir/printer.h"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <type_traits>
#include <unordered_set>

namespace aotc {
namespace {

bool is_plain_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
         c == '/' || c == '-';
}

std::string ref(const Graph& g, TensorId id) {
  const std::string& name = g.tensor(id).name;
  bool plain = !name.empty();
  for (char c : name) plain = plain && is_plain_name_char(c);
  if (plain) return "%" + name;
  std::string quoted = "%\"";
  for (char c : name) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

std::string number(double v) {
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  if (std::isnan(v)) return "nan";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

template <typename Seq>
std::string list(const Seq& values) {
  std::string s = "[";
  bool first = true;
  for (auto v : values) {
    if (!first) s += ",";
    first = false;
    if constexpr (std::is_floating_point_v<decltype(v)>)
      s += number(v);
    else
      s += std::to_string(v);
  }
  return s + "]";
}

std::string scales_and_zero_points(const Quantization& q) {
  return "scale=" + list(q.scale) + ", zero_point=" + list(q.zero_point);
}

std::string quantization_text(const Quantization& q) {
  return "{" + (q.axis >= 0 ? "axis=" + std::to_string(q.axis) + ", " : std::string()) + scales_and_zero_points(q) +
         "}";
}

}  // namespace

std::string type_text(const Tensor& t) {
  return dtype_name(t.dtype) + to_string(t.shape) + (t.quant ? quantization_text(*t.quant) : "");
}

std::string print_attrs(const Attrs& attrs) {
  struct Visitor {
    std::string operator()(const NoAttrs&) const { return ""; }
    std::string operator()(const Conv2dAttrs& a) const {
      return "{stride=" + list(a.stride) + ", pad=" + list(a.pad) + ", dilation=" + list(a.dilation) +
             ", groups=" + std::to_string(a.groups) + "}";
    }
    std::string operator()(const BatchNormAttrs& a) const { return "{eps=" + number(a.eps) + "}"; }
    std::string operator()(const ClampAttrs& a) const {
      return "{min=" + number(a.min) + ", max=" + number(a.max) + "}";
    }
    std::string operator()(const Pool2dAttrs& a) const {
      return "{kernel=" + list(a.kernel) + ", stride=" + list(a.stride) + ", pad=" + list(a.pad) +
             ", dilation=" + list(a.dilation) + ", ceil_mode=" + (a.ceil_mode ? "true" : "false") +
             ", count_include_pad=" + (a.count_include_pad ? "true" : "false") + "}";
    }
    std::string operator()(const AdaptiveAvgPool2dAttrs& a) const {
      return "{output_size=" + list(a.output_size) + "}";
    }
    std::string operator()(const FlattenAttrs& a) const {
      return "{start_dim=" + std::to_string(a.start_dim) + ", end_dim=" + std::to_string(a.end_dim) + "}";
    }
    std::string operator()(const ReshapeAttrs& a) const { return "{shape=" + list(a.shape) + "}"; }
    std::string operator()(const AxisAttrs& a) const { return "{axis=" + std::to_string(a.axis) + "}"; }
    std::string operator()(const PadAttrs& a) const {
      return "{pads=" + list(a.pads) + ", value=" + number(a.value) + "}";
    }
    std::string operator()(const TransposeAttrs& a) const { return "{perm=" + list(a.perm) + "}"; }
    std::string operator()(const ResizeAttrs& a) const {
      return "{size=" + list(a.size) + ", align_corners=" + (a.align_corners ? "true" : "false") +
             ", half_pixel_centers=" + (a.half_pixel_centers ? "true" : "false") + "}";
    }
    std::string operator()(const ConvTranspose2dAttrs& a) const {
      return "{stride=" + list(a.stride) + ", pad=" + list(a.pad) + "}";
    }
    std::string operator()(const DepthToSpaceAttrs& a) const { return "{block=" + std::to_string(a.block) + "}"; }
    std::string operator()(const EluAttrs& a) const { return "{alpha=" + number(a.alpha) + "}"; }
    std::string operator()(const QuantizeAttrs& a) const {
      return "{dtype=" + std::string(dtype_name(a.dtype)) + ", axis=" + std::to_string(a.quant.axis) + ", " +
             scales_and_zero_points(a.quant) +
             (a.arithmetic == Arithmetic::kOnnx ? "" : ", arithmetic=" + std::string(arithmetic_name(a.arithmetic))) + "}";
    }
    std::string operator()(const QLookupAttrs& a) const {
      const std::string out = (*this)(a.out);
      return out.substr(0, out.size() - 1) + ", table=" + list(a.table) + "}";
    }
    std::string operator()(const QAddAttrs& a) const {
      const std::string out = (*this)(a.out);
      return out.substr(0, out.size() - 1) + ", min=" + std::to_string(a.min) + ", max=" + std::to_string(a.max) + "}";
    }
    // The conv's attributes, the output's type and the saturation bounds, in one block.
    std::string operator()(const QConv2dAttrs& a) const {
      const std::string conv = (*this)(a.conv), out = (*this)(a.out);
      return conv.substr(0, conv.size() - 1) + ", " + out.substr(1, out.size() - 2) + ", min=" + std::to_string(a.min) +
             ", max=" + std::to_string(a.max) + "}";
    }
  };
  return std::visit(Visitor{}, attrs);
}

std::string op_signature(const Node& node) {
  std::string s = op_name(node.op);
  for (const PostOp& p : node.epilogue) s += std::string("+") + post_op_name(p.kind);
  return s;
}

namespace {

std::string post_op_text(const Graph& g, const Node& node, const PostOp& p) {
  std::string s = post_op_name(p.kind);
  if (p.kind == PostOpKind::kClamp) s += "{min=" + number(p.min) + ", max=" + number(p.max) + "}";
  if (p.kind == PostOpKind::kElu) s += "{alpha=" + number(p.alpha) + "}";
  int operands = post_op_operand_count(p.kind);
  if (operands > 0) {
    s += "(";
    for (int i = 0; i < operands; ++i)
      s += (i ? ", " : "") + ref(g, node.inputs[static_cast<size_t>(p.input + i)]);
    s += ")";
  }
  return s;
}

}  // namespace

std::string print_node(const Graph& g, const Node& node) {
  std::string s;
  for (size_t i = 0; i < node.outputs.size(); ++i) s += (i ? ", " : "") + ref(g, node.outputs[i]);
  s += " = ";
  s += op_name(node.op);
  s += "(";
  const size_t operands = node.op_operand_count();
  for (size_t i = 0; i < operands; ++i) s += (i ? ", " : "") + ref(g, node.inputs[i]);
  s += ")";
  const std::string attrs = print_attrs(node.attrs);
  if (!attrs.empty()) s += " " + attrs;
  if (!node.epilogue.empty()) {
    s += " epilogue[";
    for (size_t i = 0; i < node.epilogue.size(); ++i)
      s += (i ? ", " : "") + post_op_text(g, node, node.epilogue[i]);
    s += "]";
  }
  s += ": ";
  if (node.outputs.size() == 1) {
    s += type_text(g.tensor(node.outputs[0]));
  } else {
    s += "(";
    for (size_t i = 0; i < node.outputs.size(); ++i) s += (i ? ", " : "") + type_text(g.tensor(node.outputs[i]));
    s += ")";
  }
  return s;
}

void print_graph(std::ostream& os, const Graph& g) {
  os << "graph " << (g.name.empty() ? "main" : g.name) << " {\n";
  for (TensorId id : g.inputs) os << "  input " << ref(g, id) << ": " << type_text(g.tensor(id)) << "\n";
  std::unordered_set<TensorId> printed;
  auto print_constant = [&](TensorId id) {
    const Tensor& t = g.tensor(id);
    if (!t.is_constant() || !printed.insert(id).second) return;
    os << "  const " << ref(g, id) << ": " << type_text(t);
    if (static_cast<int64_t>(t.data->size()) <= kMaxInlineElements) {
      os << " = [";
      for (size_t i = 0; i < t.data->size(); ++i) os << (i ? ", " : "") << number((*t.data)[i]);
      os << "]";
    }
    os << "\n";
  };
  for (const Node& node : g.nodes)
    for (TensorId in : node.inputs) print_constant(in);
  for (TensorId id : g.outputs) print_constant(id);
  for (const Node& node : g.nodes) os << "  " << print_node(g, node) << "\n";
  for (TensorId id : g.outputs) os << "  output " << ref(g, id) << "\n";
  os << "}\n";
}

std::string print_graph(const Graph& g) {
  std::ostringstream os;
  print_graph(os, g);
  return os.str();
}

}  // namespace aotc
