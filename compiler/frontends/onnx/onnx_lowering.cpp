#include "frontends/onnx/onnx_lowering.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <utility>
#include <vector>

#include "frontends/onnx/onnx_resize.h"
#include "frontends/onnx/onnx_tensors.h"
#include "ir/printer.h"
#include "ir/shape_rules.h"
#include "reference/evaluator.h"
#include "support/error.h"

namespace aotc::onnx_frontend {
namespace {

using onnx::NodeProto;
using onnx::TensorProto;

// A Gather of a run-time tensor becomes one crop per index; more than this many
// would be a lookup table, which aotc has no op for.
constexpr size_t kMaxGatheredIndices = 256;
// A strided slice splits a dim in two; the backends handle rank 6 at most.
constexpr size_t kMaxStridedRank = 5;
// A Resize's output extents, and the [out, in] sampling matrix of an axis the
// IR's resizes do not sample alike (2048 x 2048 at most).
constexpr int64_t kMaxResizedExtent = int64_t{1} << 20;
constexpr int64_t kMaxSamplingMatrix = int64_t{1} << 22;

// A named value of the ONNX graph: an IR tensor, or a constant known at
// compile time (made an IR constant when an IR node reads it).
struct Value {
  TensorId id = kNoTensor;
  std::shared_ptr<const ConstantValue> constant;
  // For a constant that a DequantizeLinear computed from integers (a quantized weight or
  // bias): those integers as an IR constant, which an IR node reading the value reads
  // through an IR dequantize (so that quantize-ops sees the quantized weight).
  std::shared_ptr<const Tensor> quantized;
};

// The IR dtype of ONNX's quantized element types (nullopt for the others).
std::optional<DType> quantized_dtype(int32_t elem_type) {
  switch (elem_type) {
    case TensorProto::UINT8: return DType::U8;
    case TensorProto::INT8: return DType::I8;
    case TensorProto::INT32: return DType::I32;
    default: return std::nullopt;
  }
}

int64_t product(const Shape& shape, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= shape[i];
  return p;
}

// Row-major strides of `shape`.
std::vector<int64_t> strides(const Shape& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

// The flat index into an operand of shape `operand` (right-aligned, NumPy
// broadcasting) of the output element at `index` of `out`.
int64_t broadcast_index(const std::vector<int64_t>& index, const Shape& out, const Shape& operand) {
  const size_t skip = out.size() - operand.size();
  int64_t flat = 0;
  for (size_t d = 0; d < operand.size(); ++d) flat = flat * operand[d] + (operand[d] == 1 ? 0 : index[skip + d]);
  return flat;
}

// Visits every index of `shape` in row-major order.
void for_each_index(const Shape& shape, const std::function<void(const std::vector<int64_t>&)>& f) {
  const int64_t n = num_elements(shape);
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    f(index);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

// A value rounded to what an element of `type` holds.
double to_type(double v, int32_t type) {
  switch (type) {
    case TensorProto::FLOAT: return static_cast<float>(v);
    case TensorProto::DOUBLE: return v;
    case TensorProto::BOOL: return v != 0 ? 1 : 0;
    default: return std::isfinite(v) ? std::trunc(v) : 0;  // integer types: ONNX's Cast truncates
  }
}

class Lowering;
using Handler = void (Lowering::*)(const NodeProto&);

class Lowering {
 public:
  Lowering(const onnx::ModelProto& model, int opset, const std::string& path)
      : graph_(model.graph()), opset_(opset), path_(path), ref_(path) {}

  Graph run();

  static const std::map<std::string, Handler>& handlers();

 private:
  // ---- Messages ---------------------------------------------------------------

  template <typename... Args>
  [[noreturn]] void invalid(const Args&... args) const {
    fail(ExitCode::kInvalidModel, ref_, ": ", args...);
  }
  template <typename... Args>
  [[noreturn]] void unsupported(const Args&... args) const {
    fail(ExitCode::kUnsupported, ref_, ": ", args...);
  }

  // ---- Attributes ---------------------------------------------------------------

  const onnx::AttributeProto* attribute(const NodeProto& node, const std::string& name) const {
    for (const onnx::AttributeProto& a : node.attribute())
      if (a.name() == name) return &a;
    return nullptr;
  }
  int64_t attr_int(const NodeProto& node, const std::string& name, int64_t fallback) const {
    const onnx::AttributeProto* a = attribute(node, name);
    return a ? a->i() : fallback;
  }
  float attr_float(const NodeProto& node, const std::string& name, float fallback) const {
    const onnx::AttributeProto* a = attribute(node, name);
    return a ? a->f() : fallback;
  }
  std::string attr_string(const NodeProto& node, const std::string& name, const std::string& fallback) const {
    const onnx::AttributeProto* a = attribute(node, name);
    return a ? a->s() : fallback;
  }
  std::vector<int64_t> attr_ints(const NodeProto& node, const std::string& name,
                                 std::vector<int64_t> fallback = {}) const {
    const onnx::AttributeProto* a = attribute(node, name);
    return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : fallback;
  }
  std::vector<float> attr_floats(const NodeProto& node, const std::string& name) const {
    const onnx::AttributeProto* a = attribute(node, name);
    return a ? std::vector<float>(a->floats().begin(), a->floats().end()) : std::vector<float>{};
  }
  // An int attribute that must have one value.
  void require_attr(const NodeProto& node, const std::string& name, int64_t expected, const char* why) const {
    const int64_t v = attr_int(node, name, expected);
    if (v != expected) unsupported("attribute ", name, "=", v, " (", why, ")");
  }

  // ---- Values -------------------------------------------------------------------

  bool has_input(const NodeProto& node, int k) const { return k < node.input_size() && !node.input(k).empty(); }

  const Value& value(const std::string& name) const {
    const auto it = values_.find(name);
    if (it == values_.end()) invalid("input '", name, "' is not defined before this node");
    return it->second;
  }
  const Value& input(const NodeProto& node, int k) const {
    if (!has_input(node, k)) invalid("input ", k, " is missing");
    return value(node.input(k));
  }
  bool is_constant(const NodeProto& node, int k) const { return input(node, k).constant != nullptr; }

  Shape shape_of(const Value& v) const { return v.constant ? v.constant->shape : g_.tensor(v.id).shape; }
  Shape input_shape(const NodeProto& node, int k) const { return shape_of(input(node, k)); }

  const ConstantValue& constant(const NodeProto& node, int k, const char* what) const {
    const Value& v = input(node, k);
    if (!v.constant)
      unsupported(what, " '", node.input(k), "' is computed at run time; aotc needs it constant (a graph input can "
                  "be made one with --constant NAME=FILE.pb)");
    return *v.constant;
  }
  std::vector<int64_t> constant_ints(const NodeProto& node, int k, const char* what) const {
    const ConstantValue& c = constant(node, k, what);
    // Saturated: exporters write INT64_MAX as "to the end" (a Slice's ends), which the
    // double the value is held in rounds up past what an int64 holds.
    constexpr double kLimit = 9223372036854775807.0;  // 2^63
    std::vector<int64_t> out;
    for (const double v : c.values)
      out.push_back(v >= kLimit ? INT64_MAX : v <= -kLimit ? INT64_MIN : static_cast<int64_t>(v));
    return out;
  }
  float constant_scalar(const NodeProto& node, int k, const char* what) const {
    const ConstantValue& c = constant(node, k, what);
    if (c.values.size() != 1) unsupported(what, " '", node.input(k), "' must hold one value, holds ", c.values.size());
    return static_cast<float>(c.values[0]);
  }

  // The IR tensor of a value, made an IR constant the first time a node reads it.
  TensorId tensor(const std::string& name) {
    Value& v = values_.at(name);
    if (v.id != kNoTensor && is_integer(g_.tensor(v.id).dtype))
      unsupported("'", name, "' (", dtype_name(g_.tensor(v.id).dtype), ") is read by an operator aotc computes in "
                  "float32 only; an integer tensor is read by DequantizeLinear, QLinearConv and QLinearMatMul only");
    if (v.id != kNoTensor) return v.id;
    if (v.quantized) {
      Tensor integers = *v.quantized;
      integers.name = g_.unique_name(name + ".quantized");
      v.id = emit(OpKind::Dequantize, NoAttrs{}, {g_.add_tensor(std::move(integers))}, name);
      return v.id;
    }
    if (!is_float_type(v.constant->elem_type))
      unsupported("'", name, "' (", elem_type_name(v.constant->elem_type),
                  ") is read by an operator aotc computes at run time, in float32 only");
    std::vector<float> data(v.constant->values.begin(), v.constant->values.end());
    v.id = g_.add_constant(g_.unique_name(name), v.constant->shape, std::move(data));
    return v.id;
  }
  TensorId tensor(const NodeProto& node, int k) {
    input(node, k);
    return tensor(node.input(k));
  }
  TensorId scalar_constant(const std::string& name, float v) { return g_.add_constant(g_.unique_name(name), {1}, {v}); }
  // -x as x * -1: negation is exact.
  TensorId negate(TensorId x, const std::string& name) {
    return emit(OpKind::Mul, NoAttrs{}, {x, scalar_constant(name + ".minus_one", -1.0f)}, name);
  }

  // Appends one node; its output's shape comes from the IR's shape rules.
  TensorId emit(OpKind op, Attrs attrs, std::vector<TensorId> inputs, const std::string& name) {
    return append_node(g_, op, std::move(attrs), std::move(inputs), name, ref_);
  }
  TensorId reshape(TensorId x, const Shape& shape, const std::string& name) {
    if (g_.tensor(x).shape == shape) return x;
    return emit(OpKind::Reshape, ReshapeAttrs{shape}, {x}, name);
  }
  // Elements `indices` (in range, at most kMaxGatheredIndices) of x along `axis`, in
  // that order: a crop of extent 1 per index (a pad node with negative pads),
  // concatenated along `axis`.
  TensorId gather_crops(TensorId x, size_t axis, const std::vector<int64_t>& indices, const std::string& name) {
    const Shape in = g_.tensor(x).shape;
    std::vector<TensorId> rows;
    for (const int64_t i : indices) {
      PadAttrs crop;
      crop.pads.assign(2 * in.size(), 0);
      crop.pads[axis] = -i;
      crop.pads[in.size() + axis] = -(in[axis] - i - 1);
      rows.push_back(emit(OpKind::Pad, crop, {x}, indices.size() == 1 ? name : name + ".row" + std::to_string(rows.size())));
    }
    return rows.size() == 1 ? rows[0] : emit(OpKind::Concat, AxisAttrs{static_cast<int>(axis)}, rows, name);
  }

  // Output k of `node` is the IR tensor `id`; its shape must be the one ONNX inferred.
  void define(const NodeProto& node, int k, TensorId id) {
    const std::string& name = node.output(k);
    const auto inferred = inferred_.find(name);
    if (inferred != inferred_.end() && inferred->second != g_.tensor(id).shape)
      unsupported("output '", name, "': aotc computes the shape ", to_string(g_.tensor(id).shape), ", ONNX infers ",
                  to_string(inferred->second), " (semantics aotc does not match)");
    values_[name] = Value{id, nullptr, nullptr};
  }
  void define(const NodeProto& node, int k, ConstantValue c) {
    values_[node.output(k)] = Value{kNoTensor, std::make_shared<const ConstantValue>(std::move(c)), nullptr};
  }
  void alias(const NodeProto& node, int k, const Value& v) { values_[node.output(k)] = v; }

  // Outputs past the first must be unused (e.g. MaxPool's indices, Dropout's mask).
  void only_first_output(const NodeProto& node) const {
    for (int k = 1; k < node.output_size(); ++k)
      if (!node.output(k).empty() && used_.count(node.output(k)))
        unsupported("output ", k, " ('", node.output(k), "') is used; aotc computes only the first output");
  }

  int normalized_axis(int64_t axis, size_t rank) const {
    const auto r = static_cast<int64_t>(rank);
    if (axis < -r || axis >= r) invalid("axis ", axis, " is out of range for rank ", rank);
    return static_cast<int>(axis < 0 ? axis + r : axis);
  }

  // ---- Constant folding (shape arithmetic) ----------------------------------------

  bool all_constant(const NodeProto& node) const {
    for (int k = 0; k < node.input_size(); ++k)
      if (has_input(node, k) && !is_constant(node, k)) return false;
    return true;
  }

  // Values folded at compile time are shape arithmetic and small constants:
  // a larger one (2^24 elements) comes from a hostile file, not a CNN.
  void check_folded_size(const Shape& shape) const {
    int64_t n = 1;
    for (const int64_t d : shape) {
      if (d < 0) invalid("negative dim ", d);
      if (d > 0 && n > (int64_t{1} << 24) / d) unsupported("a constant of shape ", to_string(shape), " to fold");
      n *= d;
    }
  }

  ConstantValue fold_binary(const NodeProto& node, const std::function<double(double, double)>& f, int32_t out_type) {
    const ConstantValue& a = constant(node, 0, "operand");
    const ConstantValue& b = constant(node, 1, "operand");
    ConstantValue out;
    out.elem_type = out_type;
    out.shape = broadcast_shapes(a.shape, b.shape, ref_);
    check_folded_size(out.shape);
    for_each_index(out.shape, [&](const std::vector<int64_t>& index) {
      const double x = a.values[static_cast<size_t>(broadcast_index(index, out.shape, a.shape))];
      const double y = b.values[static_cast<size_t>(broadcast_index(index, out.shape, b.shape))];
      out.values.push_back(to_type(f(x, y), out_type));
    });
    return out;
  }

  static ConstantValue reshaped(ConstantValue c, Shape shape) {
    c.shape = std::move(shape);
    return c;
  }

  // Reshape's target: 0 copies the input's dim (unless allowzero), -1 is inferred.
  Shape resolve_reshape(const Shape& in, const std::vector<int64_t>& spec, bool allow_zero) const {
    Shape out;
    int infer = -1;
    for (size_t i = 0; i < spec.size(); ++i) {
      int64_t d = spec[i];
      if (d == 0 && !allow_zero) {
        if (i >= in.size()) invalid("shape entry ", i, " is 0 but the input has rank ", in.size());
        d = in[i];
      } else if (d == -1) {
        if (infer >= 0) invalid("shape ", to_string(Shape(spec.begin(), spec.end())), " has two -1 entries");
        infer = static_cast<int>(i);
        d = 1;
      } else if (d < 0) {
        invalid("shape entry ", d, " is negative");
      }
      out.push_back(d);
    }
    const int64_t known = product(out, 0, out.size());
    if (infer >= 0) {
      if (known == 0 || num_elements(in) % known != 0)
        invalid("cannot reshape ", to_string(in), " to ", to_string(Shape(spec.begin(), spec.end())));
      out[static_cast<size_t>(infer)] = num_elements(in) / known;
    }
    if (num_elements(out) != num_elements(in)) invalid("cannot reshape ", to_string(in), " to ", to_string(out));
    return out;
  }

  // An op whose output is its input reshaped (Reshape, Flatten, Squeeze, Unsqueeze).
  void lower_as_reshape(const NodeProto& node, const Shape& out) {
    const Value& x = input(node, 0);
    if (x.constant) return define(node, 0, reshaped(*x.constant, out));
    define(node, 0, reshape(x.id, out, node.output(0)));
  }

  // ---- Operators ------------------------------------------------------------------

  // Pads [top, left, bottom, right] of a 2-D window op, from pads or auto_pad.
  std::array<int, 4> window_pads(const NodeProto& node, const Shape& in, const std::array<int64_t, 2>& kernel,
                                 const std::array<int, 2>& stride, const std::array<int, 2>& dilation) const {
    const std::string auto_pad = attr_string(node, "auto_pad", "NOTSET");
    if (auto_pad == "NOTSET") {
      const std::vector<int64_t> pads = attr_ints(node, "pads", {0, 0, 0, 0});
      if (pads.size() != 4) invalid("pads has ", pads.size(), " values, expected 4");
      for (const int64_t p : pads)
        if (p < 0) unsupported("negative pads");
      return {static_cast<int>(pads[0]), static_cast<int>(pads[1]), static_cast<int>(pads[2]),
              static_cast<int>(pads[3])};
    }
    if (auto_pad == "VALID") return {0, 0, 0, 0};
    if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") invalid("auto_pad '", auto_pad, "'");
    std::array<int, 4> pads{};
    for (int d = 0; d < 2; ++d) {
      const int64_t size = in[static_cast<size_t>(2 + d)];
      const int64_t out = (size + stride[d] - 1) / stride[d];
      const int64_t extent = int64_t{dilation[d]} * (kernel[d] - 1) + 1;
      const int64_t total = std::max<int64_t>((out - 1) * stride[d] + extent - size, 0);
      const int64_t small = total / 2, large = total - small;
      pads[d] = static_cast<int>(auto_pad == "SAME_UPPER" ? small : large);
      pads[d + 2] = static_cast<int>(auto_pad == "SAME_UPPER" ? large : small);
    }
    return pads;
  }

  std::array<int, 2> pair_attr(const NodeProto& node, const std::string& name) const {
    const std::vector<int64_t> v = attr_ints(node, name, {1, 1});
    if (v.size() != 2) unsupported(name, " has ", v.size(), " values; aotc lowers 2-D windows");
    if (v[0] < 1 || v[1] < 1) invalid(name, " must be positive");
    return {static_cast<int>(v[0]), static_cast<int>(v[1])};
  }

  void require_image(const NodeProto& node, const Shape& shape) const {
    if (shape.size() != 4)
      unsupported("input '", node.input(0), "' has shape ", to_string(shape),
                  "; aotc lowers the 2-D form of this operator (4-D NCHW input)");
  }

  // A 1-D Conv, ConvTranspose, MaxPool or AveragePool (input [N, C, L]) as the
  // 2-D one over [N, C, 1, L]: the window attributes get a leading 1 (pads and
  // output_padding a 0), the weight a kernel row, and the output is viewed back.
  // Returns false for other ranks, which the 2-D lowering then judges.
  using LowerFn = void (Lowering::*)(const NodeProto&);
  bool lowered_as_2d(const NodeProto& node, LowerFn lower) {
    const Shape in = input_shape(node, 0);
    if (in.size() != 3) return false;
    NodeProto lifted = node;
    lifted.set_input(0, node.input(0) + ".as_2d");
    values_[lifted.input(0)] = Value{reshape(tensor(node, 0), {in[0], in[1], 1, in[2]}, lifted.input(0)), nullptr, nullptr};
    if (node.op_type() == "Conv" || node.op_type() == "ConvTranspose") {
      ConstantValue w = constant(node, 1, "weight");
      if (w.shape.size() != 3) invalid("weight has shape ", to_string(w.shape), " for a 1-D input");
      w.shape.insert(w.shape.begin() + 2, 1);
      lifted.set_input(1, node.input(1) + ".as_2d");
      values_[lifted.input(1)] = Value{kNoTensor, std::make_shared<const ConstantValue>(std::move(w)), nullptr};
    }
    for (onnx::AttributeProto& a : *lifted.mutable_attribute()) {
      const std::string& name = a.name();
      if (name != "kernel_shape" && name != "strides" && name != "dilations" && name != "pads" &&
          name != "output_padding" && name != "output_shape")
        continue;
      std::vector<int64_t> v(a.ints().begin(), a.ints().end());
      const int64_t fill = name == "pads" || name == "output_padding" ? 0 : 1;
      if (name == "pads" && v.size() == 2) v = {0, v[0], 0, v[1]};
      else if (v.size() == 1) v.insert(v.begin(), fill);
      a.clear_ints();
      for (const int64_t x : v) a.add_ints(x);
    }
    lifted.set_output(0, node.output(0) + ".as_2d");
    (this->*lower)(lifted);
    const Shape y = shape_of(value(lifted.output(0)));
    define(node, 0, reshape(tensor(lifted.output(0)), {y[0], y[1], y[3]}, node.output(0)));
    return true;
  }

  // A convolution's data, constant weight and optional constant bias.
  std::vector<TensorId> conv_inputs(const NodeProto& node) {
    std::vector<TensorId> inputs = {tensor(node, 0), tensor(node, 1)};
    if (has_input(node, 2)) {
      constant(node, 2, "bias");
      inputs.push_back(tensor(node, 2));
    }
    return inputs;
  }

  void lower_Conv(const NodeProto& node) {
    if (lowered_as_2d(node, &Lowering::lower_Conv)) return;
    const Shape in = input_shape(node, 0);
    require_image(node, in);
    const ConstantValue& w = constant(node, 1, "weight");
    if (w.shape.size() != 4) invalid("weight has shape ", to_string(w.shape));
    const std::array<int, 2> stride = pair_attr(node, "strides"), dilation = pair_attr(node, "dilations");
    Conv2dAttrs a;
    a.stride = stride;
    a.dilation = dilation;
    a.groups = static_cast<int>(attr_int(node, "group", 1));
    a.pad = window_pads(node, in, {w.shape[2], w.shape[3]}, stride, dilation);
    const std::vector<TensorId> inputs = conv_inputs(node);
    define(node, 0, emit(OpKind::Conv2d, a, inputs, node.output(0)));
  }

  void lower_ConvTranspose(const NodeProto& node) {
    if (lowered_as_2d(node, &Lowering::lower_ConvTranspose)) return;
    const Shape in = input_shape(node, 0);
    require_image(node, in);
    const ConstantValue& w = constant(node, 1, "weight");
    if (w.shape.size() != 4) invalid("weight has shape ", to_string(w.shape));
    require_attr(node, "group", 1, "aotc's transposed convolution has one group");
    // A dilated kernel is the kernel with dilation - 1 zeros between its taps.
    const std::array<int, 2> dilation = pair_attr(node, "dilations");
    const Shape kernel{(w.shape[2] - 1) * dilation[0] + 1, (w.shape[3] - 1) * dilation[1] + 1};
    std::vector<TensorId> inputs = conv_inputs(node);
    if (dilation != std::array<int, 2>{1, 1}) {
      const Shape dilated{w.shape[0], w.shape[1], kernel[0], kernel[1]};
      check_folded_size(dilated);
      std::vector<float> taps(static_cast<size_t>(num_elements(dilated)), 0.0f);
      for_each_index(w.shape, [&](const std::vector<int64_t>& i) {
        const int64_t to = ((i[0] * dilated[1] + i[1]) * dilated[2] + i[2] * dilation[0]) * dilated[3] + i[3] * dilation[1];
        const int64_t from = ((i[0] * w.shape[1] + i[1]) * w.shape[2] + i[2]) * w.shape[3] + i[3];
        taps[static_cast<size_t>(to)] = static_cast<float>(w.values[static_cast<size_t>(from)]);
      });
      inputs[1] = g_.add_constant(g_.unique_name(node.input(1) + ".dilated"), dilated, std::move(taps));
    }
    const std::vector<int64_t> output_padding = attr_ints(node, "output_padding", {0, 0});
    if (output_padding.size() != 2) invalid("output_padding has ", output_padding.size(), " values, expected 2");
    const std::string auto_pad = attr_string(node, "auto_pad", "NOTSET");
    if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER")
      invalid("auto_pad ", auto_pad);
    ConvTranspose2dAttrs a;
    a.stride = pair_attr(node, "strides");
    // Rows and columns past the full output (bottom, right): they get the bias only.
    std::array<int64_t, 2> beyond{0, 0};
    std::vector<int64_t> output_shape = attr_ints(node, "output_shape");
    if (output_shape.size() == 4) output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
    if (!output_shape.empty() && output_shape.size() != 2) invalid("output_shape has ", output_shape.size(), " values");
    if (!output_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      // Pads from the output size (output_shape, else input * stride for SAME_*):
      // the total split in halves, an odd one at the end except for SAME_LOWER, as
      // ONNX Runtime does (ONNX's text puts it at the start for NOTSET; no case of
      // its test data has an odd total there). A negative total adds rows at the end.
      for (size_t i = 0; i < 2; ++i) {
        const int64_t full = a.stride[i] * (in[i + 2] - 1) + kernel[i];
        const int64_t out = output_shape.empty() ? in[i + 2] * a.stride[i] : output_shape[i];
        if (out < 1) invalid("output_shape ", to_string(output_shape));
        const int64_t total = full + output_padding[i] - out;
        int64_t head = total / 2, tail = total - total / 2;
        if (auto_pad == "SAME_LOWER") std::swap(head, tail);
        if (total < 0) head = 0, tail = total;
        if (tail < 0) beyond[i] = -tail, tail = 0;
        a.pad[i] = static_cast<int>(head);
        a.pad[i + 2] = static_cast<int>(tail);
      }
    } else if (auto_pad == "NOTSET") {
      const std::vector<int64_t> pads = attr_ints(node, "pads", {0, 0, 0, 0});
      if (pads.size() != 4) invalid("pads has ", pads.size(), " values, expected 4");
      for (size_t i = 0; i < 4; ++i) {
        if (pads[i] < 0) unsupported("negative pads");
        a.pad[i] = static_cast<int>(pads[i]);
      }
    }
    // output_padding adds rows and columns at the bottom and right: first
    // those the end pads would crop (they hold contributions), then, beyond
    // the full output, rows that get the bias only.
    for (size_t i = 0; i < 2; ++i) {
      if (output_padding[i] < 0 || output_padding[i] >= std::max(a.stride[i], 1))
        invalid("output_padding ", output_padding[i], " (0 to the stride, ", a.stride[i], ", exclusive)");
      const int64_t uncropped = std::min<int64_t>(output_padding[i], a.pad[i + 2]);
      a.pad[i + 2] -= static_cast<int>(uncropped);
      beyond[i] += output_padding[i] - uncropped;
    }
    if (beyond == std::array<int64_t, 2>{0, 0}) return define(node, 0, emit(OpKind::ConvTranspose2d, a, inputs, node.output(0)));
    const std::string& name = node.output(0);
    const bool has_bias = inputs.size() == 3;
    if (has_bias) inputs.pop_back();
    const TensorId product = emit(OpKind::ConvTranspose2d, a, inputs, name + ".product");
    const TensorId padded = emit(OpKind::Pad, PadAttrs{{0, 0, 0, 0, 0, 0, beyond[0], beyond[1]}, 0.0f}, {product},
                                 has_bias ? name + ".padded" : name);
    if (!has_bias) return define(node, 0, padded);
    const ConstantValue& bias = constant(node, 2, "bias");
    const TensorId per_channel = g_.add_constant(g_.unique_name(node.input(2) + ".per_channel"),
                                                 {num_elements(bias.shape), 1, 1},
                                                 std::vector<float>(bias.values.begin(), bias.values.end()));
    define(node, 0, emit(OpKind::Add, NoAttrs{}, {padded, per_channel}, name));
  }

  void lower_BatchNormalization(const NodeProto& node) {
    only_first_output(node);
    require_attr(node, "training_mode", 0, "aotc runs inference");
    require_attr(node, "spatial", 1, "aotc normalises per channel");
    for (int k = 1; k <= 4; ++k) constant(node, k, "statistic");
    const TensorId out = emit(OpKind::BatchNorm, BatchNormAttrs{attr_float(node, "epsilon", 1e-5f)},
                              {tensor(node, 0), tensor(node, 3), tensor(node, 4), tensor(node, 1), tensor(node, 2)},
                              node.output(0));
    define(node, 0, out);
  }

  void unary(const NodeProto& node, OpKind op) { define(node, 0, emit(op, NoAttrs{}, {tensor(node, 0)}, node.output(0))); }
  void lower_Relu(const NodeProto& node) { unary(node, OpKind::Relu); }
  void lower_Sigmoid(const NodeProto& node) { unary(node, OpKind::Sigmoid); }
  void lower_Tanh(const NodeProto& node) { unary(node, OpKind::Tanh); }
  void lower_HardSwish(const NodeProto& node) { unary(node, OpKind::HardSwish); }
  void lower_Softplus(const NodeProto& node) { unary(node, OpKind::Softplus); }
  void lower_Elu(const NodeProto& node) {
    define(node, 0, emit(OpKind::Elu, EluAttrs{attr_float(node, "alpha", 1.0f)}, {tensor(node, 0)}, node.output(0)));
  }

  void clamp(const NodeProto& node, float lo, float hi) {
    define(node, 0, emit(OpKind::Clamp, ClampAttrs{lo, hi}, {tensor(node, 0)}, node.output(0)));
  }

  void lower_Clip(const NodeProto& node) {
    constexpr float kInf = std::numeric_limits<float>::infinity();
    if (opset_ < 11)
      return clamp(node, attr_float(node, "min", -kInf), attr_float(node, "max", kInf));
    const float lo = has_input(node, 1) ? constant_scalar(node, 1, "min") : -kInf;
    const float hi = has_input(node, 2) ? constant_scalar(node, 2, "max") : kInf;
    clamp(node, lo, hi);
  }

  void lower_LeakyRelu(const NodeProto& node) {
    const TensorId alpha = scalar_constant(node.output(0) + ".alpha", attr_float(node, "alpha", 0.01f));
    define(node, 0, emit(OpKind::PRelu, NoAttrs{}, {tensor(node, 0), alpha}, node.output(0)));
  }

  void lower_PRelu(const NodeProto& node) {
    define(node, 0, emit(OpKind::PRelu, NoAttrs{}, {tensor(node, 0), tensor(node, 1)}, node.output(0)));
  }

  // max(0, min(1, alpha * x + beta)).
  void lower_HardSigmoid(const NodeProto& node) {
    const std::string& name = node.output(0);
    const TensorId scaled = emit(OpKind::Mul, NoAttrs{},
                                 {tensor(node, 0), scalar_constant(name + ".alpha", attr_float(node, "alpha", 0.2f))},
                                 name + ".scaled");
    const TensorId shifted =
        emit(OpKind::Add, NoAttrs{}, {scaled, scalar_constant(name + ".beta", attr_float(node, "beta", 0.5f))},
             name + ".shifted");
    define(node, 0, emit(OpKind::Clamp, ClampAttrs{0, 1}, {shifted}, name));
  }

  int32_t result_type(const NodeProto& node) const {
    return input(node, 0).constant ? input(node, 0).constant->elem_type : TensorProto::FLOAT;
  }

  void lower_Add(const NodeProto& node) {
    if (all_constant(node)) return define(node, 0, fold_binary(node, std::plus<>(), result_type(node)));
    define(node, 0, emit(OpKind::Add, NoAttrs{}, {tensor(node, 0), tensor(node, 1)}, node.output(0)));
  }
  void lower_Mul(const NodeProto& node) {
    if (all_constant(node)) return define(node, 0, fold_binary(node, std::multiplies<>(), result_type(node)));
    define(node, 0, emit(OpKind::Mul, NoAttrs{}, {tensor(node, 0), tensor(node, 1)}, node.output(0)));
  }
  // a - b as a + (-1 * b): negation is exact, so the sum is a - b to the bit.
  void lower_Sub(const NodeProto& node) {
    if (all_constant(node)) return define(node, 0, fold_binary(node, std::minus<>(), result_type(node)));
    const std::string& name = node.output(0);
    define(node, 0, emit(OpKind::Add, NoAttrs{}, {tensor(node, 0), negate(tensor(node, 1), name + ".neg")}, name));
  }
  // a / b for a constant b as a * (1 / b): within an ulp of the quotient.
  void lower_Div(const NodeProto& node) {
    const int32_t type = result_type(node);
    if (all_constant(node))
      return define(node, 0, fold_binary(node, [type](double x, double y) {
        if (is_float_type(type)) return x / y;
        return y == 0 ? 0.0 : std::trunc(x / y);
      }, type));
    if (!is_constant(node, 1))
      return define(node, 0, emit(OpKind::Div, NoAttrs{}, {tensor(node, 0), tensor(node, 1)}, node.output(0)));
    ConstantValue reciprocal = constant(node, 1, "divisor");
    for (double& v : reciprocal.values) v = static_cast<float>(1.0 / v);
    const TensorId b = g_.add_constant(g_.unique_name(node.output(0) + ".reciprocal"), reciprocal.shape,
                                       std::vector<float>(reciprocal.values.begin(), reciprocal.values.end()));
    define(node, 0, emit(OpKind::Mul, NoAttrs{}, {tensor(node, 0), b}, node.output(0)));
  }

  // Sum, Mean, Max, Min: `op` over the inputs, left to right, broadcasting.
  TensorId fold_inputs(const NodeProto& node, OpKind op) {
    TensorId acc = tensor(node, 0);
    for (int k = 1; k < node.input_size(); ++k)
      acc = emit(op, NoAttrs{}, {acc, tensor(node, k)}, node.output(0) + "." + op_name(op) + std::to_string(k));
    return acc;
  }
  void define_fold(const NodeProto& node, OpKind op) {
    const TensorId acc = fold_inputs(node, op);
    define(node, 0, node.input_size() == 1 ? acc : reshape(acc, g_.tensor(acc).shape, node.output(0)));
  }
  void lower_Sum(const NodeProto& node) { define_fold(node, OpKind::Add); }
  void lower_Max(const NodeProto& node) { define_fold(node, OpKind::Max); }
  void lower_Min(const NodeProto& node) { define_fold(node, OpKind::Min); }
  void lower_Mean(const NodeProto& node) {
    const TensorId sum = fold_inputs(node, OpKind::Add);
    const TensorId n = scalar_constant(node.output(0) + ".reciprocal", 1.0f / static_cast<float>(node.input_size()));
    define(node, 0, emit(OpKind::Mul, NoAttrs{}, {sum, n}, node.output(0)));
  }

  Pool2dAttrs pool_attrs(const NodeProto& node, const Shape& in, bool dilated) {
    const std::vector<int64_t> kernel = attr_ints(node, "kernel_shape");
    if (kernel.size() != 2) unsupported("kernel_shape has ", kernel.size(), " values; aotc lowers 2-D pooling");
    Pool2dAttrs a;
    a.kernel = {static_cast<int>(kernel[0]), static_cast<int>(kernel[1])};
    a.stride = pair_attr(node, "strides");
    a.dilation = dilated ? pair_attr(node, "dilations") : std::array<int, 2>{1, 1};
    a.ceil_mode = attr_int(node, "ceil_mode", 0) != 0;
    a.pad = window_pads(node, in, {kernel[0], kernel[1]}, a.stride, a.dilation);
    return a;
  }

  void lower_MaxPool(const NodeProto& node) {
    only_first_output(node);
    if (lowered_as_2d(node, &Lowering::lower_MaxPool)) return;
    require_attr(node, "storage_order", 0, "row-major only");
    const Shape in = input_shape(node, 0);
    require_image(node, in);
    define(node, 0, emit(OpKind::MaxPool2d, pool_attrs(node, in, true), {tensor(node, 0)}, node.output(0)));
  }

  void lower_AveragePool(const NodeProto& node) {
    if (lowered_as_2d(node, &Lowering::lower_AveragePool)) return;
    const Shape in = input_shape(node, 0);
    require_image(node, in);
    Pool2dAttrs a = pool_attrs(node, in, false);
    a.count_include_pad = attr_int(node, "count_include_pad", 0) != 0;
    define(node, 0, emit(OpKind::AvgPool2d, a, {tensor(node, 0)}, node.output(0)));
  }

  void lower_GlobalAveragePool(const NodeProto& node) {
    require_image(node, input_shape(node, 0));
    define(node, 0, emit(OpKind::GlobalAvgPool, NoAttrs{}, {tensor(node, 0)}, node.output(0)));
  }

  void lower_GlobalMaxPool(const NodeProto& node) {
    const Shape in = input_shape(node, 0);
    require_image(node, in);
    Pool2dAttrs a;
    a.kernel = {static_cast<int>(in[2]), static_cast<int>(in[3])};
    a.stride = a.kernel;
    define(node, 0, emit(OpKind::MaxPool2d, a, {tensor(node, 0)}, node.output(0)));
  }

  // ReduceMean, ReduceMax and ReduceMin over any axes: the kept dims moved
  // ahead of the reduced ones (a transpose), viewed as [1, kept, reduced, 1],
  // pooled over the reduced extent (global average, or max pooling; the
  // minimum is -max(-x), exact), then viewed in ONNX's output shape.
  enum class Reduction { kMean, kMax, kMin };
  void reduce(const NodeProto& node, Reduction kind) {
    const Shape in = input_shape(node, 0);
    std::vector<int64_t> axes = attr_ints(node, "axes");
    if (axes.empty())
      for (size_t d = 0; d < in.size(); ++d) axes.push_back(static_cast<int64_t>(d));
    std::vector<bool> reduced(in.size(), false);
    for (const int64_t a : axes) reduced[static_cast<size_t>(normalized_axis(a, in.size()))] = true;
    const bool keepdims = attr_int(node, "keepdims", 1) != 0;
    Shape out;
    std::vector<int> perm;
    int64_t kept = 1, pooled = 1;
    for (size_t d = 0; d < in.size(); ++d) {
      if (reduced[d]) continue;
      perm.push_back(static_cast<int>(d));
      kept *= in[d];
    }
    for (size_t d = 0; d < in.size(); ++d) {
      if (reduced[d]) {
        perm.push_back(static_cast<int>(d));
        pooled *= in[d];
      }
      if (!reduced[d] || keepdims) out.push_back(reduced[d] ? 1 : in[d]);
    }
    if (out.empty()) unsupported("a reduction to a scalar (aotc's tensors have at least one dim)");
    const std::string& name = node.output(0);
    if (kind == Reduction::kMean && in.size() == 4 && !reduced[0] && !reduced[1] && reduced[2] && reduced[3]) {
      const TensorId spatial = emit(OpKind::GlobalAvgPool, NoAttrs{}, {tensor(node, 0)}, name);
      return define(node, 0, reshape(spatial, out, name + ".shaped"));
    }
    TensorId x = tensor(node, 0);
    const bool moved = !std::is_sorted(perm.begin(), perm.end());
    if (moved) x = emit(OpKind::Transpose, TransposeAttrs{perm}, {x}, name + ".moved");
    x = reshape(x, {1, kept, pooled, 1}, name + ".rows");
    if (kind == Reduction::kMean) {
      x = emit(OpKind::GlobalAvgPool, NoAttrs{}, {x}, name + ".pooled");
    } else {
      if (pooled > INT32_MAX) unsupported("a reduction over ", pooled, " elements");
      const bool negated = kind == Reduction::kMin;
      if (negated) x = negate(x, name + ".negated");
      Pool2dAttrs a;
      a.kernel = {static_cast<int>(pooled), 1};
      a.stride = a.kernel;
      x = emit(OpKind::MaxPool2d, a, {x}, name + ".pooled");
      if (negated) x = negate(x, name + ".min");
    }
    define(node, 0, reshape(x, out, name));
  }
  void lower_ReduceMean(const NodeProto& node) { reduce(node, Reduction::kMean); }
  void lower_ReduceMax(const NodeProto& node) { reduce(node, Reduction::kMax); }
  void lower_ReduceMin(const NodeProto& node) { reduce(node, Reduction::kMin); }

  // y = alpha * A' B' + beta * C as linear(A', alpha * B'^T, beta * C); A' = A^T
  // (transA) is a transpose node.
  void lower_Gemm(const NodeProto& node) {
    const Shape a_shape = input_shape(node, 0);
    const ConstantValue& b = constant(node, 1, "B");
    if (a_shape.size() != 2 || b.shape.size() != 2) invalid("A and B must be 2-D");
    TensorId a = tensor(node, 0);
    if (attr_int(node, "transA", 0) != 0)
      a = emit(OpKind::Transpose, TransposeAttrs{{1, 0}}, {a}, node.output(0) + ".a_transposed");
    const bool trans_b = attr_int(node, "transB", 0) != 0;
    const int64_t k = trans_b ? b.shape[1] : b.shape[0], n = trans_b ? b.shape[0] : b.shape[1];
    const float alpha = attr_float(node, "alpha", 1.0f), beta = attr_float(node, "beta", 1.0f);
    // torch's Linear: B is already the linear's weight and C its bias. Read as they are, a
    // quantized weight and bias keep their dequantize nodes (quantize-ops).
    if (trans_b && alpha == 1 && beta == 1 && (!has_input(node, 2) || constant(node, 2, "C").shape == Shape{n})) {
      std::vector<TensorId> inputs = {a, tensor(node, 1)};
      if (has_input(node, 2)) inputs.push_back(tensor(node, 2));
      return define(node, 0, emit(OpKind::Linear, NoAttrs{}, inputs, node.output(0)));
    }
    std::vector<float> weight(static_cast<size_t>(n * k));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < k; ++j)
        weight[static_cast<size_t>(i * k + j)] =
            alpha * static_cast<float>(b.values[static_cast<size_t>(trans_b ? i * k + j : j * n + i)]);
    std::vector<TensorId> inputs = {a, g_.add_constant(g_.unique_name(node.input(1) + ".weight"), {n, k}, weight)};
    if (!has_input(node, 2)) return define(node, 0, emit(OpKind::Linear, NoAttrs{}, inputs, node.output(0)));
    const ConstantValue& c = constant(node, 2, "C");
    std::vector<float> scaled_c;
    for (const double v : c.values) scaled_c.push_back(beta * static_cast<float>(v));
    const bool per_column = num_elements(c.shape) == n && (c.shape.empty() || c.shape.back() == n);
    if (per_column || num_elements(c.shape) == 1) {  // the linear's bias
      std::vector<float> bias;
      for (int64_t j = 0; j < n; ++j) bias.push_back(scaled_c[per_column ? static_cast<size_t>(j) : 0]);
      inputs.push_back(g_.add_constant(g_.unique_name(node.input(2) + ".bias"), {n}, bias));
      return define(node, 0, emit(OpKind::Linear, NoAttrs{}, inputs, node.output(0)));
    }
    // A C per row, or per element: added after the product (broadcast as ONNX does).
    const std::string& name = node.output(0);
    const TensorId product = emit(OpKind::Linear, NoAttrs{}, inputs, name + ".product");
    const TensorId addend = g_.add_constant(g_.unique_name(node.input(2) + ".scaled"), c.shape, scaled_c);
    define(node, 0, emit(OpKind::Add, NoAttrs{}, {product, addend}, name));
  }

  // Matrix `m` of a constant B[..., K, N] (its matrices flattened), as a linear
  // layer's weight [N, K].
  TensorId matmul_weight(const NodeProto& node, const ConstantValue& b, int64_t m) {
    const int64_t k = b.shape[b.shape.size() - 2], n = b.shape.back();
    std::vector<float> weight(static_cast<size_t>(n * k));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < k; ++j)
        weight[static_cast<size_t>(i * k + j)] = static_cast<float>(b.values[static_cast<size_t>((m * k + j) * n + i)]);
    return g_.add_constant(g_.unique_name(node.input(1) + ".weight"), {n, k}, weight);
  }

  // A[..., M, K] x B[..., K, N] with a constant B, batch dims broadcast as NumPy's
  // matmul does. A B of one matrix is a linear layer over the rows of A; else
  // each matrix of the output is one (over A's matching matrix, a crop), and
  // they are concatenated (at most kMaxGatheredIndices).
  void lower_MatMul(const NodeProto& node) {
    const Shape a = input_shape(node, 0);
    const ConstantValue& b = constant(node, 1, "B");
    if (a.size() < 2 || b.shape.size() < 2 || a.back() != b.shape[b.shape.size() - 2])
      unsupported("MatMul of ", to_string(a), " by ", to_string(b.shape),
                  " (aotc multiplies matrices by constant matrices)");
    const int64_t m = a[a.size() - 2], k = a.back(), n = b.shape.back();
    const Shape a_batch(a.begin(), a.end() - 2), b_batch(b.shape.begin(), b.shape.end() - 2);
    Shape out = broadcast_shapes(a_batch, b_batch, ref_);
    const Shape out_batch = out;
    out.insert(out.end(), {m, n});
    const std::string& name = node.output(0);
    if (num_elements(b_batch) == 1) {
      const TensorId rows = reshape(tensor(node, 0), {num_elements(a) / k, k}, name + ".rows");
      const TensorId product_rows = emit(OpKind::Linear, NoAttrs{}, {rows, matmul_weight(node, b, 0)}, name);
      return define(node, 0, reshape(product_rows, out, name + ".shaped"));
    }
    const int64_t batch = num_elements(out_batch);
    if (static_cast<size_t>(batch) > kMaxGatheredIndices)
      unsupported("MatMul of ", to_string(a), " by ", to_string(b.shape), ": ", batch,
                  " matrix products (aotc makes at most ", kMaxGatheredIndices, ")");
    const TensorId a_matrices = reshape(tensor(node, 0), {num_elements(a_batch), m, k}, name + ".a_matrices");
    // Each of A's matrices is cropped, and each of B's made a weight, once however
    // many output matrices broadcast it.
    std::map<int64_t, TensorId> a_rows, weights;
    std::vector<TensorId> products;
    for_each_index(out_batch, [&](const std::vector<int64_t>& index) {
      const std::string part = name + ".matrix" + std::to_string(products.size());
      const int64_t ai = broadcast_index(index, out_batch, a_batch), bi = broadcast_index(index, out_batch, b_batch);
      if (!a_rows.contains(ai))
        a_rows[ai] = reshape(num_elements(a_batch) == 1 ? a_matrices : gather_crops(a_matrices, 0, {ai}, part + ".a"),
                             {m, k}, part + ".a_rows");
      if (!weights.contains(bi)) weights[bi] = matmul_weight(node, b, bi);
      const TensorId product = emit(OpKind::Linear, NoAttrs{}, {a_rows[ai], weights[bi]}, part);
      products.push_back(reshape(product, {1, m, n}, part + ".stacked"));
    });
    const TensorId stacked = emit(OpKind::Concat, AxisAttrs{0}, products, name + ".matrices");
    define(node, 0, reshape(stacked, out, name));
  }

  void lower_Flatten(const NodeProto& node) {
    const Shape in = input_shape(node, 0);
    const int64_t axis = attr_int(node, "axis", 1);
    const auto split = static_cast<size_t>(axis < 0 ? axis + static_cast<int64_t>(in.size()) : axis);
    if (split > in.size()) invalid("axis ", axis, " is out of range for rank ", in.size());
    lower_as_reshape(node, {product(in, 0, split), product(in, split, in.size())});
  }

  void lower_Reshape(const NodeProto& node) {
    const Shape in = input_shape(node, 0);
    const std::vector<int64_t> spec =
        opset_ < 5 ? attr_ints(node, "shape") : constant_ints(node, 1, "shape");
    lower_as_reshape(node, resolve_reshape(in, spec, attr_int(node, "allowzero", 0) != 0));
  }

  std::vector<int64_t> axes_of(const NodeProto& node, size_t rank) {
    std::vector<int64_t> axes = opset_ < 13 ? attr_ints(node, "axes")
                                : has_input(node, 1) ? constant_ints(node, 1, "axes")
                                                     : std::vector<int64_t>{};
    for (int64_t& a : axes) a = normalized_axis(a, rank);
    std::sort(axes.begin(), axes.end());
    return axes;
  }

  void lower_Squeeze(const NodeProto& node) {
    const Shape in = input_shape(node, 0);
    const std::vector<int64_t> axes = axes_of(node, in.size());
    Shape out;
    for (size_t d = 0; d < in.size(); ++d) {
      const bool listed = std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(d));
      if (listed && in[d] != 1) invalid("cannot squeeze dim ", d, " of size ", in[d]);
      if (!(listed || (axes.empty() && in[d] == 1))) out.push_back(in[d]);
    }
    lower_as_reshape(node, out);
  }

  void lower_Unsqueeze(const NodeProto& node) {
    const Shape in = input_shape(node, 0);
    const size_t rank = in.size() + (opset_ < 13 ? attr_ints(node, "axes").size()
                                                 : constant(node, 1, "axes").values.size());
    const std::vector<int64_t> axes = axes_of(node, rank);
    Shape out;
    size_t next = 0;
    for (size_t d = 0; d < rank; ++d)
      out.push_back(std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(d)) ? 1 : in[next++]);
    if (next != in.size()) invalid("axes repeat");
    lower_as_reshape(node, out);
  }

  void lower_Concat(const NodeProto& node) {
    const Shape first = input_shape(node, 0);
    const int axis = normalized_axis(attr_int(node, "axis", 1), first.size());
    if (all_constant(node)) {
      // Concatenation along `axis` of row-major blocks: outer x (extent x inner).
      ConstantValue out;
      out.elem_type = input(node, 0).constant->elem_type;
      out.shape = first;
      out.shape[static_cast<size_t>(axis)] = 0;
      const int64_t outer = product(first, 0, static_cast<size_t>(axis));
      for (int k = 0; k < node.input_size(); ++k) out.shape[static_cast<size_t>(axis)] += input_shape(node, k)[static_cast<size_t>(axis)];
      for (int64_t o = 0; o < outer; ++o)
        for (int k = 0; k < node.input_size(); ++k) {
          const ConstantValue& c = *input(node, k).constant;
          const int64_t block = product(c.shape, static_cast<size_t>(axis), c.shape.size());
          out.values.insert(out.values.end(), c.values.begin() + o * block, c.values.begin() + (o + 1) * block);
        }
      return define(node, 0, out);
    }
    std::vector<TensorId> inputs;
    for (int k = 0; k < node.input_size(); ++k) inputs.push_back(tensor(node, k));
    define(node, 0, emit(OpKind::Concat, AxisAttrs{axis}, inputs, node.output(0)));
  }

  void lower_Softmax(const NodeProto& node) {
    const Shape in = input_shape(node, 0);
    const int axis = normalized_axis(attr_int(node, "axis", opset_ < 13 ? 1 : -1), in.size());
    const std::string& name = node.output(0);
    if (opset_ >= 13 || axis == static_cast<int>(in.size()) - 1)
      return define(node, 0, emit(OpKind::Softmax, AxisAttrs{axis}, {tensor(node, 0)}, name));
    // Before opset 13 the input is coerced to 2-D at `axis`, softmax over the second dim.
    const TensorId rows = reshape(tensor(node, 0),
                                  {product(in, 0, static_cast<size_t>(axis)), product(in, static_cast<size_t>(axis), in.size())},
                                  name + ".2d");
    const TensorId y = emit(OpKind::Softmax, AxisAttrs{1}, {rows}, name + ".softmax");
    define(node, 0, reshape(y, in, name));
  }

  void lower_Pad(const NodeProto& node) {
    const std::string mode = attr_string(node, "mode", "constant");
    if (mode != "constant") unsupported("mode '", mode, "' (aotc pads with a constant)");
    PadAttrs a;
    if (opset_ < 11) {
      a.pads = attr_ints(node, "pads");
      a.value = attr_float(node, "value", 0.0f);
    } else {
      a.pads = constant_ints(node, 1, "pads");
      if (has_input(node, 2)) a.value = constant_scalar(node, 2, "constant_value");
    }
    define(node, 0, emit(OpKind::Pad, a, {tensor(node, 0)}, node.output(0)));  // negative pads crop
  }

  void lower_Transpose(const NodeProto& node) {
    const Shape in = input_shape(node, 0);
    std::vector<int64_t> perm = attr_ints(node, "perm");
    if (perm.empty())
      for (size_t d = in.size(); d-- > 0;) perm.push_back(static_cast<int64_t>(d));
    const std::vector<int> p(perm.begin(), perm.end());
    if (is_constant(node, 0)) {
      const ConstantValue& c = *input(node, 0).constant;
      ConstantValue out;
      out.elem_type = c.elem_type;
      for (const int d : p) out.shape.push_back(in.at(static_cast<size_t>(d)));
      const std::vector<int64_t> in_strides = strides(in);
      for_each_index(out.shape, [&](const std::vector<int64_t>& index) {
        int64_t flat = 0;
        for (size_t d = 0; d < index.size(); ++d) flat += index[d] * in_strides[static_cast<size_t>(p[d])];
        out.values.push_back(c.values[static_cast<size_t>(flat)]);
      });
      return define(node, 0, out);
    }
    define(node, 0, emit(OpKind::Transpose, TransposeAttrs{p}, {tensor(node, 0)}, node.output(0)));
  }

  // DCR is the IR's depth_to_space; CRD, and SpaceToDepth, are ONNX's own
  // definitions: a 6-D reshape, a transpose and a reshape back.
  void lower_DepthToSpace(const NodeProto& node) {
    const std::string mode = attr_string(node, "mode", "DCR");
    const int64_t b = block_size(node);
    if (mode == "DCR")
      return define(node, 0, emit(OpKind::DepthToSpace, DepthToSpaceAttrs{static_cast<int>(b)}, {tensor(node, 0)},
                                  node.output(0)));
    if (mode != "CRD") invalid("mode '", mode, "' (DepthToSpace's modes are DCR and CRD)");
    const Shape in = input_shape(node, 0);
    if (in.size() != 4 || in[1] % (b * b) != 0)
      invalid("input of shape ", to_string(in), " for block size ", b, " (4-D, channels a multiple of ", b * b, ")");
    define(node, 0, block_shuffle(node, {in[0], in[1] / (b * b), b, b, in[2], in[3]}, {0, 1, 4, 2, 5, 3},
                                  {in[0], in[1] / (b * b), in[2] * b, in[3] * b}));
  }

  void lower_SpaceToDepth(const NodeProto& node) {
    const int64_t b = block_size(node);
    const Shape in = input_shape(node, 0);
    if (in.size() != 4 || in[2] % b != 0 || in[3] % b != 0)
      invalid("input of shape ", to_string(in), " for block size ", b, " (4-D, height and width multiples of it)");
    define(node, 0, block_shuffle(node, {in[0], in[1], in[2] / b, b, in[3] / b, b}, {0, 3, 5, 1, 2, 4},
                                  {in[0], in[1] * b * b, in[2] / b, in[3] / b}));
  }

  int64_t block_size(const NodeProto& node) const {
    const int64_t b = attr_int(node, "blocksize", 0);
    if (b < 1 || b > 64) invalid("blocksize ", b, " (1 to 64)");
    return b;
  }

  TensorId block_shuffle(const NodeProto& node, const Shape& blocks, const std::vector<int>& perm, const Shape& out) {
    const std::string& name = node.output(0);
    const TensorId split = reshape(tensor(node, 0), blocks, name + ".blocks");
    const TensorId moved = emit(OpKind::Transpose, TransposeAttrs{perm}, {split}, name + ".moved");
    return reshape(moved, out, name);
  }

  void lower_Identity(const NodeProto& node) { alias(node, 0, input(node, 0)); }

  void lower_Dropout(const NodeProto& node) {
    only_first_output(node);
    if (opset_ >= 12 && has_input(node, 2) && constant_scalar(node, 2, "training_mode") != 0)
      unsupported("training_mode (aotc runs inference)");
    alias(node, 0, input(node, 0));
  }

  void lower_Constant(const NodeProto& node) {
    if (node.attribute_size() != 1) invalid("has ", node.attribute_size(), " attributes, expected 1");
    const onnx::AttributeProto& a = node.attribute(0);
    ConstantValue c;
    if (a.name() == "value") {
      c = decode_tensor(a.t(), ref_ + ": value");
    } else if (a.name() == "value_float") {
      c.values = {a.f()};
    } else if (a.name() == "value_floats") {
      c.values.assign(a.floats().begin(), a.floats().end());
      c.shape = {static_cast<int64_t>(c.values.size())};
    } else if (a.name() == "value_int" || a.name() == "value_ints") {
      c.elem_type = TensorProto::INT64;
      if (a.name() == "value_int") c.values = {static_cast<double>(a.i())};
      for (const int64_t v : a.ints()) c.values.push_back(static_cast<double>(v));
      if (a.name() == "value_ints") c.shape = {static_cast<int64_t>(c.values.size())};
    } else {
      unsupported("a Constant's ", a.name());
    }
    define(node, 0, c);
  }

  // Resize (opset 10+) and Upsample (7-9). Where an IR resize samples the same way
  // (nearest: asymmetric, floor; linear: half_pixel, align_corners, asymmetric) by
  // a whole-numbered size, the node is one. Otherwise each resized axis is a linear
  // layer by its sampling matrix (onnx_resize.h): any mode, coordinate
  // transformation, rounding and scale. Its zero weights multiply NaN and infinities
  // into the whole row, where ONNX's taps would take them only from their neighbours.
  void resize(const NodeProto& node, const std::vector<double>& scales, const std::vector<int64_t>& sizes,
              const ResizeSampling& sampling, const std::vector<double>& roi = {}, float extrapolation = 0) {
    const Shape in = input_shape(node, 0);
    require_image(node, in);
    Shape out = in;
    std::array<double, 4> scale{};
    bool whole = true;  // every size is the input's times the scale exactly
    for (size_t d = 0; d < 4; ++d) {
      const double exact = sizes.empty() ? static_cast<double>(in[d]) * scales.at(d) : static_cast<double>(sizes.at(d));
      if (in[d] < 1 || !(exact >= 1 && exact <= static_cast<double>(kMaxResizedExtent)))
        unsupported("dim ", d, " of ", to_string(in), " resized to ", exact, " (aotc resizes to 1 ... ",
                    kMaxResizedExtent, ")");
      out[d] = static_cast<int64_t>(std::floor(exact));
      scale[d] = sizes.empty() ? scales[d] : exact / static_cast<double>(in[d]);
      whole = whole && static_cast<double>(out[d]) == exact;
    }
    const auto roi_start = [&](size_t d) { return roi.empty() ? 0.0 : roi.at(d); };
    const auto roi_end = [&](size_t d) { return roi.empty() ? 1.0 : roi.at(4 + d); };
    for (size_t d = 0; d < 2; ++d)
      if (out[d] != in[d] || !resize_keeps(in[d], scale[d], sampling, roi_start(d), roi_end(d)))
        unsupported("resizing the batch or channel dims");
    ResizeAttrs a;
    a.size = {static_cast<int>(out[2]), static_cast<int>(out[3])};
    const std::string& mode = sampling.mode;
    const std::string& transform = sampling.transform;
    if (whole && mode == "nearest" && transform == "asymmetric" && sampling.nearest_mode == "floor")
      return define(node, 0, emit(OpKind::ResizeNearest, a, {tensor(node, 0)}, node.output(0)));
    if (whole && mode == "linear" &&
        (transform == "asymmetric" || transform == "align_corners" || transform == "half_pixel" ||
         (transform == "pytorch_half_pixel" && out[2] > 1 && out[3] > 1))) {
      a.align_corners = transform == "align_corners";
      a.half_pixel_centers = transform == "half_pixel" || transform == "pytorch_half_pixel";
      return define(node, 0, emit(OpKind::ResizeBilinear, a, {tensor(node, 0)}, node.output(0)));
    }
    if (in[2] * out[2] > kMaxSamplingMatrix || in[3] * out[3] > kMaxSamplingMatrix)
      unsupported("resizing ", to_string(in), " to ", to_string(out), " with mode ", mode, " and ", transform,
                  ": a sampling matrix of more than ", kMaxSamplingMatrix, " elements");
    const ResizeAxis h = resize_axis(in[2], out[2], scale[2], sampling, roi_start(2), roi_end(2));
    const ResizeAxis w = resize_axis(in[3], out[3], scale[3], sampling, roi_start(3), roi_end(3));
    const std::string& name = node.output(0);
    const bool extrapolates = h.any_outside() || w.any_outside();
    const bool keeps_rows = h.identity(), keeps_columns = w.identity();
    TensorId x = tensor(node, 0);
    if (keeps_rows && keeps_columns) return alias(node, 0, input(node, 0));
    if (!keeps_columns) x = resize_last_axis(x, w, keeps_rows && !extrapolates ? name : name + ".w");
    if (!keeps_rows) {
      x = emit(OpKind::Transpose, TransposeAttrs{{0, 1, 3, 2}}, {x}, name + ".columns");
      x = resize_last_axis(x, h, name + ".h");
      x = emit(OpKind::Transpose, TransposeAttrs{{0, 1, 3, 2}}, {x}, extrapolates ? name + ".rows" : name);
    }
    if (extrapolates) {  // tf_crop_and_resize: the value where a row or a column lies outside
      std::vector<float> value(static_cast<size_t>(out[2] * out[3]), 0.0f);
      for (int64_t r = 0; r < out[2]; ++r)
        for (int64_t c = 0; c < out[3]; ++c)
          if (h.outside[static_cast<size_t>(r)] || w.outside[static_cast<size_t>(c)])
            value[static_cast<size_t>(r * out[3] + c)] = extrapolation;
      const TensorId outside = g_.add_constant(g_.unique_name(name + ".extrapolation"), {1, 1, out[2], out[3]}, value);
      x = emit(OpKind::Add, NoAttrs{}, {x, outside}, name);
    }
    define(node, 0, x);
  }

  // x[..., in] resampled along its last axis by `axis`'s matrix: a linear layer over the rows.
  TensorId resize_last_axis(TensorId x, const ResizeAxis& axis, const std::string& name) {
    Shape shape = g_.tensor(x).shape;
    const TensorId rows = reshape(x, {num_elements(shape) / axis.in, axis.in}, name + ".rows");
    const std::vector<float> weight(axis.weights.begin(), axis.weights.end());
    const TensorId matrix = g_.add_constant(g_.unique_name(name + ".sampling"), {axis.out, axis.in}, weight);
    const TensorId resized = emit(OpKind::Linear, NoAttrs{}, {rows, matrix}, name + ".resized");
    shape.back() = axis.out;
    return reshape(resized, shape, name);
  }

  // Upsample-7's "bilinear" is "linear".
  std::string resize_mode(const NodeProto& node) const {
    const std::string mode = attr_string(node, "mode", "nearest");
    return mode == "bilinear" ? "linear" : mode;
  }

  void lower_Resize(const NodeProto& node) {
    ResizeSampling sampling;
    sampling.mode = resize_mode(node);
    if (opset_ < 11) {  // Resize-10: asymmetric coordinates, nearest rounds down
      sampling.transform = "asymmetric";
      sampling.nearest_mode = "floor";
      return resize(node, constant(node, 1, "scales").values, {}, sampling);
    }
    sampling.transform = attr_string(node, "coordinate_transformation_mode", "half_pixel");
    sampling.nearest_mode = attr_string(node, "nearest_mode", "round_prefer_floor");
    sampling.cubic_a = attr_float(node, "cubic_coeff_a", -0.75f);
    sampling.exclude_outside = attr_int(node, "exclude_outside", 0) != 0;
    std::vector<double> roi;
    if (sampling.transform == "tf_crop_and_resize") {
      roi = constant(node, 1, "roi").values;
      if (roi.size() != 8) invalid("roi has ", roi.size(), " values; a 4-D tf_crop_and_resize needs 8");
    }
    const float extrapolation = attr_float(node, "extrapolation_value", 0.0f);
    if (has_input(node, 3)) return resize(node, {}, constant_ints(node, 3, "sizes"), sampling, roi, extrapolation);
    const ConstantValue& scales = constant(node, 2, "scales");
    if (scales.values.empty()) invalid("neither scales nor sizes");
    resize(node, scales.values, {}, sampling, roi, extrapolation);
  }

  void lower_Upsample(const NodeProto& node) {
    ResizeSampling sampling;  // asymmetric coordinates, nearest rounds down
    sampling.mode = resize_mode(node);
    sampling.transform = "asymmetric";
    sampling.nearest_mode = "floor";
    if (opset_ < 9) {
      const std::vector<float> scales = attr_floats(node, "scales");
      return resize(node, std::vector<double>(scales.begin(), scales.end()), {}, sampling);
    }
    resize(node, constant(node, 1, "scales").values, {}, sampling);
  }

  // ---- Shape arithmetic, folded --------------------------------------------------------

  void require_constant_inputs(const NodeProto& node) const {
    if (!all_constant(node))
      unsupported("its inputs are computed at run time; aotc folds ", node.op_type(), " only over constants and "
                  "static shapes");
  }

  void lower_Shape(const NodeProto& node) {
    const Shape in = input_shape(node, 0);
    const auto rank = static_cast<int64_t>(in.size());
    int64_t start = attr_int(node, "start", 0), end = attr_int(node, "end", rank);
    start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
    end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
    ConstantValue c;
    c.elem_type = TensorProto::INT64;
    for (int64_t d = start; d < end; ++d) c.values.push_back(static_cast<double>(in[static_cast<size_t>(d)]));
    c.shape = {static_cast<int64_t>(c.values.size())};
    define(node, 0, c);
  }

  // Gather of a run-time tensor by constant indices: one crop of extent 1 per
  // index along `axis`, concatenated there, then viewed as the output's shape.
  void gather_run_time(const NodeProto& node, const ConstantValue& indices) {
    const Shape in = input_shape(node, 0);
    const auto axis = static_cast<size_t>(normalized_axis(attr_int(node, "axis", 0), in.size()));
    if (indices.values.size() > kMaxGatheredIndices)
      unsupported(indices.values.size(), " indices into a run-time tensor (aotc gathers at most ", kMaxGatheredIndices,
                  " as crops)");
    std::vector<int64_t> in_range;
    for (const double raw : indices.values) {
      auto i = static_cast<int64_t>(raw);
      if (i < -in[axis] || i >= in[axis]) invalid("index ", i, " is out of range for dim of size ", in[axis]);
      in_range.push_back(i < 0 ? i + in[axis] : i);
    }
    const TensorId gathered = gather_crops(tensor(node, 0), axis, in_range, node.output(0) + ".rows");
    Shape out(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(axis));
    out.insert(out.end(), indices.shape.begin(), indices.shape.end());
    out.insert(out.end(), in.begin() + static_cast<std::ptrdiff_t>(axis) + 1, in.end());
    if (out.empty()) unsupported("a gather to a scalar (aotc's tensors have rank 1 or more)");
    define(node, 0, emit(OpKind::Reshape, ReshapeAttrs{out}, {gathered}, node.output(0)));
  }

  void lower_Gather(const NodeProto& node) {
    if (!is_constant(node, 0) && is_constant(node, 1)) return gather_run_time(node, *input(node, 1).constant);
    require_constant_inputs(node);
    const ConstantValue& data = *input(node, 0).constant;
    const ConstantValue& indices = *input(node, 1).constant;
    const int axis = normalized_axis(attr_int(node, "axis", 0), data.shape.size());
    const int64_t extent = data.shape[static_cast<size_t>(axis)];
    const int64_t outer = product(data.shape, 0, static_cast<size_t>(axis));
    const int64_t inner = product(data.shape, static_cast<size_t>(axis) + 1, data.shape.size());
    ConstantValue out;
    out.elem_type = data.elem_type;
    out.shape.assign(data.shape.begin(), data.shape.begin() + axis);
    out.shape.insert(out.shape.end(), indices.shape.begin(), indices.shape.end());
    out.shape.insert(out.shape.end(), data.shape.begin() + axis + 1, data.shape.end());
    check_folded_size(out.shape);
    for (int64_t o = 0; o < outer; ++o)
      for (const double raw : indices.values) {
        auto i = static_cast<int64_t>(raw);
        if (i < -extent || i >= extent) invalid("index ", i, " is out of range for dim of size ", extent);
        if (i < 0) i += extent;
        const auto begin = data.values.begin() + (o * extent + i) * inner;
        out.values.insert(out.values.end(), begin, begin + inner);
      }
    define(node, 0, out);
  }

  // ---- Quantization (IR quantize / dequantize, docs/int8.md) -----------------------

  // The quantization a QuantizeLinear or DequantizeLinear node (or a QOperator node's operand,
  // whose scale and zero point are inputs `scale_input` and `scale_input` + 1) gives a tensor of
  // `shape`: one scale and zero point (default 0) per tensor or, for a 1-D scale of more than
  // one value, along `axis` (the node's, opset 13; a QOperator weight's: its output channels).
  // Sets `dtype` from the zero point's type (uint8 without one).
  Quantization quantization(const NodeProto& node, const Shape& shape, DType* dtype, int scale_input = 1,
                            int axis = -1) const {
    const ConstantValue& scale = constant(node, scale_input, "scale");
    Quantization q;
    for (const double v : scale.values) q.scale.push_back(static_cast<float>(v));
    int32_t zero_type = TensorProto::UINT8;
    if (has_input(node, scale_input + 1)) {
      const ConstantValue& zero = constant(node, scale_input + 1, "zero point");
      zero_type = zero.elem_type;
      if (zero.values.size() != scale.values.size())
        invalid("the zero point holds ", zero.values.size(), " values, the scale ", scale.values.size());
      for (const double v : zero.values) q.zero_point.push_back(static_cast<int64_t>(v));
    } else {
      q.zero_point.assign(q.scale.size(), 0);
    }
    const std::optional<DType> type = quantized_dtype(zero_type);
    if (!type) unsupported("quantized type ", elem_type_name(zero_type), " (aotc reads int8, uint8 and int32)");
    *dtype = *type;
    if (scale.shape.size() > 1) invalid("the scale must be a scalar or 1-D, is ", to_string(scale.shape));
    if (scale.shape.size() == 1 && scale.values.size() > 1) {
      if (axis < 0 && opset_ < 13) invalid("a per-axis scale needs opset 13");
      q.axis = axis >= 0 ? axis : normalized_axis(attr_int(node, "axis", 1), shape.size());
    }
    return q;
  }

  // Input `k`, a run-time integer tensor, with quantization `q` of `dtype`: a graph input takes
  // it from its first reader; any other tensor must have been quantized with it.
  TensorId quantized_tensor(const NodeProto& node, int k, const Quantization& q, DType dtype) {
    const TensorId x = input(node, k).id;
    if (!is_integer(g_.tensor(x).dtype)) {
      unsupported("input '", node.input(k), "' is ", dtype_name(g_.tensor(x).dtype), ", not a quantized tensor");
    } else if (is_graph_input(g_, x) && !g_.tensor(x).quant && g_.tensor(x).dtype == dtype) {
      Tensor& t = g_.tensor(x);
      t.quant = std::make_shared<const Quantization>(q);
      check_element_type(t, ref_);
    } else if (g_.tensor(x).dtype != dtype || !g_.tensor(x).quant || *g_.tensor(x).quant != q) {
      unsupported("input '", node.input(k), "' was quantized with other parameters (", type_text(g_.tensor(x)),
                  ") than this node reads it with");
    }
    return x;
  }

  // An IR integer constant of `c`'s values with quantization `q`.
  TensorId integer_constant(const std::string& name, const ConstantValue& c, Shape shape, DType dtype,
                            const Quantization& q) {
    const TensorId id = g_.add_constant(g_.unique_name(name), std::move(shape), {c.values.begin(), c.values.end()});
    Tensor& t = g_.tensor(id);
    t.dtype = dtype;
    t.quant = std::make_shared<const Quantization>(q);
    check_element_type(t, ref_);
    return id;
  }

  // QLinearConv and QLinearMatMul: a qconv2d of `x` and the integer weight `w` [O, C/g, KH, KW]
  // (quantized per tensor or per output channel), with the int32 bias B (input `bias_input`) at
  // the accumulator's scale, and the output's quantization from inputs 6 and 7.
  TensorId qconv2d(const NodeProto& node, TensorId x, TensorId w, int bias_input, const Conv2dAttrs& conv,
                   const std::string& name) {
    QConv2dAttrs a;
    a.conv = conv;
    a.out.quant = quantization(node, {}, &a.out.dtype, 6);
    a.min = dtype_min(a.out.dtype);
    a.max = dtype_max(a.out.dtype);
    std::vector<TensorId> inputs = {x, w};
    if (has_input(node, bias_input)) {
      const ConstantValue& b = constant(node, bias_input, "bias");
      if (b.elem_type != TensorProto::INT32) unsupported("bias of type ", elem_type_name(b.elem_type), ", not int32");
      const Quantization& xq = *g_.tensor(x).quant;
      const Quantization& wq = *g_.tensor(w).quant;
      Quantization bq{{}, std::vector<int64_t>(wq.scale.size(), 0), wq.axis};
      for (const float s : wq.scale) bq.scale.push_back(xq.scale[0] * s);
      inputs.push_back(integer_constant(node.input(bias_input), b, b.shape, DType::I32, bq));
    }
    return emit(OpKind::QConv2d, a, inputs, name);
  }

  void lower_QLinearConv(const NodeProto& node) {
    const Shape in = input_shape(node, 0);
    require_image(node, in);
    const ConstantValue& w = constant(node, 3, "weight");
    if (w.shape.size() != 4) invalid("weight has shape ", to_string(w.shape));
    DType x_dtype = DType::U8, w_dtype = DType::I8;
    const TensorId x = quantized_tensor(node, 0, quantization(node, in, &x_dtype, 1), x_dtype);
    const Quantization wq = quantization(node, w.shape, &w_dtype, 4, 0);
    const TensorId weight = integer_constant(node.input(3), w, w.shape, w_dtype, wq);
    Conv2dAttrs a;
    a.stride = pair_attr(node, "strides");
    a.dilation = pair_attr(node, "dilations");
    a.groups = static_cast<int>(attr_int(node, "group", 1));
    a.pad = window_pads(node, in, {w.shape[2], w.shape[3]}, a.stride, a.dilation);
    define(node, 0, qconv2d(node, x, weight, 8, a, node.output(0)));
  }

  // QLinearMatMul of a run-time a[M, K] and a constant b[K, N]: a 1x1 qconv2d of a[M, K, 1, 1]
  // and b's transpose, between reshapes.
  void lower_QLinearMatMul(const NodeProto& node) {
    const Shape a_shape = input_shape(node, 0);
    const ConstantValue& b = constant(node, 3, "B");
    if (a_shape.size() != 2 || b.shape.size() != 2)
      unsupported("QLinearMatMul of ", to_string(a_shape), " by ", to_string(b.shape), " (aotc reads 2-D operands)");
    const int64_t m = a_shape[0], k = b.shape[0], n = b.shape[1];
    DType a_dtype = DType::U8, b_dtype = DType::I8;
    const TensorId a = quantized_tensor(node, 0, quantization(node, a_shape, &a_dtype, 1), a_dtype);
    // b's per-column scales are per output channel of the transposed weight.
    const Quantization bq = quantization(node, b.shape, &b_dtype, 4, 0);
    ConstantValue transposed = b;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < k; ++j)
        transposed.values[static_cast<size_t>(i * k + j)] = b.values[static_cast<size_t>(j * n + i)];
    const TensorId weight = integer_constant(node.input(3), transposed, {n, k, 1, 1}, b_dtype, bq);
    const TensorId a4 = reshape(a, {m, k, 1, 1}, node.output(0) + ".a");
    const TensorId y = qconv2d(node, a4, weight, 8, Conv2dAttrs{}, node.output(0) + ".1x1");
    define(node, 0, reshape(y, {m, n}, node.output(0)));
  }

  void lower_QuantizeLinear(const NodeProto& node) {
    const TensorId x = tensor(node, 0);
    QuantizeAttrs a;
    a.quant = quantization(node, g_.tensor(x).shape, &a.dtype);
    define(node, 0, emit(OpKind::Quantize, std::move(a), {x}, node.output(0)));
  }

  void lower_DequantizeLinear(const NodeProto& node) {
    const Value& in = input(node, 0);
    DType dtype = DType::U8;
    const Quantization q = quantization(node, shape_of(in), &dtype);
    if (in.constant) {
      // A quantized weight or bias: dequantized here, by the evaluator (one definition of
      // the arithmetic), so that the operators reading it see a constant, as with the
      // shape arithmetic.
      Graph folded;
      std::vector<float> data(in.constant->values.begin(), in.constant->values.end());
      const TensorId c = folded.add_constant(node.input(0), in.constant->shape, data);
      folded.tensor(c).dtype = dtype;
      folded.tensor(c).quant = std::make_shared<const Quantization>(q);
      check_element_type(folded.tensor(c), ref_);
      append_node(folded, OpKind::Dequantize, NoAttrs{}, {c}, node.output(0), ref_);
      const aotc::Value integers{in.constant->shape, std::move(data)};
      const aotc::Value real = evaluate_node(folded, folded.nodes.back(), {&integers}).at(0);
      define(node, 0, ConstantValue{TensorProto::FLOAT, real.shape, {real.data.begin(), real.data.end()}});
      values_[node.output(0)].quantized = std::make_shared<const Tensor>(folded.tensor(c));
      return;
    }
    define(node, 0, emit(OpKind::Dequantize, NoAttrs{}, {quantized_tensor(node, 0, q, dtype)}, node.output(0)));
  }

  void lower_Cast(const NodeProto& node) {
    const auto to = static_cast<int32_t>(attr_int(node, "to", TensorProto::FLOAT));
    if (!is_constant(node, 0)) {
      const Value& in = input(node, 0);
      // torch.onnx.export writes a Cast to the same type between a QuantizeLinear and its DequantizeLinear.
      if (in.id != kNoTensor && quantized_dtype(to) == g_.tensor(in.id).dtype) return alias(node, 0, in);
      if (to != TensorProto::FLOAT) unsupported("Cast to ", elem_type_name(to), " of a value computed at run time");
      tensor(node, 0);  // refuses an integer tensor
      return alias(node, 0, in);
    }
    ConstantValue c = *input(node, 0).constant;
    c.elem_type = to;
    for (double& v : c.values) v = to_type(v, to);
    define(node, 0, c);
  }

  void lower_ConstantOfShape(const NodeProto& node) {
    const std::vector<int64_t> dims = constant_ints(node, 0, "shape");
    ConstantValue c;
    const onnx::AttributeProto* value = attribute(node, "value");
    const ConstantValue fill = value ? decode_tensor(value->t(), ref_ + ": value") : ConstantValue{TensorProto::FLOAT, {1}, {0.0}};
    if (fill.values.size() != 1) invalid("value must hold one element");
    c.elem_type = fill.elem_type;
    c.shape.assign(dims.begin(), dims.end());
    check_folded_size(c.shape);
    c.values.assign(static_cast<size_t>(num_elements(c.shape)), fill.values[0]);
    define(node, 0, c);
  }

  // The elements a Slice or Split takes of a tensor of `shape`: along each dim
  // from `begin`, every `step`-th, `extent` of them.
  struct Window {
    std::vector<int64_t> begin, step;
    Shape extent;
  };

  Window slice_window(const NodeProto& node, const Shape& shape) const {
    std::vector<int64_t> starts, ends, axes, steps;
    if (opset_ < 10) {
      starts = attr_ints(node, "starts");
      ends = attr_ints(node, "ends");
      axes = attr_ints(node, "axes");
    } else {
      starts = constant_ints(node, 1, "starts");
      ends = constant_ints(node, 2, "ends");
      if (has_input(node, 3)) axes = constant_ints(node, 3, "axes");
      if (has_input(node, 4)) steps = constant_ints(node, 4, "steps");
    }
    if (axes.empty())
      for (size_t d = 0; d < starts.size(); ++d) axes.push_back(static_cast<int64_t>(d));
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
      invalid("starts, ends, axes and steps differ in length");
    const size_t rank = shape.size();
    Window w{std::vector<int64_t>(rank, 0), std::vector<int64_t>(rank, 1), shape};
    for (size_t i = 0; i < starts.size(); ++i) {
      const auto d = static_cast<size_t>(normalized_axis(axes[i], rank));
      const int64_t n = shape[d];
      if (steps[i] == 0) invalid("step 0");
      w.step[d] = steps[i];
      const auto clip = [&](int64_t v, int64_t lo, int64_t hi) { return std::clamp(v < 0 ? v + n : v, lo, hi); };
      if (steps[i] > 0) {
        w.begin[d] = clip(starts[i], 0, n);
        const int64_t end = clip(ends[i], 0, n);
        w.extent[d] = std::max<int64_t>(0, (end - w.begin[d] + steps[i] - 1) / steps[i]);
      } else {
        w.begin[d] = clip(starts[i], -1, n - 1);
        const int64_t end = clip(ends[i], -1, n - 1);
        w.extent[d] = std::max<int64_t>(0, (w.begin[d] - end - steps[i] - 1) / -steps[i]);
      }
    }
    return w;
  }

  ConstantValue window_of_constant(const ConstantValue& data, const Window& w) const {
    ConstantValue c;
    c.elem_type = data.elem_type;
    c.shape = w.extent;
    const std::vector<int64_t> in_strides = strides(data.shape);
    for_each_index(w.extent, [&](const std::vector<int64_t>& index) {
      int64_t flat = 0;
      for (size_t d = 0; d < index.size(); ++d) flat += (w.begin[d] + index[d] * w.step[d]) * in_strides[d];
      c.values.push_back(data.values[static_cast<size_t>(flat)]);
    });
    return c;
  }

  // A window of a run-time tensor is a crop: a pad node with negative pads (the
  // IR's static slice) to [begin, begin + extent * step) along each dim (zeros
  // padded past the end where the last step reaches beyond it). A dim of step
  // s > 1 is then split into [extent, s] by a view, cropped to the first of the
  // s, and viewed back: every s-th element, exactly. A negative step -s is the
  // window of step s over the same elements, then reversed (gather_crops).
  void define_window(const NodeProto& node, int k, const Window& backwards) {
    if (is_constant(node, 0)) return define(node, k, window_of_constant(*input(node, 0).constant, backwards));
    const Shape in = input_shape(node, 0);
    Window w = backwards;
    std::vector<size_t> reversed;
    for (size_t d = 0; d < in.size(); ++d) {
      if (w.step[d] > 0 || w.extent[d] <= 1) continue;
      if (static_cast<size_t>(w.extent[d]) > kMaxGatheredIndices)
        unsupported("a step of ", w.step[d], " over ", w.extent[d], " elements of dim ", d,
                    " of a run-time tensor (aotc reverses at most ", kMaxGatheredIndices, " as crops)");
      w.begin[d] += (w.extent[d] - 1) * w.step[d];
      w.step[d] = -w.step[d];
      reversed.push_back(d);
    }
    const std::string name = reversed.empty() ? node.output(k) : node.output(k) + ".forward";
    PadAttrs crop;
    crop.pads.assign(2 * in.size(), 0);
    Shape shape = in;
    std::vector<size_t> strided;
    for (size_t d = 0; d < in.size(); ++d) {
      if (w.extent[d] < 1) unsupported("an empty slice of dim ", d, " (aotc's tensors have no empty dims)");
      const int64_t step = w.extent[d] > 1 ? w.step[d] : 1;
      if (step > 1) strided.push_back(d);
      shape[d] = w.extent[d] * step;
      crop.pads[d] = -w.begin[d];
      crop.pads[in.size() + d] = shape[d] - (in[d] - w.begin[d]);
    }
    if (!strided.empty() && in.size() > kMaxStridedRank)
      unsupported("a strided slice of a rank-", in.size(), " tensor (aotc's go to rank ", kMaxStridedRank, ")");
    const bool whole = std::all_of(crop.pads.begin(), crop.pads.end(), [](int64_t p) { return p == 0; });
    if (whole && strided.empty() && reversed.empty()) return alias(node, k, input(node, 0));
    TensorId x = whole ? tensor(node, 0) : emit(OpKind::Pad, crop, {tensor(node, 0)}, strided.empty() ? name : name + ".window");
    for (size_t i = 0; i < strided.size(); ++i) {
      const size_t d = strided[i];
      const int64_t step = w.step[d];
      Shape split = shape;
      split[d] = w.extent[d];
      split.insert(split.begin() + static_cast<std::ptrdiff_t>(d) + 1, step);
      x = emit(OpKind::Reshape, ReshapeAttrs{split}, {x}, name + ".split" + std::to_string(d));
      PadAttrs first;
      first.pads.assign(2 * split.size(), 0);
      first.pads[split.size() + d + 1] = -(step - 1);
      x = emit(OpKind::Pad, first, {x}, name + ".every" + std::to_string(d));
      shape[d] = w.extent[d];
      x = emit(OpKind::Reshape, ReshapeAttrs{shape}, {x}, i + 1 == strided.size() ? name : name + ".strided" + std::to_string(d));
    }
    for (size_t i = 0; i < reversed.size(); ++i) {
      const size_t d = reversed[i];
      std::vector<int64_t> descending(static_cast<size_t>(w.extent[d]));
      for (size_t j = 0; j < descending.size(); ++j) descending[j] = w.extent[d] - 1 - static_cast<int64_t>(j);
      x = gather_crops(x, d, descending,
                       i + 1 == reversed.size() ? node.output(k) : node.output(k) + ".reversed" + std::to_string(d));
    }
    define(node, k, x);
  }

  void lower_Slice(const NodeProto& node) { define_window(node, 0, slice_window(node, input_shape(node, 0))); }

  // Split along `axis` into the sizes of `split` (an attribute before opset
  // 13, an input from 13), or into equal parts, one per output.
  void lower_Split(const NodeProto& node) {
    const Shape in = input_shape(node, 0);
    const auto axis = static_cast<size_t>(normalized_axis(attr_int(node, "axis", 0), in.size()));
    std::vector<int64_t> sizes = opset_ < 13 ? attr_ints(node, "split")
                                             : (has_input(node, 1) ? constant_ints(node, 1, "split")
                                                                   : std::vector<int64_t>{});
    const auto parts = static_cast<int64_t>(node.output_size());
    if (sizes.empty()) {
      if (in[axis] % parts != 0) invalid("dim ", axis, " of ", to_string(in), " does not split into ", parts, " equal parts");
      sizes.assign(static_cast<size_t>(parts), in[axis] / parts);
    }
    if (static_cast<int64_t>(sizes.size()) != parts) invalid("split has ", sizes.size(), " sizes for ", parts, " outputs");
    int64_t offset = 0;
    for (int k = 0; k < node.output_size(); ++k) {
      const int64_t size = sizes[static_cast<size_t>(k)];
      if (size < 0 || offset + size > in[axis]) invalid("split sizes ", to_string(sizes), " exceed dim ", axis, " of ", to_string(in));
      Window w{std::vector<int64_t>(in.size(), 0), std::vector<int64_t>(in.size(), 1), in};
      w.begin[axis] = offset;
      w.extent[axis] = size;
      offset += size;
      if (!node.output(k).empty()) define_window(node, k, w);
    }
    if (offset != in[axis]) invalid("split sizes ", to_string(sizes), " do not add up to dim ", axis, " of ", to_string(in));
  }

  void lower_Range(const NodeProto& node) {
    require_constant_inputs(node);
    const double start = input(node, 0).constant->values.at(0), limit = input(node, 1).constant->values.at(0),
                 delta = input(node, 2).constant->values.at(0);
    if (delta == 0) invalid("delta 0");
    ConstantValue c;
    c.elem_type = input(node, 0).constant->elem_type;
    const auto n = static_cast<int64_t>(std::max(0.0, std::ceil((limit - start) / delta)));
    if (n > (int64_t{1} << 24)) unsupported("a Range of ", n, " values");
    for (int64_t i = 0; i < n; ++i) c.values.push_back(to_type(start + static_cast<double>(i) * delta, c.elem_type));
    c.shape = {n};
    define(node, 0, c);
  }

  void lower_Equal(const NodeProto& node) {
    require_constant_inputs(node);
    define(node, 0, fold_binary(node, [](double a, double b) { return a == b ? 1.0 : 0.0; }, TensorProto::BOOL));
  }

  void lower_Where(const NodeProto& node) {
    require_constant_inputs(node);
    const ConstantValue& cond = *input(node, 0).constant;
    const ConstantValue& x = *input(node, 1).constant;
    const ConstantValue& y = *input(node, 2).constant;
    ConstantValue out;
    out.elem_type = x.elem_type;
    out.shape = broadcast_shapes(broadcast_shapes(cond.shape, x.shape, ref_), y.shape, ref_);
    check_folded_size(out.shape);
    for_each_index(out.shape, [&](const std::vector<int64_t>& index) {
      const bool pick = cond.values[static_cast<size_t>(broadcast_index(index, out.shape, cond.shape))] != 0;
      const ConstantValue& from = pick ? x : y;
      out.values.push_back(from.values[static_cast<size_t>(broadcast_index(index, out.shape, from.shape))]);
    });
    define(node, 0, out);
  }

  // Expand of a run-time tensor: a product with ones of the output's shape in
  // the dims x broadcasts along (1 elsewhere), exact.
  void expand_run_time(const NodeProto& node, const std::vector<int64_t>& dims) {
    const Shape in = input_shape(node, 0);
    const Shape out = broadcast_shapes(in, Shape(dims.begin(), dims.end()), ref_);
    if (out == in) return alias(node, 0, input(node, 0));
    Shape ones_shape(out.size(), 1);
    for (size_t d = 0; d < out.size(); ++d) {
      const size_t lead = out.size() - in.size();
      if (d < lead || in[d - lead] == 1) ones_shape[d] = out[d];
    }
    const TensorId ones = g_.add_constant(g_.unique_name(node.output(0) + ".ones"), ones_shape,
                                          std::vector<float>(static_cast<size_t>(num_elements(ones_shape)), 1.0f));
    define(node, 0, emit(OpKind::Mul, NoAttrs{}, {tensor(node, 0), ones}, node.output(0)));
  }

  void lower_Expand(const NodeProto& node) {
    if (!is_constant(node, 0)) return expand_run_time(node, constant_ints(node, 1, "shape"));
    require_constant_inputs(node);
    const ConstantValue& x = *input(node, 0).constant;
    const std::vector<int64_t> dims = constant_ints(node, 1, "shape");
    ConstantValue out;
    out.elem_type = x.elem_type;
    out.shape = broadcast_shapes(x.shape, Shape(dims.begin(), dims.end()), ref_);
    check_folded_size(out.shape);
    for_each_index(out.shape, [&](const std::vector<int64_t>& index) {
      out.values.push_back(x.values[static_cast<size_t>(broadcast_index(index, out.shape, x.shape))]);
    });
    define(node, 0, out);
  }

  void lower_Neg(const NodeProto& node) {
    if (is_constant(node, 0)) {
      ConstantValue c = *input(node, 0).constant;
      for (double& v : c.values) v = -v;
      return define(node, 0, c);
    }
    define(node, 0, emit(OpKind::Mul, NoAttrs{}, {tensor(node, 0), scalar_constant(node.output(0) + ".minus_one", -1)},
                         node.output(0)));
  }

  // ---- State -------------------------------------------------------------------------

  void add_graph_input(const onnx::ValueInfoProto& input);
  void add_graph_output(const onnx::ValueInfoProto& output);
  void record_inferred(const onnx::ValueInfoProto& info);

  const onnx::GraphProto& graph_;
  const int opset_;
  const std::string path_;
  std::string ref_;  // the file, and the node being lowered, for messages
  Graph g_;
  std::map<std::string, Value> values_;
  std::map<std::string, Shape> inferred_;  // static shapes ONNX inferred
  std::map<std::string, int> used_;              // how many node inputs and graph outputs read a name
};

const std::map<std::string, Handler>& Lowering::handlers() {
  static const std::map<std::string, Handler> table = {
      {"Add", &Lowering::lower_Add},
      {"AveragePool", &Lowering::lower_AveragePool},
      {"BatchNormalization", &Lowering::lower_BatchNormalization},
      {"Cast", &Lowering::lower_Cast},
      {"Clip", &Lowering::lower_Clip},
      {"DequantizeLinear", &Lowering::lower_DequantizeLinear},
      {"QLinearConv", &Lowering::lower_QLinearConv},
      {"QLinearMatMul", &Lowering::lower_QLinearMatMul},
      {"QuantizeLinear", &Lowering::lower_QuantizeLinear},
      {"Concat", &Lowering::lower_Concat},
      {"Constant", &Lowering::lower_Constant},
      {"ConstantOfShape", &Lowering::lower_ConstantOfShape},
      {"Conv", &Lowering::lower_Conv},
      {"ConvTranspose", &Lowering::lower_ConvTranspose},
      {"DepthToSpace", &Lowering::lower_DepthToSpace},
      {"Div", &Lowering::lower_Div},
      {"Dropout", &Lowering::lower_Dropout},
      {"Elu", &Lowering::lower_Elu},
      {"Equal", &Lowering::lower_Equal},
      {"Expand", &Lowering::lower_Expand},
      {"Flatten", &Lowering::lower_Flatten},
      {"Gather", &Lowering::lower_Gather},
      {"Gemm", &Lowering::lower_Gemm},
      {"GlobalAveragePool", &Lowering::lower_GlobalAveragePool},
      {"GlobalMaxPool", &Lowering::lower_GlobalMaxPool},
      {"HardSigmoid", &Lowering::lower_HardSigmoid},
      {"HardSwish", &Lowering::lower_HardSwish},
      {"Identity", &Lowering::lower_Identity},
      {"LeakyRelu", &Lowering::lower_LeakyRelu},
      {"MatMul", &Lowering::lower_MatMul},
      {"Max", &Lowering::lower_Max},
      {"MaxPool", &Lowering::lower_MaxPool},
      {"Mean", &Lowering::lower_Mean},
      {"Min", &Lowering::lower_Min},
      {"Mul", &Lowering::lower_Mul},
      {"Neg", &Lowering::lower_Neg},
      {"PRelu", &Lowering::lower_PRelu},
      {"Pad", &Lowering::lower_Pad},
      {"Range", &Lowering::lower_Range},
      {"ReduceMax", &Lowering::lower_ReduceMax},
      {"ReduceMean", &Lowering::lower_ReduceMean},
      {"ReduceMin", &Lowering::lower_ReduceMin},
      {"Relu", &Lowering::lower_Relu},
      {"Reshape", &Lowering::lower_Reshape},
      {"Resize", &Lowering::lower_Resize},
      {"Shape", &Lowering::lower_Shape},
      {"Sigmoid", &Lowering::lower_Sigmoid},
      {"Slice", &Lowering::lower_Slice},
      {"Softmax", &Lowering::lower_Softmax},
      {"Softplus", &Lowering::lower_Softplus},
      {"Split", &Lowering::lower_Split},
      {"SpaceToDepth", &Lowering::lower_SpaceToDepth},
      {"Squeeze", &Lowering::lower_Squeeze},
      {"Sub", &Lowering::lower_Sub},
      {"Sum", &Lowering::lower_Sum},
      {"Tanh", &Lowering::lower_Tanh},
      {"Transpose", &Lowering::lower_Transpose},
      {"Unsqueeze", &Lowering::lower_Unsqueeze},
      {"Upsample", &Lowering::lower_Upsample},
      {"Where", &Lowering::lower_Where},
  };
  return table;
}

void Lowering::record_inferred(const onnx::ValueInfoProto& info) {
  if (!info.type().has_tensor_type() || !info.type().tensor_type().has_shape()) return;
  Shape shape;
  for (const auto& d : info.type().tensor_type().shape().dim()) {
    if (!d.has_dim_value()) return;
    shape.push_back(d.dim_value());
  }
  inferred_[info.name()] = shape;
}

void Lowering::add_graph_input(const onnx::ValueInfoProto& input) {
  const std::string& name = input.name();
  ref_ = path_ + ": graph input '" + name + "'";
  // float32, int8 or uint8: the reader checked. An integer input takes its quantization
  // from the DequantizeLinear that reads it.
  const auto& type = input.type().tensor_type();
  if (!type.has_shape()) unsupported("has no shape; fix it with --input-shape ", name, "=D0,D1,...");
  Tensor t;
  t.name = g_.unique_name(name);
  if (type.elem_type() == TensorProto::UINT8) t.dtype = DType::U8;
  if (type.elem_type() == TensorProto::INT8) t.dtype = DType::I8;
  for (int i = 0; i < type.shape().dim_size(); ++i) {
    const auto& d = type.shape().dim(i);
    if (!d.has_dim_value() || d.dim_value() < 1)
      unsupported("dim ", i, " is ", d.has_dim_param() ? "'" + d.dim_param() + "'" : std::string("unknown"),
                  "; aotc compiles fixed shapes: fix it with --input-shape ", name, "=D0,D1,...");
    t.shape.push_back(d.dim_value());
  }
  const TensorId id = g_.add_tensor(std::move(t));
  g_.inputs.push_back(id);
  values_[name] = Value{id, nullptr, nullptr};
}

void Lowering::add_graph_output(const onnx::ValueInfoProto& output) {
  const std::string& name = output.name();
  ref_ = path_ + ": graph output '" + name + "'";
  const Value& v = value(name);
  if (v.id == kNoTensor)
    unsupported("is a constant (", v.constant ? elem_type_name(v.constant->elem_type) : "", "); aotc compiles "
                "outputs computed from the inputs");
  const int32_t declared = output.type().tensor_type().elem_type();
  const DType dtype = g_.tensor(v.id).dtype;
  if ((declared == TensorProto::UINT8) != (dtype == DType::U8) || (declared == TensorProto::INT8) != (dtype == DType::I8))
    unsupported("is ", elem_type_name(declared), " but aotc computes ", dtype_name(dtype), " there");
  // The library's output keeps the model's name where it is free.
  Tensor& t = g_.tensor(v.id);
  if (t.name != name && !is_graph_input(g_, v.id) && !is_graph_output(g_, v.id)) {
    bool taken = false;
    for (const Tensor& other : g_.tensors) taken = taken || other.name == name;
    if (!taken) t.name = name;
  }
  g_.outputs.push_back(v.id);
}

Graph Lowering::run() {
  for (const TensorProto& t : graph_.initializer())
    values_[t.name()] = Value{kNoTensor, std::make_shared<const ConstantValue>(
                                             decode_tensor(t, path_ + ": initializer '" + t.name() + "'")),
                              nullptr};
  for (const onnx::ValueInfoProto& input : graph_.input())
    if (!values_.count(input.name())) add_graph_input(input);
  for (const onnx::ValueInfoProto& info : graph_.value_info()) record_inferred(info);
  for (const onnx::ValueInfoProto& info : graph_.output()) record_inferred(info);
  for (const NodeProto& node : graph_.node())
    for (const std::string& name : node.input()) ++used_[name];
  for (const onnx::ValueInfoProto& output : graph_.output()) ++used_[output.name()];

  for (int i = 0; i < graph_.node_size(); ++i) {
    const NodeProto& node = graph_.node(i);
    const std::string label = node.name().empty() ? detail::concat("#", i) : node.name();
    ref_ = detail::concat(path_, ": node '", label, "' (", node.op_type(), ")");
    const auto handler = handlers().find(node.op_type());
    AOTC_CHECK(handler != handlers().end(), "the census let ", node.op_type(), " through");
    if (node.output_size() < 1) invalid("has no output");
    (this->*handler->second)(node);
  }
  for (const onnx::ValueInfoProto& output : graph_.output()) add_graph_output(output);
  if (g_.inputs.empty()) fail(ExitCode::kUnsupported, path_, ": the model has no input computed at run time");
  for (const TensorId id : g_.inputs)
    if (is_integer(g_.tensor(id).dtype) && !g_.tensor(id).quant)
      fail(ExitCode::kUnsupported, path_, ": graph input '", g_.tensor(id).name, "' (", dtype_name(g_.tensor(id).dtype),
           ") is read by no DequantizeLinear, QLinearConv or QLinearMatMul, which would give its scale and "
           "zero point");
  return std::move(g_);
}

}  // namespace

bool is_supported_op(const std::string& op_type) { return Lowering::handlers().count(op_type) != 0; }

std::string supported_op_list() {
  std::string list;
  for (const auto& [op, handler] : Lowering::handlers()) list += (list.empty() ? "" : ", ") + op;
  return list;
}

Graph lower_graph(const onnx::ModelProto& model, int opset, const std::string& path) {
  return Lowering(model, opset, path).run();
}

}  // namespace aotc::onnx_frontend
