// Lowering an optimised graph onto Halide kernels: each node becomes the calls
// of kernels built by generators (generators/) for the node's exact shapes,
// attributes and epilogue: one call, or for a convolution the steps of its
// chosen candidate (conv_candidates.h). Kernels with equal descriptions are
// shared; weights are packed once into the blob, in the layout the generator
// asks for.
#include <Halide.h>

#include <algorithm>
#include <map>

#include "backends/graph_outputs.h"
#include "backends/halide/candidates.h"
#include "backends/halide/group_plan.h"
#include "backends/halide/halide_backend.h"
#include "generators/concat.h"
#include "generators/conv_transpose2d.h"
#include "generators/depth_to_space.h"
#include "generators/elementwise.h"
#include "generators/linear.h"
#include "generators/pad.h"
#include "generators/pool2d.h"
#include "generators/resize.h"
#include "generators/softmax.h"
#include "generators/transpose.h"
#include "ir/printer.h"
#include "support/names.h"
#include "support/error.h"

namespace aotc {
namespace {

constexpr int64_t kBlobAlignment = 64;

// Builds the LoweredModel node by node.
class Lowering {
 public:
  Lowering(const Graph& g, const MemoryPlan& plan, const GroupPlan& groups) : g_(g), plan_(plan), groups_(groups) {
    for (const TensorPlacement& p : plan.placements) placement_[p.tensor] = &p;
    model_.name = g.name;
    model_.arena_bytes = plan.arena_bytes;
    model_.lower_bound_bytes = plan.lower_bound_bytes;
    model_.plan = groups.totals;
    model_.inputs = tensor_infos(g, g.inputs);
    model_.outputs = tensor_infos(g, g.outputs);
  }

  LoweredModel run() {
    for (step_ = 0; step_ < static_cast<int>(g_.nodes.size()); ++step_) lower_node(g_.nodes[static_cast<size_t>(step_)]);
    // Nodes write a graph output into the caller's buffer of its first listing
    // (ref()); copies fill the others.
    for (const size_t i : outputs_to_copy(g_)) {
      const TensorId id = g_.outputs[i];
      BufferRef to;
      to.source = BufferRef::Source::kOutput;
      to.index = static_cast<int>(i);
      to.shape = g_.tensor(id).shape;
      add_copy(g_.tensor(id).name, ref(id), to);
    }
    return std::move(model_);
  }

 private:
  // Where tensor `id` lives at run time, seen with `shape`. A graph input or a
  // constant is read where the caller or the blob has it, even when it is also
  // a graph output (run() copies it there); a computed graph output lives in
  // the caller's buffer of its first listing.
  BufferRef ref(TensorId id, const Shape& shape) {
    BufferRef r;
    r.shape = shape;
    const Tensor& t = g_.tensor(id);
    for (size_t i = 0; i < g_.inputs.size(); ++i) {
      if (g_.inputs[i] == id) {
        r.source = BufferRef::Source::kInput;
        r.index = static_cast<int>(i);
        return r;
      }
    }
    if (t.is_constant()) {
      r.source = BufferRef::Source::kWeights;
      r.offset = constant_offset(id);
      return r;
    }
    if (const int output = first_output_index(g_, id); output >= 0) {
      r.source = BufferRef::Source::kOutput;
      r.index = output;
      return r;
    }
    auto it = placement_.find(id);
    AOTC_CHECK(it != placement_.end(), "tensor ", t.name, " has no place in the memory plan");
    r.source = BufferRef::Source::kArena;
    r.offset = it->second->offset;
    return r;
  }

  BufferRef ref(TensorId id) { return ref(id, g_.tensor(id).shape); }

  int64_t append_blob(const std::vector<float>& data) {
    std::vector<uint8_t>& blob = model_.weights;
    blob.resize(static_cast<size_t>((static_cast<int64_t>(blob.size()) + kBlobAlignment - 1) / kBlobAlignment *
                                    kBlobAlignment));
    const auto offset = static_cast<int64_t>(blob.size());
    const auto* bytes = reinterpret_cast<const uint8_t*>(data.data());
    blob.insert(blob.end(), bytes, bytes + data.size() * sizeof(float));
    return offset;
  }

  // Row-major constants are stored once, however many calls read them.
  int64_t constant_offset(TensorId id) {
    auto it = constant_offsets_.find(id);
    if (it != constant_offsets_.end()) return it->second;
    const int64_t offset = append_blob(*g_.tensor(id).data);
    constant_offsets_[id] = offset;
    return offset;
  }

  BufferRef packed(const gen::PackedWeights& w) {
    BufferRef r;
    r.source = BufferRef::Source::kWeights;
    r.offset = append_blob(w.data);
    r.shape = w.shape;
    return r;
  }

  const Tensor& constant_input(const Node& node, size_t i, const char* what) {
    return aotc::constant_input(g_, node, i, what);
  }

  std::vector<gen::PostOpSpec> epilogue(const Node& node) { return epilogue_specs(g_, node); }

  void epilogue_args(const Node& node, std::vector<BufferRef>& args) {
    for (size_t i = node.op_operand_count(); i < node.inputs.size(); ++i) args.push_back(ref(node.inputs[i]));
  }

  // The kernel of description `key`, built by `build` on first use.
  template <typename Build>
  int kernel_for(const std::string& key, const std::string& suffix, Build build) {
    auto it = kernel_index_.find(key);
    if (it != kernel_index_.end()) return it->second;
    const int kernel = static_cast<int>(model_.kernels.size());
    model_.kernels.push_back(
        halide_kernel_source("aotc_" + c_identifier(g_.name) + "_k" + std::to_string(kernel) + "_" + suffix, key, build));
    kernel_index_[key] = kernel;
    return kernel;
  }

  void add_call(std::string layer, std::string ops, int kernel, std::vector<BufferRef> args, double flops) {
    KernelCall call;
    call.layer = std::move(layer);
    call.ops = std::move(ops);
    call.kernel = kernel;
    call.args = std::move(args);
    call.flops = flops;
    for (const BufferRef& a : call.args) call.bytes += num_elements(a.shape) * 4;
    model_.calls.push_back(std::move(call));
  }

  // A call of `node`'s kernel (shared with every node of equal description).
  template <typename Build>
  void add_node_call(const Node& node, std::vector<BufferRef> args, double flops, Build build) {
    const int kernel = kernel_for(node_description(g_, node), op_name(node.op), build);
    add_call(g_.tensor(node.outputs[0]).name, op_signature(node), kernel, std::move(args), flops);
  }

  void add_copy(const std::string& layer, BufferRef from, BufferRef to) {
    gen::ElementwiseSpec spec;
    spec.kind = gen::ElementwiseSpec::Kind::kCopy;
    spec.input_shapes = {from.shape};
    spec.output_shape = to.shape;
    const int kernel = kernel_for("copy " + shape_text(to.shape), "copy",
                                  [spec](const Halide::Target& t) { return gen::elementwise(spec, t); });
    add_call(layer, "copy", kernel, {from, to}, 0);
  }

  bool aliased(const Node& node) const {
    auto it = placement_.find(node.outputs[0]);
    return it != placement_.end() && it->second->shares_with == node.inputs[0];
  }

  void lower_node(const Node& node);

  // The candidate the plan runs for `node`, as calls over the memory plan;
  // only its weights are packed into the blob.
  void lower_group(const Node& node, const PlannedGroup& group) {
    const Choice& choice = group.choice;
    const Candidate& c = group.run;
    std::vector<BufferRef> packed_weights;
    for (const auto& pack : c.packed) packed_weights.push_back(packed(pack()));
    const ScratchPlacement* scratch = c.scratch_bytes > 0 ? scratch_at(plan_, step_) : nullptr;
    AOTC_CHECK(c.scratch_bytes == 0 || scratch != nullptr, "the memory plan has no scratch for ", node.name);
    const std::string layer = g_.tensor(node.outputs[0]).name;
    for (const KernelStep& step : c.steps) {
      std::vector<BufferRef> args;
      for (const StepArg& a : step.args) {
        switch (a.kind) {
          case StepArg::Kind::kTensor: args.push_back(ref(a.tensor, a.shape)); break;
          case StepArg::Kind::kPacked: args.push_back(packed_weights[static_cast<size_t>(a.packed)]); break;
          case StepArg::Kind::kScratch: {
            BufferRef r;
            r.offset = scratch->offset + a.offset;
            r.shape = a.shape;
            args.push_back(r);
            break;
          }
        }
      }
      add_call(layer, step.ops, kernel_for(step.key, step.suffix, step.build), std::move(args), step.flops);
    }
    ChoiceRecord record{layer,
                        node_description(g_, node),
                        c.name,
                        choice.by,
                        choice.candidates[choice.by_rules].name,
                        choice.candidates[group.fastest_alone].name,
                        group.conversions,
                        {}};
    for (size_t i = 0; i < choice.candidates.size(); ++i)
      record.candidates.push_back(
          {choice.candidates[i].name, choice.measured_us[i], choice.candidates[i].predicted_us});
    model_.choices.push_back(std::move(record));
  }

  // An elementwise op (OpClass::kElementwise, kElementwiseWithParameters) with
  // the elementwise generator, whose guarded tails the memory plan's in-place
  // outputs rely on.
  void lower_elementwise(const Node& node) {
    gen::ElementwiseSpec spec;
    switch (node.op) {
      case OpKind::Relu: spec.kind = gen::ElementwiseSpec::Kind::kRelu; break;
      case OpKind::Clamp:
        spec.kind = gen::ElementwiseSpec::Kind::kClamp;
        spec.min = node.attr<ClampAttrs>().min;
        spec.max = node.attr<ClampAttrs>().max;
        break;
      case OpKind::HardSwish: spec.kind = gen::ElementwiseSpec::Kind::kHardSwish; break;
      case OpKind::Sigmoid: spec.kind = gen::ElementwiseSpec::Kind::kSigmoid; break;
      case OpKind::Tanh: spec.kind = gen::ElementwiseSpec::Kind::kTanh; break;
      case OpKind::Affine: spec.kind = gen::ElementwiseSpec::Kind::kAffine; break;
      case OpKind::Add: spec.kind = gen::ElementwiseSpec::Kind::kAdd; break;
      case OpKind::Mul: spec.kind = gen::ElementwiseSpec::Kind::kMul; break;
      case OpKind::PRelu: spec.kind = gen::ElementwiseSpec::Kind::kPRelu; break;
      default: AOTC_CHECK(false, "no elementwise kernel for op ", op_name(node.op));
    }
    std::vector<BufferRef> args;
    for (size_t i = 0; i < node.op_operand_count(); ++i) {
      spec.input_shapes.push_back(g_.tensor(node.inputs[i]).shape);
      args.push_back(ref(node.inputs[i]));
    }
    spec.output_shape = g_.tensor(node.outputs[0]).shape;
    spec.epilogue = epilogue(node);
    epilogue_args(node, args);
    args.push_back(ref(node.outputs[0]));
    const double outputs = static_cast<double>(num_elements(spec.output_shape));
    add_node_call(node, std::move(args), outputs * static_cast<double>(1 + node.epilogue.size()),
                  [spec](const Halide::Target& t) { return gen::elementwise(spec, t); });
  }

  // Reshape, flatten, dropout (OpClass::kAlias): free when the memory plan let
  // the output share the input's bytes (never with an epilogue); a copy
  // otherwise, which applies the epilogue.
  void lower_alias(const Node& node) {
    if (aliased(node)) return;
    const TensorId out = node.outputs[0];
    const Shape& out_shape = g_.tensor(out).shape;
    if (node.epilogue.empty()) {
      add_copy(g_.tensor(out).name, ref(node.inputs[0], out_shape), ref(out));
      return;
    }
    gen::ElementwiseSpec spec;
    spec.kind = gen::ElementwiseSpec::Kind::kCopy;
    spec.input_shapes = {out_shape};
    spec.output_shape = out_shape;
    spec.epilogue = epilogue(node);
    std::vector<BufferRef> args = {ref(node.inputs[0], out_shape)};
    epilogue_args(node, args);
    args.push_back(ref(out));
    add_node_call(node, std::move(args),
                  static_cast<double>(num_elements(out_shape)) * static_cast<double>(node.epilogue.size()),
                  [spec](const Halide::Target& t) { return gen::elementwise(spec, t); });
  }

  // A concat whose output the memory plan laid out as slices: the inputs that
  // their producers already wrote in place cost nothing; the others are copied
  // into their slices. Returns false when the plan made no slices for it.
  bool lower_concat_in_place(const Node& node) {
    const std::vector<int64_t> offsets = concat_slice_offsets(g_, node);
    auto out = placement_.find(node.outputs[0]);
    if (!node.epilogue.empty() || offsets.empty() || out == placement_.end()) return false;
    std::vector<bool> in_place(offsets.size(), false);
    for (size_t i = 0; i < offsets.size(); ++i) {
      auto in = placement_.find(node.inputs[i]);
      // Two live tensors at one address are one: the plan put the input there.
      in_place[i] = in != placement_.end() && in->second->offset == out->second->offset + offsets[i];
    }
    if (std::none_of(in_place.begin(), in_place.end(), [](bool b) { return b; })) return false;
    for (size_t i = 0; i < offsets.size(); ++i) {
      if (in_place[i]) continue;
      BufferRef slice;
      slice.source = BufferRef::Source::kArena;
      slice.offset = out->second->offset + offsets[i];
      slice.shape = g_.tensor(node.inputs[i]).shape;
      add_copy(g_.tensor(node.outputs[0]).name, ref(node.inputs[i]), slice);
    }
    return true;
  }

  const Graph& g_;
  const MemoryPlan& plan_;
  const GroupPlan& groups_;
  int step_ = 0;  // the node being lowered
  LoweredModel model_;
  std::map<TensorId, const TensorPlacement*> placement_;
  std::map<TensorId, int64_t> constant_offsets_;
  std::map<std::string, int> kernel_index_;
};

void Lowering::lower_node(const Node& node) {
  if (node.op == OpKind::BatchNorm)
    fail(ExitCode::kUnsupported, "node '", node.name,
         "' (batch_norm): code generation needs batch_norm folded or made affine (keep the fold-batch-norm pass on)");
  switch (op_class(node.op)) {
    case OpClass::kElementwise:
    case OpClass::kElementwiseWithParameters: lower_elementwise(node); return;
    case OpClass::kAlias: lower_alias(node); return;
    case OpClass::kOther: break;
  }
  const TensorId out = node.outputs[0];
  const Shape& out_shape = g_.tensor(out).shape;
  const double out_elements = static_cast<double>(num_elements(out_shape));
  const double epilogue_flops = out_elements * static_cast<double>(node.epilogue.size());
  std::vector<BufferRef> args;

  switch (node.op) {
    case OpKind::Conv2d:
      lower_group(node, groups_.groups.at(static_cast<size_t>(step_)));
      return;
    case OpKind::ConvTranspose2d: {
      const auto& a = node.attr<ConvTranspose2dAttrs>();
      const Tensor& w = constant_input(node, 1, "weight");
      gen::ConvTranspose2dSpec spec;
      spec.input_shape = g_.tensor(node.inputs[0]).shape;
      spec.out_channels = w.shape[1];
      spec.kernel = {static_cast<int>(w.shape[2]), static_cast<int>(w.shape[3])};
      spec.stride = a.stride;
      spec.pad = a.pad;
      spec.has_bias = node.op_operand_count() == 3;
      spec.epilogue = epilogue(node);
      args.push_back(ref(node.inputs[0]));
      args.push_back(packed(gen::pack_conv_transpose2d_weights(spec, w.data->data())));
      if (spec.has_bias) args.push_back(ref(node.inputs[2]));
      epilogue_args(node, args);
      args.push_back(ref(out));
      // Every input value times every tap and output channel (the cropped rows included).
      const double macs = static_cast<double>(num_elements(spec.input_shape) * w.shape[1] * w.shape[2] * w.shape[3]);
      add_node_call(node, std::move(args), 2 * macs + epilogue_flops,
               [spec](const Halide::Target& t) { return gen::conv_transpose2d(spec, t); });
      return;
    }
    case OpKind::Linear: {
      const Tensor& w = constant_input(node, 1, "weight");
      const Shape& x = g_.tensor(node.inputs[0]).shape;
      gen::LinearSpec spec;
      spec.batch = x[0];
      spec.in_features = w.shape[1];
      spec.out_features = w.shape[0];
      spec.has_bias = node.op_operand_count() == 3;
      spec.epilogue = epilogue(node);
      args.push_back(ref(node.inputs[0], {spec.batch, spec.in_features}));  // linear flattens its input
      args.push_back(packed(gen::pack_linear_weights(spec, w.data->data())));
      if (spec.has_bias) args.push_back(ref(node.inputs[2]));
      epilogue_args(node, args);
      args.push_back(ref(out));
      add_node_call(node, std::move(args), 2 * out_elements * static_cast<double>(spec.in_features) + epilogue_flops,
               [spec](const Halide::Target& t) { return gen::linear(spec, t); });
      return;
    }
    case OpKind::MaxPool2d:
    case OpKind::AvgPool2d:
    case OpKind::AdaptiveAvgPool2d:
    case OpKind::GlobalAvgPool: {
      const gen::Pool2dSpec spec = pool2d_spec(g_, node);
      const double window = spec.kind == gen::Pool2dSpec::Kind::kAdaptiveAverage
                                ? static_cast<double>(num_elements(spec.input_shape)) / out_elements
                                : spec.kernel[0] * spec.kernel[1];
      args.push_back(ref(node.inputs[0]));
      epilogue_args(node, args);
      args.push_back(ref(out));
      add_node_call(node, std::move(args), out_elements * window + epilogue_flops,
               [spec](const Halide::Target& t) { return gen::pool2d(spec, t); });
      return;
    }
    case OpKind::Concat: {
      if (lower_concat_in_place(node)) return;
      gen::ConcatSpec spec;
      spec.axis = node.attr<AxisAttrs>().axis;
      for (size_t i = 0; i < node.op_operand_count(); ++i) {
        spec.input_shapes.push_back(g_.tensor(node.inputs[i]).shape);
        args.push_back(ref(node.inputs[i]));
      }
      spec.epilogue = epilogue(node);
      epilogue_args(node, args);
      args.push_back(ref(out));
      add_node_call(node, std::move(args), epilogue_flops,
               [spec](const Halide::Target& t) { return gen::concat(spec, t); });
      return;
    }
    case OpKind::Softmax: {
      gen::SoftmaxSpec spec;
      spec.shape = out_shape;
      spec.axis = node.attr<AxisAttrs>().axis;
      spec.epilogue = epilogue(node);
      args.push_back(ref(node.inputs[0]));
      epilogue_args(node, args);
      args.push_back(ref(out));
      add_node_call(node, std::move(args), 4 * out_elements + epilogue_flops,
               [spec](const Halide::Target& t) { return gen::softmax(spec, t); });
      return;
    }
    case OpKind::Pad: {
      gen::PadSpec spec;
      spec.input_shape = g_.tensor(node.inputs[0]).shape;
      spec.pads = node.attr<PadAttrs>().pads;
      spec.value = node.attr<PadAttrs>().value;
      spec.epilogue = epilogue(node);
      args.push_back(ref(node.inputs[0]));
      epilogue_args(node, args);
      args.push_back(ref(out));
      add_node_call(node, std::move(args), epilogue_flops,
               [spec](const Halide::Target& t) { return gen::pad(spec, t); });
      return;
    }
    case OpKind::Transpose: {
      gen::TransposeSpec spec;
      spec.input_shape = g_.tensor(node.inputs[0]).shape;
      spec.perm = node.attr<TransposeAttrs>().perm;
      spec.epilogue = epilogue(node);
      args.push_back(ref(node.inputs[0]));
      epilogue_args(node, args);
      args.push_back(ref(out));
      add_node_call(node, std::move(args), epilogue_flops,
               [spec](const Halide::Target& t) { return gen::transpose(spec, t); });
      return;
    }
    case OpKind::ResizeBilinear:
    case OpKind::ResizeNearest: {
      const auto& a = node.attr<ResizeAttrs>();
      gen::ResizeSpec spec;
      spec.kind = node.op == OpKind::ResizeBilinear ? gen::ResizeSpec::Kind::kBilinear : gen::ResizeSpec::Kind::kNearest;
      spec.input_shape = g_.tensor(node.inputs[0]).shape;
      spec.size = {a.size[0], a.size[1]};
      spec.align_corners = a.align_corners;
      spec.half_pixel_centers = a.half_pixel_centers;
      spec.epilogue = epilogue(node);
      args.push_back(ref(node.inputs[0]));
      epilogue_args(node, args);
      args.push_back(ref(out));
      // Bilinear: 3 multiply-adds per output (rows blended once per output row).
      const double per_output = node.op == OpKind::ResizeBilinear ? 6 : 0;
      add_node_call(node, std::move(args), per_output * out_elements + epilogue_flops,
               [spec](const Halide::Target& t) { return gen::resize(spec, t); });
      return;
    }
    case OpKind::DepthToSpace: {
      const gen::DepthToSpaceSpec spec{g_.tensor(node.inputs[0]).shape, node.attr<DepthToSpaceAttrs>().block,
                                       epilogue(node)};
      args.push_back(ref(node.inputs[0]));
      epilogue_args(node, args);
      args.push_back(ref(out));
      add_node_call(node, std::move(args), epilogue_flops,
               [spec](const Halide::Target& t) { return gen::depth_to_space(spec, t); });
      return;
    }
    default: break;
  }
  AOTC_CHECK(false, "no lowering for op ", op_name(node.op));
}

}  // namespace

int64_t halide_scratch_bytes(const GroupPlan& groups, size_t step) {
  const auto it = groups.groups.find(step);
  return it == groups.groups.end() ? 0 : it->second.run.scratch_bytes;
}

MemoryPlan plan_halide_memory(const Graph& g, const GroupPlan& groups) {
  return plan_memory(g, 64, [&groups](const Graph& graph, const Node& node) {
    return halide_scratch_bytes(groups, static_cast<size_t>(&node - graph.nodes.data()));
  });
}

LoweredModel lower_to_halide(const Graph& g, const MemoryPlan& plan, const GroupPlan& groups) {
  return Lowering(g, plan, groups).run();
}

}  // namespace aotc
