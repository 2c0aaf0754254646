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
#include "backends/halide/node_kernel.h"
#include "generators/elementwise.h"
#include "ir/float_islands.h"
#include "ir/printer.h"
#include "support/names.h"
#include "support/error.h"

namespace aotc {
namespace {

constexpr int64_t kBlobAlignment = 64;

// Builds the LoweredModel node by node.
class Lowering {
 public:
  Lowering(const Graph& g, const MemoryPlan& plan, const GroupPlan& groups, const std::string& target)
      : g_(g), plan_(plan), groups_(groups), target_(target) {
    for (const TensorPlacement& p : plan.placements) placement_[p.tensor] = &p;
    model_.name = g.name;
    model_.arena_bytes = plan.arena_bytes;
    model_.lower_bound_bytes = plan.lower_bound_bytes;
    model_.plan = groups.totals;
    model_.inputs = tensor_infos(g, g.inputs);
    model_.outputs = tensor_infos(g, g.outputs);
    model_.float_islands = float_islands(g);
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
      to.dtype = g_.tensor(id).dtype;
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
    r.dtype = t.dtype;
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

  // Appends `data` as elements of `dtype` (an integer dtype's values are integers in range).
  int64_t append_blob(const std::vector<float>& data, DType dtype) {
    std::vector<uint8_t>& blob = model_.weights;
    blob.resize(static_cast<size_t>((static_cast<int64_t>(blob.size()) + kBlobAlignment - 1) / kBlobAlignment *
                                    kBlobAlignment));
    const auto offset = static_cast<int64_t>(blob.size());
    const auto append = [&blob](const auto& values) {
      const auto* bytes = reinterpret_cast<const uint8_t*>(values.data());
      blob.insert(blob.end(), bytes, bytes + values.size() * sizeof(values[0]));
    };
    switch (dtype) {
      case DType::F32: append(data); break;
      case DType::I8: append(std::vector<int8_t>(data.begin(), data.end())); break;
      case DType::U8: append(std::vector<uint8_t>(data.begin(), data.end())); break;
      case DType::I32: append(std::vector<int32_t>(data.begin(), data.end())); break;
    }
    return offset;
  }

  // Row-major constants are stored once, however many calls read them.
  int64_t constant_offset(TensorId id) {
    auto it = constant_offsets_.find(id);
    if (it != constant_offsets_.end()) return it->second;
    const int64_t offset = append_blob(*g_.tensor(id).data, g_.tensor(id).dtype);
    constant_offsets_[id] = offset;
    return offset;
  }

  BufferRef packed(const gen::PackedWeights& w) {
    BufferRef r;
    r.source = BufferRef::Source::kWeights;
    r.dtype = w.type == Halide::Int(8) ? DType::I8 : w.type == Halide::Int(32) ? DType::I32 : DType::F32;
    AOTC_CHECK(w.type == halide_type(r.dtype), "packed weights of type ", w.type);
    r.offset = append_blob(w.data, r.dtype);
    r.shape = w.shape;
    return r;
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
    model_.kernels.push_back(halide_kernel_source(kernel_symbol(suffix, key, target_), key, build));
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
    for (const BufferRef& a : call.args) call.bytes += num_elements(a.shape) * dtype_bytes(a.dtype);
    model_.calls.push_back(std::move(call));
  }

  // A call of `node`'s kernel (shared with every node of equal description).
  template <typename Build>
  void add_node_call(const Node& node, std::vector<BufferRef> args, double flops, Build build) {
    const int kernel = kernel_for(node_description(g_, node), op_name(node.op), build);
    add_call(g_.tensor(node.outputs[0]).name, op_signature(node), kernel, std::move(args), flops);
  }

  void add_copy(const std::string& layer, BufferRef from, BufferRef to) {
    const int kernel = kernel_for(copy_kernel_key(to.shape, true, to.dtype), "copy", copy_kernel(to.shape, true, to.dtype));
    add_call(layer, "copy", kernel, {from, to}, 0);
  }

  bool aliased(const Node& node) const {
    auto it = placement_.find(node.outputs[0]);
    return it != placement_.end() && it->second->shares_with == node.inputs[0];
  }

  void lower_node(const Node& node);

  // A kernel step of `layer` as a call over the memory plan: its tensors where
  // they live, its packed weights from `packed_weights` (already in the blob), its
  // scratch in the node's `scratch`.
  void add_step(const std::string& layer, const KernelStep& step, const std::vector<BufferRef>& packed_weights,
                const ScratchPlacement* scratch) {
    std::vector<BufferRef> args;
    for (const StepArg& a : step.args) {
      switch (a.kind) {
        case StepArg::Kind::kTensor: args.push_back(ref(a.tensor, a.shape)); break;
        case StepArg::Kind::kPacked: args.push_back(packed_weights[static_cast<size_t>(a.packed)]); break;
        case StepArg::Kind::kScratch: {
          BufferRef r;
          r.offset = scratch->offset + a.offset;
          r.shape = a.shape;
          r.dtype = a.dtype;
          args.push_back(r);
          break;
        }
      }
    }
    add_call(layer, step.ops, kernel_for(step.key, step.suffix, step.build), std::move(args), step.flops);
  }

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
    for (const KernelStep& step : c.steps) add_step(layer, step, packed_weights, scratch);
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

  // The node's one kernel (node_kernel.h) as a call over the memory plan.
  void lower_node_kernel(const Node& node) {
    const NodeKernel k = node_kernel(g_, node);
    std::vector<BufferRef> packed_weights;
    for (const auto& pack : k.packed) packed_weights.push_back(packed(pack()));
    add_step(g_.tensor(node.outputs[0]).name, k.step, packed_weights, nullptr);
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
  const std::string target_;  // kernel symbols are for it
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
  if (op_class(node.op) == OpClass::kAlias) {
    lower_alias(node);
  } else if (groups_.groups.count(static_cast<size_t>(step_)) > 0) {  // conv2d, qconv2d with VNNI
    lower_group(node, groups_.groups.at(static_cast<size_t>(step_)));
  } else if (node.op != OpKind::Concat || !lower_concat_in_place(node)) {
    lower_node_kernel(node);
  }
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

LoweredModel lower_to_halide(const Graph& g, const MemoryPlan& plan, const GroupPlan& groups,
                             const std::string& target) {
  return Lowering(g, plan, groups, target).run();
}

}  // namespace aotc
