#include "backends/halide/node_kernel.h"

#include "generators/concat.h"
#include "generators/conv_transpose2d.h"
#include "generators/depth_to_space.h"
#include "generators/elementwise.h"
#include "generators/linear.h"
#include "generators/pad.h"
#include "generators/pool2d.h"
#include "generators/qadd.h"
#include "generators/qglobal_avg_pool.h"
#include "generators/qlookup.h"
#include "generators/qconv2d.h"
#include "generators/quantize.h"
#include "generators/resize.h"
#include "generators/softmax.h"
#include "generators/transpose.h"
#include "ir/printer.h"
#include "reference/evaluator.h"
#include "support/error.h"

namespace aotc {
namespace {

// Builds a node's kernel step: its arguments in call order.
class StepBuilder {
 public:
  StepBuilder(const Graph& g, const Node& node) : g_(g), node_(node) {
    kernel_.step.key = node_description(g, node);
    kernel_.step.suffix = op_name(node.op);
    kernel_.step.ops = op_signature(node);
  }

  void tensor(TensorId id) { tensor(id, g_.tensor(id).shape); }
  void tensor(TensorId id, const Shape& shape) {
    StepArg a;
    a.tensor = id;
    a.shape = shape;
    kernel_.step.args.push_back(std::move(a));
  }
  void packed(std::function<gen::PackedWeights()> pack) {
    StepArg a;
    a.kind = StepArg::Kind::kPacked;
    a.packed = static_cast<int>(kernel_.packed.size());
    kernel_.packed.push_back(std::move(pack));
    kernel_.step.args.push_back(std::move(a));
  }
  // The op's first `count` inputs as they are.
  void inputs(size_t count) {
    for (size_t i = 0; i < count; ++i) tensor(node_.inputs[i]);
  }

  // Appends the epilogue operands and the output; `op_flops` are the op's
  // own, to which the epilogue's (one per output and post-op) are added.
  NodeKernel finish(std::function<gen::Kernel(const Halide::Target&)> build, double op_flops) {
    for (size_t i = node_.op_operand_count(); i < node_.inputs.size(); ++i) tensor(node_.inputs[i]);
    tensor(node_.outputs[0]);
    kernel_.step.build = std::move(build);
    kernel_.step.flops = op_flops + output_elements() * static_cast<double>(node_.epilogue.size());
    return std::move(kernel_);
  }

  double output_elements() const { return static_cast<double>(num_elements(g_.tensor(node_.outputs[0]).shape)); }

 private:
  const Graph& g_;
  const Node& node_;
  NodeKernel kernel_;
};

gen::ElementwiseSpec::Kind elementwise_kind(OpKind op) {
  using Kind = gen::ElementwiseSpec::Kind;
  switch (op) {
    case OpKind::Relu: return Kind::kRelu;
    case OpKind::Clamp: return Kind::kClamp;
    case OpKind::HardSwish: return Kind::kHardSwish;
    case OpKind::Sigmoid: return Kind::kSigmoid;
    case OpKind::Tanh: return Kind::kTanh;
    case OpKind::Elu: return Kind::kElu;
    case OpKind::Softplus: return Kind::kSoftplus;
    case OpKind::Affine: return Kind::kAffine;
    case OpKind::Add: return Kind::kAdd;
    case OpKind::Mul: return Kind::kMul;
    case OpKind::Max: return Kind::kMax;
    case OpKind::Min: return Kind::kMin;
    case OpKind::Div: return Kind::kDiv;
    case OpKind::PRelu: return Kind::kPRelu;
    default: AOTC_CHECK(false, "no elementwise kernel for op ", op_name(op));
  }
  return Kind::kCopy;
}

// An elementwise op (OpClass::kElementwise, kElementwiseWithParameters) with
// the elementwise generator, whose guarded tails the memory plan's in-place
// outputs rely on.
NodeKernel elementwise_kernel(const Graph& g, const Node& node) {
  StepBuilder b(g, node);
  gen::ElementwiseSpec spec;
  spec.kind = elementwise_kind(node.op);
  if (node.op == OpKind::Clamp) {
    spec.min = node.attr<ClampAttrs>().min;
    spec.max = node.attr<ClampAttrs>().max;
  }
  if (node.op == OpKind::Elu) spec.alpha = node.attr<EluAttrs>().alpha;
  for (size_t i = 0; i < node.op_operand_count(); ++i) spec.input_shapes.push_back(g.tensor(node.inputs[i]).shape);
  b.inputs(node.op_operand_count());
  spec.output_shape = g.tensor(node.outputs[0]).shape;
  spec.epilogue = epilogue_specs(g, node);
  // The op counts as one more post-op.
  return b.finish([spec](const Halide::Target& t) { return gen::elementwise(spec, t); }, b.output_elements());
}

// A qconv2d node as the generator takes it (int16 pairs: spec.vnni false).
gen::QConv2dSpec qconv2d_spec(const Graph& g, const Node& node) {
  const auto& a = node.attr<QConv2dAttrs>();
  const Tensor& x = g.tensor(node.inputs[0]);
  const Tensor& w = constant_input(g, node, 1, "weight");
  const Quantization& wq = *w.quant;
  gen::QConv2dSpec spec;
  spec.input_shape = x.shape;
  spec.input_type = halide_type(x.dtype);
  spec.in_zero = x.quant->zero_point[0];
  spec.out_channels = w.shape[0];
  spec.kernel = {static_cast<int>(w.shape[2]), static_cast<int>(w.shape[3])};
  spec.stride = a.conv.stride;
  spec.pad = a.conv.pad;
  spec.dilation = a.conv.dilation;
  spec.groups = a.conv.groups;
  const bool symmetric = std::all_of(wq.zero_point.begin(), wq.zero_point.end(), [](int64_t z) { return z == 0; });
  spec.weight_type = symmetric && w.dtype == DType::I8 ? Halide::Int(8) : Halide::Int(32);
  spec.out_type = halide_type(a.out.dtype);
  spec.out_zero = a.out.quant.zero_point[0];
  spec.fixed_point = a.out.arithmetic == Arithmetic::kTflite;
  spec.min = a.min;
  spec.max = a.max;
  return spec;
}

// qconv2d: the weights minus their zero points, the bias (zeros without one), the
// per-channel requantization multipliers and, for VNNI dot products, the weights' sums, all
// packed at compile time.
NodeKernel qconv2d_kernel(const Graph& g, const Node& node, const gen::QConv2dSpec& spec, StepBuilder& b) {
  const auto& a = node.attr<QConv2dAttrs>();
  const Tensor& x = g.tensor(node.inputs[0]);
  const Tensor& w = constant_input(g, node, 1, "weight");
  const Quantization& wq = *w.quant;
  b.tensor(node.inputs[0]);
  const std::shared_ptr<const std::vector<float>> weights = w.data;
  b.packed([spec, weights, zero_points = wq.zero_point] {
    return gen::pack_qconv2d_weights(spec, weights->data(), zero_points);
  });
  if (node.op_operand_count() == 3) {
    b.tensor(node.inputs[2]);
  } else {
    b.packed([o = spec.out_channels] { return gen::PackedWeights{{o}, std::vector<float>(static_cast<size_t>(o)), Halide::Int(32)}; });
  }
  if (spec.fixed_point) {
    std::vector<int32_t> multipliers;
    std::vector<int> shifts;
    for (int64_t o = 0; o < spec.out_channels; ++o) {
      const FixedPointMultiplier m = tflite_requantization_multiplier(*x.quant, wq, a.out.quant, o);
      multipliers.push_back(m.multiplier);
      shifts.push_back(m.shift);
    }
    b.packed([multipliers, shifts] { return gen::pack_fixed_point_multipliers(multipliers, shifts); });
  } else {
    std::vector<float> multipliers;
    for (int64_t o = 0; o < spec.out_channels; ++o)
      multipliers.push_back(requantization_multiplier(*x.quant, wq, a.out.quant, o));
    b.packed([multipliers] { return gen::PackedWeights{{static_cast<int64_t>(multipliers.size())}, multipliers}; });
  }
  if (spec.vnni) b.packed([spec, weights] { return gen::qconv2d_weight_sums(spec, weights->data()); });
  const double macs = b.output_elements() * static_cast<double>(w.shape[1] * w.shape[2] * w.shape[3]);
  return b.finish([spec](const Halide::Target& t) { return gen::qconv2d(spec, t); }, 2 * macs);
}

}  // namespace

bool has_node_kernel(OpKind op) {
  switch (op) {
    case OpKind::Conv2d:
    case OpKind::BatchNorm: return false;
    default: return op_class(op) != OpClass::kAlias;
  }
}

NodeKernel node_kernel(const Graph& g, const Node& node) {
  AOTC_CHECK(has_node_kernel(node.op), "no single kernel for op ", op_name(node.op));
  switch (op_class(node.op)) {
    case OpClass::kElementwise:
    case OpClass::kElementwiseWithParameters: return elementwise_kernel(g, node);
    case OpClass::kAlias:
    case OpClass::kOther: break;
  }
  StepBuilder b(g, node);
  const Shape& out_shape = g.tensor(node.outputs[0]).shape;
  const double out_elements = b.output_elements();
  switch (node.op) {
    case OpKind::ConvTranspose2d: {
      const auto& a = node.attr<ConvTranspose2dAttrs>();
      const Tensor& w = constant_input(g, node, 1, "weight");
      gen::ConvTranspose2dSpec spec;
      spec.input_shape = g.tensor(node.inputs[0]).shape;
      spec.out_channels = w.shape[1];
      spec.kernel = {static_cast<int>(w.shape[2]), static_cast<int>(w.shape[3])};
      spec.stride = a.stride;
      spec.pad = a.pad;
      spec.has_bias = node.op_operand_count() == 3;
      spec.epilogue = epilogue_specs(g, node);
      b.tensor(node.inputs[0]);
      const std::shared_ptr<const std::vector<float>> data = w.data;
      b.packed([spec, data] { return gen::pack_conv_transpose2d_weights(spec, data->data()); });
      if (spec.has_bias) b.tensor(node.inputs[2]);
      // Every input value times every tap and output channel (the cropped rows included).
      const double macs = static_cast<double>(num_elements(spec.input_shape) * w.shape[1] * w.shape[2] * w.shape[3]);
      return b.finish([spec](const Halide::Target& t) { return gen::conv_transpose2d(spec, t); }, 2 * macs);
    }
    case OpKind::Linear: {
      const Tensor& w = constant_input(g, node, 1, "weight");
      const Shape& x = g.tensor(node.inputs[0]).shape;
      gen::LinearSpec spec;
      spec.batch = x[0];
      spec.in_features = w.shape[1];
      spec.out_features = w.shape[0];
      spec.has_bias = node.op_operand_count() == 3;
      spec.epilogue = epilogue_specs(g, node);
      b.tensor(node.inputs[0], {spec.batch, spec.in_features});  // linear flattens its input
      const std::shared_ptr<const std::vector<float>> data = w.data;
      b.packed([spec, data] { return gen::pack_linear_weights(spec, data->data()); });
      if (spec.has_bias) b.tensor(node.inputs[2]);
      return b.finish([spec](const Halide::Target& t) { return gen::linear(spec, t); },
                      2 * out_elements * static_cast<double>(spec.in_features));
    }
    case OpKind::MaxPool2d:
    case OpKind::AvgPool2d:
    case OpKind::AdaptiveAvgPool2d:
    case OpKind::GlobalAvgPool: {
      const gen::Pool2dSpec spec = pool2d_spec(g, node);
      const double window = spec.kind == gen::Pool2dSpec::Kind::kAdaptiveAverage
                                ? static_cast<double>(num_elements(spec.input_shape)) / out_elements
                                : spec.kernel[0] * spec.kernel[1];
      b.tensor(node.inputs[0]);
      return b.finish([spec](const Halide::Target& t) { return gen::pool2d(spec, t); }, out_elements * window);
    }
    case OpKind::Concat: {
      gen::ConcatSpec spec;
      spec.axis = node.attr<AxisAttrs>().axis;
      for (size_t i = 0; i < node.op_operand_count(); ++i) spec.input_shapes.push_back(g.tensor(node.inputs[i]).shape);
      b.inputs(node.op_operand_count());
      spec.epilogue = epilogue_specs(g, node);
      return b.finish([spec](const Halide::Target& t) { return gen::concat(spec, t); }, 0);
    }
    case OpKind::Softmax: {
      gen::SoftmaxSpec spec;
      spec.shape = out_shape;
      spec.axis = node.attr<AxisAttrs>().axis;
      spec.epilogue = epilogue_specs(g, node);
      b.tensor(node.inputs[0]);
      return b.finish([spec](const Halide::Target& t) { return gen::softmax(spec, t); }, 4 * out_elements);
    }
    case OpKind::Pad: {
      gen::PadSpec spec;
      spec.input_shape = g.tensor(node.inputs[0]).shape;
      spec.pads = node.attr<PadAttrs>().pads;
      spec.value = node.attr<PadAttrs>().value;
      spec.epilogue = epilogue_specs(g, node);
      b.tensor(node.inputs[0]);
      return b.finish([spec](const Halide::Target& t) { return gen::pad(spec, t); }, 0);
    }
    case OpKind::Transpose: {
      gen::TransposeSpec spec;
      spec.input_shape = g.tensor(node.inputs[0]).shape;
      spec.perm = node.attr<TransposeAttrs>().perm;
      spec.epilogue = epilogue_specs(g, node);
      spec.element_type = halide_type(g.tensor(node.inputs[0]).dtype);
      b.tensor(node.inputs[0]);
      return b.finish([spec](const Halide::Target& t) { return gen::transpose(spec, t); }, 0);
    }
    case OpKind::ResizeBilinear:
    case OpKind::ResizeNearest: {
      const auto& a = node.attr<ResizeAttrs>();
      gen::ResizeSpec spec;
      spec.kind = node.op == OpKind::ResizeBilinear ? gen::ResizeSpec::Kind::kBilinear : gen::ResizeSpec::Kind::kNearest;
      spec.input_shape = g.tensor(node.inputs[0]).shape;
      spec.size = {a.size[0], a.size[1]};
      spec.align_corners = a.align_corners;
      spec.half_pixel_centers = a.half_pixel_centers;
      spec.epilogue = epilogue_specs(g, node);
      b.tensor(node.inputs[0]);
      b.packed([spec] { return gen::resize_tables(spec); });
      // Bilinear: 3 multiply-adds per output (rows blended once per output row).
      const double per_output = node.op == OpKind::ResizeBilinear ? 6 : 0;
      return b.finish([spec](const Halide::Target& t) { return gen::resize(spec, t); }, per_output * out_elements);
    }
    case OpKind::Quantize:
    case OpKind::Dequantize: {
      const bool quantizing = node.op == OpKind::Quantize;
      const Tensor& integer = g.tensor(quantizing ? node.outputs[0] : node.inputs[0]);
      gen::QuantizeSpec spec;
      spec.kind = quantizing ? gen::QuantizeSpec::Kind::kQuantize : gen::QuantizeSpec::Kind::kDequantize;
      spec.shape = out_shape;
      spec.integer_type = halide_type(integer.dtype);
      spec.scale = integer.quant->scale;
      spec.zero_point = integer.quant->zero_point;
      spec.axis = integer.quant->axis;
      spec.ties_away_from_zero = quantizing && node.attr<QuantizeAttrs>().arithmetic == Arithmetic::kTflite;
      b.tensor(node.inputs[0]);
      return b.finish([spec](const Halide::Target& t) { return gen::quantize(spec, t); }, 2 * out_elements);
    }
    case OpKind::QConv2d: return qconv2d_kernel(g, node, qconv2d_spec(g, node), b);
    case OpKind::QGlobalAvgPool: {
      const auto& a = node.attr<QuantizeAttrs>();
      const Tensor& x = g.tensor(node.inputs[0]);
      const gen::QGlobalAvgPoolSpec spec{x.shape, halide_type(x.dtype), x.quant->zero_point[0], a.quant.zero_point[0],
                                         global_avg_pool_multiplier(*x.quant, a.quant, x.shape[2] * x.shape[3])};
      b.tensor(node.inputs[0]);
      return b.finish([spec](const Halide::Target& t) { return gen::qglobal_avg_pool(spec, t); },
                      static_cast<double>(num_elements(x.shape)));
    }
    case OpKind::QLookup: {
      const auto& a = node.attr<QLookupAttrs>();
      const gen::QLookupSpec spec{out_shape, halide_type(g.tensor(node.inputs[0]).dtype), halide_type(a.out.dtype),
                                  a.table};
      b.tensor(node.inputs[0]);
      return b.finish([spec](const Halide::Target& t) { return gen::qlookup(spec, t); }, out_elements);
    }
    case OpKind::QAdd: {
      const auto& a = node.attr<QAddAttrs>();
      const Quantization& aq = *g.tensor(node.inputs[0]).quant;
      const Quantization& bq = *g.tensor(node.inputs[1]).quant;
      const QAddConstants k = qadd_constants(aq, bq, a.out.quant, a.out.dtype);
      gen::QAddSpec spec{out_shape, halide_type(a.out.dtype), k.a_ratio, k.b_ratio, k.offset, k.shift};
      spec.min = a.min;
      spec.max = a.max;
      spec.fixed_point = a.out.arithmetic == Arithmetic::kTflite;
      if (spec.fixed_point) {
        const TfliteAddParameters p = tflite_add_parameters(aq, bq, a.out.quant);
        spec.multipliers = {p.a.multiplier, p.b.multiplier, p.out.multiplier};
        spec.shifts = {p.a.shift, p.b.shift, p.out.shift};
        spec.offsets = {p.a_offset, p.b_offset, p.out_offset};
      } else if (!qadd_exact_in_double(k)) {  // quantize-ops makes only exact ones; a graph written by hand may not
        fail(ExitCode::kUnsupported, "node '", node.name, "' (qadd): its scales (ratios ", k.a_ratio, " and ", k.b_ratio,
             ") are beyond what its kernel computes exactly");
      }
      b.inputs(2);
      return b.finish([spec](const Halide::Target& t) { return gen::qadd(spec, t); }, 4 * out_elements);
    }
    case OpKind::DepthToSpace: {
      const gen::DepthToSpaceSpec spec{g.tensor(node.inputs[0]).shape, node.attr<DepthToSpaceAttrs>().block,
                                       epilogue_specs(g, node)};
      b.tensor(node.inputs[0]);
      return b.finish([spec](const Halide::Target& t) { return gen::depth_to_space(spec, t); }, 0);
    }
    default: break;
  }
  AOTC_CHECK(false, "no lowering for op ", op_name(node.op));
  return {};
}

std::string copy_kernel_key(const Shape& shape, bool aligned, DType dtype) {
  return "copy " + shape_text(shape) + (aligned ? "" : " unaligned") +
         (dtype == DType::F32 ? "" : std::string(" ") + dtype_name(dtype));
}

std::function<gen::Kernel(const Halide::Target&)> copy_kernel(const Shape& shape, bool aligned, DType dtype) {
  gen::ElementwiseSpec spec;
  spec.kind = gen::ElementwiseSpec::Kind::kCopy;
  spec.input_shapes = {shape};
  spec.output_shape = shape;
  spec.aligned = aligned;
  spec.element_type = halide_type(dtype);
  return [spec](const Halide::Target& t) { return gen::elementwise(spec, t); };
}

std::optional<Candidate> qconv2d_vnni_candidate(const Graph& g, const Node& node, const std::string& target) {
  if (node.op != OpKind::QConv2d) return std::nullopt;
  gen::QConv2dSpec spec = qconv2d_spec(g, node);
  if (!gen::qconv2d_uses_vnni(spec, Halide::Target(target))) return std::nullopt;
  spec.vnni = true;
  StepBuilder b(g, node);
  NodeKernel conv = qconv2d_kernel(g, node, spec, b);
  const Shape quads = gen::qconv2d_quads_shape(spec);
  const StepArg scratch{StepArg::Kind::kScratch, -1, 0, 0, quads, Layout::kNCHW, DType::U8};
  const Tensor& x = g.tensor(node.inputs[0]);
  const auto& a = node.attr<QConv2dAttrs>();
  KernelStep transform;
  transform.key = "qconv2d_quads (" + shape_text(x.shape) + " " + type_text(x) + ") pad=[" +
                  std::to_string(a.conv.pad[0]) + "," + std::to_string(a.conv.pad[1]) + "," +
                  std::to_string(a.conv.pad[2]) + "," + std::to_string(a.conv.pad[3]) + "]";
  transform.suffix = "qconv2d_quads";
  transform.ops = "qconv2d input quads";
  transform.build = [spec](const Halide::Target& t) { return gen::qconv2d_quads(spec, t); };
  transform.args = {conv.step.args[0], scratch};
  conv.step.args[0] = scratch;
  conv.step.ops += " (vnni)";
  Candidate c;
  c.name = "vnni";
  c.steps = {std::move(transform), std::move(conv.step)};
  c.packed = std::move(conv.packed);
  c.scratch_bytes = num_elements(quads);
  c.preferred_by_rules = true;
  return c;
}

}  // namespace aotc
