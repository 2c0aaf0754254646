// The Graph IR: an SSA DAG of typed tensors and operator nodes.
//
// - Every tensor is defined exactly once: as a graph input, as a constant
//   (it carries data) or as an output of exactly one node.
// - Graph::nodes is kept in a valid execution (topological) order by every
//   frontend and pass; the printer, evaluator and memory planner rely on it.
// - Tensors are addressed by TensorId (an index into Graph::tensors). Passes may
//   leave tensors unreferenced; eliminate_dead_code() compacts them away.
// - Constant data is shared, immutable and copy-on-write, so passing a Graph by
//   value (as every pass does) copies no weights.
//
// Layout: all tensors are logically NCHW (the exported semantics). Physical
// layouts are a code-generation decision: the plan over the chain
// (plan/choose_layouts.h) says how the backend stores each tensor.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace aotc {

// Element types. Integer tensors are quantized (Tensor::quant): real = scale * (q - zero_point).
enum class DType : uint8_t { F32, I8, U8, I32 };

const char* dtype_name(DType dtype);  // "f32", "i8", "u8", "i32"
// Returns false if `name` is not a dtype name.
bool dtype_from_name(const std::string& name, DType* dtype);
int64_t dtype_bytes(DType dtype);
bool is_integer(DType dtype);
// The values an integer dtype holds (for F32: the range of integers a float holds exactly).
int64_t dtype_min(DType dtype);
int64_t dtype_max(DType dtype);

enum class Layout : uint8_t {
  kNCHW,   // the logical layout of every tensor as exported
  kNCHWc,  // channel-blocked [N, C/B, H, W, B] (B decided by code generation)
};

using Shape = std::vector<int64_t>;
// The most elements a tensor may have (every element index then fits in 32 bits): the shape
// rules and the readers refuse larger tensors as absurd.
inline constexpr int64_t kMaxElements = int64_t{1} << 31;
using TensorId = int32_t;
constexpr TensorId kNoTensor = -1;

int64_t num_elements(const Shape& shape);
std::string to_string(const Shape& shape);  // "[1,3,224,224]"

// The affine quantization of an integer tensor: real = scale * (q - zero_point), per
// tensor (axis -1: one scale and one zero point) or per channel (one of each per index
// of dimension `axis`). Scales are finite and positive; zero points lie in the dtype.
struct Quantization {
  std::vector<float> scale;
  std::vector<int64_t> zero_point;
  int axis = -1;
  bool operator==(const Quantization&) const = default;
};

struct Tensor {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  Layout layout = Layout::kNCHW;
  // Non-null for constants: num_elements(shape) values in row-major order; an integer
  // tensor's values are integers in its dtype's range (a float holds them exactly:
  // |v| <= 2^24 for i32, checked where such a constant is made).
  std::shared_ptr<const std::vector<float>> data;
  // Non-null exactly for integer dtypes.
  std::shared_ptr<const Quantization> quant;

  bool is_constant() const { return data != nullptr; }
};

// Whether two tensors have the same element type (dtype and quantization).
bool same_element_type(const Tensor& a, const Tensor& b);
// Throws UserError(kInvalidModel) prefixed by `context` (if not empty) unless `t`'s quantization
// suits its dtype and shape (see Quantization), and, for a constant, its values are
// integers in the dtype's range.
void check_element_type(const Tensor& t, const std::string& context);

// What the memory planner and the backends need to know of an op's data flow.
enum class OpClass : uint8_t {
  kOther,
  // Each output element is computed from the operands' elements at its own
  // position (broadcast, NumPy rules): the Halide backend lowers these with the
  // elementwise generator, which reads an operand element only to write that
  // position, so the memory plan may write the output over an operand.
  kElementwise,
  // The same for the first operand; the others are per-channel parameters.
  kElementwiseWithParameters,
  // The output is the input's bytes under another shape.
  kAlias,
};

// The operator set, one table: X(enumerator, printed name, OpClass).
#define AOTC_OP_KINDS(X)                                           \
  X(Conv2d, "conv2d", kOther)                                      \
  X(BatchNorm, "batch_norm", kElementwiseWithParameters)           \
  X(Affine, "affine", kElementwiseWithParameters)                  \
  X(Relu, "relu", kElementwise)                                    \
  X(Clamp, "clamp", kElementwise)                                  \
  X(HardSwish, "hardswish", kElementwise)                          \
  X(Sigmoid, "sigmoid", kElementwise)                              \
  X(Add, "add", kElementwise)                                      \
  X(Mul, "mul", kElementwise)                                      \
  X(MaxPool2d, "max_pool2d", kOther)                               \
  X(AvgPool2d, "avg_pool2d", kOther)                               \
  X(AdaptiveAvgPool2d, "adaptive_avg_pool2d", kOther)              \
  X(GlobalAvgPool, "global_avg_pool", kOther)                      \
  X(Linear, "linear", kOther)                                      \
  X(Flatten, "flatten", kAlias)                                    \
  X(Reshape, "reshape", kAlias)                                    \
  X(Concat, "concat", kOther)                                      \
  X(Dropout, "dropout", kAlias)                                    \
  X(Softmax, "softmax", kOther)                                    \
  X(Pad, "pad", kOther)                                            \
  X(Tanh, "tanh", kElementwise)                                    \
  X(PRelu, "prelu", kElementwise)                                  \
  X(Transpose, "transpose", kOther)                                \
  X(ResizeBilinear, "resize_bilinear", kOther)                     \
  X(ResizeNearest, "resize_nearest", kOther)                       \
  X(ConvTranspose2d, "conv_transpose2d", kOther)                   \
  X(DepthToSpace, "depth_to_space", kOther)                        \
  X(Elu, "elu", kElementwise)                                      \
  X(Softplus, "softplus", kElementwise)                            \
  X(Max, "max", kElementwise)                                      \
  X(Min, "min", kElementwise)                                      \
  X(Div, "div", kElementwise)                                      \
  X(Quantize, "quantize", kOther)                                  \
  X(Dequantize, "dequantize", kOther)                              \
  X(QConv2d, "qconv2d", kOther)                                    \
  X(QAdd, "qadd", kOther)                                          \
  X(QGlobalAvgPool, "qglobal_avg_pool", kOther)                    \
  X(QLookup, "qlookup", kOther)

enum class OpKind : uint8_t {
#define AOTC_X(e, s, c) e,
  AOTC_OP_KINDS(AOTC_X)
#undef AOTC_X
};

OpClass op_class(OpKind op);
const char* op_name(OpKind op);
// Returns false if `name` is not an op name.
bool op_from_name(const std::string& name, OpKind* op);

// ---- Typed attributes, one struct per op family ----------------------------
// Inputs of each op are listed beside it; "?" marks an optional trailing input.

struct NoAttrs {
  bool operator==(const NoAttrs&) const = default;
};

// conv2d(x[N,C,H,W], weight[O,C/groups,KH,KW], bias[O]?) -> [N,O,OH,OW]
struct Conv2dAttrs {
  std::array<int, 2> stride{1, 1};
  std::array<int, 4> pad{0, 0, 0, 0};  // top, left, bottom, right
  std::array<int, 2> dilation{1, 1};
  int groups = 1;
  bool operator==(const Conv2dAttrs&) const = default;
};

// batch_norm(x, mean[C], var[C], gamma[C]?, beta[C]?): affine iff 5 inputs.
struct BatchNormAttrs {
  float eps = 1e-5f;
  bool operator==(const BatchNormAttrs&) const = default;
};

// affine(x[N,C,...], scale[C], shift[C]) = x*scale + shift per channel (dim 1).
// clamp(x) = min(max(x, lo), hi).
struct ClampAttrs {
  float min = 0, max = 0;
  bool operator==(const ClampAttrs&) const = default;
};

// elu(x) = x > 0 ? x : alpha * (exp(x) - 1). softplus(x) = log(1 + exp(x)) has no attributes.
// max(a, b), min(a, b) and div(a, b) = a / b broadcast as add and mul do; max and min give
// NaN where either operand is NaN (torch.maximum, numpy.maximum).
struct EluAttrs {
  float alpha = 1;
  bool operator==(const EluAttrs&) const = default;
};

// max_pool2d / avg_pool2d(x[N,C,H,W]) with PyTorch's semantics, generalised to
// asymmetric padding (needed when a Pad node is folded in).
struct Pool2dAttrs {
  std::array<int, 2> kernel{1, 1};
  std::array<int, 2> stride{1, 1};
  std::array<int, 4> pad{0, 0, 0, 0};  // top, left, bottom, right
  std::array<int, 2> dilation{1, 1};   // max pooling only
  bool ceil_mode = false;
  bool count_include_pad = true;       // average pooling only
  bool operator==(const Pool2dAttrs&) const = default;
};

struct AdaptiveAvgPool2dAttrs {
  std::array<int, 2> output_size{1, 1};
  bool operator==(const AdaptiveAvgPool2dAttrs&) const = default;
};

// linear(x[N,...], weight[M,K], bias[M]?) -> [N,M]; dims after the first are
// flattened (so a flatten feeding a linear is redundant).
struct FlattenAttrs {
  int start_dim = 1, end_dim = -1;
  bool operator==(const FlattenAttrs&) const = default;
};

struct ReshapeAttrs {
  Shape shape;  // fully resolved
  bool operator==(const ReshapeAttrs&) const = default;
};

// concat / softmax along `axis` (non-negative after import).
struct AxisAttrs {
  int axis = 1;
  bool operator==(const AxisAttrs&) const = default;
};

// pad(x) with constant `value`; pads = begin of every dim, then end of every dim.
// A negative pad crops (as ONNX's Pad and PyTorch's F.pad): the IR's static slice.
struct PadAttrs {
  std::vector<int64_t> pads;
  float value = 0;
  bool operator==(const PadAttrs&) const = default;
};

// prelu(x, alpha) = x >= 0 ? x : alpha * x, alpha broadcast to x (NumPy rules).

// transpose(x) -> y with y.shape[i] = x.shape[perm[i]]; perm is a permutation of
// the dims. Frontends of NHWC formats (TFLite) put one at every boundary between
// the file's layout and the IR's NCHW.
struct TransposeAttrs {
  std::vector<int> perm;
  bool operator==(const TransposeAttrs&) const = default;
};

// resize_bilinear / resize_nearest(x[N,C,H,W]) -> [N,C,size[0],size[1]] with
// TensorFlow Lite's sampling: scale = in/out, or (in-1)/(out-1) with
// align_corners; half_pixel_centers samples at (o + 0.5) * scale - 0.5
// (bilinear) or floor((o + 0.5) * scale) (nearest; align_corners rounds).
struct ResizeAttrs {
  std::array<int, 2> size{1, 1};
  bool align_corners = false;
  bool half_pixel_centers = false;
  bool operator==(const ResizeAttrs&) const = default;
};

// conv_transpose2d(x[N,C,H,W], weight[C,O,KH,KW], bias[O]?) -> [N,O,OH,OW]:
// the full transposed convolution ((H-1)*stride + KH rows) with `pad` rows and
// columns cropped from each side (PyTorch's weight layout, groups = 1).
struct ConvTranspose2dAttrs {
  std::array<int, 2> stride{1, 1};
  std::array<int, 4> pad{0, 0, 0, 0};  // top, left, bottom, right
  bool operator==(const ConvTranspose2dAttrs&) const = default;
};

// depth_to_space(x[N,C,H,W]) -> [N,C/(b*b),H*b,W*b] in TensorFlow's (DCR) order:
// y[n, c, h*b + i, w*b + j] = x[n, (i*b + j) * C/(b*b) + c, h, w].
struct DepthToSpaceAttrs {
  int block = 2;
  bool operator==(const DepthToSpaceAttrs&) const = default;
};

// Whose integer arithmetic a quantize or qconv2d follows (docs/int8.md): ONNX's, as ONNX
// Runtime's CPU kernels compute it (float requantization, ties to even), or TensorFlow Lite's
// (ties away from zero; qconv2d requantizes with a fixed-point multiplier).
enum class Arithmetic : uint8_t { kOnnx, kTflite };

const char* arithmetic_name(Arithmetic a);  // "onnx", "tflite"
// Returns false if `name` names no arithmetic.
bool arithmetic_from_name(const std::string& name, Arithmetic* a);

// quantize(x: f32) -> dtype with `quant`: q = saturate(round(x / scale) + zero_point), x / scale
// in float32, rounding ties to even (ONNX QuantizeLinear) or, with TFLite's arithmetic, away
// from zero (TFLite's QUANTIZE); dequantize(q) -> f32: (q - zero_point) * scale, with q's own
// quantization (ONNX DequantizeLinear, TFLite's DEQUANTIZE). Reshape, flatten, dropout and
// max_pool2d keep any element type (max pooling commutes with the monotonic dequantization);
// qconv2d computes in integers; every other op reads and writes f32.
struct QuantizeAttrs {
  DType dtype = DType::I8;
  Quantization quant;
  Arithmetic arithmetic = Arithmetic::kOnnx;
  bool operator==(const QuantizeAttrs&) const = default;
};

// qconv2d(x: u8/i8 per tensor, weight: i8/u8 [O,C/groups,KH,KW] per tensor or per output
// channel (axis 0), bias: i32 [O]?) -> `out.dtype` quantized by `out.quant` (per tensor): the
// integer convolution of ONNX's QLinearConv as ONNX Runtime's CPU kernels compute it
// (docs/int8.md):
//   acc[o] = bias[o] + sum (x - x_zero_point) * (w[o] - w_zero_point[o])    exactly, in int32
//   y = clamp(round_half_to_even(float(acc[o]) * m[o]) + y_zero_point, min, max)
//   m[o] = float32(float32(x_scale * w_scale[o]) / y_scale)
// or, with out.arithmetic TFLite's (reference_integer_ops::ConvPerChannel):
//   y = clamp(MultiplyByQuantizedMultiplier(acc[o], QuantizeMultiplier(double(x_scale) *
//             double(w_scale[o]) / double(y_scale))) + y_zero_point, min, max)
// Padding reads the input's zero point. The bias's scale is x_scale * w_scale[o] (its zero
// point 0). [min, max] lies in out.dtype: a relu or clamp folded into the saturation.
struct QConv2dAttrs {
  Conv2dAttrs conv;
  QuantizeAttrs out;
  int64_t min = 0, max = 0;
  bool operator==(const QConv2dAttrs&) const = default;
};

// qglobal_avg_pool(x [N,C,H,W]) {QuantizeAttrs} -> [N,C,1,1] of x's integer type, quantized
// per tensor: ONNX Runtime's QLinearGlobalAveragePool (its x86 kernel, docs/int8.md):
//   acc = sum over the plane of (x - x_zero_point), exactly in int32
//   y = saturate(round_half_to_even(float(acc) * m) + y_zero_point),
//   m = float32(x_scale / float32(y_scale * float32(H * W)))
// qlookup(x) -> `out.dtype` quantized by `out.quant`: y = table[x - min(x's dtype)], x an
// 8-bit integer tensor quantized per tensor, the table's 256 values in out.dtype. quantize-ops
// makes it of quantize(f(dequantize(x))) for a chain f of elementwise float ops (sigmoid,
// hardswish, tanh...), each entry what the reference evaluator computes for that input.
struct QLookupAttrs {
  QuantizeAttrs out;
  std::vector<int64_t> table;
  bool operator==(const QLookupAttrs&) const = default;
};

// qadd(a, b) -> `out.dtype` quantized by `out.quant`: the sum of two tensors of one shape, all
// three of one integer type quantized per tensor. With ONNX's arithmetic, ONNX Runtime's
// QLinearAdd on x86 (its AVX2 kernel, docs/int8.md), in float32 with fused multiply-adds, on
// uint8 (int8 values and zero points shifted by s = 128, as ONNX Runtime's QDQ transformer
// converts int8 activations; s = 0 for uint8):
//   r_a = float32(a_scale / y_scale), r_b = float32(b_scale / y_scale)
//   k = float32(y_zp + s) - fma(r_a, a_zp + s, float32(r_b * (b_zp + s)))
//   y = clamp(round_half_to_even(fma(a + s, r_a, fma(b + s, r_b, k))) - s, min, max)
// With TFLite's, its integer ADD (reference_integer_ops::AddElementwise, evaluator.h's
// TfliteAddParameters): fixed-point multipliers of each input and of the sum.
// [min, max] lies in out.dtype: a relu folded into the saturation.
struct QAddAttrs {
  QuantizeAttrs out;
  int64_t min = 0, max = 0;
  bool operator==(const QAddAttrs&) const = default;
};

using Attrs = std::variant<NoAttrs, Conv2dAttrs, BatchNormAttrs, ClampAttrs, Pool2dAttrs,
                           AdaptiveAvgPool2dAttrs, FlattenAttrs, ReshapeAttrs, AxisAttrs, PadAttrs,
                           TransposeAttrs, ResizeAttrs, ConvTranspose2dAttrs, DepthToSpaceAttrs, EluAttrs,
                           QuantizeAttrs, QConv2dAttrs, QAddAttrs, QLookupAttrs>;

// ---- Fused epilogues ---------------------------------------------------------
// Elementwise work fused into the node that produces a value, applied in order
// to every output element before it is stored. Operand tensors of post-ops
// follow the op's own operands in Node::inputs, in epilogue order (so liveness,
// DCE and CSE see them); `input` is the index of a post-op's first operand.
enum class PostOpKind : uint8_t {
  kRelu,       // max(v, 0)
  kClamp,      // min(max(v, min), max)
  kHardSwish,  // v * relu6(v + 3) / 6
  kSigmoid,    // 1 / (1 + exp(-v))
  kTanh,       // tanh(v)
  kAffine,     // v * inputs[input][c] + inputs[input+1][c], c = channel (dim 1)
  kAdd,        // v + inputs[input] (broadcast to the output shape)
  kMul,        // v * inputs[input] (broadcast to the output shape)
  kPRelu,      // v >= 0 ? v : v * inputs[input] (alpha, broadcast to the output shape)
  kElu,        // v > 0 ? v : alpha * (exp(v) - 1)
  kSoftplus,   // log(1 + exp(v))
};

const char* post_op_name(PostOpKind kind);
int post_op_operand_count(PostOpKind kind);  // 0, 1 (add, mul, prelu) or 2 (affine)

struct PostOp {
  PostOpKind kind = PostOpKind::kRelu;
  float min = 0, max = 0;  // kClamp only
  float alpha = 0;         // kElu only
  int input = -1;          // kAffine, kAdd, kMul: index into Node::inputs
  bool operator==(const PostOp&) const = default;
};

struct Node {
  std::string name;  // for messages; frontends keep the source model's name
  OpKind op = OpKind::Relu;
  Attrs attrs;
  std::vector<TensorId> inputs;
  std::vector<TensorId> outputs;
  std::vector<PostOp> epilogue;

  // Number of inputs that are operands of the op itself (the rest are epilogue operands).
  size_t op_operand_count() const;
  // Appends a post-op, appending its operands to `inputs`.
  void append_post_op(PostOp op, const std::vector<TensorId>& operands);
  // The operands of post-op `p` of this node's epilogue (empty for relu, clamp, ...).
  std::vector<TensorId> post_op_operands(const PostOp& p) const;

  template <typename T>
  const T& attr() const { return std::get<T>(attrs); }
  template <typename T>
  T& attr() { return std::get<T>(attrs); }
};

struct Graph {
  std::string name;
  std::vector<Tensor> tensors;
  std::vector<Node> nodes;  // execution order
  std::vector<TensorId> inputs;
  std::vector<TensorId> outputs;

  const Tensor& tensor(TensorId id) const { return tensors.at(static_cast<size_t>(id)); }
  Tensor& tensor(TensorId id) { return tensors.at(static_cast<size_t>(id)); }

  TensorId add_tensor(Tensor t);
  // Adds a constant; data.size() must equal num_elements(shape).
  TensorId add_constant(std::string name, Shape shape, std::vector<float> data);
  // A tensor name not yet used in the graph, derived from `base`.
  std::string unique_name(const std::string& base) const;
};

// ---- Use-def helpers -----------------------------------------------------------

// For every tensor: the index of the node that defines it, or -1.
std::vector<int> defining_nodes(const Graph& g);
// For every tensor: how many node input slots read it (graph outputs not counted).
std::vector<int> use_counts(const Graph& g);
bool is_graph_output(const Graph& g, TensorId id);
bool is_graph_input(const Graph& g, TensorId id);
// Rewrites every read of `from` (node inputs and graph outputs) to `to`.
void replace_all_uses(Graph& g, TensorId from, TensorId to);
// For removing a node whose output `from` always equals `to`: true unless `from`
// is a graph output and `to` already is a graph input or output (the graph's
// outputs would alias each other or an input; the caller then keeps the node).
bool can_forward_uses(const Graph& g, TensorId from, TensorId to);
// replace_all_uses(from -> to), where can_forward_uses holds; if `from` is a
// graph output, the two tensors swap names so that the output keeps its name.
void forward_uses(Graph& g, TensorId from, TensorId to);

// Removes the nodes whose flag is set (erase.size() == g.nodes.size()), keeping
// the order of the others.
void erase_nodes(Graph& g, const std::vector<bool>& erase);

// Sorts nodes into a topological order (stable for an already sorted graph).
// Returns false if the graph has a cycle.
bool topological_sort(Graph& g);

}  // namespace aotc
