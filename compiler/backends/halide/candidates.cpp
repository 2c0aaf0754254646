#include "backends/halide/candidates.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "backends/halide/kernel_cache.h"
#include "ir/printer.h"
#include "support/error.h"
#include "tune/tuning_cache.h"

namespace aotc {
namespace {

gen::PostOpSpec post_op_spec(const Graph& g, const Node& node, const PostOp& p) {
  gen::PostOpSpec spec;
  switch (p.kind) {
    case PostOpKind::kRelu: spec.kind = gen::PostOpSpec::Kind::kRelu; break;
    case PostOpKind::kClamp: spec.kind = gen::PostOpSpec::Kind::kClamp; break;
    case PostOpKind::kHardSwish: spec.kind = gen::PostOpSpec::Kind::kHardSwish; break;
    case PostOpKind::kSigmoid: spec.kind = gen::PostOpSpec::Kind::kSigmoid; break;
    case PostOpKind::kTanh: spec.kind = gen::PostOpSpec::Kind::kTanh; break;
    case PostOpKind::kAffine: spec.kind = gen::PostOpSpec::Kind::kAffine; break;
    case PostOpKind::kAdd: spec.kind = gen::PostOpSpec::Kind::kAdd; break;
    case PostOpKind::kMul: spec.kind = gen::PostOpSpec::Kind::kMul; break;
    case PostOpKind::kPRelu: spec.kind = gen::PostOpSpec::Kind::kPRelu; break;
    case PostOpKind::kElu: spec.kind = gen::PostOpSpec::Kind::kElu; break;
    case PostOpKind::kSoftplus: spec.kind = gen::PostOpSpec::Kind::kSoftplus; break;
  }
  spec.min = p.min;
  spec.max = p.max;
  spec.alpha = p.alpha;
  if (p.input >= 0) spec.operand_shape = g.tensor(node.inputs[static_cast<size_t>(p.input)]).shape;
  return spec;
}

// Whether every stage of the kernel's output loops over GPU blocks (an undefined
// pure stage, as concat's, computes nothing): a generator without a GPU schedule
// compiles for a CUDA target too, as host code that would dereference the device
// pointers it is given.
bool runs_on_gpu(const Halide::Func& output) {
  auto on_gpu = [](const Halide::Internal::Definition& stage) {
    for (const Halide::Internal::Dim& d : stage.schedule().dims())
      if (d.for_type == Halide::Internal::ForType::GPUBlock) return true;
    return false;
  };
  const Halide::Internal::Definition& pure = output.function().definition();
  const auto* value = pure.values().at(0).as<Halide::Internal::Call>();
  const bool undefined = value != nullptr && value->is_intrinsic(Halide::Internal::Call::undef);
  if (!undefined && !on_gpu(pure)) return false;
  for (const Halide::Internal::Definition& update : output.function().updates())
    if (!on_gpu(update)) return false;
  return true;
}

}  // namespace

std::string shape_text(const Shape& s) {
  std::string t;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i > 0) t += 'x';
    t += std::to_string(s[i]);
  }
  return t.empty() ? "scalar" : t;
}

Halide::Type halide_type(DType dtype) {
  switch (dtype) {
    case DType::F32: break;
    case DType::I8: return Halide::Int(8);
    case DType::U8: return Halide::UInt(8);
    case DType::I32: return Halide::Int(32);
  }
  return Halide::Float(32);
}

std::string node_description(const Graph& g, const Node& node) {
  std::ostringstream os;
  // An integer tensor's type and quantization are part of what a kernel computes; a float
  // tensor's shape is all (so float descriptions, the caches' keys, stay as they were).
  const auto tensor_text = [&g](TensorId id) {
    const Tensor& t = g.tensor(id);
    std::string text = shape_text(t.shape);
    if (is_integer(t.dtype)) text.append(" ").append(type_text(t));
    return text;
  };
  os << op_signature(node);
  for (size_t i = 0; i < node.inputs.size(); ++i) os << (i ? ", " : " (") << tensor_text(node.inputs[i]);
  os << ") -> " << tensor_text(node.outputs[0]) << " " << print_attrs(node.attrs);
  for (const PostOp& p : node.epilogue)
    if (p.kind == PostOpKind::kClamp) os << " clamp[" << p.min << "," << p.max << "]";
    else if (p.kind == PostOpKind::kElu) os << " elu[" << p.alpha << "]";
  return os.str();
}

std::vector<gen::PostOpSpec> epilogue_specs(const Graph& g, const Node& node) {
  std::vector<gen::PostOpSpec> specs;
  for (const PostOp& p : node.epilogue) specs.push_back(post_op_spec(g, node, p));
  return specs;
}

const Tensor& constant_input(const Graph& g, const Node& node, size_t i, const char* what) {
  const Tensor& t = g.tensor(node.inputs[i]);
  if (!t.is_constant())
    fail(ExitCode::kUnsupported, "node '", node.name, "' (", op_name(node.op), "): its ", what,
         " is computed at run time; aotc needs it constant");
  return t;
}

KernelSource halide_kernel_source(const std::string& function, const std::string& description,
                                  std::function<gen::Kernel(const Halide::Target&)> build) {
  KernelSource source;
  source.function = function;
  source.description = description;
  source.compile = [build = std::move(build), function](const std::string& target, const std::string& object,
                                                         const std::string& cache_dir) {
    const Halide::Target t =
        Halide::Target(target).with_feature(Halide::Target::NoRuntime).with_feature(Halide::Target::UserContext);
    gen::Kernel k = build(t);
    AOTC_CHECK(!t.has_gpu_feature() || runs_on_gpu(k.output), function, ": its generator has no GPU schedule");
    std::vector<Halide::Argument> arguments(k.inputs.begin(), k.inputs.end());
    const Halide::Module module = k.output.compile_to_module(arguments, function, gen::kernel_target(t, k));
    return KernelSource::Compiled{k.schedule, compile_kernel_object(module, object, cache_dir)};
  };
  return source;
}

gen::Conv2dSpec conv2d_spec(const Graph& g, const Node& node) {
  const auto& a = node.attr<Conv2dAttrs>();
  const Tensor& w = constant_input(g, node, 1, "weight");
  gen::Conv2dSpec spec;
  spec.input_shape = g.tensor(node.inputs[0]).shape;
  spec.out_channels = w.shape[0];
  spec.kernel = {static_cast<int>(w.shape[2]), static_cast<int>(w.shape[3])};
  spec.stride = a.stride;
  spec.pad = a.pad;
  spec.dilation = a.dilation;
  spec.groups = a.groups;
  spec.has_bias = node.op_operand_count() == 3;
  spec.epilogue = epilogue_specs(g, node);
  return spec;
}

gen::Pool2dSpec pool2d_spec(const Graph& g, const Node& node) {
  gen::Pool2dSpec spec;
  spec.input_shape = g.tensor(node.inputs[0]).shape;
  spec.output_shape = g.tensor(node.outputs[0]).shape;
  spec.epilogue = epilogue_specs(g, node);
  spec.element_type = halide_type(g.tensor(node.inputs[0]).dtype);
  if (node.op == OpKind::MaxPool2d || node.op == OpKind::AvgPool2d) {
    const auto& a = node.attr<Pool2dAttrs>();
    spec.kind = node.op == OpKind::MaxPool2d ? gen::Pool2dSpec::Kind::kMax : gen::Pool2dSpec::Kind::kAverage;
    spec.kernel = a.kernel;
    spec.stride = a.stride;
    spec.pad = a.pad;
    spec.dilation = a.dilation;
    spec.count_include_pad = a.count_include_pad;
  } else {
    spec.kind = gen::Pool2dSpec::Kind::kAdaptiveAverage;
  }
  return spec;
}

Choice choose(std::vector<Candidate> candidates, const std::string& key, const TuningCache* cache) {
  AOTC_CHECK(!candidates.empty(), "no candidate for ", key);
  Choice choice;
  choice.candidates = std::move(candidates);
  const size_t n = choice.candidates.size();
  choice.measured_us.assign(n, std::nan(""));
  while (choice.chosen < n && !choice.candidates[choice.chosen].preferred_by_rules) ++choice.chosen;
  AOTC_CHECK(choice.chosen < n, "no candidate the rules prefer for ", key);
  choice.by_rules = choice.chosen;
  choice.by = n == 1 ? "only candidate" : "rules";
  if (n == 1) return choice;
  bool all_timed = cache != nullptr;
  for (size_t i = 0; i < n && cache != nullptr; ++i) {
    if (const double* us = cache->time(key, choice.candidates[i].name)) choice.measured_us[i] = *us;
    else all_timed = false;
  }
  std::vector<double> predicted;
  for (const Candidate& c : choice.candidates) predicted.push_back(c.predicted_us);
  // The cost model chooses among the candidates it predicts, when it predicts
  // the rules' choice and one more.
  const bool model_decides = std::isfinite(predicted[choice.by_rules]) &&
                             std::count_if(predicted.begin(), predicted.end(), [](double us) { return std::isfinite(us); }) > 1;
  if (!all_timed && !model_decides) return choice;
  const std::vector<double>& costs = all_timed ? choice.measured_us : predicted;
  for (size_t i = 0; i < n; ++i)
    if (costs[i] < costs[choice.chosen]) choice.chosen = i;  // false for NaN
  choice.by = all_timed ? "tuning cache" : "cost model";
  return choice;
}

}  // namespace aotc
