#include "backends/backend.h"

#include <set>

#include "backends/cuda_stubs/cuda_library.h"
#include "backends/halide/halide_library.h"
#include "support/error.h"

namespace aotc {

void require_float_graph(const Graph& g, bool integer_kernels) {
  std::vector<std::string> integer;
  for (const Node& node : g.nodes) {
    const bool quantized = is_integer(g.tensor(node.outputs[0]).dtype) || node.op == OpKind::Dequantize;
    if (quantized && !integer_kernels)
      integer.push_back(detail::concat("node '", node.name, "' (", op_name(node.op), ")"));
  }
  // A library's header states one scale and zero point per integer input and output.
  for (const std::vector<TensorId>* ends : {&g.inputs, &g.outputs})
    for (TensorId id : *ends)
      if (const Tensor& t = g.tensor(id); is_integer(t.dtype) && (!integer_kernels || t.quant->axis >= 0))
        integer.push_back(detail::concat(ends == &g.inputs ? "input '" : "output '", t.name, "' (",
                                         dtype_name(t.dtype), t.quant->axis >= 0 ? " per channel" : "", ")"));
  if (integer.empty()) return;
  std::string listed;
  for (size_t i = 0; i < integer.size() && i < 8; ++i) listed += (i ? ", " : "") + integer[i];
  if (integer.size() > 8) listed += detail::concat(" and ", integer.size() - 8, " more");
  fail(ExitCode::kUnsupported,
       integer_kernels ? "a library's integer inputs and outputs are quantized per tensor (--emit=run evaluates "
                         "others): "
                       : "no kernels for integer tensors on this target (--emit=run evaluates them): ",
       listed);
}

std::vector<LibraryObject> library_objects(const CompiledObjects& objects) {
  std::vector<LibraryObject> members;
  for (size_t i = 0; i < objects.objects.size(); ++i)
    members.push_back({objects.objects[i], i + 1 == objects.objects.size() ? ObjectRole::kRuntime : ObjectRole::kKernel});
  return members;
}

LibraryParts build_library_parts(const Graph& g, const BackendOptions& options) {
  if (cuda_capability(options.target) > 0) return build_cuda_library(g, options);
  return build_halide_library(g, options);
}

LoweredCounts count_lowered(const Graph& g, const BackendOptions& options) {
  if (cuda_capability(options.target) > 0) {
    const CudaStubModel model = lower_cuda_library(g, options);
    return {model.layers.size(), model.halide_kernels.size()};
  }
  const LoweredModel model = lower_halide_library(g, options);
  std::set<std::string> layers;  // a Winograd convolution's three calls are one layer's
  for (const KernelCall& call : model.calls) layers.insert(call.layer);
  return {layers.size(), model.kernels.size()};
}

}  // namespace aotc
