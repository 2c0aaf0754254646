#include "frontends/tflite/tflite_lowering.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "frontends/tflite/tflite_constants.h"
#include "frontends/tflite/tflite_names.h"
#include "ir/shape_rules.h"
#include "support/error.h"

namespace aotc::tflite {
namespace {

using flatbuffers::uoffset_t;
using tfl::ActivationFunctionType;
using tfl::BuiltinOperator;

// y.shape[i] = x.shape[perm[i]].
const std::vector<int> kNhwcToNchw{0, 3, 1, 2};
const std::vector<int> kNchwToNhwc{0, 2, 3, 1};

Shape permuted(const Shape& shape, const std::vector<int>& perm) {
  Shape out;
  for (int d : perm) out.push_back(shape[static_cast<size_t>(d)]);
  return out;
}

// The row-major data of a tensor of `shape` transposed by `perm` (as above).
std::vector<float> permuted(const std::vector<float>& data, const Shape& shape, const std::vector<int>& perm) {
  const size_t rank = shape.size();
  const Shape out_shape = permuted(shape, perm);
  std::vector<int64_t> in_strides(rank, 1);
  for (size_t d = rank; d-- > 1;) in_strides[d - 1] = in_strides[d] * shape[d];
  std::vector<float> out(data.size());
  std::vector<int64_t> index(rank, 0);  // index into the output
  for (float& v : out) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d) offset += index[d] * in_strides[static_cast<size_t>(perm[d])];
    v = data[static_cast<size_t>(offset)];
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < out_shape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

const char* padding_name(tfl::Padding p) { return p == tfl::Padding::SAME ? "SAME" : "VALID"; }

class Lowering {
 public:
  Lowering(const tfl::Model& model, const tfl::SubGraph& graph, const std::string& path)
      : model_(model), graph_(graph), path_(path), slots_(graph.tensors()->size()) {}

  Graph run() {
    for (const int32_t t : *graph_.inputs()) add_graph_input(t);
    const size_t count = graph_.operators() ? graph_.operators()->size() : 0;
    for (size_t i = 0; i < count; ++i) {
      const tfl::Operator& op = *graph_.operators()->Get(static_cast<uoffset_t>(i));
      op_ref_ = detail::concat(path_, ": operator #", i, " (", operator_name(model_, op), ")");
      lower(op);
    }
    op_ref_ = path_;
    for (const int32_t t : *graph_.outputs()) add_graph_output(t);
    return std::move(g_);
  }

 private:
  // The IR forms of one TFLite tensor. `file` has the file's shape (NHWC for
  // 4-D); `nchw` is the IR's layout of a 4-D tensor. Either may be made from the
  // other on demand, once. `folded` holds compile-time results (DEQUANTIZE,
  // DENSIFY) in the file's layout.
  struct Slot {
    TensorId file = kNoTensor;
    TensorId nchw = kNoTensor;
    std::shared_ptr<const std::vector<float>> folded;
  };

  // ---- Messages ---------------------------------------------------------------

  template <typename... Args>
  [[noreturn]] void invalid(const Args&... args) const {
    fail(ExitCode::kInvalidModel, op_ref_, ": ", args...);
  }
  template <typename... Args>
  [[noreturn]] void unsupported(const Args&... args) const {
    fail(ExitCode::kUnsupported, op_ref_, ": ", args...);
  }

  int builtin_code(const tfl::Operator& op) const {
    return tflite::builtin_code(*model_.operator_codes()->Get(op.opcode_index()));
  }

  // ---- Tensors ----------------------------------------------------------------

  const tfl::Tensor& tensor(int32_t t) const { return *graph_.tensors()->Get(static_cast<uoffset_t>(t)); }

  std::string tensor_name(int32_t t) const {
    const auto* name = tensor(t).name();
    return name && name->size() > 0 ? name->str() : detail::concat("t", t);
  }

  std::string what(int32_t t) const { return tensor_ref(graph_, static_cast<size_t>(t)); }

  // `what(t)` after the file and operator: the context tflite_constants.h puts in its messages.
  std::string located(int32_t t) const { return detail::concat(op_ref_, ": ", what(t)); }

  Shape file_shape(int32_t t) const { return declared_shape(tensor(t)); }

  bool is_constant(int32_t t) const {
    return slots_[static_cast<size_t>(t)].folded != nullptr || buffer_bytes(model_, tensor(t)) != nullptr;
  }

  // A constant's values in the file's layout (float16 widened).
  std::vector<float> constant_values(int32_t t) const {
    const Slot& slot = slots_[static_cast<size_t>(t)];
    if (slot.folded) return *slot.folded;
    const auto* bytes = buffer_bytes(model_, tensor(t));
    if (!bytes) unsupported(what(t), " must be a constant (aotc compiles models with fixed weights and shapes)");
    if (tensor(t).sparsity()) unsupported(what(t), " is sparse but is not read through DENSIFY");
    if (is_quantized_type(tensor(t).type())) return dequantize_int8(tensor(t), *bytes, located(t));
    return decode_float(tensor(t), *bytes, located(t));
  }

  std::vector<int64_t> constant_integers(int32_t t) const {
    const auto* bytes = buffer_bytes(model_, tensor(t));
    if (!bytes) unsupported(what(t), " must be a constant");
    return decode_integers(tensor(t), *bytes, located(t));
  }

  // The tensor in the file's layout, as a float reader sees it (readable()).
  TensorId file_form(int32_t t) { return readable(stored_file_form(t)); }

  // The tensor in the file's layout, of its own element type (an int8 tensor's layout
  // conversions move its integers).
  TensorId stored_file_form(int32_t t) {
    Slot& slot = slots_[static_cast<size_t>(t)];
    if (slot.file != kNoTensor) return slot.file;
    if (is_constant(t)) {
      slot.file = g_.add_constant(g_.unique_name(tensor_name(t)), file_shape(t), constant_values(t));
    } else {
      AOTC_CHECK(slot.nchw != kNoTensor, "tensor ", t, " is read before it is defined");
      slot.file = transpose(slot.nchw, kNchwToNhwc, tensor_name(t) + ".nhwc");
    }
    return slot.file;
  }

  // A 4-D tensor in NCHW; any other tensor as in the file; as a float reader sees it.
  TensorId nchw_form(int32_t t) { return readable(stored_nchw_form(t)); }

  TensorId stored_nchw_form(int32_t t) {
    if (file_shape(t).size() != 4) return stored_file_form(t);
    Slot& slot = slots_[static_cast<size_t>(t)];
    if (slot.nchw != kNoTensor) return slot.nchw;
    if (is_constant(t)) {
      slot.nchw = g_.add_constant(g_.unique_name(tensor_name(t) + ".nchw"), permuted(file_shape(t), kNhwcToNchw),
                                  permuted(constant_values(t), file_shape(t), kNhwcToNchw));
    } else {
      slot.nchw = transpose(stored_file_form(t), kNhwcToNchw, tensor_name(t) + ".nchw");
    }
    return slot.nchw;
  }

  // An operand of a broadcasting op whose output is 4-D (NHWC in the file): as a
  // 4-D NCHW tensor. Lower ranks align with the file's trailing (channel) dims.
  TensorId broadcast_operand_nchw(int32_t t) {
    const Shape shape = file_shape(t);
    if (shape.size() == 4) return nchw_form(t);
    if (shape.size() > 4) unsupported(what(t), " has rank ", shape.size(), " in a 4-D broadcast");
    Shape nhwc(4 - shape.size(), 1);
    nhwc.insert(nhwc.end(), shape.begin(), shape.end());
    if (is_constant(t))
      return g_.add_constant(g_.unique_name(tensor_name(t) + ".nchw"), permuted(nhwc, kNhwcToNchw),
                             permuted(constant_values(t), nhwc, kNhwcToNchw));
    const TensorId lifted = emit(OpKind::Reshape, ReshapeAttrs{nhwc}, {file_form(t)}, tensor_name(t) + ".4d");
    return transpose(lifted, kNhwcToNchw, tensor_name(t) + ".nchw");
  }

  // The form a layout-agnostic (elementwise) op can read without a conversion.
  std::pair<TensorId, bool> existing_form(int32_t t) {
    const Slot& slot = slots_[static_cast<size_t>(t)];
    if (slot.nchw != kNoTensor && slot.file == kNoTensor) return {readable(slot.nchw), true};
    return {file_form(t), false};
  }

  TensorId transpose(TensorId x, const std::vector<int>& perm, const std::string& name) {
    return emit(OpKind::Transpose, TransposeAttrs{perm}, {x}, name);
  }

  // Appends one node; its output's shape comes from the IR's shape rules.
  TensorId emit(OpKind op, Attrs attrs, std::vector<TensorId> inputs, const std::string& name) {
    return append_node(g_, op, std::move(attrs), std::move(inputs), name, op_ref_);
  }

  TensorId add_constant(const std::string& name, Shape shape, std::vector<float> data) {
    return g_.add_constant(g_.unique_name(name), std::move(shape), std::move(data));
  }

  // Records `id` as TFLite tensor `t` (in NCHW if `nchw`), after checking it
  // against the shape the file declares.
  void define(int32_t t, TensorId id, bool nchw) {
    const Shape declared = file_shape(t);
    Shape computed = g_.tensor(id).shape;
    if (nchw && computed.size() == 4) computed = permuted(computed, kNchwToNhwc);
    if (!declared.empty() && computed != declared)
      invalid("output ", what(t), " is declared ", to_string(declared), " but the operator computes ",
              to_string(computed));
    Slot& slot = slots_[static_cast<size_t>(t)];
    (nchw && computed.size() == 4 ? slot.nchw : slot.file) = id;
    if (computed.size() != 4) slot.nchw = slot.file;
  }

  void add_graph_input(int32_t t) {
    if (tensor(t).type() != tfl::TensorType::FLOAT32 && !is_quantized_type(tensor(t).type()))
      fail(ExitCode::kUnsupported, path_, ": graph input ", what(t), " has type ",
           tfl::EnumNameTensorType(tensor(t).type()), "; aotc compiles float32, int8 and uint8 inputs");
    Tensor input;
    input.name = g_.unique_name(tensor_name(t));
    input.shape = file_shape(t);
    if (is_quantized_type(tensor(t).type())) {
      input.dtype = integer_dtype(t);
      input.quant = std::make_shared<const Quantization>(activation_quantization(t));
    }
    for (const int64_t d : input.shape)
      if (d < 1) fail(ExitCode::kUnsupported, path_, ": graph input ", what(t), " has a dimension ", d, " (aotc needs fixed shapes)");
    const TensorId id = g_.add_tensor(std::move(input));
    g_.inputs.push_back(id);
    slots_[static_cast<size_t>(t)].file = id;
    if (file_shape(t).size() != 4) slots_[static_cast<size_t>(t)].nchw = id;
  }

  void add_graph_output(int32_t t) {
    if (is_constant(t) && slots_[static_cast<size_t>(t)].file == kNoTensor && slots_[static_cast<size_t>(t)].nchw == kNoTensor)
      fail(ExitCode::kUnsupported, path_, ": graph output ", what(t), " is a constant");
    const TensorId id = stored_file_form(t);
    // The output keeps the file's name, also when it is a layout conversion.
    const Slot& slot = slots_[static_cast<size_t>(t)];
    if (slot.nchw != kNoTensor && slot.nchw != id && g_.tensor(slot.nchw).name == tensor_name(t))
      std::swap(g_.tensor(slot.nchw).name, g_.tensor(id).name);
    g_.outputs.push_back(id);
  }

  // ---- Operands and options ------------------------------------------------------

  size_t input_count(const tfl::Operator& op) const { return op.inputs() ? op.inputs()->size() : 0; }

  // Operator input k (-1 where `optional` and absent).
  int32_t input(const tfl::Operator& op, size_t k, bool optional = false) const {
    const auto* inputs = op.inputs();
    const int32_t t = inputs && k < inputs->size() ? inputs->Get(static_cast<uoffset_t>(k)) : -1;
    if (t == -1 && !optional) invalid("input ", k, " is missing (", input_count(op), " inputs)");
    return t;
  }

  int32_t output(const tfl::Operator& op) const {
    if (op.outputs()->size() != 1) unsupported("has ", op.outputs()->size(), " outputs; aotc expects 1");
    return op.outputs()->Get(0);
  }

  void expect_inputs(const tfl::Operator& op, size_t lo, size_t hi) const {
    if (input_count(op) < lo || input_count(op) > hi)
      invalid("has ", input_count(op), " inputs, expected ", lo == hi ? detail::concat(lo) : detail::concat(lo, " to ", hi));
  }

  template <typename T>
  const T* options(const tfl::Operator& op) const {
    return op.builtin_options_as<T>();
  }
  template <typename T>
  const T& required_options(const tfl::Operator& op, const char* name) const {
    const T* o = options<T>(op);
    if (!o) invalid("has no ", name);
    return *o;
  }

  // The fused activation applied to `x` (a node named `name`), or x itself.
  TensorId activate(TensorId x, ActivationFunctionType f, const std::string& name) {
    switch (f) {
      case ActivationFunctionType::NONE: return x;
      case ActivationFunctionType::RELU: return emit(OpKind::Relu, NoAttrs{}, {x}, name);
      case ActivationFunctionType::RELU6: return emit(OpKind::Clamp, ClampAttrs{0, 6}, {x}, name);
      case ActivationFunctionType::RELU_N1_TO_1: return emit(OpKind::Clamp, ClampAttrs{-1, 1}, {x}, name);
      case ActivationFunctionType::TANH: return emit(OpKind::Tanh, NoAttrs{}, {x}, name);
      default: unsupported("fused activation ", tfl::EnumNameActivationFunctionType(f), " is not supported");
    }
  }

  // The name of an op's own node: the output's name, unless an activation follows.
  static std::string pre_activation_name(const std::string& name, ActivationFunctionType f) {
    return f == ActivationFunctionType::NONE ? name : name + ".preact";
  }

  // TFLite's padding of one spatial dim (tensorflow/lite/kernels/padding.h):
  // SAME gives ceil(in / stride) outputs, the extra half-pixel at the end.
  std::pair<int, int> window_padding(tfl::Padding padding, int64_t in, int64_t kernel, int stride, int dilation) const {
    if (stride < 1 || dilation < 1) invalid("stride ", stride, " and dilation ", dilation, " must be positive");
    if (padding != tfl::Padding::SAME) return {0, 0};
    const int64_t extent = int64_t{dilation} * (kernel - 1) + 1;
    const int64_t out = (in + stride - 1) / stride;
    const int64_t total = std::max<int64_t>((out - 1) * stride + extent - in, 0);
    return {static_cast<int>(total / 2), static_cast<int>(total - total / 2)};
  }

  std::array<int, 4> window_pads(tfl::Padding padding, const Shape& nchw, int64_t kh, int64_t kw,
                                 std::array<int, 2> stride, std::array<int, 2> dilation) const {
    const auto [top, bottom] = window_padding(padding, nchw[2], kh, stride[0], dilation[0]);
    const auto [left, right] = window_padding(padding, nchw[3], kw, stride[1], dilation[1]);
    return {top, left, bottom, right};
  }

  // A 4-D activation operand in NCHW.
  TensorId image_operand(int32_t t) {
    if (file_shape(t).size() != 4) unsupported(what(t), " must be 4-D (NHWC), got ", to_string(file_shape(t)));
    return nchw_form(t);
  }

  // A constant weight tensor of rank `rank`, permuted by `perm` into the IR's layout.
  TensorId weight(int32_t t, size_t rank, const std::vector<int>& perm) {
    const Shape shape = file_shape(t);
    if (shape.size() != rank) invalid(what(t), " must have rank ", rank, ", got ", to_string(shape));
    if (holds_quantized_integers(t)) return quantized_weight(t, perm);
    std::vector<float> values = constant_values(t);
    if (perm.empty()) return add_constant(tensor_name(t), shape, std::move(values));
    return add_constant(tensor_name(t), permuted(shape, perm), permuted(values, shape, perm));
  }

  // An optional bias input (index k): a constant of `channels` values.
  std::vector<TensorId> bias(const tfl::Operator& op, size_t k, int64_t channels) {
    const int32_t t = input(op, k, true);
    if (t == -1) return {};
    if (file_shape(t) != Shape{channels})
      invalid("bias ", what(t), " must have shape [", channels, "], got ", to_string(file_shape(t)));
    if (holds_quantized_integers(t) && is_quantized_type(tensor(input(op, 0)).type()))
      check_bias_scale(t, input(op, 0), input(op, 1));
    return {weight(t, 1, {})};
  }

  // TFLite adds an int32 bias to the accumulator of input x filter products, whatever scale
  // the file gives it: a scale other than theirs would mean another model than the file says.
  void check_bias_scale(int32_t bias, int32_t x, int32_t filter) const {
    const Quantization b = quantization_of(bias, file_shape(bias), {});
    const Quantization xq = activation_quantization(x);
    const Quantization wq = quantization_of(filter, file_shape(filter), {});
    for (size_t c = 0; c < static_cast<size_t>(file_shape(bias)[0]); ++c) {
      const double product = double{xq.scale[0]} * wq.scale[wq.axis < 0 ? 0 : c];
      const double scale = b.scale[b.axis < 0 ? 0 : c];
      if (std::abs(scale - product) > 1e-6 * product)
        invalid("bias ", what(bias), " has scale ", scale, " for output channel ", c, " but its input and filter scales make ",
                product, " (TFLite adds the bias to their products' sum)");
    }
  }

  // ---- Operators ----------------------------------------------------------------

  // An operator that reads or writes int8/uint8 tensors runs as its float lowering between
  // dequantize and quantize steps (TFLite's rounding); quantize-ops then makes integer ops
  // of the patterns it knows (docs/int8.md), the rest stays a float island.
  void lower(const tfl::Operator& op) {
    const int code = builtin_code(op);
    if (code == static_cast<int>(BuiltinOperator::QUANTIZE)) return lower_quantize(op);
    if (code == static_cast<int>(BuiltinOperator::DEQUANTIZE) && !is_constant(input(op, 0))) return lower_dequantize(op);
    // Folded at compile time: constants of any type in, constants out.
    if (code == static_cast<int>(BuiltinOperator::DEQUANTIZE) || code == static_cast<int>(BuiltinOperator::DENSIFY))
      return lower_float(op, code);
    const bool quantized = reads_or_writes_integers(op);
    float_reads_ = quantized;
    lower_float(op, code);
    float_reads_ = false;
    if (quantized && is_quantized_type(tensor(output(op)).type())) quantize_output(output(op));
  }

  void lower_float(const tfl::Operator& op, int code) {
    switch (static_cast<BuiltinOperator>(code)) {
      case BuiltinOperator::CONV_2D: return lower_conv2d(op, false);
      case BuiltinOperator::DEPTHWISE_CONV_2D: return lower_conv2d(op, true);
      case BuiltinOperator::FULLY_CONNECTED: return lower_fully_connected(op);
      case BuiltinOperator::ADD: return lower_binary(op, code);
      case BuiltinOperator::MUL: return lower_binary(op, code);
      case BuiltinOperator::SUB: return lower_binary(op, code);
      case BuiltinOperator::PAD: return lower_pad(op);
      case BuiltinOperator::MAX_POOL_2D: return lower_pool(op, true);
      case BuiltinOperator::AVERAGE_POOL_2D: return lower_pool(op, false);
      case BuiltinOperator::MEAN: return lower_mean(op);
      case BuiltinOperator::RESHAPE: return lower_reshape(op);
      case BuiltinOperator::CONCATENATION: return lower_concat(op);
      case BuiltinOperator::RELU: return lower_unary(op, OpKind::Relu, NoAttrs{});
      case BuiltinOperator::RELU6: return lower_unary(op, OpKind::Clamp, ClampAttrs{0, 6});
      case BuiltinOperator::LOGISTIC: return lower_unary(op, OpKind::Sigmoid, NoAttrs{});
      case BuiltinOperator::TANH: return lower_unary(op, OpKind::Tanh, NoAttrs{});
      case BuiltinOperator::HARD_SWISH: return lower_unary(op, OpKind::HardSwish, NoAttrs{});
      case BuiltinOperator::PRELU: return lower_prelu(op);
      case BuiltinOperator::SOFTMAX: return lower_softmax(op);
      case BuiltinOperator::RESIZE_BILINEAR: return lower_resize(op, true);
      case BuiltinOperator::RESIZE_NEAREST_NEIGHBOR: return lower_resize(op, false);
      case BuiltinOperator::TRANSPOSE_CONV: return lower_transpose_conv(op);
      case BuiltinOperator::CUSTOM: return lower_transpose_conv_bias(op);
      case BuiltinOperator::DEPTH_TO_SPACE: return lower_depth_to_space(op);
      case BuiltinOperator::DEQUANTIZE: return fold_dequantize(op);
      case BuiltinOperator::DENSIFY: return fold_densify(op);
      default: break;
    }
    AOTC_CHECK(false, "the census admitted ", operator_name(model_, op), " but it has no lowering");
  }

  void lower_conv2d(const tfl::Operator& op, bool depthwise) {
    expect_inputs(op, 2, 3);
    const int32_t out = output(op);
    const TensorId x = image_operand(input(op, 0));
    const Shape xs = g_.tensor(x).shape;  // a copy: adding tensors moves them
    const Shape ws = file_shape(input(op, 1));
    if (ws.size() != 4) invalid("filter ", what(input(op, 1)), " must be 4-D, got ", to_string(ws));
    std::array<int, 2> stride, dilation;
    tfl::Padding padding;
    ActivationFunctionType act;
    Conv2dAttrs a;
    TensorId w;
    if (depthwise) {
      // Filter [1, KH, KW, C*M] -> [C*M, 1, KH, KW], one group per input channel.
      const auto& o = required_options<tfl::DepthwiseConv2DOptions>(op, "DepthwiseConv2DOptions");
      stride = {o.stride_h(), o.stride_w()};
      dilation = {o.dilation_h_factor(), o.dilation_w_factor()};
      padding = o.padding();
      act = o.fused_activation_function();
      if (ws[0] != 1 || ws[3] % xs[1] != 0)
        invalid("depthwise filter ", to_string(ws), " does not fit ", xs[1], " input channels");
      w = weight(input(op, 1), 4, {3, 0, 1, 2});
      a.groups = static_cast<int>(xs[1]);
    } else {
      // Filter [O, KH, KW, I] -> [O, I, KH, KW]; I < C means grouped convolution.
      const auto& o = required_options<tfl::Conv2DOptions>(op, "Conv2DOptions");
      stride = {o.stride_h(), o.stride_w()};
      dilation = {o.dilation_h_factor(), o.dilation_w_factor()};
      padding = o.padding();
      act = o.fused_activation_function();
      if (ws[3] < 1 || xs[1] % ws[3] != 0)
        invalid("filter ", to_string(ws), " does not fit ", xs[1], " input channels");
      w = weight(input(op, 1), 4, {0, 3, 1, 2});
      a.groups = static_cast<int>(xs[1] / ws[3]);
    }
    a.stride = stride;
    a.dilation = dilation;
    a.pad = window_pads(padding, xs, ws[1], ws[2], stride, dilation);
    emit_weighted(op, out, OpKind::Conv2d, a, x, w, 2, depthwise ? ws[3] : ws[0], act);
  }

  // A convolution-like node over (x, w, the optional bias input `bias_input` of
  // `channels` values) with its fused activation, defining `out` in NCHW.
  void emit_weighted(const tfl::Operator& op, int32_t out, OpKind kind, Attrs attrs, TensorId x, TensorId w,
                     size_t bias_input, int64_t channels, ActivationFunctionType act) {
    std::vector<TensorId> inputs{x, w};
    for (const TensorId b : bias(op, bias_input, channels)) inputs.push_back(b);
    const std::string name = tensor_name(out);
    const TensorId y = emit(kind, std::move(attrs), inputs, pre_activation_name(name, act));
    define(out, activate(y, act, name), true);
  }

  void lower_fully_connected(const tfl::Operator& op) {
    expect_inputs(op, 2, 3);
    const int32_t out = output(op);
    const auto* o = options<tfl::FullyConnectedOptions>(op);
    const ActivationFunctionType act = o ? o->fused_activation_function() : ActivationFunctionType::NONE;
    if (o && o->weights_format() != tfl::FullyConnectedOptionsWeightsFormat::DEFAULT)
      unsupported("shuffled weights are not supported");
    const TensorId w = weight(input(op, 1), 2, {});
    const int64_t features = g_.tensor(w).shape[1], units = g_.tensor(w).shape[0];
    // TFLite flattens the input (in the file's layout) to rows of `features`.
    // Reshaped before a dequantization: quantize-ops sees the linear of a dequantized tensor.
    TensorId x = stored_file_form(input(op, 0));
    const Shape xs = g_.tensor(x).shape;
    const int64_t count = num_elements(xs);
    if (count % features != 0) invalid("input ", to_string(xs), " does not split into rows of ", features, " features");
    const std::string name = tensor_name(out);
    if (xs != Shape{count / features, features})
      x = emit(OpKind::Reshape, ReshapeAttrs{{count / features, features}}, {x}, name + ".rows");
    std::vector<TensorId> inputs{readable(x), w};
    for (const TensorId b : bias(op, 2, units)) inputs.push_back(b);
    const bool keep_dims = o && o->keep_num_dims() && xs.size() != 2;
    TensorId y = emit(OpKind::Linear, NoAttrs{}, inputs,
                      keep_dims ? name + ".rows_out" : pre_activation_name(name, act));
    if (keep_dims) {
      Shape kept(xs.begin(), xs.end() - 1);
      kept.push_back(units);
      y = emit(OpKind::Reshape, ReshapeAttrs{kept}, {y}, pre_activation_name(name, act));
    }
    define(out, activate(y, act, name), false);
  }

  // ADD, MUL, SUB with NumPy broadcasting; a 4-D result is computed in NCHW.
  void lower_binary(const tfl::Operator& op, int code) {
    expect_inputs(op, 2, 2);
    const int32_t out = output(op);
    ActivationFunctionType act = ActivationFunctionType::NONE;
    if (const auto* o = options<tfl::AddOptions>(op)) act = o->fused_activation_function();
    if (const auto* o = options<tfl::MulOptions>(op)) act = o->fused_activation_function();
    if (const auto* o = options<tfl::SubOptions>(op)) act = o->fused_activation_function();
    const int32_t a = input(op, 0), b = input(op, 1);
    const bool image = std::max(file_shape(a).size(), file_shape(b).size()) == 4;
    TensorId lhs = image ? broadcast_operand_nchw(a) : file_form(a);
    TensorId rhs = image ? broadcast_operand_nchw(b) : file_form(b);
    const std::string name = tensor_name(out);
    OpKind kind = code == static_cast<int>(BuiltinOperator::MUL) ? OpKind::Mul : OpKind::Add;
    if (code == static_cast<int>(BuiltinOperator::SUB)) {
      // a - b = a + (-b): negated at compile time when b is a constant.
      const Tensor& r = g_.tensor(rhs);
      if (r.is_constant()) {
        std::vector<float> negated = *r.data;
        for (float& v : negated) v = -v;
        rhs = add_constant(r.name + ".neg", r.shape, std::move(negated));
      } else {
        rhs = emit(OpKind::Mul, NoAttrs{}, {rhs, add_constant(name + ".minus_one", {1}, {-1.0f})}, name + ".neg");
      }
    }
    const TensorId y = emit(kind, NoAttrs{}, {lhs, rhs}, pre_activation_name(name, act));
    define(out, activate(y, act, name), image);
  }

  void lower_pad(const tfl::Operator& op) {
    expect_inputs(op, 2, 2);
    const int32_t out = output(op);
    const int32_t x = input(op, 0);
    const size_t rank = file_shape(x).size();
    const std::vector<int64_t> paddings = constant_integers(input(op, 1));
    if (paddings.size() != 2 * rank)
      invalid("paddings hold ", paddings.size(), " values but the input has rank ", rank, " (needs ", 2 * rank, ")");
    for (const int64_t p : paddings)  // TFLite pads only; the IR's negative pads crop
      if (p < 0) invalid("paddings hold ", p, "; TFLite's PAD takes non-negative paddings");
    // [rank, 2] (before, after) per file dim -> IR: all befores, then all afters, in the IR's dim order.
    const bool image = rank == 4;
    PadAttrs a;
    a.pads.resize(2 * rank);
    for (size_t d = 0; d < rank; ++d) {
      const size_t file_dim = image ? static_cast<size_t>(kNhwcToNchw[d]) : d;
      a.pads[d] = paddings[2 * file_dim];
      a.pads[rank + d] = paddings[2 * file_dim + 1];
    }
    const TensorId y = emit(OpKind::Pad, a, {image ? nchw_form(x) : file_form(x)}, tensor_name(out));
    define(out, y, image);
  }

  void lower_pool(const tfl::Operator& op, bool is_max) {
    expect_inputs(op, 1, 1);
    const int32_t out = output(op);
    const auto& o = required_options<tfl::Pool2DOptions>(op, "Pool2DOptions");
    const TensorId x = image_operand(input(op, 0));
    Pool2dAttrs a;
    a.kernel = {o.filter_height(), o.filter_width()};
    a.stride = {o.stride_h(), o.stride_w()};
    a.pad = window_pads(o.padding(), g_.tensor(x).shape, a.kernel[0], a.kernel[1], a.stride, {1, 1});
    a.count_include_pad = false;  // TFLite averages over the window's part inside the input
    const std::string name = tensor_name(out);
    const ActivationFunctionType act = o.fused_activation_function();
    const TensorId y = emit(is_max ? OpKind::MaxPool2d : OpKind::AvgPool2d, a, {x}, pre_activation_name(name, act));
    define(out, activate(y, act, name), true);
  }

  // MEAN over the spatial axes of a 4-D tensor: global average pooling.
  void lower_mean(const tfl::Operator& op) {
    expect_inputs(op, 2, 2);
    const int32_t out = output(op);
    const int32_t x = input(op, 0);
    const size_t rank = file_shape(x).size();
    std::vector<int64_t> axes = constant_integers(input(op, 1));
    for (int64_t& axis : axes)
      if (axis < 0) axis += static_cast<int64_t>(rank);
    std::sort(axes.begin(), axes.end());
    axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
    if (rank != 4 || axes != std::vector<int64_t>{1, 2})
      unsupported("MEAN over axes ", to_string(axes), " of ", to_string(file_shape(x)),
                  "; aotc supports the mean over height and width (axes 1, 2) of a 4-D tensor");
    const auto* o = options<tfl::ReducerOptions>(op);
    const std::string name = tensor_name(out);
    if (o && o->keep_dims()) return define(out, emit(OpKind::GlobalAvgPool, NoAttrs{}, {nchw_form(x)}, name), true);
    const TensorId pooled = emit(OpKind::GlobalAvgPool, NoAttrs{}, {nchw_form(x)}, name + ".pooled");
    const Shape s = g_.tensor(pooled).shape;
    define(out, emit(OpKind::Reshape, ReshapeAttrs{{s[0], s[1]}}, {pooled}, name), false);
  }

  void lower_reshape(const tfl::Operator& op) {
    expect_inputs(op, 1, 2);
    const int32_t out = output(op);
    const int32_t x = input(op, 0);
    std::vector<int64_t> shape;
    const int32_t shape_input = input(op, 1, true);
    if (shape_input != -1) {
      shape = constant_integers(shape_input);
    } else if (const auto* o = options<tfl::ReshapeOptions>(op); o && o->new_shape()) {
      shape.assign(o->new_shape()->begin(), o->new_shape()->end());
    } else {
      invalid("has neither a shape input nor new_shape");
    }
    // One dim may be -1: whatever the element count leaves.
    const TensorId xf = file_form(x);
    const int64_t count = num_elements(g_.tensor(xf).shape);
    int64_t known = 1;
    int inferred = -1;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == -1 && inferred == -1) {
        inferred = static_cast<int>(d);
      } else if (shape[d] < 1) {
        invalid("target shape ", to_string(shape), " has an invalid dimension");
      } else {
        known *= shape[d];
        if (known > count) break;
      }
    }
    if (inferred >= 0 && known > 0 && count % known == 0) shape[static_cast<size_t>(inferred)] = count / known;
    define(out, emit(OpKind::Reshape, ReshapeAttrs{shape}, {xf}, tensor_name(out)), false);
  }

  void lower_concat(const tfl::Operator& op) {
    if (input_count(op) < 1) invalid("has no inputs");
    const int32_t out = output(op);
    const auto& o = required_options<tfl::ConcatenationOptions>(op, "ConcatenationOptions");
    const int rank = static_cast<int>(file_shape(input(op, 0)).size());
    int axis = o.axis() < 0 ? o.axis() + rank : o.axis();
    if (axis < 0 || axis >= rank) invalid("axis ", o.axis(), " is out of range for rank ", rank);
    const bool image = rank == 4;
    std::vector<TensorId> inputs;
    for (size_t k = 0; k < input_count(op); ++k)
      inputs.push_back(image ? nchw_form(input(op, k)) : file_form(input(op, k)));
    if (image) axis = static_cast<int>(std::find(kNhwcToNchw.begin(), kNhwcToNchw.end(), axis) - kNhwcToNchw.begin());
    const std::string name = tensor_name(out);
    const ActivationFunctionType act = o.fused_activation_function();
    const TensorId y = emit(OpKind::Concat, AxisAttrs{axis}, inputs, pre_activation_name(name, act));
    define(out, activate(y, act, name), image);
  }

  // Elementwise ops run in whichever layout their input already has.
  void lower_unary(const tfl::Operator& op, OpKind kind, Attrs attrs) {
    expect_inputs(op, 1, 1);
    const int32_t out = output(op);
    const auto [x, nchw] = existing_form(input(op, 0));
    define(out, emit(kind, std::move(attrs), {x}, tensor_name(out)), nchw);
  }

  void lower_prelu(const tfl::Operator& op) {
    expect_inputs(op, 2, 2);
    const int32_t out = output(op);
    const bool image = file_shape(input(op, 0)).size() == 4;
    const TensorId x = image ? nchw_form(input(op, 0)) : file_form(input(op, 0));
    const TensorId alpha = image ? broadcast_operand_nchw(input(op, 1)) : file_form(input(op, 1));
    define(out, emit(OpKind::PRelu, NoAttrs{}, {x, alpha}, tensor_name(out)), image);
  }

  // Softmax over the last (channel) dim, of beta * x.
  void lower_softmax(const tfl::Operator& op) {
    expect_inputs(op, 1, 1);
    const int32_t out = output(op);
    const auto* o = options<tfl::SoftmaxOptions>(op);
    const float beta = o ? o->beta() : 1.0f;
    const int32_t x = input(op, 0);
    const size_t rank = file_shape(x).size();
    if (rank < 1) invalid("softmax of a scalar");
    const bool image = rank == 4;
    TensorId in = image ? nchw_form(x) : file_form(x);
    const std::string name = tensor_name(out);
    if (beta != 1.0f) in = emit(OpKind::Mul, NoAttrs{}, {in, add_constant(name + ".beta", {1}, {beta})}, name + ".scaled");
    const int axis = image ? 1 : static_cast<int>(rank) - 1;
    define(out, emit(OpKind::Softmax, AxisAttrs{axis}, {in}, name), image);
  }

  void lower_resize(const tfl::Operator& op, bool bilinear) {
    expect_inputs(op, 2, 2);
    const int32_t out = output(op);
    const TensorId x = image_operand(input(op, 0));
    const std::vector<int64_t> size = constant_integers(input(op, 1));
    if (size.size() != 2 || size[0] < 1 || size[1] < 1 || size[0] > (1 << 20) || size[1] > (1 << 20))
      invalid("size must hold two positive values, got ", to_string(size));
    ResizeAttrs a;
    a.size = {static_cast<int>(size[0]), static_cast<int>(size[1])};
    if (bilinear) {
      const auto* o = options<tfl::ResizeBilinearOptions>(op);
      a.align_corners = o && o->align_corners();
      a.half_pixel_centers = o && o->half_pixel_centers();
    } else {
      const auto* o = options<tfl::ResizeNearestNeighborOptions>(op);
      a.align_corners = o && o->align_corners();
      a.half_pixel_centers = o && o->half_pixel_centers();
    }
    define(out, emit(bilinear ? OpKind::ResizeBilinear : OpKind::ResizeNearest, a, {x}, tensor_name(out)), true);
  }

  void lower_depth_to_space(const tfl::Operator& op) {
    expect_inputs(op, 1, 1);
    const int32_t out = output(op);
    const auto& o = required_options<tfl::DepthToSpaceOptions>(op, "DepthToSpaceOptions");
    const TensorId x = image_operand(input(op, 0));
    define(out, emit(OpKind::DepthToSpace, DepthToSpaceAttrs{o.block_size()}, {x}, tensor_name(out)), true);
  }

  // A transposed convolution of x by a filter [O, KH, KW, I] (the file's layout),
  // cropped by `pad`, plus an optional bias.
  void emit_transposed_conv(const tfl::Operator& op, int32_t out, int32_t x_index, int32_t filter, size_t bias_input,
                            const ConvTranspose2dAttrs& a, ActivationFunctionType act) {
    const TensorId x = image_operand(x_index);
    const TensorId w = weight(filter, 4, {3, 0, 1, 2});  // -> [I, O, KH, KW]
    emit_weighted(op, out, OpKind::ConvTranspose2d, a, x, w, bias_input, g_.tensor(w).shape[1], act);
  }

  // TRANSPOSE_CONV(output_shape, filter, x, bias?): TFLite picks the padding
  // from the requested output size as for the forward convolution.
  void lower_transpose_conv(const tfl::Operator& op) {
    expect_inputs(op, 3, 4);
    const int32_t out = output(op);
    const auto& o = required_options<tfl::TransposeConvOptions>(op, "TransposeConvOptions");
    const std::vector<int64_t> out_shape = constant_integers(input(op, 0));
    const Shape xs = file_shape(input(op, 2)), ws = file_shape(input(op, 1));
    if (out_shape.size() != 4 || xs.size() != 4 || ws.size() != 4)
      invalid("output shape, filter and input must be 4-D");
    ConvTranspose2dAttrs a;
    a.stride = {o.stride_h(), o.stride_w()};
    for (int d = 0; d < 2; ++d) {
      const int64_t in = xs[static_cast<size_t>(d) + 1], want = out_shape[static_cast<size_t>(d) + 1];
      const int64_t kernel = ws[static_cast<size_t>(d) + 1];
      const int before = window_padding(o.padding(), want, kernel, a.stride[static_cast<size_t>(d)], 1).first;
      const int64_t after = (in - 1) * a.stride[static_cast<size_t>(d)] + kernel - want - before;
      if (after < 0 || after > kernel)
        unsupported("an output of ", want, " from ", in, " (kernel ", kernel, ", ", padding_name(o.padding()),
                    ") extends past the transposed convolution");
      a.pad[static_cast<size_t>(d)] = before;
      a.pad[static_cast<size_t>(d) + 2] = static_cast<int>(after);
    }
    emit_transposed_conv(op, out, input(op, 2), input(op, 1), 3, a, o.fused_activation_function());
  }

  // MediaPipe's Convolution2DTransposeBias(x, filter, bias); its options are a
  // raw TfLiteTransposeConvParams {int32 padding (1 SAME, 2 VALID), stride_w, stride_h}.
  void lower_transpose_conv_bias(const tfl::Operator& op) {
    expect_inputs(op, 3, 3);
    const int32_t out = output(op);
    const auto* raw = op.custom_options();
    if (!raw || raw->size() < 12) invalid("custom options hold ", raw ? raw->size() : 0, " bytes, expected 12");
    int32_t params[3];
    std::memcpy(params, raw->data(), sizeof params);
    const int32_t padding = params[0];
    if (padding != 1 && padding != 2) invalid("padding code ", padding, " is neither SAME (1) nor VALID (2)");
    const Shape xs = file_shape(input(op, 0)), ws = file_shape(input(op, 1));
    if (xs.size() != 4 || ws.size() != 4) invalid("input and filter must be 4-D");
    ConvTranspose2dAttrs a;
    a.stride = {params[2], params[1]};
    if (a.stride[0] < 1 || a.stride[1] < 1) invalid("strides must be positive, got ", params[1], ", ", params[2]);
    for (size_t d = 0; d < 2; ++d) {
      const int64_t total =
          padding == 1 ? std::max<int64_t>(0, ws[d + 1] - (xs[d + 1] - 1) % a.stride[d] - 1) : 0;
      a.pad[d] = static_cast<int>(total / 2);
      a.pad[d + 2] = static_cast<int>(total - total / 2);
    }
    emit_transposed_conv(op, out, input(op, 0), input(op, 1), 2, a, ActivationFunctionType::NONE);
  }

  // ---- Quantized tensors (docs/int8.md) -------------------------------------------

  static bool is_quantized_type(tfl::TensorType type) {
    return type == tfl::TensorType::INT8 || type == tfl::TensorType::UINT8;
  }

  DType integer_dtype(int32_t t) const {
    switch (tensor(t).type()) {
      case tfl::TensorType::INT8: return DType::I8;
      case tfl::TensorType::UINT8: return DType::U8;
      case tfl::TensorType::INT32: return DType::I32;
      default: unsupported(what(t), " has type ", tfl::EnumNameTensorType(tensor(t).type()), " where an integer is needed");
    }
  }

  // A constant of int8/uint8 values (a quantized weight), or an int32 one with a
  // quantization (a bias), not folded from something else.
  bool holds_quantized_integers(int32_t t) const {
    if (slots_[static_cast<size_t>(t)].folded || !buffer_bytes(model_, tensor(t))) return false;
    const tfl::TensorType type = tensor(t).type();
    const auto* q = tensor(t).quantization();
    return is_quantized_type(type) || (type == tfl::TensorType::INT32 && q && q->scale() && q->scale()->size() > 0);
  }

  // t's quantization, its quantized dimension permuted like its data by `perm` (empty: as
  // in the file), checked as the IR checks every integer tensor (exit 2 naming it).
  Quantization quantization_of(int32_t t, const Shape& ir_shape, const std::vector<int>& perm) const {
    const auto* q = tensor(t).quantization();
    if (!q || !q->scale() || q->scale()->size() == 0)
      invalid(what(t), " has type ", tfl::EnumNameTensorType(tensor(t).type()), " but no quantization scale");
    Quantization out;
    out.scale.assign(q->scale()->begin(), q->scale()->end());
    out.zero_point = zero_points(*q);
    if (!out.zero_point.empty()) {
      if (out.zero_point.size() != out.scale.size())
        invalid(what(t), " has ", out.scale.size(), " quantization scales but ", out.zero_point.size(), " zero points");
    } else {
      out.zero_point.assign(out.scale.size(), 0);
    }
    if (out.scale.size() > 1) {
      const int dim = q->quantized_dimension();
      // A dimension outside the shape stays outside it (check_element_type refuses it).
      out.axis = perm.empty() ? dim : static_cast<int>(std::find(perm.begin(), perm.end(), dim) - perm.begin());
    }
    Tensor checked;
    checked.name = tensor_name(t);
    checked.dtype = integer_dtype(t);
    checked.shape = ir_shape;
    checked.quant = std::make_shared<const Quantization>(out);
    check_element_type(checked, op_ref_);
    return out;
  }

  // The per-tensor quantization of a run-time int8/uint8 tensor.
  Quantization activation_quantization(int32_t t) const {
    const Quantization q = quantization_of(t, file_shape(t), {});
    if (q.axis != -1)
      unsupported(what(t), " is quantized per channel; aotc computes activations quantized per tensor");
    return q;
  }

  // A quantized constant as the IR's integer constant (in the IR's layout: `perm`) read
  // through a dequantize, the form quantize-ops recognises.
  TensorId quantized_weight(int32_t t, const std::vector<int>& perm) {
    const Shape shape = file_shape(t);
    const std::vector<int64_t> integers = decode_integers(tensor(t), *buffer_bytes(model_, tensor(t)), located(t));
    std::vector<float> values(integers.begin(), integers.end());
    Tensor c;
    c.name = g_.unique_name(tensor_name(t));
    c.dtype = integer_dtype(t);
    c.shape = perm.empty() ? shape : permuted(shape, perm);
    c.data = std::make_shared<const std::vector<float>>(perm.empty() ? std::move(values) : permuted(values, shape, perm));
    c.quant = std::make_shared<const Quantization>(quantization_of(t, c.shape, perm));
    check_element_type(c, op_ref_);
    const std::string name = c.name;
    return emit(OpKind::Dequantize, NoAttrs{}, {g_.add_tensor(std::move(c))}, name + ".dequantized");
  }

  // Whether `op` reads a run-time int8/uint8 tensor or writes one; refuses other types.
  bool reads_or_writes_integers(const tfl::Operator& op) const {
    bool integers = false;
    const auto check = [&](int32_t t) {
      const tfl::TensorType type = tensor(t).type();
      if (is_quantized_type(type)) integers = true;
      else if (type != tfl::TensorType::FLOAT32)
        unsupported(what(t), " has type ", tfl::EnumNameTensorType(type),
                    "; aotc computes float32, int8 and uint8 tensors");
    };
    for (size_t k = 0; k < input_count(op); ++k)
      if (const int32_t t = input(op, k, true); t != -1 && !is_constant(t)) check(t);
    for (const int32_t t : *op.outputs()) check(t);
    return integers;
  }

  // What a float reader of IR tensor `id` reads: while an operator with integer operands
  // is lowered (float_reads_), an integer tensor's dequantization (one per tensor).
  TensorId readable(TensorId id) {
    if (!float_reads_ || !is_integer(g_.tensor(id).dtype)) return id;
    const auto it = dequantized_.find(id);
    if (it != dequantized_.end()) return it->second;
    const TensorId real = emit(OpKind::Dequantize, NoAttrs{}, {id}, g_.tensor(id).name + ".dequantized");
    dequantized_.emplace(id, real);
    return real;
  }

  QuantizeAttrs quantize_attrs(int32_t t) const {
    return QuantizeAttrs{integer_dtype(t), activation_quantization(t), Arithmetic::kTflite};
  }

  // The float result an integer operator's lowering defined for `out`, quantized to it.
  void quantize_output(int32_t out) {
    Slot& slot = slots_[static_cast<size_t>(out)];
    const bool nchw = slot.nchw != kNoTensor && slot.nchw != slot.file;
    const TensorId real = nchw ? slot.nchw : slot.file;
    const TensorId q = emit(OpKind::Quantize, quantize_attrs(out), {real}, tensor_name(out) + ".quantized");
    std::swap(g_.tensor(q).name, g_.tensor(real).name);  // the file's name is the integer tensor's
    (nchw ? slot.nchw : slot.file) = q;
    if (!nchw) slot.nchw = q;
  }

  // QUANTIZE from float32 with TFLite's rounding; between integer types (a requantization)
  // it runs in float.
  void lower_quantize(const tfl::Operator& op) {
    expect_inputs(op, 1, 1);
    const int32_t out = output(op), in = input(op, 0);
    if (!is_quantized_type(tensor(out).type()))
      unsupported("QUANTIZE to ", tfl::EnumNameTensorType(tensor(out).type()), "; aotc quantizes to int8 and uint8");
    float_reads_ = true;
    const auto [x, nchw] = existing_form(in);
    float_reads_ = false;
    define(out, emit(OpKind::Quantize, quantize_attrs(out), {x}, tensor_name(out)), nchw);
  }

  // DEQUANTIZE of a computed int8/uint8 tensor.
  void lower_dequantize(const tfl::Operator& op) {
    expect_inputs(op, 1, 1);
    const int32_t out = output(op), in = input(op, 0);
    if (!is_quantized_type(tensor(in).type()))
      unsupported("DEQUANTIZE of ", what(in), " of type ", tfl::EnumNameTensorType(tensor(in).type()),
                  "; aotc dequantizes int8 and uint8 (float16 only as constants)");
    const auto [x, nchw] = existing_form(in);
    define(out, emit(OpKind::Dequantize, NoAttrs{}, {x}, tensor_name(out)), nchw);
  }

  // DEQUANTIZE of a constant: folded into a float32 constant.
  void fold_dequantize(const tfl::Operator& op) {
    expect_inputs(op, 1, 1);
    const int32_t out = output(op), in = input(op, 0);
    std::shared_ptr<const std::vector<float>> values = slots_[static_cast<size_t>(in)].folded;  // densified
    if (!values) {
      const auto* bytes = buffer_bytes(model_, tensor(in));
      if (!bytes) unsupported("DEQUANTIZE of a computed tensor (", what(in), "); aotc folds only constant weights");
      const tfl::TensorType type = tensor(in).type();
      values = std::make_shared<const std::vector<float>>(type == tfl::TensorType::INT8 || type == tfl::TensorType::UINT8
                                                              ? dequantize_int8(tensor(in), *bytes, located(in))
                                                              : constant_values(in));
    }
    if (static_cast<int64_t>(values->size()) != num_elements(file_shape(out)))
      invalid(what(out), " has shape ", to_string(file_shape(out)), " but its input holds ", values->size(), " values");
    slots_[static_cast<size_t>(out)].folded = std::move(values);
  }

  // DENSIFY of a sparse constant: folded into a dense constant.
  void fold_densify(const tfl::Operator& op) {
    expect_inputs(op, 1, 1);
    const int32_t out = output(op), in = input(op, 0);
    const auto* bytes = buffer_bytes(model_, tensor(in));
    if (!bytes || !tensor(in).sparsity()) unsupported("DENSIFY of ", what(in), ", which is not a sparse constant");
    if (file_shape(in) != file_shape(out))
      invalid(what(out), " has shape ", to_string(file_shape(out)), " but the sparse input is ", to_string(file_shape(in)));
    slots_[static_cast<size_t>(out)].folded = std::make_shared<const std::vector<float>>(densify(tensor(in), *bytes, located(in)));
  }

  const tfl::Model& model_;
  const tfl::SubGraph& graph_;
  const std::string& path_;
  std::string op_ref_;
  std::vector<Slot> slots_;
  Graph g_;
  bool float_reads_ = false;                  // lowering an operator with integer operands
  std::map<TensorId, TensorId> dequantized_;  // readable()'s dequantize of each integer tensor
};

}  // namespace

Graph lower_subgraph(const tfl::Model& model, const tfl::SubGraph& graph, const std::string& path) {
  return Lowering(model, graph, path).run();
}

}  // namespace aotc::tflite
