#include "ir/shape_rules.h"

#include <cmath>
#include <limits>
#include <memory>

#include "support/error.h"

namespace aotc {
namespace {

// Element count of `shape`, or -1 if a dim is not positive or the count exceeds kMaxElements.
int64_t bounded_elements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d <= 0 || d > kMaxElements / n) return -1;
    n *= d;
  }
  return n;
}

// The element type an op reads at input `i` of its `operands` own (graph.h, QuantizeAttrs,
// QConv2dAttrs); epilogue operands are f32.
enum class Operand { kFloat, kInteger, kAny };
Operand operand_kind(OpKind op, size_t i, size_t operands) {
  if (i >= operands) return Operand::kFloat;
  switch (op) {
    case OpKind::Dequantize:
    case OpKind::QConv2d:
    case OpKind::QAdd:
    case OpKind::QGlobalAvgPool:
    case OpKind::QLookup: return Operand::kInteger;
    case OpKind::Reshape:
    case OpKind::Flatten:
    case OpKind::Dropout:
    case OpKind::Transpose:
    case OpKind::MaxPool2d: return Operand::kAny;
    default: return Operand::kFloat;
  }
}

// Validates one node; every message starts with "node 'NAME' (OP): ".
class NodeChecker {
 public:
  NodeChecker(const Graph& g, const Node& node) : g_(g), node_(node) {}

  template <typename... Args>
  [[noreturn]] void error(const Args&... args) const {
    fail(ExitCode::kInvalidModel, "node '", node_.name, "' (", op_name(node_.op), "): ", args...);
  }

  std::string context() const { return detail::concat("node '", node_.name, "' (", op_name(node_.op), ")"); }

  // Checks tensor ids, the epilogue's operand layout and the output count; returns
  // the number of the op's own operands.
  size_t check_structure() const {
    for (TensorId id : node_.inputs) check_id(id, "input");
    for (TensorId id : node_.outputs) check_id(id, "output");
    if (node_.outputs.size() != 1) error("expected 1 output, got ", node_.outputs.size());
    size_t epilogue_operands = 0;
    for (const PostOp& p : node_.epilogue) epilogue_operands += static_cast<size_t>(post_op_operand_count(p.kind));
    if (epilogue_operands > node_.inputs.size())
      error("epilogue needs ", epilogue_operands, " operands but the node has only ", node_.inputs.size(), " inputs");
    const size_t operands = node_.inputs.size() - epilogue_operands;
    // Post-op operands follow the op's operands, in epilogue order (graph.h).
    size_t next = operands;
    for (const PostOp& p : node_.epilogue) {
      const int count = post_op_operand_count(p.kind);
      if (count == 0) continue;
      if (p.input != static_cast<int>(next))
        error("epilogue ", post_op_name(p.kind), " refers to input ", p.input, " but its operands are at input ", next);
      next += static_cast<size_t>(count);
    }
    for (size_t i = 0; i < node_.inputs.size(); ++i) {
      const Tensor& t = g_.tensor(node_.inputs[i]);
      if (bounded_elements(t.shape) < 0)
        error("input '", t.name, "' has invalid shape ", to_string(t.shape), " (every dim must be >= 1 and the total <= 2^31)");
      const Operand kind = operand_kind(node_.op, i, operands);
      if (kind != Operand::kAny && is_integer(t.dtype) != (kind == Operand::kInteger))
        error("input '", t.name, "' is ", dtype_name(t.dtype), "; ", op_name(node_.op),
              kind == Operand::kInteger ? " reads an integer tensor there" : " reads f32 tensors only");
    }
    return operands;
  }

  void expect_operand_count(size_t actual, size_t lo, size_t hi) const {
    if (actual >= lo && actual <= hi) return;
    if (lo == hi) error("expected ", lo, lo == 1 ? " input" : " inputs", ", got ", actual);
    error("expected ", lo, " to ", hi, " inputs, got ", actual);
  }

  const Tensor& in(size_t i) const { return g_.tensor(node_.inputs[i]); }
  const Shape& shape(size_t i) const { return in(i).shape; }

  void expect_rank(size_t i, size_t rank, const char* what) const {
    if (shape(i).size() != rank)
      error(what, " '", in(i).name, "' must have rank ", rank, ", got ", to_string(shape(i)));
  }
  void expect_min_rank(size_t i, size_t rank, const char* what) const {
    if (shape(i).size() < rank)
      error(what, " '", in(i).name, "' must have rank >= ", rank, ", got ", to_string(shape(i)));
  }
  // A per-channel (or per-output-feature) parameter: exactly [n].
  void expect_vector(size_t i, int64_t n, const char* what) const {
    if (shape(i) != Shape{n})
      error(what, " '", in(i).name, "' must have shape [", n, "], got ", to_string(shape(i)));
  }

  void expect_positive(const std::array<int, 2>& v, const char* what) const {
    if (v[0] < 1 || v[1] < 1) error(what, " must be positive, got [", v[0], ",", v[1], "]");
  }
  void expect_non_negative_pad(const std::array<int, 4>& pad) const {
    for (int p : pad)
      if (p < 0) error("padding must be non-negative, got [", pad[0], ",", pad[1], ",", pad[2], ",", pad[3], "]");
  }

  // Output extent of a window along one dim (dim_name: "height"/"width"); must be >= 1.
  int64_t window_extent(const char* dim_name, int64_t in, int kernel, int stride, int pad_begin, int pad_end,
                        int dilation, bool ceil_mode) const {
    const int64_t out = window_output_extent(in, kernel, stride, pad_begin, pad_end, dilation, ceil_mode);
    if (out < 1)
      error("output ", dim_name, " would be ", out, " (input ", in, ", kernel ", kernel, ", stride ", stride,
            ", padding ", pad_begin, "+", pad_end, ", dilation ", dilation, ")");
    return out;
  }

 private:
  void check_id(TensorId id, const char* what) const {
    if (id < 0 || static_cast<size_t>(id) >= g_.tensors.size())
      error(what, " tensor id ", id, " is out of range (", g_.tensors.size(), " tensors)");
  }

  const Graph& g_;
  const Node& node_;
};

Shape conv2d_shape(const NodeChecker& c, size_t operands, const Conv2dAttrs& a) {
  c.expect_operand_count(operands, 2, 3);
  c.expect_rank(0, 4, "input");
  c.expect_rank(1, 4, "weight");
  c.expect_positive(a.stride, "stride");
  c.expect_positive(a.dilation, "dilation");
  c.expect_non_negative_pad(a.pad);
  const Shape& x = c.shape(0);
  const Shape& w = c.shape(1);
  if (a.groups < 1) c.error("groups must be positive, got ", a.groups);
  if (x[1] % a.groups != 0) c.error("input channels ", x[1], " are not divisible by groups=", a.groups);
  if (w[0] % a.groups != 0) c.error("output channels ", w[0], " are not divisible by groups=", a.groups);
  if (w[1] * a.groups != x[1])
    c.error("input has ", x[1], " channels but weight expects ", w[1] * a.groups, " (groups=", a.groups, ")");
  if (operands == 3) c.expect_vector(2, w[0], "bias");
  if (w[2] > std::numeric_limits<int>::max() || w[3] > std::numeric_limits<int>::max())
    c.error("kernel ", to_string(w), " is too large");
  const int64_t oh = c.window_extent("height", x[2], static_cast<int>(w[2]), a.stride[0], a.pad[0], a.pad[2],
                                     a.dilation[0], false);
  const int64_t ow = c.window_extent("width", x[3], static_cast<int>(w[3]), a.stride[1], a.pad[1], a.pad[3],
                                     a.dilation[1], false);
  return {x[0], w[0], oh, ow};
}

// Refuses windows none of whose taps reads the input (a dilated window can
// straddle a small input without touching it): their maximum or average over
// no input element is meaningless. PyTorch refuses more (pad > kernel/2).
void check_pool_windows_overlap_input(const NodeChecker& c, const char* dim_name, int64_t in, int64_t out,
                                      int kernel, int stride, int pad_begin, int dilation) {
  auto refuse = [&] {
    c.error("a pooling window along the ", dim_name, " reads no input element, only padding (input ", in,
            ", kernel ", kernel, ", stride ", stride, ", padding before ", pad_begin, ", dilation ", dilation, ")");
  };
  const int64_t extent = int64_t{dilation} * (kernel - 1) + 1;
  if (pad_begin >= extent || (out - 1) * stride - pad_begin >= in) refuse();
  // A window starting inside the input reads it; one starting in the padding
  // before it first reaches the input at (start mod dilation).
  for (int64_t o = 0; o < out && o * stride < pad_begin; ++o) {
    const int64_t start = o * stride - pad_begin;  // < 0
    const int64_t taps_before = (-start + dilation - 1) / dilation;
    if (taps_before >= kernel || start + taps_before * dilation >= in) refuse();
  }
}

Shape pool2d_shape(const NodeChecker& c, size_t operands, const Pool2dAttrs& a, bool is_max) {
  c.expect_operand_count(operands, 1, 1);
  c.expect_rank(0, 4, "input");
  c.expect_positive(a.kernel, "kernel");
  c.expect_positive(a.stride, "stride");
  c.expect_positive(a.dilation, "dilation");
  c.expect_non_negative_pad(a.pad);
  if (!is_max && (a.dilation[0] != 1 || a.dilation[1] != 1))
    c.error("average pooling has no dilation, got [", a.dilation[0], ",", a.dilation[1], "]");
  const Shape& x = c.shape(0);
  const int64_t oh =
      c.window_extent("height", x[2], a.kernel[0], a.stride[0], a.pad[0], a.pad[2], a.dilation[0], a.ceil_mode);
  const int64_t ow =
      c.window_extent("width", x[3], a.kernel[1], a.stride[1], a.pad[1], a.pad[3], a.dilation[1], a.ceil_mode);
  check_pool_windows_overlap_input(c, "height", x[2], oh, a.kernel[0], a.stride[0], a.pad[0], a.dilation[0]);
  check_pool_windows_overlap_input(c, "width", x[3], ow, a.kernel[1], a.stride[1], a.pad[1], a.dilation[1]);
  return {x[0], x[1], oh, ow};
}

Shape batch_norm_shape(const NodeChecker& c, size_t operands, const BatchNormAttrs& a) {
  if (operands != 3 && operands != 5) c.error("expected 3 or 5 inputs, got ", operands);
  c.expect_min_rank(0, 2, "input");
  if (!(a.eps >= 0) || std::isinf(a.eps)) c.error("eps must be finite and non-negative, got ", a.eps);
  const int64_t channels = c.shape(0)[1];
  const char* names[] = {"", "mean", "var", "gamma", "beta"};
  for (size_t i = 1; i < operands; ++i) c.expect_vector(i, channels, names[i]);
  return c.shape(0);
}

Shape affine_shape(const NodeChecker& c, size_t operands) {
  c.expect_operand_count(operands, 3, 3);
  c.expect_min_rank(0, 2, "input");
  c.expect_vector(1, c.shape(0)[1], "scale");
  c.expect_vector(2, c.shape(0)[1], "shift");
  return c.shape(0);
}

Shape linear_shape(const NodeChecker& c, size_t operands) {
  c.expect_operand_count(operands, 2, 3);
  c.expect_min_rank(0, 2, "input");
  c.expect_rank(1, 2, "weight");
  const Shape& x = c.shape(0);
  const Shape& w = c.shape(1);
  const int64_t features = num_elements(x) / x[0];  // dims after the first, flattened
  if (features != w[1])
    c.error("input ", to_string(x), " has ", features, " features per row but weight ", to_string(w), " expects ",
            w[1]);
  if (operands == 3) c.expect_vector(2, w[0], "bias");
  return {x[0], w[0]};
}

Shape flatten_shape(const NodeChecker& c, size_t operands, const FlattenAttrs& a) {
  c.expect_operand_count(operands, 1, 1);
  c.expect_min_rank(0, 1, "input");
  const Shape& x = c.shape(0);
  const int rank = static_cast<int>(x.size());
  const int start = a.start_dim < 0 ? a.start_dim + rank : a.start_dim;
  const int end = a.end_dim < 0 ? a.end_dim + rank : a.end_dim;
  if (start < 0 || start >= rank || end < 0 || end >= rank || start > end)
    c.error("start_dim=", a.start_dim, ", end_dim=", a.end_dim, " are not a valid dim range of input ",
            to_string(x));
  Shape out(x.begin(), x.begin() + start);
  int64_t merged = 1;
  for (int d = start; d <= end; ++d) merged *= x[static_cast<size_t>(d)];
  out.push_back(merged);
  out.insert(out.end(), x.begin() + end + 1, x.end());
  return out;
}

Shape reshape_shape(const NodeChecker& c, size_t operands, const ReshapeAttrs& a) {
  c.expect_operand_count(operands, 1, 1);
  for (int64_t d : a.shape)
    if (d < 1) c.error("target shape ", to_string(a.shape), " must be fully resolved with positive dims");
  const int64_t target = bounded_elements(a.shape);
  if (target != num_elements(c.shape(0)))
    c.error("cannot reshape ", to_string(c.shape(0)), " (", num_elements(c.shape(0)), " elements) to ",
            to_string(a.shape));
  return a.shape;
}

Shape concat_shape(const NodeChecker& c, size_t operands, const AxisAttrs& a) {
  if (operands < 1) c.error("expected at least 1 input, got 0");
  const Shape& first = c.shape(0);
  if (a.axis < 0 || static_cast<size_t>(a.axis) >= first.size())
    c.error("axis ", a.axis, " is out of range for input ", to_string(first));
  const size_t axis = static_cast<size_t>(a.axis);
  Shape out = first;
  for (size_t i = 1; i < operands; ++i) {
    const Shape& s = c.shape(i);
    bool compatible = s.size() == first.size();
    for (size_t d = 0; compatible && d < s.size(); ++d) compatible = d == axis || s[d] == first[d];
    if (!compatible)
      c.error("input '", c.in(i).name, "' ", to_string(s), " does not match ", to_string(first),
              " except along axis ", a.axis);
    out[axis] += s[axis];
  }
  return out;
}

Shape softmax_shape(const NodeChecker& c, size_t operands, const AxisAttrs& a) {
  c.expect_operand_count(operands, 1, 1);
  const Shape& x = c.shape(0);
  if (a.axis < 0 || static_cast<size_t>(a.axis) >= x.size())
    c.error("axis ", a.axis, " is out of range for input ", to_string(x));
  return x;
}

Shape pad_shape(const NodeChecker& c, size_t operands, const PadAttrs& a) {
  c.expect_operand_count(operands, 1, 1);
  const Shape& x = c.shape(0);
  if (a.pads.size() != 2 * x.size())
    c.error("pads has ", a.pads.size(), " values but input ", to_string(x), " needs ", 2 * x.size(),
            " (begins, then ends)");
  for (int64_t p : a.pads)
    if (p < -kMaxElements || p > kMaxElements) c.error("pad amounts must be in [-2^31, 2^31], got ", p);
  Shape out = x;
  for (size_t d = 0; d < x.size(); ++d) {
    out[d] += a.pads[d] + a.pads[d + x.size()];
    if (out[d] < 1)
      c.error("pads ", to_string(a.pads), " leave dim ", d, " of input ", to_string(x), " with extent ", out[d],
              " (negative pads crop; at least one element must remain)");
  }
  return out;
}

Shape transpose_shape(const NodeChecker& c, size_t operands, const TransposeAttrs& a) {
  c.expect_operand_count(operands, 1, 1);
  const Shape& x = c.shape(0);
  std::vector<bool> seen(x.size(), false);
  if (a.perm.size() != x.size())
    c.error("perm has ", a.perm.size(), " entries but input ", to_string(x), " has rank ", x.size());
  Shape out;
  for (int d : a.perm) {
    if (d < 0 || static_cast<size_t>(d) >= x.size() || seen[static_cast<size_t>(d)])
      c.error("perm is not a permutation of the ", x.size(), " dims of input ", to_string(x));
    seen[static_cast<size_t>(d)] = true;
    out.push_back(x[static_cast<size_t>(d)]);
  }
  return out;
}

Shape resize_shape(const NodeChecker& c, size_t operands, const ResizeAttrs& a) {
  c.expect_operand_count(operands, 1, 1);
  c.expect_rank(0, 4, "input");
  c.expect_positive(a.size, "size");
  if (a.align_corners && a.half_pixel_centers) c.error("align_corners and half_pixel_centers exclude each other");
  return {c.shape(0)[0], c.shape(0)[1], a.size[0], a.size[1]};
}

Shape conv_transpose2d_shape(const NodeChecker& c, size_t operands, const ConvTranspose2dAttrs& a) {
  c.expect_operand_count(operands, 2, 3);
  c.expect_rank(0, 4, "input");
  c.expect_rank(1, 4, "weight");
  c.expect_positive(a.stride, "stride");
  c.expect_non_negative_pad(a.pad);
  const Shape& x = c.shape(0);
  const Shape& w = c.shape(1);
  if (w[0] != x[1]) c.error("input has ", x[1], " channels but weight ", to_string(w), " expects ", w[0]);
  if (operands == 3) c.expect_vector(2, w[1], "bias");
  const int64_t oh = (x[2] - 1) * a.stride[0] + w[2] - a.pad[0] - a.pad[2];
  const int64_t ow = (x[3] - 1) * a.stride[1] + w[3] - a.pad[1] - a.pad[3];
  if (oh < 1 || ow < 1) c.error("output would be ", oh, "x", ow, " (the padding crops more than the output)");
  return {x[0], w[1], oh, ow};
}

Shape depth_to_space_shape(const NodeChecker& c, size_t operands, const DepthToSpaceAttrs& a) {
  c.expect_operand_count(operands, 1, 1);
  c.expect_rank(0, 4, "input");
  const Shape& x = c.shape(0);
  if (a.block < 1 || a.block > 1024) c.error("block size must be in [1, 1024], got ", a.block);
  const int64_t b = a.block;
  if (x[1] % (b * b) != 0) c.error("input channels ", x[1], " are not divisible by block^2 = ", b * b);
  return {x[0], x[1] / (b * b), x[2] * b, x[3] * b};
}

// The output type of quantize and qconv2d: i8 or u8 with a valid quantization of `shape`.
void check_quantized_output(const Graph& g, const NodeChecker& c, const Node& node, const QuantizeAttrs& a,
                            const Shape& shape) {
  if (a.dtype != DType::I8 && a.dtype != DType::U8) c.error("writes ", dtype_name(a.dtype), "; it writes i8 or u8");
  Tensor out;
  out.name = node.outputs.empty() ? node.name : g.tensor(node.outputs[0]).name;
  out.dtype = a.dtype;
  out.shape = shape;
  out.quant = std::make_shared<const Quantization>(a.quant);
  check_element_type(out, c.context());
}

// Saturation bounds [min, max] inside `dtype`.
void check_bounds(const NodeChecker& c, int64_t min, int64_t max, DType dtype) {
  if (min > max || min < dtype_min(dtype) || max > dtype_max(dtype))
    c.error("saturation bounds [", min, ", ", max, "] are not an interval of ", dtype_name(dtype));
}

Shape qconv2d_shape(const Graph& g, const NodeChecker& c, const Node& node, size_t operands) {
  const auto& a = node.attr<QConv2dAttrs>();
  const Shape out = conv2d_shape(c, operands, a.conv);
  check_quantized_output(g, c, node, a.out, out);
  if (a.out.quant.axis != -1) c.error("the output is quantized per channel; qconv2d writes one scale");
  check_bounds(c, a.min, a.max, a.out.dtype);
  const Tensor& x = c.in(0);
  const Tensor& w = c.in(1);
  // Each product of zero-point-shifted 8-bit values is at most 255^2 in magnitude, so this
  // many keep the int32 accumulator (with an i32 bias of at most 2^24) from overflowing.
  constexpr int64_t kMaxTaps = 32767;
  if (w.shape[1] * w.shape[2] * w.shape[3] > kMaxTaps)
    c.error("sums ", w.shape[1] * w.shape[2] * w.shape[3], " products per output; above ", kMaxTaps,
            " the int32 accumulator could overflow");
  if (x.dtype == DType::I32 || x.quant->axis != -1)
    c.error("input '", x.name, "' must be i8 or u8 quantized per tensor, is ", dtype_name(x.dtype),
            x.quant->axis != -1 ? " per channel" : "");
  if (w.dtype == DType::I32 || (w.quant->axis != -1 && w.quant->axis != 0))
    c.error("weight '", w.name, "' must be i8 or u8 quantized per tensor or per output channel (axis 0)");
  if (operands == 3) {
    const Tensor& bias = c.in(2);
    if (bias.dtype != DType::I32) c.error("bias '", bias.name, "' must be i32, is ", dtype_name(bias.dtype));
    // The bias adds to the accumulator: its scale must be the accumulator's, x_scale * w_scale[o].
    for (int64_t o = 0; o < out[1]; ++o) {
      const auto at = [o](const Quantization& q) { return static_cast<size_t>(q.axis == -1 ? 0 : o); };
      const float expected = x.quant->scale[0] * w.quant->scale[at(*w.quant)];
      const float actual = bias.quant->scale[at(*bias.quant)];
      if (std::fabs(actual - expected) > 1e-6f * expected || bias.quant->zero_point[at(*bias.quant)] != 0)
        c.error("bias '", bias.name, "' channel ", o, " has scale ", actual, " and zero point ",
                bias.quant->zero_point[at(*bias.quant)], "; an integer convolution's bias has the input scale times "
                "the weight scale (", expected, ") and zero point 0");
    }
  }
  return out;
}

Shape qadd_shape(const Graph& g, const NodeChecker& c, const Node& node, size_t operands) {
  const auto& a = node.attr<QAddAttrs>();
  c.expect_operand_count(operands, 2, 2);
  const Shape& out = c.shape(0);
  if (c.shape(1) != out) c.error("adds ", to_string(out), " and ", to_string(c.shape(1)), "; qadd takes one shape");
  check_quantized_output(g, c, node, a.out, out);
  if (a.out.quant.axis != -1) c.error("the output is quantized per channel; qadd writes one scale");
  check_bounds(c, a.min, a.max, a.out.dtype);
  for (size_t i = 0; i < 2; ++i) {
    const Tensor& x = c.in(i);
    if (x.dtype != a.out.dtype || x.quant->axis != -1)
      c.error("input '", x.name, "' must be ", dtype_name(a.out.dtype), " quantized per tensor, as the output, is ",
              dtype_name(x.dtype), x.quant->axis != -1 ? " per channel" : "");
  }
  return out;
}

Shape qglobal_avg_pool_shape(const Graph& g, const NodeChecker& c, const Node& node, size_t operands) {
  const auto& a = node.attr<QuantizeAttrs>();
  c.expect_operand_count(operands, 1, 1);
  c.expect_rank(0, 4, "input");
  const Shape out{c.shape(0)[0], c.shape(0)[1], 1, 1};
  check_quantized_output(g, c, node, a, out);
  if (a.quant.axis != -1) c.error("the output is quantized per channel; qglobal_avg_pool writes one scale");
  if (a.arithmetic != Arithmetic::kOnnx) c.error("qglobal_avg_pool computes ONNX's arithmetic only");
  const Tensor& x = c.in(0);
  if (x.dtype != a.dtype || x.quant->axis != -1)
    c.error("input '", x.name, "' must be ", dtype_name(a.dtype), " quantized per tensor, as the output, is ",
            dtype_name(x.dtype), x.quant->axis != -1 ? " per channel" : "");
  // The sum of the plane's (x - zero point), each at most 255 in magnitude, stays exact in int32
  // and in the float32 the requantization converts it to.
  if (c.shape(0)[2] * c.shape(0)[3] > 65793) c.error("averages ", c.shape(0)[2] * c.shape(0)[3], " values; at most 65793");
  return out;
}

Shape qlookup_shape(const Graph& g, const NodeChecker& c, const Node& node, size_t operands) {
  const auto& a = node.attr<QLookupAttrs>();
  c.expect_operand_count(operands, 1, 1);
  const Shape& out = c.shape(0);
  check_quantized_output(g, c, node, a.out, out);
  if (a.out.quant.axis != -1) c.error("the output is quantized per channel; qlookup writes one scale");
  const Tensor& x = c.in(0);
  if (x.dtype == DType::I32 || x.quant->axis != -1)
    c.error("input '", x.name, "' must be i8 or u8 quantized per tensor, is ", dtype_name(x.dtype),
            x.quant->axis != -1 ? " per channel" : "");
  if (a.table.size() != 256) c.error("the table has ", a.table.size(), " entries, not 256");
  for (const int64_t v : a.table)
    if (v < dtype_min(a.out.dtype) || v > dtype_max(a.out.dtype))
      c.error("the table holds ", v, ", outside ", dtype_name(a.out.dtype));
  return out;
}

Shape op_shape(const Graph& g, const NodeChecker& c, const Node& node, size_t operands) {
  switch (node.op) {
    case OpKind::Conv2d: return conv2d_shape(c, operands, node.attr<Conv2dAttrs>());
    case OpKind::BatchNorm: return batch_norm_shape(c, operands, node.attr<BatchNormAttrs>());
    case OpKind::Affine: return affine_shape(c, operands);
    case OpKind::Clamp:
      if (std::isnan(node.attr<ClampAttrs>().min) || std::isnan(node.attr<ClampAttrs>().max))
        c.error("clamp bounds must not be NaN");
      [[fallthrough]];
    case OpKind::Elu:
      if (node.op == OpKind::Elu && !std::isfinite(node.attr<EluAttrs>().alpha)) c.error("elu alpha must be finite");
      [[fallthrough]];
    case OpKind::Relu:
    case OpKind::Softplus:
    case OpKind::HardSwish:
    case OpKind::Sigmoid:
    case OpKind::Tanh:
    case OpKind::Dropout:
      c.expect_operand_count(operands, 1, 1);
      return c.shape(0);
    case OpKind::PRelu:
      c.expect_operand_count(operands, 2, 2);
      if (broadcast_shapes(c.shape(0), c.shape(1), c.context()) != c.shape(0))
        c.error("alpha ", to_string(c.shape(1)), " does not broadcast to input ", to_string(c.shape(0)));
      return c.shape(0);
    case OpKind::Add:
    case OpKind::Mul:
    case OpKind::Max:
    case OpKind::Min:
    case OpKind::Div:
      c.expect_operand_count(operands, 2, 2);
      return broadcast_shapes(c.shape(0), c.shape(1), c.context());
    case OpKind::MaxPool2d: return pool2d_shape(c, operands, node.attr<Pool2dAttrs>(), true);
    case OpKind::AvgPool2d: return pool2d_shape(c, operands, node.attr<Pool2dAttrs>(), false);
    case OpKind::AdaptiveAvgPool2d: {
      c.expect_operand_count(operands, 1, 1);
      c.expect_rank(0, 4, "input");
      const auto& size = node.attr<AdaptiveAvgPool2dAttrs>().output_size;
      c.expect_positive(size, "output_size");
      return {c.shape(0)[0], c.shape(0)[1], size[0], size[1]};
    }
    case OpKind::GlobalAvgPool:
      c.expect_operand_count(operands, 1, 1);
      c.expect_rank(0, 4, "input");
      return {c.shape(0)[0], c.shape(0)[1], 1, 1};
    case OpKind::Linear: return linear_shape(c, operands);
    case OpKind::Flatten: return flatten_shape(c, operands, node.attr<FlattenAttrs>());
    case OpKind::Reshape: return reshape_shape(c, operands, node.attr<ReshapeAttrs>());
    case OpKind::Concat: return concat_shape(c, operands, node.attr<AxisAttrs>());
    case OpKind::Softmax: return softmax_shape(c, operands, node.attr<AxisAttrs>());
    case OpKind::Pad: return pad_shape(c, operands, node.attr<PadAttrs>());
    case OpKind::Transpose: return transpose_shape(c, operands, node.attr<TransposeAttrs>());
    case OpKind::ResizeBilinear:
    case OpKind::ResizeNearest: return resize_shape(c, operands, node.attr<ResizeAttrs>());
    case OpKind::ConvTranspose2d: return conv_transpose2d_shape(c, operands, node.attr<ConvTranspose2dAttrs>());
    case OpKind::DepthToSpace: return depth_to_space_shape(c, operands, node.attr<DepthToSpaceAttrs>());
    case OpKind::Quantize:
      c.expect_operand_count(operands, 1, 1);
      check_quantized_output(g, c, node, node.attr<QuantizeAttrs>(), c.shape(0));
      return c.shape(0);
    case OpKind::Dequantize:
      c.expect_operand_count(operands, 1, 1);
      return c.shape(0);
    case OpKind::QConv2d: return qconv2d_shape(g, c, node, operands);
    case OpKind::QAdd: return qadd_shape(g, c, node, operands);
    case OpKind::QGlobalAvgPool: return qglobal_avg_pool_shape(g, c, node, operands);
    case OpKind::QLookup: return qlookup_shape(g, c, node, operands);
  }
  AOTC_CHECK(false, "unhandled op kind");
  return {};
}

// The attribute struct each op carries (NoAttrs for ops without attributes).
bool attrs_match_op(const Node& node) {
  switch (node.op) {
    case OpKind::Conv2d: return std::holds_alternative<Conv2dAttrs>(node.attrs);
    case OpKind::BatchNorm: return std::holds_alternative<BatchNormAttrs>(node.attrs);
    case OpKind::Clamp: return std::holds_alternative<ClampAttrs>(node.attrs);
    case OpKind::MaxPool2d:
    case OpKind::AvgPool2d: return std::holds_alternative<Pool2dAttrs>(node.attrs);
    case OpKind::AdaptiveAvgPool2d: return std::holds_alternative<AdaptiveAvgPool2dAttrs>(node.attrs);
    case OpKind::Flatten: return std::holds_alternative<FlattenAttrs>(node.attrs);
    case OpKind::Reshape: return std::holds_alternative<ReshapeAttrs>(node.attrs);
    case OpKind::Concat:
    case OpKind::Softmax: return std::holds_alternative<AxisAttrs>(node.attrs);
    case OpKind::Pad: return std::holds_alternative<PadAttrs>(node.attrs);
    case OpKind::Transpose: return std::holds_alternative<TransposeAttrs>(node.attrs);
    case OpKind::ResizeBilinear:
    case OpKind::ResizeNearest: return std::holds_alternative<ResizeAttrs>(node.attrs);
    case OpKind::ConvTranspose2d: return std::holds_alternative<ConvTranspose2dAttrs>(node.attrs);
    case OpKind::DepthToSpace: return std::holds_alternative<DepthToSpaceAttrs>(node.attrs);
    case OpKind::Elu: return std::holds_alternative<EluAttrs>(node.attrs);
    case OpKind::Quantize: return std::holds_alternative<QuantizeAttrs>(node.attrs);
    case OpKind::QConv2d: return std::holds_alternative<QConv2dAttrs>(node.attrs);
    case OpKind::QAdd: return std::holds_alternative<QAddAttrs>(node.attrs);
    case OpKind::QGlobalAvgPool: return std::holds_alternative<QuantizeAttrs>(node.attrs);
    case OpKind::QLookup: return std::holds_alternative<QLookupAttrs>(node.attrs);
    default: return std::holds_alternative<NoAttrs>(node.attrs);
  }
}

void check_epilogue(const NodeChecker& c, const Node& node, const Shape& out) {
  for (const PostOp& p : node.epilogue) {
    switch (p.kind) {
      case PostOpKind::kClamp:
        if (std::isnan(p.min) || std::isnan(p.max)) c.error("epilogue clamp bounds must not be NaN");
        break;
      case PostOpKind::kElu:
        if (!std::isfinite(p.alpha)) c.error("epilogue elu alpha must be finite");
        break;
      case PostOpKind::kAffine:
        if (out.size() < 2) c.error("epilogue affine needs an output of rank >= 2, got ", to_string(out));
        c.expect_vector(static_cast<size_t>(p.input), out[1], "epilogue affine scale");
        c.expect_vector(static_cast<size_t>(p.input) + 1, out[1], "epilogue affine shift");
        break;
      case PostOpKind::kAdd:
      case PostOpKind::kMul:
      case PostOpKind::kPRelu: {
        const Tensor& operand = c.in(static_cast<size_t>(p.input));
        if (broadcast_shapes(out, operand.shape, c.context()) != out)
          c.error("epilogue ", post_op_name(p.kind), " operand '", operand.name, "' ", to_string(operand.shape),
                  " would change the output shape ", to_string(out));
        break;
      }
      default: break;
    }
  }
}

}  // namespace

std::vector<Shape> infer_node_shapes(const Graph& g, const Node& node) {
  const NodeChecker c(g, node);
  const size_t operands = c.check_structure();
  // A frontend or parser bug, not the model's: they build attrs from the op kind.
  AOTC_CHECK(attrs_match_op(node), "node '", node.name, "' has attributes of the wrong kind");
  Shape out = op_shape(g, c, node, operands);
  if (bounded_elements(out) < 0)
    c.error("output shape ", to_string(out), " is absurd (every dim must be >= 1 and the total <= 2^31)");
  check_epilogue(c, node, out);
  return {out};
}

ElementType infer_element_type(const Graph& g, const Node& node) {
  const auto quantized = [](const QuantizeAttrs& a) {
    return ElementType{a.dtype, std::make_shared<const Quantization>(a.quant)};
  };
  switch (node.op) {
    case OpKind::Quantize: return quantized(node.attr<QuantizeAttrs>());
    case OpKind::QConv2d: return quantized(node.attr<QConv2dAttrs>().out);
    case OpKind::QAdd: return quantized(node.attr<QAddAttrs>().out);
    case OpKind::QGlobalAvgPool: return quantized(node.attr<QuantizeAttrs>());
    case OpKind::QLookup: return quantized(node.attr<QLookupAttrs>().out);
    default: break;
  }
  if (operand_kind(node.op, 0, node.op_operand_count()) != Operand::kAny) return {};
  const Tensor& x = g.tensor(node.inputs[0]);
  return {x.dtype, x.quant};
}

void set_element_type(Tensor& t, const ElementType& type) {
  t.dtype = type.dtype;
  t.quant = type.quant;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& context) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Aligned from the right; a missing dim acts as 1.
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      fail(ExitCode::kInvalidModel, context, ": shapes ", to_string(a), " and ", to_string(b), " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t window_output_extent(int64_t in, int kernel, int stride, int pad_begin, int pad_end, int dilation,
                             bool ceil_mode) {
  AOTC_CHECK(stride >= 1 && kernel >= 1 && dilation >= 1);
  // PyTorch's pooling_output_shape_pad_lr: floor division (rounding down also for
  // negative numerators), then in ceil mode drop a last window that would start
  // beyond the input and its begin padding.
  const int64_t numerator = in + pad_begin + pad_end - int64_t{dilation} * (kernel - 1) - 1 +
                            (ceil_mode ? stride - 1 : 0);
  int64_t out = numerator >= 0 ? numerator / stride : -((-numerator + stride - 1) / stride);
  ++out;
  if (ceil_mode && (out - 1) * stride >= in + pad_begin) --out;
  return out;
}

TensorId append_node(Graph& g, OpKind op, Attrs attrs, std::vector<TensorId> inputs, const std::string& name,
                     const std::string& context) {
  Node node;
  node.name = name;
  node.op = op;
  node.attrs = std::move(attrs);
  node.inputs = std::move(inputs);
  Tensor out;
  out.name = g.unique_name(name);
  node.outputs = {g.add_tensor(std::move(out))};
  try {
    g.tensor(node.outputs[0]).shape = infer_node_shapes(g, node)[0];
    set_element_type(g.tensor(node.outputs[0]), infer_element_type(g, node));
  } catch (const UserError& e) {
    throw UserError(e.code(), context + ": " + e.what());
  }
  g.nodes.push_back(std::move(node));
  return g.nodes.back().outputs[0];
}

}  // namespace aotc
