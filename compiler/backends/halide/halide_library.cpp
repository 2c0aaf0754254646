// Builds a CPU library's parts (halide_library.h): the kernels compiled by
// Halide, and the generated runner, which the packager compiles with the
// target's C++ compiler.
#include "backends/halide/halide_library.h"

#include <memory>

#include "backends/halide/group_plan.h"
#include "package/embedded_runtime.h"
#include "package/embedded_runtime_source.h"
#include "package/embedded_weights.h"
#include "package/weights_file.h"

#ifndef AOTC_HALIDE_INCLUDE_DIR
#error "AOTC_HALIDE_INCLUDE_DIR must name the directory of HalideRuntime.h"
#endif

namespace aotc {

LoweredModel lower_halide_library(const Graph& g, const BackendOptions& options) {
  require_float_graph(g, true);
  const GroupPlan groups = plan_groups(g, options.lowering);
  return lower_to_halide(g, plan_halide_memory(g, groups), groups, options.target);
}

LibraryParts build_halide_library(const Graph& g, const BackendOptions& options) {
  auto model = std::make_shared<LoweredModel>(lower_halide_library(g, options));
  if (options.progress)
    *options.progress << "aotc: compiling " << model->kernels.size() << " kernels for " << model->calls.size()
                      << " layers of " << g.name << " (" << options.target << ", " << options.jobs << " jobs)\n";
  auto objects = std::make_shared<const CompiledObjects>(
      compile_halide_objects(model->kernels, options.target, options.work_dir, options.jobs, options.kernel_cache,
                             options.progress));

  LibraryParts parts;
  parts.name = model->name;
  parts.header = model_header(*model, options.producer, options.external_weights);
  parts.objects = library_objects(*objects);
  const std::vector<std::string> compile = {options.cxx,         "-std=c++17", "-O2", "-fPIC", "-fno-exceptions",
                                            "-fno-rtti",         "-I",         AOTC_HALIDE_INCLUDE_DIR};
  parts.sources.push_back({.file = "runner.cpp",
                           .text = runner_source(*model, options.external_weights),
                           .compile = compile,
                           .what = "compiling the generated runner"});
  // The same text and command for every model of a target: a compiler cache keeps its object.
  parts.sources.push_back({.file = "aotc_runtime.cpp",
                           .text = kRuntimeSource,
                           .compile = compile,
                           .what = "compiling the runtime",
                           .role = ObjectRole::kRuntime});
  parts.includes.emplace_back("aotc_runtime.h", kRuntimeHeader);
  parts.includes.emplace_back("aotc_weights.h", kWeightsHeader);
  const ReportContext about{options.producer, options.target, static_cast<int64_t>(model->weights.size()),
                            options.external_weights};
  if (options.external_weights) parts.weights_file = weights_file(weights_identity(*model), model->weights);
  else parts.weights = std::move(model->weights);
  parts.report = [model, objects, about](const PackageFacts& facts) {
    return halide_report_json(*model, *objects, about, facts);
  };
  parts.summary = [model, objects, about](const PackageFacts& facts) {
    return halide_report_summary(*model, *objects, about, facts);
  };
  return parts;
}

}  // namespace aotc
