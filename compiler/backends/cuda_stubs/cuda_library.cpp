// Builds a GPU library's parts (cuda_library.h).
#include "backends/cuda_stubs/cuda_library.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <memory>
#include <sstream>

#include "package/embedded_cuda_runtime.h"
#include "package/embedded_cuda_runtime_source.h"
#include "package/embedded_weights.h"
#include "package/report.h"
#include "support/error.h"
#include "support/names.h"

#ifndef AOTC_NVCC
#error "AOTC_NVCC must name nvcc (empty when CMake found none)"
#endif
#ifndef AOTC_HALIDE_INCLUDE_DIR
#error "AOTC_HALIDE_INCLUDE_DIR must name the directory of HalideRuntimeCuda.h"
#endif
#ifndef AOTC_CUDA_INCLUDE_DIR
#error "AOTC_CUDA_INCLUDE_DIR must name the directory of cuda_runtime.h (empty when CMake found none)"
#endif
#ifndef AOTC_CUDART_STATIC
#error "AOTC_CUDART_STATIC must name libcudart_static.a (empty when CMake found none)"
#endif

namespace aotc {
namespace {

std::string cuda_report_json(const CudaStubModel& model, const CompiledObjects& halide, const std::string& target,
                             const std::string& producer, int64_t weights_bytes, const PackageFacts& facts) {
  std::map<std::string, const ChoiceRecord*> choice_of;
  for (const ChoiceRecord& c : model.choices) choice_of[c.node] = &c;
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  double flops = 0;
  for (const CudaStubLayer& l : model.layers) {
    nlohmann::ordered_json layer = {
        {"layer", l.name}, {"ops", l.ops}, {"backend", gpu_backend_name(l.backend)}, {"call", l.call}, {"flops", l.flops}};
    if (l.halide_kernel >= 0 && static_cast<size_t>(l.halide_kernel) < halide.schedules.size())
      layer["schedule"] = halide.schedules[static_cast<size_t>(l.halide_kernel)];
    if (auto it = choice_of.find(l.name); it != choice_of.end()) {
      layer["choice"] = {
          {"by", it->second->by}, {"key", it->second->description}, {"candidates", candidates_json(*it->second, "backend")}};
    }
    layers.push_back(layer);
    flops += l.flops;
  }
  const GpuPlanTotals& t = model.totals;
  const nlohmann::ordered_json plan = {
      {"groups_with_two_backends", t.groups},
      {"costed_groups", t.costed},
      {"measured_groups", t.measured},
      {"note", "µs of one run summed over the costed groups (measured where the tuning cache has both backends, "
               "else predicted: the cost model covers convolutions and pooling); the other layers run the same in "
               "every variant"},
      {"hybrid_us", t.hybrid_us},
      {"all_halide_us", t.all_halide_us},
      {"all_cudnn_us", t.all_cudnn_us}};
  const nlohmann::ordered_json report = {{"model", model.name},
                                         {"producer", producer},
                                         {"target", target},
                                         {"inputs", tensors_json(model.inputs)},
                                         {"outputs", tensors_json(model.outputs)},
                                         {"layers", layers},
                                         {"backend_plan", plan},
                                         {"totals",
                                          {{"flops", flops},
                                           {"device_arena_bytes", model.device_arena_bytes},
                                           {"activation_bytes", model.activation_bytes},
                                           {"io_staging_bytes", model.io_bytes},
                                           {"weights_bytes", weights_bytes},
                                           {"weights", model.external_weights ? "external" : "embedded"},
                                           {"library_bytes", facts.library_bytes},
                                           {"compile_seconds", facts.compile_seconds}}}};
  return report.dump(2) + "\n";
}

std::string cuda_report_summary(const CudaStubModel& model, int64_t weights_bytes, const PackageFacts& facts) {
  std::ostringstream summary;
  const auto on_halide = std::count_if(model.layers.begin(), model.layers.end(),
                                       [](const CudaStubLayer& l) { return l.backend == GpuBackend::kHalideCuda; });
  summary << "aotc: " << model.layers.size() << " layers on the GPU (" << on_halide
          << " Halide CUDA kernels, the rest CUDA stubs over cuDNN), device arena " << model.device_arena_bytes
          << " bytes (activations " << model.activation_bytes << ", weights " << weights_bytes << "), library "
          << facts.library_bytes << " bytes\n";
  const GpuPlanTotals& t = model.totals;
  if (t.groups > 0)
    summary << "aotc: backend plan over the " << t.costed << " of " << t.groups << " groups with both backends that have times ("
            << t.measured << " measured, the rest predicted): hybrid " << t.hybrid_us << " us, all Halide " << t.all_halide_us
            << " us, all cuDNN " << t.all_cudnn_us << " us\n";
  return summary.str();
}

}  // namespace

CudaStubModel lower_cuda_library(const Graph& g, const BackendOptions& options) {
  require_float_graph(g, false);
  if (std::string(AOTC_NVCC).empty() || std::string(AOTC_CUDART_STATIC).empty())
    fail(ExitCode::kUnsupported, "--target ", options.target,
         ": this aotc was built without the CUDA toolkit (nvcc and libcudart_static.a under /usr/local/cuda)");
  const GpuBackendPlan backends = choose_gpu_backends(
      g, {.mode = options.gpu_backends, .cuda_capability = cuda_capability(options.target), .tuning = options.tuning});
  return lower_to_cuda_stubs(g, plan_cuda_stub_memory(g), backends, options.external_weights, options.target);
}

LibraryParts build_cuda_library(const Graph& g, const BackendOptions& options) {
  auto model = std::make_shared<CudaStubModel>(lower_cuda_library(g, options));
  const int capability = cuda_capability(options.target);
  if (options.progress)
    *options.progress << "aotc: emitting CUDA stubs for " << model->layers.size() << " layers of " << g.name << " ("
                      << options.target << ", sm_" << capability << "), " << model->halide_kernels.size()
                      << " Halide CUDA kernels\n";
  auto halide = std::make_shared<const CompiledObjects>(
      model->halide_kernels.empty() ? CompiledObjects{}
                                    : compile_halide_objects(model->halide_kernels, options.target, options.work_dir,
                                                             options.jobs, options.kernel_cache, options.progress));

  const std::string sm = std::to_string(capability);
  LibraryParts parts;
  parts.name = model->name;
  parts.header = cuda_model_header(*model, options.producer);
  parts.objects = library_objects(*halide);
  // The stubs hold no device code: the host compiler builds them. The runtime has
  // the same text and command for every model of a capability: a compiler cache keeps its object.
  parts.sources.push_back({.file = model->name + "_stubs.cpp",
                           .text = model->source,
                           .compile = {options.cxx, "-std=c++17", "-O2", "-fPIC", "-DAOTC_CUDA_SM=" + sm, "-I",
                                       AOTC_CUDA_INCLUDE_DIR, "-I", AOTC_HALIDE_INCLUDE_DIR},
                           .what = "compiling the CUDA stubs",
                           .shipped = true});
  parts.sources.push_back({.file = "aotc_cuda_runtime.cu",
                           .text = kCudaRuntimeSource,
                           // --generate-code, not its short form -gencode, which ccache 4.7 takes
                           // for -g and then keys on the working directory, a new one per compile.
                           .compile = {AOTC_NVCC, "-std=c++17", "-O3", "-Xcompiler", "-fPIC", "-DAOTC_CUDA_SM=" + sm,
                                       "--generate-code=arch=compute_" + sm + ",code=[sm_" + sm + ",compute_" + sm + "]"},
                           .what = "compiling the CUDA runtime with nvcc",
                           .role = ObjectRole::kRuntime});
  parts.includes.emplace_back("aotc_cuda_runtime.h", kCudaRuntimeHeader);
  if (options.external_weights) parts.includes.emplace_back("aotc_weights.h", kWeightsHeader);
  // The static CUDA runtime's members go into the archive, so that apps link the
  // library alone (cudart itself loads the driver when first used).
  parts.archives.push_back(AOTC_CUDART_STATIC);
  const int64_t weights_bytes = static_cast<int64_t>(model->weights.size());
  if (options.external_weights) parts.weights_file = weights_file(model->weights_identity, model->weights);
  else parts.weights = std::move(model->weights);
  const std::string target = options.target, producer = options.producer;
  parts.report = [model, halide, target, producer, weights_bytes](const PackageFacts& facts) {
    return cuda_report_json(*model, *halide, target, producer, weights_bytes, facts);
  };
  parts.summary = [model, weights_bytes](const PackageFacts& facts) {
    return cuda_report_summary(*model, weights_bytes, facts);
  };
  return parts;
}

}  // namespace aotc
