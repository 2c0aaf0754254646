// <name>.report.json and the human summary aotc prints: per layer the fused ops,
// kernel, schedule, FLOPs and bytes; totals for weights, arena, library, time.
#include "backends/halide/halide_library.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "ir/float_islands.h"
#include "package/report.h"

namespace aotc {

std::string halide_report_json(const LoweredModel& model, const CompiledObjects& objects, const ReportContext& about,
                               const PackageFacts& facts) {
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  for (const KernelCall& call : model.calls) {
    const auto k = static_cast<size_t>(call.kernel);
    layers.push_back({{"layer", call.layer},
                      {"ops", call.ops},
                      {"kernel", model.kernels[k].function},
                      {"schedule", k < objects.schedules.size() ? objects.schedules[k] : ""},
                      {"flops", call.flops},
                      {"bytes", call.bytes}});
  }
  nlohmann::ordered_json kernels = nlohmann::ordered_json::array();
  for (size_t k = 0; k < model.kernels.size(); ++k) {
    kernels.push_back({{"function", model.kernels[k].function},
                       {"description", model.kernels[k].description},
                       {"schedule", k < objects.schedules.size() ? objects.schedules[k] : ""},
                       {"compile_seconds", k < objects.kernel_seconds.size() ? objects.kernel_seconds[k] : 0.0}});
  }
  nlohmann::ordered_json choices = nlohmann::ordered_json::array();
  for (const ChoiceRecord& c : model.choices) {
    choices.push_back({{"node", c.node},
                       {"kernel", c.description},
                       {"chosen", c.chosen},
                       {"by", c.by},
                       {"rules", c.rules},
                       {"fastest_alone", c.fastest_alone},
                       {"conversions", c.conversions},
                       {"candidates", candidates_json(c, "name")}});
  }
  const PlanTotals& p = model.plan;
  const nlohmann::ordered_json plan = {{"groups", p.groups},
                                       {"costed_groups", p.costed},
                                       {"chosen_us", p.chosen_us},
                                       {"all_direct_us", p.all_direct_us},
                                       {"fastest_alone_us", p.fastest_alone_us}};
  double flops = 0;
  for (const KernelCall& call : model.calls) flops += call.flops;
  nlohmann::ordered_json report = {
      {"model", model.name},
      {"producer", about.producer},
      {"target", about.target},
      {"inputs", tensors_json(model.inputs)},
      {"outputs", tensors_json(model.outputs)},
      {"totals",
       {{"layers", model.calls.size()},
        {"kernels", model.kernels.size()},
        {"flops", flops},
        {"weight_bytes", about.weights_bytes},
        {"arena_bytes", model.arena_bytes},
        {"arena_lower_bound_bytes", model.lower_bound_bytes},
        {"library_bytes", facts.library_bytes},
        {"compile_seconds", facts.compile_seconds},
        {"kernels_from_cache", objects.kernels_from_cache}}},
      {"footprint",
       {{"code_bytes",
         {{"kernels", facts.kernel_code_bytes},
          {"runner", facts.runner_code_bytes},
          {"halide_runtime", facts.runtime_code_bytes},
          {"total", facts.kernel_code_bytes + facts.runner_code_bytes + facts.runtime_code_bytes}}},
        {"weights_bytes", about.weights_bytes},
        {"weights", about.external_weights ? "external" : "embedded"},
        {"arena_bytes", model.arena_bytes}}},
      {"layers", layers},
      {"kernels", kernels},
      {"choices", choices},
      {"plan", plan},
      {"float_islands", model.float_islands},
  };
  return report.dump(2) + "\n";
}

namespace {

// " (3 of 9 kernels from the kernel cache)" when one was used.
std::string cache_note(const CompiledObjects& objects) {
  if (!objects.cache_used) return "";
  return " (" + std::to_string(objects.kernels_from_cache) + " of " + std::to_string(objects.kernel_seconds.size()) +
         " kernels from the kernel cache)";
}

}  // namespace

std::string halide_report_summary(const LoweredModel& model, const CompiledObjects& objects,
                                  const ReportContext& about, const PackageFacts& facts) {
  std::ostringstream os;
  char line[512];
  std::snprintf(line, sizeof line, "%-36s %-26s %-24s %10s %10s  %s\n", "layer", "ops", "kernel", "MFLOP", "KiB",
                "schedule");
  os << line;
  double flops = 0;
  for (const KernelCall& call : model.calls) {
    const auto k = static_cast<size_t>(call.kernel);
    flops += call.flops;
    std::snprintf(line, sizeof line, "%-36.36s %-26.26s %-24.24s %10.1f %10.1f  %s\n", call.layer.c_str(),
                  call.ops.c_str(), model.kernels[k].function.c_str(), call.flops / 1e6,
                  static_cast<double>(call.bytes) / 1024.0,
                  k < objects.schedules.size() ? objects.schedules[k].c_str() : "");
    os << line;
  }
  std::snprintf(line, sizeof line,
                "%zu layers, %zu distinct kernels, %.2f GFLOP; weights %.1f MiB, arena %.1f MiB "
                "(liveness lower bound %.1f MiB), library %.1f MiB; compiled in %.1f s%s for %s\n",
                model.calls.size(), model.kernels.size(), flops / 1e9,
                static_cast<double>(about.weights_bytes) / 1048576.0,
                static_cast<double>(model.arena_bytes) / 1048576.0,
                static_cast<double>(model.lower_bound_bytes) / 1048576.0,
                static_cast<double>(facts.library_bytes) / 1048576.0, facts.compile_seconds,
                cache_note(objects).c_str(), about.target.c_str());
  os << line;
  std::snprintf(line, sizeof line,
                "footprint: code %.1f KiB (kernels %.1f, runner %.1f, Halide runtime %.1f), weights %.1f KiB (%s), "
                "arena %.1f KiB\n",
                static_cast<double>(facts.kernel_code_bytes + facts.runner_code_bytes + facts.runtime_code_bytes) / 1024,
                static_cast<double>(facts.kernel_code_bytes) / 1024, static_cast<double>(facts.runner_code_bytes) / 1024,
                static_cast<double>(facts.runtime_code_bytes) / 1024, static_cast<double>(about.weights_bytes) / 1024,
                about.external_weights ? "external" : "embedded", static_cast<double>(model.arena_bytes) / 1024);
  os << line;
  os << float_islands_text(model.float_islands);
  if (!model.choices.empty()) {
    std::map<std::string, int> chosen, by;
    for (const ChoiceRecord& c : model.choices) {
      ++chosen[c.chosen];
      ++by[c.by];
    }
    os << "implementations:";
    for (const auto& [name, n] : chosen) os << " " << name << " " << n << ",";
    os << " chosen by";
    const char* separator = " ";
    for (const auto& [reason, n] : by) {
      os << separator << reason << " " << n;
      separator = ", ";
    }
    os << "\n";
    const PlanTotals& p = model.plan;
    if (p.costed > 0) {
      std::snprintf(line, sizeof line,
                    "plan over the chain (%d of %d groups timed or predicted, one thread): %.0f us with its layout "
                    "conversions; all direct NCHW %.0f us; each group's fastest alone %.0f us, conversions ignored\n",
                    p.costed, p.groups, p.chosen_us, p.all_direct_us, p.fastest_alone_us);
      os << line;
    }
  }
  return os.str();
}

}  // namespace aotc
