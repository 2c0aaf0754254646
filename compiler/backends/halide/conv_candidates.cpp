// The conv2d family's candidates: direct convolution (generators/conv2d.h),
// 1x1 convolutions as a GEMM over flattened pixels (pointwise_conv.h; strided
// ones after a subsample, subsample.h) and 3x3 convolutions by Winograd
// F(4x4, 3x3) (winograd_conv.h), each with its weight packing, its arguments
// and the arithmetic it counts.
#include "backends/halide/conv_candidates.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "backends/halide/group_plan.h"
#include "generators/conv2d.h"
#include "generators/conv2d_blocked.h"
#include "generators/depthwise_conv_blocked.h"
#include "generators/pad.h"
#include "generators/pointwise_conv.h"
#include "generators/pointwise_conv_blocked.h"
#include "generators/subsample.h"
#include "generators/winograd_conv.h"
#include "ir/printer.h"
#include "support/error.h"

namespace aotc {
namespace {

// The cost model: a candidate's time is its arithmetic over the FMA peak,
// scaled by the lanes its register tiles waste (gen::ScheduleShape) and by its
// schedule family's efficiency, e * K / (K + k0) for a reduction of K
// multiply-adds per output (a short one spends more of the time loading and
// storing the accumulators), plus the memory traffic its loop order adds.
// e and k0 are fitted to the convolutions of the seven torchvision models of
// bench/peers as `aotc --tune` timed them on one Zen 4 core (AVX-512, peak 117
// GFLOP/s); mean absolute error of the efficiency: vectorize-channels 0.037
// (107 layers), vectorize-width 0.052 (65), pointwise 0.030 (135). The model
// picks the faster of pointwise-gemm and direct on 133 of those 135 1x1
// convs, 25 µs of 14.4 ms off the measured best (the rules: 108, 800 µs off).
// The channel-blocked 1x1 (pointwise-nchwc) is fitted to MobileNetV2's 33
// (both inputs; mean absolute error 0.011). Targets with 16 vector registers
// (AVX2) run the same families at other efficiencies: their e is scaled by
// the median measured/predicted time of each family over ResNet-50's 1x1 and
// 3x3 convs as `aotc --tune` timed them on one Zen 3 core (AVX2, peak 101
// GFLOP/s; the Zen 4 model over-predicted the blocked 1x1 by 1.22x, the GEMM
// by 1.29x, the blocked 1x1 from an NCHW input by 1.49x, vectorize-channels
// by 1.69x and vectorize-width by 1.20x). The channel-blocked direct
// convolution (direct-nchwc) shares its register tile with the blocked 1x1
// and is given its e and k0; on one Zen 3 core its measured/predicted ratio
// over the seven models' 64 blocked direct convs was 0.89x the blocked 1x1s'
// in the same tuning run (the machine's speed drifts by ~10% from run to run,
// so families are compared within one), hence its scaling of 1.23. Winograd
// is predicted from its parts (predicted_winograd_us).
constexpr double kPeakGflops = 117;
// Bandwidth of one core from L3 and from memory (Zen 3: 55-60 and 14-15 GB/s).
constexpr double kL3BytesPerUs = 55e3, kMemoryBytesPerUs = 15e3;

struct FamilyFit {
  const char* family;
  double e, k0;
  double few_registers_slowdown;  // measured/predicted with 16 vector registers
};
constexpr FamilyFit kFamilyFits[] = {
    {"vectorize-channels", 0.977, 16, 1.69}, {"vectorize-width", 0.890, 0, 1.20},
    {"pointwise", 0.985, 4, 1.29},           {"pointwise-nchwc", 1.0, 3.5, 1.22},
    {"pointwise-nchw-to-nchwc", 1.0, 3.5, 1.49}, {"direct-nchwc", 1.0, 3.5, 1.23},
};

double predicted_us(double flops, int64_t reduction, const gen::ScheduleShape& shape, const Halide::Target& target) {
  double e = std::numeric_limits<double>::quiet_NaN(), k0 = 0;
  for (const FamilyFit& f : kFamilyFits)
    if (shape.family == f.family) {
      e = gen::many_vector_registers(target) ? f.e : f.e / f.few_registers_slowdown;
      k0 = f.k0;
    }
  const auto k = static_cast<double>(reduction);
  return flops / (kPeakGflops * 1e3 * e * k / (k + k0) * shape.lane_use) + shape.l3_bytes / kL3BytesPerUs +
         shape.memory_bytes / kMemoryBytesPerUs;
}

// A depthwise convolution does a few multiply-adds per output: memory traffic
// and per-plane overheads set its time. Fitted per output, input element and
// (NCHW) channel plane to MobileNetV2's ten 3x3 shapes as `aotc --tune` timed
// them on the same core (pred/measured 0.84-1.11 NCHW, 0.83-1.17 NCHWc); the
// per-output term scales with the taps.
double predicted_depthwise_us(const gen::Conv2dSpec& spec, const Shape& out, bool blocked) {
  const double outputs = static_cast<double>(num_elements(out)), inputs = static_cast<double>(num_elements(spec.input_shape));
  const double taps = spec.kernel[0] * spec.kernel[1] / 9.0;
  if (blocked) return 1e-3 * (0.167 * taps * outputs + 0.0385 * inputs);
  return 1e-3 * (0.217 * taps * outputs + 0.098 * inputs + 8.7 * static_cast<double>(out[0] * out[1]));
}

StepArg tensor_arg(const Graph& g, TensorId id) { return {StepArg::Kind::kTensor, id, 0, 0, g.tensor(id).shape}; }
StepArg tensor_view(TensorId id, Shape view, Layout layout = Layout::kNCHW) {
  return {StepArg::Kind::kTensor, id, 0, 0, std::move(view), layout};
}
StepArg packed_arg(int index) { return {StepArg::Kind::kPacked, -1, index, 0, {}}; }
StepArg scratch_arg(int64_t offset, Shape shape) { return {StepArg::Kind::kScratch, -1, 0, offset, std::move(shape)}; }

// The bias (if any) and the epilogue operands, as their tensors.
void bias_and_operand_args(const Graph& g, const Node& node, bool has_bias, std::vector<StepArg>& args) {
  if (has_bias) args.push_back(tensor_arg(g, node.inputs[2]));
  for (size_t i = node.op_operand_count(); i < node.inputs.size(); ++i) args.push_back(tensor_arg(g, node.inputs[i]));
}

Candidate direct(const Graph& g, const Node& node, const gen::Conv2dSpec& spec, const Halide::Target& target) {
  const Tensor& w = constant_input(g, node, 1, "weight");
  Candidate c;
  c.name = "direct";
  c.preferred_by_rules = true;
  c.packed.push_back([spec, data = w.data] { return gen::pack_conv2d_weights(spec, data->data()); });
  KernelStep step;
  step.key = node_description(g, node);
  step.suffix = op_name(node.op);
  step.ops = op_signature(node);
  step.build = [spec](const Halide::Target& t) { return gen::conv2d(spec, t); };
  step.args = {tensor_arg(g, node.inputs[0]), packed_arg(0)};
  bias_and_operand_args(g, node, spec.has_bias, step.args);
  step.args.push_back(tensor_arg(g, node.outputs[0]));
  const Shape& out = g.tensor(node.outputs[0]).shape;
  const double outputs = static_cast<double>(num_elements(out));
  step.flops = 2 * outputs * static_cast<double>(w.shape[1] * w.shape[2] * w.shape[3]) +
               outputs * static_cast<double>(node.epilogue.size());
  const gen::ScheduleShape shape = gen::conv2d_schedule_shape(spec, target);
  c.predicted_us = shape.family == "depthwise"
                       ? predicted_depthwise_us(spec, out, false)
                       : predicted_us(step.flops, w.shape[1] * w.shape[2] * w.shape[3], shape, target);
  c.steps.push_back(std::move(step));
  return c;
}

// A 1x1 convolution with no padding and one group: a matrix product.
bool is_1x1(const gen::Conv2dSpec& conv) {
  return conv.kernel == std::array<int, 2>{1, 1} && conv.pad == std::array<int, 4>{0, 0, 0, 0} && conv.groups == 1;
}
// ... over the input's own pixels (stride 1).
bool is_pointwise(const gen::Conv2dSpec& conv) { return is_1x1(conv) && conv.stride == std::array<int, 2>{1, 1}; }

// A strided copy's time: it reads the whole lines of the rows it keeps (a
// stride along the row skips no cache lines) and writes the output, at the
// layout conversions' rate.
double predicted_subsample_us(const gen::SubsampleSpec& spec) {
  const Shape out = gen::subsample_output_shape(spec);
  return predicted_conversion_us({out[0], out[1], out[2], (spec.input_shape[3] + out[3]) / 2});
}

// A 1x1 convolution as a GEMM over flattened pixels: the input, output and
// epilogue operands are passed as [N, C, H*W] views of the same bytes. A
// strided one first copies the pixels it reads into the node's scratch
// (generators/subsample.h). None when the conv or an epilogue operand does not
// fit that view.
std::optional<Candidate> pointwise_gemm(const Graph& g, const Node& node, const gen::Conv2dSpec& conv,
                                        const Halide::Target& target) {
  if (!is_1x1(conv)) return std::nullopt;
  const Tensor& w = constant_input(g, node, 1, "weight");
  const Shape& y = g.tensor(node.outputs[0]).shape;
  gen::PointwiseConvSpec spec;
  spec.batch = y[0];
  spec.in_channels = conv.input_shape[1];
  spec.pixels = y[2] * y[3];
  spec.out_channels = conv.out_channels;
  spec.has_bias = conv.has_bias;
  spec.epilogue = conv.epilogue;
  Candidate c;
  c.name = "pointwise-gemm";
  double subsample_us = 0;
  const Shape gemm_input{spec.batch, spec.in_channels, spec.pixels};
  KernelStep step;
  step.args = {is_pointwise(conv) ? tensor_view(node.inputs[0], gemm_input) : scratch_arg(0, gemm_input), packed_arg(0)};
  if (!is_pointwise(conv)) {
    const gen::SubsampleSpec sub{conv.input_shape, conv.stride};
    KernelStep copy;
    copy.key = node_description(g, node) + " subsample";
    copy.suffix = "subsample";
    copy.ops = op_signature(node) + " (subsample)";
    copy.build = [sub](const Halide::Target& t) { return gen::subsample(sub, t); };
    copy.args = {tensor_arg(g, node.inputs[0]), scratch_arg(0, gen::subsample_output_shape(sub))};
    c.steps.push_back(std::move(copy));
    c.scratch_bytes = num_elements(gemm_input) * 4;
    subsample_us = predicted_subsample_us(sub);
  }
  if (spec.has_bias) step.args.push_back(tensor_arg(g, node.inputs[2]));
  // Operands of add/mul/prelu broadcast along both of H and W or along
  // neither flatten with them; affine's [O] vectors are read by channel.
  size_t operand = node.op_operand_count();
  for (size_t i = 0; i < node.epilogue.size(); ++i) {
    const PostOp& p = node.epilogue[i];
    for (TensorId id : node.post_op_operands(p)) {
      Shape s = g.tensor(id).shape;
      if (p.kind != PostOpKind::kAffine) {
        s.insert(s.begin(), 4 - s.size(), 1);  // NumPy: aligned from the right
        if ((s[2] == 1) != (s[3] == 1) && y[2] != 1 && y[3] != 1) return std::nullopt;
        s = {s[0], s[1], s[2] * s[3]};
        spec.epilogue[i].operand_shape = s;
      }
      AOTC_CHECK(node.inputs[operand] == id, "epilogue operands of ", node.name, " out of order");
      step.args.push_back(tensor_view(node.inputs[operand++], s));
    }
  }
  step.args.push_back(tensor_view(node.outputs[0], {spec.batch, spec.out_channels, spec.pixels}));
  step.key = node_description(g, node);
  step.suffix = op_name(node.op);
  step.ops = op_signature(node);
  step.build = [spec](const Halide::Target& t) { return gen::pointwise_conv(spec, t); };
  const double outputs = static_cast<double>(spec.batch * spec.out_channels * spec.pixels);
  step.flops =
      2 * outputs * static_cast<double>(spec.in_channels) + outputs * static_cast<double>(node.epilogue.size());
  c.preferred_by_rules = is_pointwise(conv) && gen::use_pointwise_conv(spec.pixels, spec.out_channels);
  c.predicted_us =
      subsample_us + predicted_us(step.flops, spec.in_channels, gen::pointwise_conv_schedule_shape(spec, target), target);
  c.packed.push_back(
      [spec, target, data = w.data] { return gen::pack_pointwise_conv_weights(spec, target, data->data()); });
  c.steps.push_back(std::move(step));
  return c;
}

// A depthwise convolution in NCHWc: reads its input and writes its output
// channel-blocked, so it pays off only where its neighbours agree on the
// layout (the plan over the chain counts the conversions).
std::optional<Candidate> blocked_depthwise(const Graph& g, const Node& node, const gen::Conv2dSpec& conv,
                                           const Halide::Target& target) {
  const Shape& x = conv.input_shape;
  if (x.size() != 4 || conv.groups != x[1] || conv.out_channels != x[1]) return std::nullopt;
  gen::BlockedDepthwiseSpec spec;
  spec.input_shape = x;
  spec.block = gen::channel_block(target);
  spec.kernel = conv.kernel;
  spec.stride = conv.stride;
  spec.dilation = conv.dilation;
  spec.pad = conv.pad;
  spec.has_bias = conv.has_bias;
  spec.epilogue = conv.epilogue;
  if (!gen::blocked_depthwise_fits(spec)) return std::nullopt;
  const Shape out = g.tensor(node.outputs[0]).shape;
  KernelStep step;
  step.key = node_description(g, node) + " nchw" + std::to_string(spec.block) + "c";
  step.suffix = "depthwise_nchwc";
  step.ops = op_signature(node) + " (nchwc)";
  step.build = [spec](const Halide::Target& t) { return gen::depthwise_conv_blocked(spec, t); };
  step.args = {tensor_view(node.inputs[0], gen::blocked_shape(x, spec.block), Layout::kNCHWc), packed_arg(0)};
  bias_and_operand_args(g, node, spec.has_bias, step.args);  // bias and affine vectors, by channel
  step.args.push_back(tensor_view(node.outputs[0], gen::blocked_shape(out, spec.block), Layout::kNCHWc));
  const double outputs = static_cast<double>(num_elements(out));
  step.flops = 2 * outputs * conv.kernel[0] * conv.kernel[1] + outputs * static_cast<double>(node.epilogue.size());
  Candidate c;
  c.name = "nchwc-depthwise";
  c.predicted_us = predicted_depthwise_us(conv, out, true);
  c.packed.push_back([spec, data = constant_input(g, node, 1, "weight").data] {
    return gen::pack_blocked_depthwise_weights(spec, data->data());
  });
  c.steps.push_back(std::move(step));
  return c;
}

// The arguments after a channel-blocked kernel's input and weights: the bias,
// the epilogue operands (affine's vectors by channel, add and mul operands of
// the whole output in NCHWc), the output in NCHWc.
void blocked_output_args(const Graph& g, const Node& node, bool has_bias, const Shape& blocked_out,
                         std::vector<StepArg>& args) {
  if (has_bias) args.push_back(tensor_arg(g, node.inputs[2]));
  size_t operand = node.op_operand_count();
  for (const PostOp& p : node.epilogue)
    for (TensorId id : node.post_op_operands(p)) {
      AOTC_CHECK(node.inputs[operand++] == id, "epilogue operands of ", node.name, " out of order");
      args.push_back(p.kind == PostOpKind::kAffine ? tensor_arg(g, id) : tensor_view(id, blocked_out, Layout::kNCHWc));
    }
  args.push_back(tensor_view(node.outputs[0], blocked_out, Layout::kNCHWc));
}

// A 1x1 convolution writing NCHWc, from an NCHW input ("pointwise-to-nchwc")
// or an NCHWc one ("nchwc-pointwise"); add and mul operands of the whole
// output are read in NCHWc too.
std::optional<Candidate> blocked_pointwise(const Graph& g, const Node& node, const gen::Conv2dSpec& conv,
                                           bool input_blocked, const Halide::Target& target) {
  if (!is_pointwise(conv)) return std::nullopt;
  const Shape& x = conv.input_shape;
  gen::BlockedPointwiseSpec spec;
  spec.batch = x[0];
  spec.in_channels = x[1];
  spec.pixels = x[2] * x[3];
  spec.out_channels = conv.out_channels;
  spec.block = gen::channel_block(target);
  spec.input_blocked = input_blocked;
  spec.has_bias = conv.has_bias;
  spec.epilogue = conv.epilogue;
  const Shape out = g.tensor(node.outputs[0]).shape;
  // Add and mul operands are taken whole (the output's shape), as [N, O, P].
  for (gen::PostOpSpec& p : spec.epilogue)
    if (p.operand_shape == out) p.operand_shape = {out[0], out[1], spec.pixels};
  if (!gen::blocked_pointwise_fits(spec)) return std::nullopt;
  const int64_t b = spec.block;
  const Shape blocked_out{out[0], out[1] / b, spec.pixels, b};
  KernelStep step;
  step.key = node_description(g, node) + (input_blocked ? " nchw" : " nchw -> nchw") + std::to_string(b) + "c";
  step.suffix = input_blocked ? "pointwise_nchwc" : "pointwise_to_nchwc";
  step.ops = op_signature(node) + (input_blocked ? " (nchwc)" : " (to nchwc)");
  step.build = [spec](const Halide::Target& t) { return gen::pointwise_conv_blocked(spec, t); };
  step.args = {input_blocked ? tensor_view(node.inputs[0], {x[0], x[1] / b, spec.pixels, b}, Layout::kNCHWc)
                             : tensor_view(node.inputs[0], {x[0], x[1], spec.pixels}),
               packed_arg(0)};
  blocked_output_args(g, node, spec.has_bias, blocked_out, step.args);
  const double outputs = static_cast<double>(num_elements(out));
  step.flops = 2 * outputs * static_cast<double>(spec.in_channels) + outputs * static_cast<double>(node.epilogue.size());
  Candidate c;
  c.name = input_blocked ? "nchwc-pointwise" : "pointwise-to-nchwc";
  c.predicted_us =
      predicted_us(step.flops, spec.in_channels, gen::pointwise_conv_blocked_schedule_shape(spec, target), target);
  c.packed.push_back([spec, data = constant_input(g, node, 1, "weight").data] {
    return gen::pack_blocked_pointwise_weights(spec, data->data());
  });
  c.steps.push_back(std::move(step));
  return c;
}

// A dense convolution writing NCHWc, from an NCHWc input ("nchwc-direct"),
// or from an NCHW input whose channels make no whole blocks
// ("direct-to-nchwc": a stem's 3 colours), for the kernels and strides the
// blocked 1x1 does not take. (From a deep NCHW input it ran 1.6-2.9x slower
// than from NCHWc on ResNet-50's 14x14 and 7x7 maps, one Zen 3 core: the
// broadcasts of one pixel's channels are a plane apart, a power of two there.)
// A padded convolution first copies its input with the zeros around it into
// the node's scratch (generators/pad.h), so that no tap reads outside it.
std::optional<Candidate> blocked_direct(const Graph& g, const Node& node, const gen::Conv2dSpec& conv,
                                        bool input_blocked, const Halide::Target& target) {
  const Shape& x = conv.input_shape;
  const int b = gen::channel_block(target);
  if (x.size() != 4 || conv.groups != 1 || is_pointwise(conv) || (!input_blocked && x[1] % b == 0)) return std::nullopt;
  const std::array<int, 4>& pad = conv.pad;  // top, left, bottom, right
  gen::BlockedConvSpec spec;
  spec.conv = conv;
  spec.conv.input_shape = {x[0], x[1], x[2] + pad[0] + pad[2], x[3] + pad[1] + pad[3]};
  spec.conv.pad = {0, 0, 0, 0};
  spec.block = b;
  spec.input_blocked = input_blocked;
  if (!gen::blocked_conv_fits(spec)) return std::nullopt;
  const Shape out = g.tensor(node.outputs[0]).shape;
  const Shape blocked_out = gen::blocked_shape(out, b);
  const auto view = [&](const Shape& nchw) { return input_blocked ? gen::blocked_shape(nchw, b) : nchw; };
  const Layout input_layout = input_blocked ? Layout::kNCHWc : Layout::kNCHW;
  Candidate c;
  c.name = input_blocked ? "nchwc-direct" : "direct-to-nchwc";
  const std::string key = node_description(g, node) + (input_blocked ? " nchw" : " nchw -> nchw") + std::to_string(b) + "c";
  KernelStep step;
  step.args = {tensor_view(node.inputs[0], view(x), input_layout), packed_arg(0)};
  double pad_us = 0;
  if (pad != std::array<int, 4>{0, 0, 0, 0}) {
    // Padded as rows of W*Bi floats, [N, C/Bi, H, W*Bi]: the pad kernel then
    // vectorises whole rows, where the innermost block of 8 lanes left it a
    // fused loop over pixels that spent 7x the copy's time on index arithmetic.
    const int64_t bi = input_blocked ? b : 1;
    gen::PadSpec padding;
    padding.input_shape = {x[0], x[1] / bi, x[2], x[3] * bi};
    padding.pads = {0, 0, pad[0], pad[1] * bi, 0, 0, pad[2], pad[3] * bi};
    KernelStep copy;
    copy.key = key + " pad";
    copy.suffix = "pad";
    copy.ops = op_signature(node) + " (pad)";
    copy.build = [padding](const Halide::Target& t) { return gen::pad(padding, t); };
    copy.args = {tensor_view(node.inputs[0], padding.input_shape, input_layout),
                 scratch_arg(0, gen::pad_output_shape(padding))};
    step.args[0] = scratch_arg(0, view(spec.conv.input_shape));
    c.steps.push_back(std::move(copy));
    c.scratch_bytes = num_elements(spec.conv.input_shape) * 4;
    pad_us = predicted_conversion_us(spec.conv.input_shape);
  }
  step.key = key;
  step.suffix = input_blocked ? "conv2d_nchwc" : "conv2d_to_nchwc";
  step.ops = op_signature(node) + (input_blocked ? " (nchwc)" : " (to nchwc)");
  step.build = [spec](const Halide::Target& t) { return gen::conv2d_blocked(spec, t); };
  blocked_output_args(g, node, conv.has_bias, blocked_out, step.args);
  const int64_t reduction = x[1] * conv.kernel[0] * conv.kernel[1];
  const double outputs = static_cast<double>(num_elements(out));
  step.flops = 2 * outputs * static_cast<double>(reduction) + outputs * static_cast<double>(node.epilogue.size());
  c.predicted_us =
      pad_us + predicted_us(step.flops, reduction, gen::conv2d_blocked_schedule_shape(spec, target), target);
  c.packed.push_back([spec, data = constant_input(g, node, 1, "weight").data] {
    return gen::pack_blocked_conv_weights(spec, data->data());
  });
  c.steps.push_back(std::move(step));
  return c;
}

// Winograd's time: its 36 GEMMs as the pointwise family predicts them, or the
// reading of their transformed weights (4x the direct ones: 37.7 MB for a
// 512x512 layer) from memory once per run where that takes longer (the GEMM
// streams them while it computes), plus the two transforms, which are bound by
// neither the FMAs nor the bandwidth: fitted per byte of V (M) and per channel
// to ResNet-50's four Winograd shapes (56x56x64 to 7x7x512) as the library's
// timing hook measured them in the model on one Zen 3 core with 8-lane AVX2
// vectors (input transform 176-394 µs, output 109-175; the fit 0.76-1.02x of
// each), and scaled by the target's vector width: on one Zen 4 core (16-lane
// AVX-512) the 8-lane fit over-predicted ResNet-50's and DenseNet's transforms
// by 1.6-2.5x, and the sum of GEMM and weights over-predicted ResNet-50's
// 14x14 and SqueezeNet's 13x13 layers by up to 1.7x (SqueezeNet's four 13x13
// layers then ran blocked direct, 1.5x slower than Winograd).
constexpr double kInputTransformBytesPerUs = 4.8e3, kOutputTransformBytesPerUs = 11.3e3;
constexpr double kTransformUsPerChannel = 0.23;
constexpr int kTransformFitLanes = 8;
double predicted_winograd_us(const gen::Conv2dSpec& spec, double gemm_flops, const Halide::Target& target) {
  const gen::PointwiseConvSpec gemm = gen::winograd_gemm_spec(spec);
  const auto bytes = [](const Shape& s) { return static_cast<double>(num_elements(s) * 4); };
  const double transforms =
      (bytes(gen::winograd_transformed_input_shape(spec)) / kInputTransformBytesPerUs +
       bytes(gen::winograd_transformed_output_shape(spec)) / kOutputTransformBytesPerUs +
       kTransformUsPerChannel * static_cast<double>(spec.input_shape[0] * (gemm.in_channels + gemm.out_channels))) *
      kTransformFitLanes / gen::native_lanes(target);
  const double weights = static_cast<double>(gen::kWinogradPoints * gemm.in_channels * gemm.out_channels * 4);
  return transforms +
         std::max(weights / kMemoryBytesPerUs,
                  predicted_us(gemm_flops, gemm.in_channels, gen::pointwise_conv_schedule_shape(gemm, target), target));
}

// A 3x3 convolution by Winograd F(4x4, 3x3): input transform, 36 GEMMs, output
// transform, through the node's scratch, which holds V and then M.
std::optional<Candidate> winograd(const Graph& g, const Node& node, const gen::Conv2dSpec& spec,
                                 const Halide::Target& target) {
  if (!gen::winograd_fits(spec)) return std::nullopt;
  constexpr int64_t kAlignment = 64;
  const Shape& x = spec.input_shape;
  const Shape v_matrix = gen::winograd_transformed_input_shape(spec),
              m_matrix = gen::winograd_transformed_output_shape(spec);
  const int64_t m_offset = (num_elements(v_matrix) * 4 + kAlignment - 1) / kAlignment * kAlignment;
  Candidate c;
  c.name = "winograd-f4x4";
  c.preferred_by_rules = gen::use_winograd(spec);
  c.scratch_bytes = m_offset + num_elements(m_matrix) * 4;
  c.packed.push_back([spec, target, data = constant_input(g, node, 1, "weight").data] {
    return gen::pack_winograd_weights(spec, target, data->data());
  });
  const std::string ops = op_signature(node), attrs = print_attrs(node.attrs);
  // (tile, channel) pairs each transform handles.
  const double tile_channels_in = static_cast<double>(num_elements(v_matrix) / gen::kWinogradPoints),
               tile_channels_out = static_cast<double>(num_elements(m_matrix) / gen::kWinogradPoints);

  // V and M as the transforms see them and as the GEMM sees them: the same bytes.
  KernelStep input;
  input.key = "winograd input transform " + shape_text(x) + " -> " +
              shape_text(gen::winograd_tile_view(spec, x[1])) + " " + attrs;
  input.suffix = "winograd_input";
  input.ops = ops + " (winograd input transform)";
  input.build = [spec](const Halide::Target& t) { return gen::winograd_input_transform(spec, t); };
  input.args = {tensor_arg(g, node.inputs[0]), scratch_arg(0, gen::winograd_tile_view(spec, x[1]))};
  input.flops = gen::kWinogradInputTransformFlops * tile_channels_in;

  const gen::PointwiseConvSpec gemm = gen::winograd_gemm_spec(spec);
  KernelStep products;
  products.key = "winograd gemm " + shape_text(v_matrix) + " -> " + shape_text(m_matrix);
  products.suffix = "winograd_gemm";
  products.ops = ops + " (winograd gemm)";
  products.build = [gemm](const Halide::Target& t) { return gen::pointwise_conv(gemm, t); };
  products.args = {scratch_arg(0, v_matrix), packed_arg(0), scratch_arg(m_offset, m_matrix)};
  products.flops = 2.0 * static_cast<double>(gen::kWinogradPoints * x[1]) * tile_channels_out;

  KernelStep output;
  output.key = node_description(g, node) + " winograd output transform";
  output.suffix = "winograd_output";
  output.ops = ops + " (winograd output transform)";
  output.build = [spec](const Halide::Target& t) { return gen::winograd_output_transform(spec, t); };
  output.args = {scratch_arg(m_offset, gen::winograd_tile_view(spec, spec.out_channels))};
  bias_and_operand_args(g, node, spec.has_bias, output.args);
  output.args.push_back(tensor_arg(g, node.outputs[0]));
  output.flops = gen::kWinogradOutputTransformFlops * tile_channels_out +
                 static_cast<double>(num_elements(g.tensor(node.outputs[0]).shape)) *
                     static_cast<double>(node.epilogue.size());
  c.predicted_us = predicted_winograd_us(spec, products.flops, target);
  c.steps = {std::move(input), std::move(products), std::move(output)};
  return c;
}

}  // namespace

std::vector<Candidate> conv_candidates(const Graph& g, const Node& node, const HalideLoweringOptions& options) {
  AOTC_CHECK(node.op == OpKind::Conv2d, "conv_candidates of a ", op_name(node.op), " node");
  const gen::Conv2dSpec spec = conv2d_spec(g, node);
  const Halide::Target target(halide_target_string(options.target));
  std::vector<Candidate> candidates;
  if (std::optional<Candidate> c = pointwise_gemm(g, node, spec, target)) candidates.push_back(std::move(*c));
  if (options.blocked_layouts) {
    for (bool input_blocked : {false, true})
      if (std::optional<Candidate> c = blocked_pointwise(g, node, spec, input_blocked, target))
        candidates.push_back(std::move(*c));
    for (bool input_blocked : {false, true})
      if (std::optional<Candidate> c = blocked_direct(g, node, spec, input_blocked, target))
        candidates.push_back(std::move(*c));
    if (std::optional<Candidate> c = blocked_depthwise(g, node, spec, target)) candidates.push_back(std::move(*c));
  }
  if (options.winograd)
    if (std::optional<Candidate> c = winograd(g, node, spec, target)) candidates.push_back(std::move(*c));
  candidates.push_back(direct(g, node, spec, target));
  return candidates;
}

Choice conv_choice(const Graph& g, const Node& node, const HalideLoweringOptions& options) {
  return choose(conv_candidates(g, node, options), node_description(g, node), options.tuning);
}

}  // namespace aotc
