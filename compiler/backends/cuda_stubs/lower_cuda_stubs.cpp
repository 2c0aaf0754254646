// Emits the CUDA fallback stubs of a model (lower_cuda_stubs.h): a preamble,
// one function per fused group in execution order, the create step (device
// arena, weights upload, cuDNN plans) and the C entry points.
#include "backends/cuda_stubs/lower_cuda_stubs.h"

#include <map>
#include <optional>
#include <sstream>

#define AOTC_SDK_C_ONLY  // aotc::TensorInfo is the compiler's own
#include "aotc/aotc.h"
#include "backends/graph_outputs.h"
#include "backends/halide/candidates.h"
#include "backends/halide/node_kernel.h"
#include "generators/conv2d_gpu.h"
#include "support/error.h"
#include "support/names.h"

namespace aotc {
namespace {

constexpr int64_t kAlignment = 64;
constexpr size_t kMaxRank = 6;      // aotc_cuda::kMaxRank
constexpr size_t kMaxPostOps = 6;   // aotc_cuda::kMaxPostOps
// The alignment run_device asks of the app's tensors is what a float4 needs.
static_assert(AOTC_DEVICE_TENSOR_ALIGNMENT == gen::kGpuVectorLanes * sizeof(float));

int64_t aligned(int64_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

std::string list(const std::vector<int64_t>& values) {
  std::ostringstream os;
  os << "{";
  for (size_t i = 0; i < values.size(); ++i) os << (i ? ", " : "") << values[i];
  os << "}";
  return os.str();
}

std::vector<int64_t> dense_strides(const Shape& s) {
  std::vector<int64_t> strides(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) strides[i - 1] = strides[i] * s[i];
  return strides;
}

// Element strides of `operand` per dim of `out` under NumPy broadcasting
// (aligned from the right; a dim of extent 1 repeats, stride 0).
std::vector<int64_t> broadcast_strides(const Shape& operand, const Shape& out) {
  const std::vector<int64_t> dense = dense_strides(operand);
  std::vector<int64_t> strides(out.size(), 0);
  const size_t shift = out.size() - operand.size();
  for (size_t d = shift; d < out.size(); ++d)
    strides[d] = operand[d - shift] == 1 && out[d] != 1 ? 0 : dense[d - shift];
  return strides;
}

// Strides that read a per-channel vector (dim 1) at every element of `out`.
std::vector<int64_t> channel_strides(const Shape& out) {
  std::vector<int64_t> strides(out.size(), 0);
  if (out.size() > 1) strides[1] = 1;
  return strides;
}

bool symmetric(const std::array<int, 4>& pad) { return pad[0] == pad[2] && pad[1] == pad[3]; }

int64_t padded_input_bytes(const Graph& g, const Node& node) {
  const auto& a = node.attr<Conv2dAttrs>();
  const Shape& x = g.tensor(node.inputs[0]).shape;
  return x[0] * x[1] * (x[2] + a.pad[0] + a.pad[2]) * (x[3] + a.pad[1] + a.pad[3]) * int64_t{sizeof(float)};
}

const char* post_op_enumerator(PostOpKind kind) {
  switch (kind) {
    case PostOpKind::kRelu: return "kRelu";
    case PostOpKind::kClamp: return "kClamp";
    case PostOpKind::kHardSwish: return "kHardSwish";
    case PostOpKind::kSigmoid: return "kSigmoid";
    case PostOpKind::kTanh: return "kTanh";
    case PostOpKind::kAffine: return "kAffine";
    case PostOpKind::kAdd: return "kAdd";
    case PostOpKind::kMul: return "kMul";
    case PostOpKind::kPRelu: return "kPRelu";
    case PostOpKind::kElu: return "kElu";
    case PostOpKind::kSoftplus: return "kSoftplus";
  }
  return "kRelu";
}

// One cuDNN convolution, NCHW: [n, c, h, w] * [o, c / groups, kh, kw], symmetric padding.
struct CudnnConv {
  int64_t n, c, h, w, o, kh, kw;
  int pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w, groups;
};

class Emitter {
 public:
  Emitter(const Graph& g, const MemoryPlan& plan, const GpuBackendPlan& backends, bool external_weights,
          const std::string& target)
      : g_(g), plan_(plan), backends_(backends), external_weights_(external_weights), target_(target) {
    for (const TensorPlacement& p : plan.placements) placement_[p.tensor] = &p;
    model_.name = g.name;
    model_.inputs = tensor_infos(g, g.inputs);
    model_.outputs = tensor_infos(g, g.outputs);
    model_.choices = backends.choices;
    model_.totals = backends.totals;
  }

  CudaStubModel run() {
    for (step_ = 0; step_ < static_cast<int>(g_.nodes.size()); ++step_) emit_node(g_.nodes[static_cast<size_t>(step_)]);
    // As on the CPU: copies fill the output buffers no node writes.
    for (const size_t i : outputs_to_copy(g_)) {
      const TensorId id = g_.outputs[i];
      std::ostringstream body;
      body << "  return copy(&m.dev, " << pointer(id) << ", out[" << i << "], " << num_elements(g_.tensor(id).shape)
           << ");\n";
      add_layer(g_.tensor(id).name, "copy", "cudaMemcpyAsync", 0, body.str());
    }
    model_.activation_bytes = plan_.arena_bytes;
    for (const TensorInfo& t : model_.inputs) io_offsets_.push_back(io_bytes_add(t.shape));
    for (const TensorInfo& t : model_.outputs) io_offsets_.push_back(io_bytes_add(t.shape));
    model_.device_arena_bytes = model_.activation_bytes + model_.io_bytes + aligned(static_cast<int64_t>(model_.weights.size()));
    model_.weights_identity =
        weights_identity(model_.name, weight_slots_, static_cast<uint64_t>(model_.weights.size()));
    model_.external_weights = external_weights_;
    model_.source = source();
    return std::move(model_);
  }

 private:
  int64_t io_bytes_add(const Shape& shape) {
    const int64_t at = model_.activation_bytes + model_.io_bytes;
    model_.io_bytes += aligned(num_elements(shape) * int64_t{sizeof(float)});
    return at;
  }

  // The device address of tensor `id` in the generated code: the run's input
  // or output pointers, the weights or the activations in the arena.
  std::string pointer(TensorId id) {
    const Tensor& t = g_.tensor(id);
    for (size_t i = 0; i < g_.inputs.size(); ++i)
      if (g_.inputs[i] == id) return "in[" + std::to_string(i) + "]";
    if (t.is_constant()) return "weight(m, " + std::to_string(constant_offset(id)) + ")";
    if (const int output = first_output_index(g_, id); output >= 0) return "out[" + std::to_string(output) + "]";
    auto it = placement_.find(id);
    AOTC_CHECK(it != placement_.end(), "tensor ", t.name, " has no place in the memory plan");
    return "activation(m, " + std::to_string(it->second->offset) + ")";
  }

  int64_t append_blob(const std::vector<float>& data) {
    std::vector<uint8_t>& blob = model_.weights;
    blob.resize(static_cast<size_t>(aligned(static_cast<int64_t>(blob.size()))));
    const auto offset = static_cast<int64_t>(blob.size());
    const auto* bytes = reinterpret_cast<const uint8_t*>(data.data());
    blob.insert(blob.end(), bytes, bytes + data.size() * sizeof(float));
    return offset;
  }

  // Appends a weight tensor of `shape` to the blob, and to the slots its
  // identity covers; returns its offset.
  int64_t append_weight(const std::vector<float>& data, const Shape& shape) {
    const int64_t offset = append_blob(data);
    weight_slots_.push_back({offset, shape});
    return offset;
  }

  int64_t constant_offset(TensorId id) {
    auto it = constant_offsets_.find(id);
    if (it != constant_offsets_.end()) return it->second;
    const int64_t offset = append_weight(*g_.tensor(id).data, g_.tensor(id).shape);
    constant_offsets_[id] = offset;
    return offset;
  }

  void unsupported(const Node& node, const std::string& why) {
    fail(ExitCode::kUnsupported, "node '", node.name, "' (", op_name(node.op), "): the CUDA stubs ", why);
  }

  std::string ops_text(const Node& node) const {
    std::string ops = op_name(node.op);
    for (const PostOp& p : node.epilogue) ops += std::string("+") + post_op_name(p.kind);
    return ops;
  }

  // An Elementwise descriptor over `out_shape` reading `in_strides`, with
  // `first` post-ops (already as initialisers) before the node's epilogue.
  std::string elementwise(const Node& node, const Shape& out_shape, const std::vector<int64_t>& in_strides,
                          const std::vector<std::string>& first, const std::string& in, const std::string& out) {
    if (out_shape.size() > kMaxRank) unsupported(node, "handle tensors of rank up to 6");
    std::vector<std::string> ops = first;
    for (size_t p = 0; p < node.epilogue.size(); ++p) {
      const PostOp& op = node.epilogue[p];
      const std::vector<TensorId> operands = node.post_op_operands(op);
      std::ostringstream init;
      // The runtime's PostOp carries elu's alpha in `min`.
      init << "PostOp{" << post_op_enumerator(op.kind) << ", "
           << float_literal(op.kind == PostOpKind::kElu ? op.alpha : op.min) << ", " << float_literal(op.max);
      if (op.kind == PostOpKind::kAffine) {
        init << ", " << pointer(operands[0]) << ", " << pointer(operands[1]) << ", " << list(channel_strides(out_shape))
             << ", " << list(channel_strides(out_shape)) << "}";
      } else if (!operands.empty()) {
        init << ", " << pointer(operands[0]) << ", nullptr, "
             << list(broadcast_strides(g_.tensor(operands[0]).shape, out_shape)) << ", {}}";
      } else {
        init << ", nullptr, nullptr, {}, {}}";
      }
      ops.push_back(init.str());
    }
    if (ops.size() > kMaxPostOps) unsupported(node, "fuse at most 6 elementwise ops into one group");
    std::ostringstream os;
    os << "  Elementwise e{" << out_shape.size() << ", " << list(out_shape) << ", " << list(in_strides) << ", "
       << ops.size() << ", {}};\n";
    for (size_t i = 0; i < ops.size(); ++i) os << "  e.ops[" << i << "] = " << ops[i] << ";\n";
    os << "  return elementwise(&m.dev, e, " << in << ", " << out << ");\n";
    return os.str();
  }

  static std::string float_literal(float v) {
    std::ostringstream os;
    os.precision(9);
    os << v << "f";
    std::string text = os.str();
    if (text.find_first_of(".en") == std::string::npos) text.insert(text.size() - 1, ".0");
    if (text == "inff") return "INFINITY";
    if (text == "-inff") return "-INFINITY";
    return text;
  }

  // The node's epilogue on its own output, in place, after the op (or "return
  // kOk;" without one).
  std::string epilogue_after(const Node& node, const std::vector<std::string>& first = {}) {
    const TensorId out = node.outputs[0];
    if (node.epilogue.empty() && first.empty()) return "  return kOk;\n";
    const Shape& shape = g_.tensor(out).shape;
    return elementwise(node, shape, dense_strides(shape), first, pointer(out), pointer(out));
  }

  void add_layer(const std::string& name, const std::string& ops, const std::string& call, double flops,
                 const std::string& body, GpuBackend backend = GpuBackend::kCudnn) {
    const size_t index = model_.layers.size();
    model_.layers.push_back({name, ops, call, flops, backend});
    std::ostringstream os;
    os << "// " << name << ": " << ops << " (" << call << ")\n"
       << "int layer_" << index << "(Model& m, const float* const* in, float* const* out) {\n"
       << "  (void)in;\n  (void)out;\n"
       << body << "}\n\n";
    layer_functions_ += os.str();
  }

  void emit_node(const Node& node);
  void emit_halide(const Node& node);
  std::string halide_call(const std::string& key, const std::string& suffix,
                          const std::function<gen::Kernel(const Halide::Target&)>& build,
                          const std::vector<std::pair<std::string, Shape>>& args, int* kernel);
  std::vector<int64_t> concat_inputs_to_copy(const Node& node);
  std::optional<std::string> fusable_residual(const Node& node);
  void emit_conv(const Node& node);
  void emit_cudnn_conv(const Node& node, const CudnnConv& conv, const std::string& input, std::ostringstream& body,
                       std::string call);
  void emit_concat(const Node& node);

  std::string source() const;
  std::string create_entry_points(const std::string& fn) const;

  const Graph& g_;
  const MemoryPlan& plan_;
  const GpuBackendPlan& backends_;
  int step_ = 0;
  CudaStubModel model_;
  std::map<TensorId, const TensorPlacement*> placement_;
  std::map<TensorId, int64_t> constant_offsets_;
  std::vector<WeightSlot> weight_slots_;  // in the order of the blob
  bool external_weights_;
  const std::string target_;  // Halide kernel symbols are for it
  std::vector<int64_t> io_offsets_;  // staging of inputs, then outputs, in the arena
  std::string layer_functions_;
  std::string conv_plans_;  // the create step's conv_plan_create calls
  int conv_count_ = 0;
  std::map<std::string, size_t> halide_kernel_index_;  // by node description
  std::string halide_declarations_;                    // of the Halide kernels' entry points
};

// For a conv with bias whose epilogue is relu, or add of a tensor of the output's
// shape then relu: what cuDNN's fused call takes as its residual z (the tensor, or
// "nullptr"). Nothing for any other epilogue: cuDNN fuses only relu (and identity,
// with one algorithm alone).
std::optional<std::string> Emitter::fusable_residual(const Node& node) {
  if (!cudnn_fuses_epilogue(g_, node)) return std::nullopt;
  if (node.epilogue.size() == 1) return std::string("nullptr");
  return pointer(node.post_op_operands(node.epilogue[0])[0]);
}

void Emitter::emit_conv(const Node& node) {
  const auto& a = node.attr<Conv2dAttrs>();
  const Shape& x = g_.tensor(node.inputs[0]).shape;
  const Tensor& w = g_.tensor(node.inputs[1]);
  const Shape& y = g_.tensor(node.outputs[0]).shape;
  if (!w.is_constant()) unsupported(node, "need constant weights");
  std::ostringstream body;
  std::string input = pointer(node.inputs[0]);
  CudnnConv conv{x[0],        x[1],        x[2],        x[3],          y[1],          w.shape[2], w.shape[3],
                 a.pad[0],    a.pad[1],    a.stride[0], a.stride[1],   a.dilation[0], a.dilation[1], a.groups};
  std::string call = "cudnnConvolutionForward";
  if (!symmetric(a.pad)) {
    const ScratchPlacement* scratch = scratch_at(plan_, step_);
    AOTC_CHECK(scratch != nullptr, "the memory plan has no scratch for ", node.name);
    body << "  static const int64_t kShape[] = " << list(x) << ";\n"
         << "  static const int64_t kPads[] = " << list({0, 0, a.pad[0], a.pad[1], 0, 0, a.pad[2], a.pad[3]}) << ";\n"
         << "  float* padded = activation(m, " << scratch->offset << ");\n"
         << "  AOTC_TRY(pad(&m.dev, " << input << ", padded, 4, kShape, kPads, 0.0f));\n";
    input = "padded";
    conv.h += a.pad[0] + a.pad[2];
    conv.w += a.pad[1] + a.pad[3];
    conv.pad_h = conv.pad_w = 0;
    call = "pad kernel + " + call;
  }
  emit_cudnn_conv(node, conv, input, body, call);
}

// The node as one cuDNN convolution of `input` (the conv's weights as its filter), with
// the node's bias and epilogue: fused into cuDNN's call where it can take them, else
// one elementwise kernel after it.
void Emitter::emit_cudnn_conv(const Node& node, const CudnnConv& c, const std::string& input, std::ostringstream& body,
                              std::string call) {
  const Shape& y = g_.tensor(node.outputs[0]).shape;
  const std::string layer = g_.tensor(node.outputs[0]).name;
  const int plan = conv_count_++;
  std::ostringstream create;
  create << "  AOTC_TRY(conv_plan_create(&m.dev, &m.conv[" << plan << "], " << c.n << ", " << c.c << ", " << c.h << ", "
         << c.w << ", " << c.o << ", " << c.kh << ", " << c.kw << ", " << c.pad_h << ", " << c.pad_w << ", "
         << c.stride_h << ", " << c.stride_w << ", " << c.dilation_h << ", " << c.dilation_w << ", " << c.groups
         << "));  // " << layer << "\n";
  conv_plans_ += create.str();
  const std::string conv_plan = "&m.conv[" + std::to_string(plan) + "]";
  if (const std::optional<std::string> residual = fusable_residual(node)) {
    conv_plans_ += "  AOTC_TRY(conv_plan_fuse_relu(&m.dev, " + conv_plan + ", " + std::to_string(c.o) + "));\n";
    body << "  if (m.conv[" << plan << "].fused) {\n"
         << "    const int fused = conv_bias_relu_forward(&m.dev, " << conv_plan << ", " << input << ", "
         << pointer(node.inputs[1]) << ", " << *residual << ", " << pointer(node.inputs[2]) << ", "
         << pointer(node.outputs[0]) << ");\n"
         << "    if (fused != kNotFused) return fused;\n"
         << "  }\n";
    call = "cudnnConvolutionBiasActivationForward, where cuDNN supports it, else " + call;
  }
  body << "  AOTC_TRY(conv_forward(&m.dev, " << conv_plan << ", " << input << ", " << pointer(node.inputs[1]) << ", "
       << pointer(node.outputs[0]) << "));\n";
  std::vector<std::string> first;
  if (node.op_operand_count() == 3)
    first.push_back("PostOp{kBias, 0.0f, 0.0f, " + pointer(node.inputs[2]) + ", nullptr, " + list(channel_strides(y)) +
                    ", {}}");
  if (!first.empty() || !node.epilogue.empty()) call += " + elementwise kernel";
  body << epilogue_after(node, first);
  // From the cuDNN descriptor, not conv2d_flops: a linear layer comes here as a
  // 1x1 conv whose weight is 2-D.
  const double macs = static_cast<double>(num_elements(y)) * static_cast<double>(c.c / c.groups * c.kh * c.kw);
  add_layer(layer, ops_text(node), call, 2 * macs, body.str());
}

// Where each input of a concat goes: -1 when the memory
// plan already placed it in its slice of the output (it costs nothing), else
// the element offset of its slice; empty when no input is in place (or the
// plan made no slices), and the concat is an ordinary kernel.
std::vector<int64_t> Emitter::concat_inputs_to_copy(const Node& node) {
  const std::vector<int64_t> slices = concat_slice_offsets(g_, node);
  auto out = placement_.find(node.outputs[0]);
  if (slices.empty() || out == placement_.end()) return {};
  std::vector<int64_t> copies;
  bool any_in_place = false;
  for (size_t i = 0; i < slices.size(); ++i) {
    auto in = placement_.find(node.inputs[i]);
    const bool in_place = in != placement_.end() && in->second->offset == out->second->offset + slices[i];
    copies.push_back(in_place ? -1 : slices[i] / static_cast<int64_t>(sizeof(float)));
    any_in_place = any_in_place || in_place;
  }
  return any_in_place ? copies : std::vector<int64_t>{};
}

// Inputs the memory plan already placed in their slice of the output cost
// nothing; the others are copied into theirs.
void Emitter::emit_concat(const Node& node) {
  const size_t axis = static_cast<size_t>(node.attr<AxisAttrs>().axis);
  const Shape& y = g_.tensor(node.outputs[0]).shape;
  const std::vector<int64_t> slices = concat_inputs_to_copy(node);
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= y[d];
  for (size_t d = axis + 1; d < y.size(); ++d) inner *= y[d];
  std::ostringstream body;
  int64_t offset = 0;
  int copies = 0;
  for (size_t i = 0; i < node.op_operand_count(); ++i) {
    const Shape& s = g_.tensor(node.inputs[i]).shape;
    if (slices.empty() || slices[i] >= 0) {
      body << "  AOTC_TRY(concat_copy(&m.dev, " << pointer(node.inputs[i]) << ", " << pointer(node.outputs[0]) << ", "
           << outer << ", " << s[axis] * inner << ", " << y[axis] * inner << ", " << offset * inner << "));\n";
      ++copies;
    }
    offset += s[axis];
  }
  body << epilogue_after(node);
  add_layer(g_.tensor(node.outputs[0]).name, ops_text(node),
            std::to_string(copies) + " concat_copy kernels", 0, body.str());
}

// A call of a Halide CUDA kernel (compiled once per key) over device buffers,
// as a block of a layer's body; `kernel` is set to its index.
std::string Emitter::halide_call(const std::string& key, const std::string& suffix,
                                 const std::function<gen::Kernel(const Halide::Target&)>& build,
                                 const std::vector<std::pair<std::string, Shape>>& args, int* kernel) {
  auto found = halide_kernel_index_.find(key);
  if (found == halide_kernel_index_.end()) {
    const size_t k = model_.halide_kernels.size();
    model_.halide_kernels.push_back(halide_kernel_source(kernel_symbol(suffix, key, target_), key, build));
    found = halide_kernel_index_.emplace(key, k).first;
    halide_declarations_ += "int " + model_.halide_kernels[k].function + "(void* user_context";
    for (size_t i = 0; i < args.size(); ++i) halide_declarations_ += ", halide_buffer_t*";
    halide_declarations_ += ");\n";
  }
  *kernel = static_cast<int>(found->second);
  const std::string& function = model_.halide_kernels[found->second].function;
  std::ostringstream body, shapes, ranks, data, buffers;
  for (size_t i = 0; i < args.size(); ++i) {
    const Shape& s = args[i].second;
    shapes << (i ? ", " : "") << list(s);
    ranks << (i ? ", " : "") << s.size();
    data << (i ? ", " : "") << args[i].first;
    buffers << ", &a.buffers[" << i << "]";
  }
  body << "  {\n"
       << "    static const int64_t kShapes[][kMaxRank] = {" << shapes.str() << "};\n"
       << "    static const int kRanks[] = {" << ranks.str() << "};\n"
       << "    const float* const data[] = {" << data.str() << "};\n"
       << "    HalideArgs<" << args.size() << "> a;\n"
       << "    for (size_t i = 0; i < " << args.size() << "; ++i) bind(&a, i, data[i], kRanks[i], kShapes[i]);\n"
       << "    AOTC_TRY(halide_status(&m.dev, \"" << function << "\", " << function << "(&m.dev.halide"
       << buffers.str() << ")));\n"
       << "  }\n";
  return body.str();
}

// The node as a call of its Halide CUDA kernel over device buffers: a
// convolution's inputs in order (input, weights as stored, bias, epilogue
// operands), any other node's its node_kernel() arguments (packed weights go to
// the blob like any constant); then the output. A concat whose inputs the
// memory plan placed in their slices copies only the others, each with a copy
// kernel.
void Emitter::emit_halide(const Node& node) {
  const TensorId out = node.outputs[0];
  for (const TensorId id : node.inputs)
    if (g_.tensor(id).shape.size() > kMaxRank) unsupported(node, "handle tensors of rank up to 6");
  if (g_.tensor(out).shape.size() > kMaxRank) unsupported(node, "handle tensors of rank up to 6");
  int kernel = -1;
  if (node.op == OpKind::Concat && node.epilogue.empty()) {
    const std::vector<int64_t> slices = concat_inputs_to_copy(node);
    if (!slices.empty()) {
      std::string body;
      int copies = 0;
      for (size_t i = 0; i < slices.size(); ++i) {
        if (slices[i] < 0) continue;
        const Shape& shape = g_.tensor(node.inputs[i]).shape;
        const bool aligned = slices[i] * int64_t{sizeof(float)} % AOTC_DEVICE_TENSOR_ALIGNMENT == 0;
        body += halide_call(copy_kernel_key(shape, aligned), "copy", copy_kernel(shape, aligned),
                            {{pointer(node.inputs[i]), shape}, {pointer(out) + " + " + std::to_string(slices[i]), shape}},
                            &kernel);
        ++copies;
      }
      add_layer(g_.tensor(out).name, ops_text(node), std::to_string(copies) + " Halide CUDA copy kernels", 0,
                body + "  return kOk;\n", GpuBackend::kHalideCuda);
      model_.layers.back().halide_kernel = kernel;
      return;
    }
  }
  std::function<gen::Kernel(const Halide::Target&)> build;
  double flops = 0;
  std::vector<std::pair<std::string, Shape>> args;  // device pointer, shape
  if (node.op == OpKind::Conv2d) {
    const gen::Conv2dSpec spec = conv2d_spec(g_, node);
    build = [spec](const Halide::Target& t) { return gen::conv2d_gpu(spec, t); };
    flops = conv2d_flops(g_, node);
    for (const TensorId id : node.inputs) args.emplace_back(pointer(id), g_.tensor(id).shape);
    args.emplace_back(pointer(out), g_.tensor(out).shape);
  } else {
    const NodeKernel k = node_kernel(g_, node);
    build = k.step.build;
    flops = k.step.flops;
    for (const StepArg& a : k.step.args) {
      if (a.kind == StepArg::Kind::kPacked) {
        const gen::PackedWeights w = k.packed[static_cast<size_t>(a.packed)]();
        args.emplace_back("weight(m, " + std::to_string(append_weight(w.data, w.shape)) + ")", w.shape);
      } else {
        args.emplace_back(pointer(a.tensor), a.shape);
      }
    }
  }
  const std::string body = halide_call(node_description(g_, node), op_name(node.op), build, args, &kernel);
  add_layer(g_.tensor(out).name, ops_text(node),
            "Halide CUDA kernel " + model_.halide_kernels[static_cast<size_t>(kernel)].function, flops,
            body + "  return kOk;\n", GpuBackend::kHalideCuda);
  model_.layers.back().halide_kernel = kernel;
}

void Emitter::emit_node(const Node& node) {
  if (node.op == OpKind::BatchNorm) unsupported(node, "need batch_norm folded or made affine (keep fold-batch-norm on)");
  const TensorId out_id = node.outputs[0];
  const Shape& y = g_.tensor(out_id).shape;
  const std::string layer = g_.tensor(out_id).name;
  const std::string out = pointer(out_id);
  const double elements = static_cast<double>(num_elements(y));
  if (backends_.backend[static_cast<size_t>(step_)] == GpuBackend::kHalideCuda) {
    emit_halide(node);
    return;
  }
  std::ostringstream body;
  auto x_shape = [&](size_t i) -> const Shape& { return g_.tensor(node.inputs[i]).shape; };
  auto x = [&](size_t i) { return pointer(node.inputs[i]); };
  auto dims = [](std::initializer_list<int64_t> values) {
    std::string text;
    for (int64_t v : values) text += (text.empty() ? "" : ", ") + std::to_string(v);
    return text;
  };

  switch (node.op) {
    case OpKind::Conv2d: emit_conv(node); return;
    case OpKind::Concat: emit_concat(node); return;
    case OpKind::Relu:
    case OpKind::Clamp:
    case OpKind::HardSwish:
    case OpKind::Sigmoid:
    case OpKind::Tanh:
    case OpKind::Elu:
    case OpKind::Softplus:
    case OpKind::Add:
    case OpKind::Mul:
    case OpKind::Max:
    case OpKind::Min:
    case OpKind::Div:
    case OpKind::PRelu:
    case OpKind::Affine: {
      // The op itself is the first post-op over its first operand.
      std::string first = "PostOp{";
      switch (node.op) {
        case OpKind::Relu: first += "kRelu, 0.0f, 0.0f, nullptr, nullptr, {}, {}}"; break;
        case OpKind::Clamp: {
          const auto& a = node.attr<ClampAttrs>();
          first += "kClamp, " + float_literal(a.min) + ", " + float_literal(a.max) + ", nullptr, nullptr, {}, {}}";
          break;
        }
        case OpKind::HardSwish: first += "kHardSwish, 0.0f, 0.0f, nullptr, nullptr, {}, {}}"; break;
        case OpKind::Sigmoid: first += "kSigmoid, 0.0f, 0.0f, nullptr, nullptr, {}, {}}"; break;
        case OpKind::Tanh: first += "kTanh, 0.0f, 0.0f, nullptr, nullptr, {}, {}}"; break;
        case OpKind::Elu:
          first += "kElu, " + float_literal(node.attr<EluAttrs>().alpha) + ", 0.0f, nullptr, nullptr, {}, {}}";
          break;
        case OpKind::Softplus: first += "kSoftplus, 0.0f, 0.0f, nullptr, nullptr, {}, {}}"; break;
        case OpKind::Affine:
          first += "kAffine, 0.0f, 0.0f, " + x(1) + ", " + x(2) + ", " + list(channel_strides(y)) + ", " +
                   list(channel_strides(y)) + "}";
          break;
        default:
          first += std::string(node.op == OpKind::Add   ? "kAdd"
                               : node.op == OpKind::Mul ? "kMul"
                               : node.op == OpKind::Max ? "kMax"
                               : node.op == OpKind::Min ? "kMin"
                               : node.op == OpKind::Div ? "kDiv"
                                                        : "kPRelu") +
                   ", 0.0f, 0.0f, " + x(1) + ", nullptr, " + list(broadcast_strides(x_shape(1), y)) + ", {}}";
      }
      body << elementwise(node, y, broadcast_strides(x_shape(0), y), {first}, x(0), out);
      add_layer(layer, ops_text(node), "elementwise kernel", elements * static_cast<double>(1 + node.epilogue.size()),
                body.str());
      return;
    }
    case OpKind::Flatten:
    case OpKind::Reshape:
    case OpKind::Dropout: {
      auto it = placement_.find(out_id);
      if (it != placement_.end() && it->second->shares_with == node.inputs[0]) return;  // a view: no work
      body << elementwise(node, y, dense_strides(y), {}, x(0), out);
      add_layer(layer, ops_text(node), "elementwise kernel (copy)", 0, body.str());
      return;
    }
    case OpKind::MaxPool2d:
    case OpKind::AvgPool2d: {
      const auto& a = node.attr<Pool2dAttrs>();
      const Shape& s = x_shape(0);
      body << "  AOTC_TRY(pool2d(&m.dev, " << x(0) << ", " << out << ", "
           << dims({s[0], s[1], s[2], s[3], y[2], y[3], a.kernel[0], a.kernel[1], a.stride[0], a.stride[1], a.pad[0],
                    a.pad[1], a.pad[2], a.pad[3], a.dilation[0], a.dilation[1]})
           << ", " << (node.op == OpKind::MaxPool2d ? "true" : "false") << ", "
           << (a.count_include_pad ? "true" : "false") << "));\n"
           << epilogue_after(node);
      add_layer(layer, ops_text(node), "pool2d kernel", elements * a.kernel[0] * a.kernel[1], body.str());
      return;
    }
    case OpKind::AdaptiveAvgPool2d:
    case OpKind::GlobalAvgPool: {
      const Shape& s = x_shape(0);
      body << "  AOTC_TRY(adaptive_avg_pool2d(&m.dev, " << x(0) << ", " << out << ", "
           << dims({s[0], s[1], s[2], s[3], y[2], y[3]}) << "));\n"
           << epilogue_after(node);
      add_layer(layer, ops_text(node), "adaptive_avg_pool2d kernel", static_cast<double>(num_elements(s)), body.str());
      return;
    }
    case OpKind::Linear: {
      const Tensor& w = g_.tensor(node.inputs[1]);
      const bool bias = node.op_operand_count() == 3;
      // Over a batch, a 1x1 cuDNN convolution of [N, K, 1, 1] (a GEMM that reads the
      // weights once, with bias and relu fused): the linear kernel's warp per output
      // reads them once per row. For one row that kernel is the GEMV already.
      if (y[0] > 1 && y.size() == 2 && w.is_constant()) {
        emit_cudnn_conv(node, CudnnConv{y[0], w.shape[1], 1, 1, w.shape[0], 1, 1, 0, 0, 1, 1, 1, 1, 1}, x(0), body,
                        "cudnnConvolutionForward (1x1)");
        return;
      }
      body << "  AOTC_TRY(linear(&m.dev, " << x(0) << ", " << x(1) << ", " << (bias ? x(2) : "nullptr") << ", " << out
           << ", " << dims({y[0], w.shape[1], w.shape[0]}) << "));\n"
           << epilogue_after(node);
      add_layer(layer, ops_text(node), "linear kernel", 2 * elements * static_cast<double>(w.shape[1]), body.str());
      return;
    }
    case OpKind::Softmax: {
      const size_t axis = static_cast<size_t>(node.attr<AxisAttrs>().axis);
      int64_t outer = 1, inner = 1;
      for (size_t d = 0; d < axis; ++d) outer *= y[d];
      for (size_t d = axis + 1; d < y.size(); ++d) inner *= y[d];
      body << "  AOTC_TRY(softmax(&m.dev, " << x(0) << ", " << out << ", " << dims({outer, y[axis], inner}) << "));\n"
           << epilogue_after(node);
      add_layer(layer, ops_text(node), "softmax kernel", 3 * elements, body.str());
      return;
    }
    case OpKind::Pad: {
      const auto& a = node.attr<PadAttrs>();
      const Shape& s = x_shape(0);
      if (s.size() > kMaxRank) unsupported(node, "handle tensors of rank up to 6");
      body << "  static const int64_t kShape[] = " << list(s) << ";\n"
           << "  static const int64_t kPads[] = " << list(a.pads) << ";\n"
           << "  AOTC_TRY(pad(&m.dev, " << x(0) << ", " << out << ", " << s.size() << ", kShape, kPads, "
           << float_literal(a.value) << "));\n"
           << epilogue_after(node);
      add_layer(layer, ops_text(node), "pad kernel", 0, body.str());
      return;
    }
    case OpKind::Transpose: {
      const auto& a = node.attr<TransposeAttrs>();
      const Shape& s = x_shape(0);
      if (s.size() > kMaxRank) unsupported(node, "handle tensors of rank up to 6");
      std::vector<int64_t> perm(a.perm.begin(), a.perm.end());
      body << "  static const int64_t kShape[] = " << list(s) << ";\n"
           << "  static const int kPerm[] = " << list(perm) << ";\n"
           << "  AOTC_TRY(transpose(&m.dev, " << x(0) << ", " << out << ", " << s.size() << ", kShape, kPerm));\n"
           << epilogue_after(node);
      add_layer(layer, ops_text(node), "transpose kernel", 0, body.str());
      return;
    }
    case OpKind::ResizeBilinear:
    case OpKind::ResizeNearest: {
      const auto& a = node.attr<ResizeAttrs>();
      const Shape& s = x_shape(0);
      body << "  AOTC_TRY(resize(&m.dev, " << x(0) << ", " << out << ", " << dims({s[0], s[1], s[2], s[3], y[2], y[3]})
           << ", " << (node.op == OpKind::ResizeBilinear ? "true" : "false") << ", "
           << (a.align_corners ? "true" : "false") << ", " << (a.half_pixel_centers ? "true" : "false") << "));\n"
           << epilogue_after(node);
      add_layer(layer, ops_text(node), "resize kernel", 4 * elements, body.str());
      return;
    }
    case OpKind::ConvTranspose2d: {
      const auto& a = node.attr<ConvTranspose2dAttrs>();
      const Shape& s = x_shape(0);
      const Tensor& w = g_.tensor(node.inputs[1]);
      const bool bias = node.op_operand_count() == 3;
      body << "  AOTC_TRY(conv_transpose2d(&m.dev, " << x(0) << ", " << x(1) << ", " << (bias ? x(2) : "nullptr") << ", "
           << out << ", "
           << dims({s[0], s[1], s[2], s[3], w.shape[1], w.shape[2], w.shape[3], a.stride[0], a.stride[1], a.pad[0],
                    a.pad[1], y[2], y[3]})
           << "));\n"
           << epilogue_after(node);
      add_layer(layer, ops_text(node), "conv_transpose2d kernel",
                2.0 * static_cast<double>(num_elements(s) * w.shape[1] * w.shape[2] * w.shape[3]), body.str());
      return;
    }
    case OpKind::DepthToSpace: {
      const Shape& s = x_shape(0);
      body << "  AOTC_TRY(depth_to_space(&m.dev, " << x(0) << ", " << out << ", "
           << dims({s[0], s[1], s[2], s[3], node.attr<DepthToSpaceAttrs>().block}) << "));\n"
           << epilogue_after(node);
      add_layer(layer, ops_text(node), "depth_to_space kernel", 0, body.str());
      return;
    }
    case OpKind::BatchNorm: break;  // refused above
    case OpKind::Quantize:
    case OpKind::Dequantize:
    case OpKind::QConv2d:
    case OpKind::QAdd:
    case OpKind::QGlobalAvgPool:
    case OpKind::QLookup: break;  // refused by require_float_graph
  }
  unsupported(node, "have no implementation of it");
}

// Halide loads a kernel's module into the context at its first call, which a
// CUDA graph capture must not see: create runs the layers once, over the
// staging buffers, before any capture.
std::string warm_up_source(size_t inputs, size_t outputs) {
  std::ostringstream os;
  os << "  const float* staged_in[" << std::max<size_t>(1, inputs) << "];\n"
     << "  float* staged_out[" << std::max<size_t>(1, outputs) << "];\n"
     << "  for (size_t i = 0; i < " << inputs << "; ++i) staged_in[i] = activation(m, kInputsAt[i]);\n"
     << "  for (size_t i = 0; i < " << outputs << "; ++i) staged_out[i] = activation(m, kOutputsAt[i]);\n"
     << "  if (launch_layers(m, nullptr, staged_in, staged_out) != AOTC_OK) return kKernelFailed;  // m.dev.error says why\n"
     << "  AOTC_TRY(check_cuda(&m.dev, \"create\", \"cudaStreamSynchronize\", cudaStreamSynchronize(m.dev.stream)));\n";
  return os.str();
}

// FN_create over the embedded weights; or, with external weights, FN_weights_bytes,
// FN_check_weights and FN_create_with_weights, which checks the weights' header
// before it touches the GPU and uploads their payload.
std::string Emitter::create_entry_points(const std::string& fn) const {
  const std::string check_arguments = "  if (context != nullptr) context->error[0] = '\\0';\n"
                                      "  if (model == nullptr) return AOTC_ERROR_INVALID_ARGUMENT;\n"
                                      "  *model = nullptr;\n";
  std::ostringstream os;
  if (!external_weights_) {
    os << "int " << fn << "_create(" << fn << "_gpu** model, void* cuda_stream, aotc_context* context) {\n"
       << check_arguments << "  return create_gpu(model, " << fn << "_weights, cuda_stream, context);\n"
       << "}\n\n";
    return os.str();
  }
  const std::string identity = weights_identity_arguments(model_.weights_identity);
  os << weights_entry_points(fn, model_.weights_identity)
     << "int " << fn << "_create_with_weights(" << fn
     << "_gpu** model, const void* weights, size_t weights_bytes, void* cuda_stream,\n"
     << "    aotc_context* context) {\n"
     << check_arguments
     << "  const int checked = aotc_rt1_check_weights_header(weights, weights_bytes, " << identity << ");\n"
     << "  if (checked != AOTC_OK) {\n"
     << "    report(context, aotc_status_message(checked));\n"
     << "    return checked;\n"
     << "  }\n"
     << "  return create_gpu(model, static_cast<const uint8_t*>(weights) + sizeof(aotc_weights_header), cuda_stream,\n"
     << "                    context);\n"
     << "}\n\n";
  return os.str();
}

std::string Emitter::source() const {
  const std::string id = c_identifier(model_.name);
  const std::string fn = "aotc_" + id;
  const size_t inputs = model_.inputs.size(), outputs = model_.outputs.size();
  const int64_t weights_at = model_.activation_bytes + model_.io_bytes;
  const bool halide = !model_.halide_kernels.empty();
  std::ostringstream os;
  os << "// CUDA stubs of model " << model_.name << ": generated by aotc. Do not edit.\n"
     << "// Every layer runs on the GPU: convolutions through cuDNN, the rest through the\n"
     << "// kernels of the CUDA runtime (aotc_cuda_runtime.h). One device arena (" << model_.device_arena_bytes << " bytes) holds\n"
     << "// the activations at [0, " << model_.activation_bytes << "), the staging of inputs and outputs for runs\n"
     << "// from host pointers, and the weights at " << weights_at << ", uploaded once at create"
     << (external_weights_ ? " from the\n// caller's weights file.\n" : ".\n")
     << "#include <time.h>\n\n#include <cmath>\n#include <cstdio>\n#include <cstring>\n#include <new>\n\n"
     << "#include \"" << model_.name << ".h\"\n"
     << (halide ? "#define AOTC_HALIDE_CUDA  // some layers run Halide CUDA kernels\n" : "")
     << "#include \"aotc_cuda_runtime.h\"\n"
     << (external_weights_ ? "#include \"aotc_weights.h\"\n\n" : "\nextern \"C\" const uint8_t " + fn + "_weights[];\n")
     << (halide ? "extern \"C\" {\n" + halide_declarations_ + "}\n" : "") << "\n"
     << "namespace {\n\nusing namespace aotc_cuda;\n\n"
     << "#define AOTC_TRY(call)        \\\n"
     << "  do {                         \\\n"
     << "    const int status_ = call;  \\\n"
     << "    if (status_ != kOk) return status_; \\\n"
     << "  } while (0)\n\n"
     << "constexpr size_t kDeviceArenaBytes = " << model_.device_arena_bytes << ";\n"
     << "constexpr size_t kWeightsAt = " << weights_at << ";\n"
     << "constexpr size_t kWeightsBytes = " << model_.weights.size() << ";\n"
     << "constexpr size_t kInputsAt[" << std::max<size_t>(1, inputs) << "] = {";
  for (size_t i = 0; i < inputs; ++i) os << (i ? ", " : "") << io_offsets_[i];
  os << "};\n"
     << "constexpr size_t kOutputsAt[" << std::max<size_t>(1, outputs) << "] = {";
  for (size_t i = 0; i < outputs; ++i) os << (i ? ", " : "") << io_offsets_[inputs + i];
  os << "};\n"
     << "constexpr size_t kInputElements[" << std::max<size_t>(1, inputs) << "] = {";
  for (size_t i = 0; i < inputs; ++i) os << (i ? ", " : "") << num_elements(model_.inputs[i].shape);
  os << "};\n"
     << "constexpr size_t kOutputElements[" << std::max<size_t>(1, outputs) << "] = {";
  for (size_t i = 0; i < outputs; ++i) os << (i ? ", " : "") << num_elements(model_.outputs[i].shape);
  os << "};\n\n"
     << "struct Model {\n"
     << "  Device dev;\n"
     << "  uint8_t* arena;  // device memory, kDeviceArenaBytes\n"
     << "  ConvPlan conv[" << std::max(1, conv_count_) << "];\n"
     << "  // The layers captured as one CUDA graph for the tensors at graph_in/graph_out,\n"
     << "  // replayed while a run passes the same pointers (one launch instead of one per\n"
     << "  // kernel). graphs_off: a capture failed once, so layers are launched one by one.\n"
     << "  cudaGraphExec_t graph;\n"
     << "  const float* graph_in[" << std::max<size_t>(1, inputs) << "];\n"
     << "  float* graph_out[" << std::max<size_t>(1, outputs) << "];\n"
     << "  bool graphs_off;\n"
     << "};\n\n"
     << "float* activation(Model& m, size_t offset) { return reinterpret_cast<float*>(m.arena + offset); }\n"
     << "const float* weight(Model& m, size_t offset) { return reinterpret_cast<const float*>(m.arena + kWeightsAt + offset); }\n\n"
     << "int copy(Device* dev, const float* from, float* to, size_t elements) {\n"
     << "  const cudaError_t e = cudaMemcpyAsync(to, from, elements * sizeof(float), cudaMemcpyDeviceToDevice, dev->stream);\n"
     << "  if (e == cudaSuccess) return kOk;\n"
     << "  std::snprintf(dev->error, sizeof dev->error, \"copy: %s\", cudaGetErrorString(e));\n"
     << "  return kKernelFailed;\n"
     << "}\n\n"
     << layer_functions_
     << "using Layer = int (*)(Model&, const float* const*, float* const*);\n"
     << "const Layer kLayers[" << std::max<size_t>(1, model_.layers.size()) << "] = {";
  for (size_t i = 0; i < model_.layers.size(); ++i) os << (i ? ", " : "") << "layer_" << i;
  if (model_.layers.empty()) os << "nullptr";
  os << "};\n"
     << "const char* const kLayerNames[" << std::max<size_t>(1, model_.layers.size()) << "] = {";
  for (size_t i = 0; i < model_.layers.size(); ++i) os << (i ? ", " : "") << c_string_literal(model_.layers[i].name);
  if (model_.layers.empty()) os << "\"\"";
  os << "};\n"
     << "constexpr size_t kLayerCount = " << model_.layers.size() << ";\n\n"
     << "int launch_layers(Model& m, aotc_context* context, const float* const* in, float* const* out);\n\n"
     << "// Allocates the device arena, uploads the weights (the payload, kWeightsBytes) and\n"
     << "// makes the cuDNN plans.\n"
     << "int create_model(Model& m, cudaStream_t stream, const uint8_t* weights) {\n"
     << "  AOTC_TRY(device_open(&m.dev, stream));\n"
     << (halide ? "  AOTC_TRY(halide_open(&m.dev));\n" : "")
     << "  cudaError_t e = cudaMalloc(reinterpret_cast<void**>(&m.arena), kDeviceArenaBytes);\n"
     << "  if (e != cudaSuccess) {\n"
     << "    m.arena = nullptr;\n"
     << "    std::snprintf(m.dev.error, sizeof m.dev.error, \"create: cudaMalloc of %zu bytes: %s\", kDeviceArenaBytes,\n"
     << "                  cudaGetErrorString(e));\n"
     << "    return kKernelFailed;\n"
     << "  }\n"
     << "  e = cudaMemcpy(m.arena + kWeightsAt, weights, kWeightsBytes, cudaMemcpyHostToDevice);\n"
     << "  if (e != cudaSuccess) {\n"
     << "    std::snprintf(m.dev.error, sizeof m.dev.error, \"create: uploading the weights: %s\", cudaGetErrorString(e));\n"
     << "    return kKernelFailed;\n"
     << "  }\n"
     << conv_plans_
     << (halide ? warm_up_source(inputs, outputs) : "")
     << "  return kOk;\n"
     << "}\n\n"
     << "void destroy_model(Model& m) {\n"
     << "  if (m.graph != nullptr) cudaGraphExecDestroy(m.graph);\n"
     << "  for (ConvPlan& plan : m.conv) conv_plan_destroy(&m.dev, &plan);\n"
     << "  if (m.arena != nullptr) cudaFree(m.arena);\n"
     << "  device_close(&m.dev);\n"
     << "}\n\n"
     << "double now_microseconds() {\n"
     << "  timespec t;\n"
     << "  clock_gettime(CLOCK_MONOTONIC, &t);\n"
     << "  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) * 1e-3;\n"
     << "}\n\n"
     << "void report(aotc_context* context, const char* message) {\n"
     << "  if (context == nullptr) return;\n"
     << "  std::strncpy(context->error, message, sizeof context->error - 1);\n"
     << "  context->error[sizeof context->error - 1] = '\\0';\n"
     << "}\n\n"
     << "// Enqueues every layer on the stream. With a timing callback, each layer is\n"
     << "// timed from the host between two stream synchronisations.\n"
     << "int launch_layers(Model& m, aotc_context* context, const float* const* in, float* const* out) {\n"
     << "  const bool timed = context != nullptr && context->timing != nullptr;\n"
     << "  for (size_t i = 0; i < kLayerCount; ++i) {\n"
     << "    if (timed && cudaStreamSynchronize(m.dev.stream) != cudaSuccess) break;\n"
     << "    const double start = timed ? now_microseconds() : 0;\n"
     << "    if (kLayers[i](m, in, out) != kOk) {\n"
     << "      char message[sizeof m.dev.error + 64];\n"
     << "      std::snprintf(message, sizeof message, \"%s: %s\", kLayerNames[i], m.dev.error);\n"
     << "      report(context, message);\n"
     << "      return AOTC_ERROR_KERNEL_FAILED;\n"
     << "    }\n"
     << "    if (timed) {\n"
     << "      if (cudaStreamSynchronize(m.dev.stream) != cudaSuccess) break;\n"
     << "      context->timing(context->timing_user_data, kLayerNames[i], now_microseconds() - start);\n"
     << "    }\n"
     << "  }\n"
     << "  const cudaError_t e = cudaGetLastError();\n"
     << "  if (e == cudaSuccess) return AOTC_OK;\n"
     << "  report(context, cudaGetErrorString(e));\n"
     << "  return AOTC_ERROR_KERNEL_FAILED;\n"
     << "}\n\n"
     << "bool same_tensors(const Model& m, const float* const* in, float* const* out) {\n"
     << "  for (size_t i = 0; i < " << inputs << "; ++i)\n"
     << "    if (m.graph_in[i] != in[i]) return false;\n"
     << "  for (size_t i = 0; i < " << outputs << "; ++i)\n"
     << "    if (m.graph_out[i] != out[i]) return false;\n"
     << "  return true;\n"
     << "}\n\n"
     << "// Captures the layers for these tensors into m.graph; false if the stream or a\n"
     << "// library call refused to be captured (nothing ran then).\n"
     << "bool capture(Model& m, const float* const* in, float* const* out) {\n"
     << "  if (m.graph != nullptr) cudaGraphExecDestroy(m.graph);\n"
     << "  m.graph = nullptr;\n"
     << "  if (cudaStreamBeginCapture(m.dev.stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {\n"
     << "    cudaGetLastError();\n"
     << "    return false;\n"
     << "  }\n"
     << "  const int status = launch_layers(m, nullptr, in, out);\n"
     << "  cudaGraph_t graph = nullptr;\n"
     << "  const cudaError_t ended = cudaStreamEndCapture(m.dev.stream, &graph);\n"
     << "  const bool made = status == AOTC_OK && ended == cudaSuccess && graph != nullptr &&\n"
     << "                    cudaGraphInstantiate(&m.graph, graph, 0) == cudaSuccess;\n"
     << "  if (graph != nullptr) cudaGraphDestroy(graph);\n"
     << "  cudaGetLastError();  // a refused capture leaves its error here\n"
     << "  if (!made) {\n"
     << "    m.graph = nullptr;\n"
     << "    return false;\n"
     << "  }\n"
     << "  for (size_t i = 0; i < " << inputs << "; ++i) m.graph_in[i] = in[i];\n"
     << "  for (size_t i = 0; i < " << outputs << "; ++i) m.graph_out[i] = out[i];\n"
     << "  return true;\n"
     << "}\n\n"
     << "// Replays the captured graph (capturing it first for new tensors), or launches the\n"
     << "// layers one by one while timing them or where capture is refused.\n"
     << "int run_layers(Model& m, aotc_context* context, const float* const* in, float* const* out) {\n"
     << "  if (m.graphs_off || (context != nullptr && context->timing != nullptr))\n"
     << "    return launch_layers(m, context, in, out);\n"
     << "  if ((m.graph == nullptr || !same_tensors(m, in, out)) && !capture(m, in, out)) {\n"
     << "    m.graphs_off = true;\n"
     << "    return launch_layers(m, context, in, out);\n"
     << "  }\n"
     << "  const cudaError_t e = cudaGraphLaunch(m.graph, m.dev.stream);\n"
     << "  if (e == cudaSuccess) return AOTC_OK;\n"
     << "  report(context, cudaGetErrorString(e));\n"
     << "  return AOTC_ERROR_KERNEL_FAILED;\n"
     << "}\n\n"
     << "// Each layer alone, captured into a graph of its own and replayed between two events:\n"
     << "// its time on the GPU as the whole graph's replay runs it (no host call per kernel).\n"
     << "int profile_layers(Model& m, aotc_context* context, const float* const* in, float* const* out, int replays) {\n"
     << "  cudaEvent_t begin = nullptr, end = nullptr;\n"
     << "  cudaError_t e = cudaEventCreate(&begin);\n"
     << "  if (e == cudaSuccess) e = cudaEventCreate(&end);\n"
     << "  int status = AOTC_OK;\n"
     << "  for (size_t i = 0; i < kLayerCount && e == cudaSuccess && status == AOTC_OK; ++i) {\n"
     << "    cudaGraph_t graph = nullptr;\n"
     << "    cudaGraphExec_t exec = nullptr;\n"
     << "    e = cudaStreamBeginCapture(m.dev.stream, cudaStreamCaptureModeThreadLocal);\n"
     << "    if (e != cudaSuccess) break;\n"
     << "    const int layer = kLayers[i](m, in, out);\n"
     << "    e = cudaStreamEndCapture(m.dev.stream, &graph);\n"
     << "    if (layer != kOk) {\n"
     << "      char message[sizeof m.dev.error + 64];\n"
     << "      std::snprintf(message, sizeof message, \"%s: %s\", kLayerNames[i], m.dev.error);\n"
     << "      report(context, message);\n"
     << "      status = AOTC_ERROR_KERNEL_FAILED;\n"
     << "    }\n"
     << "    if (e == cudaSuccess && status == AOTC_OK) e = cudaGraphInstantiate(&exec, graph, 0);\n"
     << "    if (e == cudaSuccess && status == AOTC_OK) e = cudaGraphLaunch(exec, m.dev.stream);  // warm-up\n"
     << "    if (e == cudaSuccess && status == AOTC_OK) e = cudaEventRecord(begin, m.dev.stream);\n"
     << "    for (int r = 0; r < replays && e == cudaSuccess && status == AOTC_OK; ++r) e = cudaGraphLaunch(exec, m.dev.stream);\n"
     << "    if (e == cudaSuccess && status == AOTC_OK) e = cudaEventRecord(end, m.dev.stream);\n"
     << "    float ms = 0;\n"
     << "    if (e == cudaSuccess && status == AOTC_OK) e = cudaEventSynchronize(end);\n"
     << "    if (e == cudaSuccess && status == AOTC_OK) e = cudaEventElapsedTime(&ms, begin, end);\n"
     << "    if (e == cudaSuccess && status == AOTC_OK)\n"
     << "      context->timing(context->timing_user_data, kLayerNames[i], 1000.0 * ms / replays);\n"
     << "    if (exec != nullptr) cudaGraphExecDestroy(exec);\n"
     << "    if (graph != nullptr) cudaGraphDestroy(graph);\n"
     << "  }\n"
     << "  if (end != nullptr) cudaEventDestroy(end);\n"
     << "  if (begin != nullptr) cudaEventDestroy(begin);\n"
     << "  if (status != AOTC_OK) return status;\n"
     << "  if (e == cudaSuccess) return AOTC_OK;\n"
     << "  report(context, cudaGetErrorString(e));\n"
     << "  return AOTC_ERROR_KERNEL_FAILED;\n"
     << "}\n\n"
     << "bool any_null(const void* const* pointers, size_t count) {\n"
     << "  if (count > 0 && pointers == nullptr) return true;\n"
     << "  for (size_t i = 0; i < count; ++i)\n"
     << "    if (pointers[i] == nullptr) return true;\n"
     << "  return false;\n"
     << "}\n\n"
     << "// What both runs check first (after clearing the context's error): AOTC_OK or why not.\n"
     << "int check_run(const void* model, aotc_context* context, const float* const* inputs, float* const* outputs) {\n"
     << "  if (context != nullptr) context->error[0] = '\\0';\n"
     << "  if (model == nullptr) return AOTC_ERROR_INVALID_ARGUMENT;\n"
     << "  if (any_null(reinterpret_cast<const void* const*>(inputs), " << inputs << ") ||\n"
     << "      any_null(reinterpret_cast<const void* const*>(outputs), " << outputs << "))\n"
     << "    return AOTC_ERROR_NULL_TENSOR;\n"
     << "  return AOTC_OK;\n"
     << "}\n\n"
     << "bool any_misaligned(const void* const* pointers, size_t count) {\n"
     << "  for (size_t i = 0; i < count; ++i)\n"
     << "    if (reinterpret_cast<uintptr_t>(pointers[i]) % AOTC_DEVICE_TENSOR_ALIGNMENT != 0) return true;\n"
     << "  return false;\n"
     << "}\n\n"
     << "// check_run, and the app's device tensors aligned for the kernels' float4 loads and stores.\n"
     << "int check_device_run(const void* model, aotc_context* context, const float* const* inputs,\n"
     << "    float* const* outputs) {\n"
     << "  if (const int checked = check_run(model, context, inputs, outputs); checked != AOTC_OK) return checked;\n"
     << "  if (any_misaligned(reinterpret_cast<const void* const*>(inputs), " << inputs << ") ||\n"
     << "      any_misaligned(reinterpret_cast<const void* const*>(outputs), " << outputs << "))\n"
     << "    return AOTC_ERROR_MISALIGNED_TENSOR;\n"
     << "  return AOTC_OK;\n"
     << "}\n\n"
     << "}  // namespace\n\n"
     << "struct " << fn << "_gpu {\n  Model m;\n};\n\n"
     << "namespace {\n\n"
     << "int create_gpu(" << fn << "_gpu** model, const uint8_t* weights, void* cuda_stream, aotc_context* context) {\n"
     << "  " << fn << "_gpu* made = new (std::nothrow) " << fn << "_gpu();\n"
     << "  if (made == nullptr) return AOTC_ERROR_INVALID_ARGUMENT;\n"
     << "  const int status = create_model(made->m, static_cast<cudaStream_t>(cuda_stream), weights);\n"
     << "  if (status != kOk) {\n"
     << "    report(context, made->m.dev.error);\n"
     << "    destroy_model(made->m);\n"
     << "    delete made;\n"
     << "    return status == kDeviceUnavailable ? AOTC_ERROR_DEVICE_UNAVAILABLE : AOTC_ERROR_KERNEL_FAILED;\n"
     << "  }\n"
     << "  *model = made;\n"
     << "  return AOTC_OK;\n"
     << "}\n\n"
     << "}  // namespace\n\n"
     << "extern \"C\" {\n\n"
     << "size_t " << fn << "_device_arena_bytes(void) { return kDeviceArenaBytes; }\n\n"
     << create_entry_points(fn)
     << "int " << fn << "_runs_cuda_graph(const " << fn << "_gpu* model) {\n"
     << "  return model != nullptr && !model->m.graphs_off && model->m.graph != nullptr ? 1 : 0;\n"
     << "}\n\n"
     << "void " << fn << "_destroy(" << fn << "_gpu* model) {\n"
     << "  if (model == nullptr) return;\n"
     << "  destroy_model(model->m);\n"
     << "  delete model;\n"
     << "}\n\n"
     << "int " << fn << "_run_device(" << fn << "_gpu* model, aotc_context* context, const float* const* inputs,\n"
     << "    float* const* outputs) {\n"
     << "  if (const int checked = check_device_run(model, context, inputs, outputs); checked != AOTC_OK)\n"
     << "    return checked;\n"
     << "  return run_layers(model->m, context, inputs, outputs);\n"
     << "}\n\n"
     << "int " << fn << "_profile_layers(" << fn << "_gpu* model, aotc_context* context, const float* const* inputs,\n"
     << "    float* const* outputs, int replays) {\n"
     << "  if (const int checked = check_device_run(model, context, inputs, outputs); checked != AOTC_OK)\n"
     << "    return checked;\n"
     << "  if (context == nullptr || context->timing == nullptr || replays < 1) return AOTC_ERROR_INVALID_ARGUMENT;\n"
     << "  return profile_layers(model->m, context, inputs, outputs, replays);\n"
     << "}\n\n"
     << "int " << fn << "_run(" << fn << "_gpu* model, aotc_context* context, const float* const* inputs,\n"
     << "    float* const* outputs) {\n"
     << "  if (const int checked = check_run(model, context, inputs, outputs); checked != AOTC_OK) return checked;\n"
     << "  Model& m = model->m;\n"
     << "  const float* device_inputs[" << std::max<size_t>(1, inputs) << "];\n"
     << "  float* device_outputs[" << std::max<size_t>(1, outputs) << "];\n"
     << "  cudaError_t e = cudaSuccess;\n"
     << "  for (size_t i = 0; i < " << inputs << " && e == cudaSuccess; ++i) {\n"
     << "    device_inputs[i] = activation(m, kInputsAt[i]);\n"
     << "    e = cudaMemcpyAsync(activation(m, kInputsAt[i]), inputs[i], kInputElements[i] * sizeof(float),\n"
     << "                        cudaMemcpyHostToDevice, m.dev.stream);\n"
     << "  }\n"
     << "  for (size_t i = 0; i < " << outputs << "; ++i) device_outputs[i] = activation(m, kOutputsAt[i]);\n"
     << "  if (e != cudaSuccess) {\n"
     << "    report(context, cudaGetErrorString(e));\n"
     << "    return AOTC_ERROR_KERNEL_FAILED;\n"
     << "  }\n"
     << "  const int status = run_layers(m, context, device_inputs, device_outputs);\n"
     << "  if (status != AOTC_OK) return status;\n"
     << "  for (size_t i = 0; i < " << outputs << " && e == cudaSuccess; ++i)\n"
     << "    e = cudaMemcpyAsync(outputs[i], device_outputs[i], kOutputElements[i] * sizeof(float),\n"
     << "                        cudaMemcpyDeviceToHost, m.dev.stream);\n"
     << "  if (e == cudaSuccess) e = cudaStreamSynchronize(m.dev.stream);\n"
     << "  if (e == cudaSuccess) return AOTC_OK;\n"
     << "  report(context, cudaGetErrorString(e));\n"
     << "  return AOTC_ERROR_KERNEL_FAILED;\n"
     << "}\n\n"
     << "}  // extern \"C\"\n";
  return os.str();
}

}  // namespace

MemoryPlan plan_cuda_stub_memory(const Graph& g) {
  return plan_memory(g, kAlignment, [](const Graph& graph, const Node& node) -> int64_t {
    if (node.op != OpKind::Conv2d || symmetric(node.attr<Conv2dAttrs>().pad)) return 0;
    return padded_input_bytes(graph, node);
  });
}

CudaStubModel lower_to_cuda_stubs(const Graph& g, const MemoryPlan& plan, const GpuBackendPlan& backends,
                                  bool external_weights, const std::string& target) {
  AOTC_CHECK(backends.backend.size() == g.nodes.size(), "the backend plan is not of graph ", g.name);
  return Emitter(g, plan, backends, external_weights, target).run();
}

}  // namespace aotc
