// Builds a GPU library (cuda_package.h). All files are made in the work
// directory and moved into place only when all succeeded.
#include "package/cuda_package.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <filesystem>
#include <sstream>

#include "package/embedded_cuda_runtime.h"
#include "package/package_files.h"
#include "package/report.h"
#include "support/error.h"
#include "support/names.h"

#ifndef AOTC_NVCC
#error "AOTC_NVCC must name nvcc (empty when CMake found none)"
#endif
#ifndef AOTC_HALIDE_INCLUDE_DIR
#error "AOTC_HALIDE_INCLUDE_DIR must name the directory of HalideRuntimeCuda.h"
#endif
#ifndef AOTC_CUDART_STATIC
#error "AOTC_CUDART_STATIC must name libcudart_static.a (empty when CMake found none)"
#endif

namespace aotc {
namespace {

namespace fs = std::filesystem;

std::string cuda_report_json(const CudaStubModel& model, const CompiledObjects& halide, const std::string& target,
                             const std::string& producer, int64_t library_bytes, double compile_seconds) {
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
      {"measured_groups", t.measured},
      {"note", "µs of one run summed over those groups (measured where the tuning cache has both backends, else "
               "predicted); the other layers run the same in every variant"},
      {"hybrid_us", t.hybrid_us},
      {"all_halide_us", t.all_halide_us},
      {"all_cudnn_us", t.all_cudnn_us}};
  nlohmann::ordered_json inputs = nlohmann::ordered_json::array(), outputs = nlohmann::ordered_json::array();
  for (const TensorInfo& t : model.inputs) inputs.push_back({{"name", t.name}, {"shape", t.shape}});
  for (const TensorInfo& t : model.outputs) outputs.push_back({{"name", t.name}, {"shape", t.shape}});
  const nlohmann::ordered_json report = {{"model", model.name},
                                         {"producer", producer},
                                         {"target", target},
                                         {"inputs", inputs},
                                         {"outputs", outputs},
                                         {"layers", layers},
                                         {"backend_plan", plan},
                                         {"totals",
                                          {{"flops", flops},
                                           {"device_arena_bytes", model.device_arena_bytes},
                                           {"activation_bytes", model.activation_bytes},
                                           {"io_staging_bytes", model.io_bytes},
                                           {"weights_bytes", model.weights.size()},
                                           {"library_bytes", library_bytes},
                                           {"compile_seconds", compile_seconds}}}};
  return report.dump(2) + "\n";
}

}  // namespace

PackageResult write_cuda_library(const CudaStubModel& model, const CompiledObjects& halide,
                                 const CudaPackageOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  if (std::string(AOTC_NVCC).empty() || std::string(AOTC_CUDART_STATIC).empty())
    fail(ExitCode::kUnsupported, "--target ", options.target,
         ": this aotc was built without the CUDA toolkit (nvcc and libcudart_static.a under /usr/local/cuda)");
  const std::string id = c_identifier(model.name);
  const fs::path work = options.work_dir;
  fs::create_directories(work / "aotc");
  fs::copy_file(options.sdk_header, work / "aotc" / "aotc.h", fs::copy_options::overwrite_existing);
  write_text(work / (model.name + ".h"), cuda_model_header(model, options.producer));
  write_text(work / "aotc_cuda_runtime.cuh", kCudaRuntimeHeader);
  const fs::path stubs = work / (model.name + "_stubs.cu");
  write_text(stubs, model.source);

  const std::string sm = std::to_string(options.cuda_capability);
  run_tool({AOTC_NVCC, "-std=c++17", "-O3", "-Xcompiler", "-fPIC", "-gencode",
            "arch=compute_" + sm + ",code=[sm_" + sm + ",compute_" + sm + "]", "-I", work.string(), "-I",
            AOTC_HALIDE_INCLUDE_DIR, "-c", stubs.string(), "-o", (work / "stubs.o").string()},
           "compiling the CUDA stubs with nvcc");
  write_text(work / "weights.bin", std::string(model.weights.begin(), model.weights.end()));
  write_text(work / "weights.S", weights_assembly("aotc_" + id + "_weights", (work / "weights.bin").string()));
  run_tool({"c++", "-c", (work / "weights.S").string(), "-o", (work / "weights.o").string()}, "assembling the weights");

  // One archive with the static CUDA runtime's members in it, so that apps link
  // the library alone (cudart itself loads the driver when first used).
  const fs::path library = work / ("lib" + model.name + ".a");
  std::string script = "CREATE " + library.string() + "\nADDMOD " + (work / "stubs.o").string() + "\nADDMOD " +
                       (work / "weights.o").string() + "\n";
  for (const std::string& object : halide.objects) script += "ADDMOD " + object + "\n";
  write_text(work / "archive.mri", script + "ADDLIB " + AOTC_CUDART_STATIC + "\nSAVE\nEND\n");
  run_tool({"sh", "-c", "ar -M < '" + (work / "archive.mri").string() + "'"}, "archiving the library");

  const int64_t library_bytes = static_cast<int64_t>(fs::file_size(library));
  const double seconds =
      options.compile_seconds_so_far + std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  write_text(work / (model.name + ".report.json"),
             cuda_report_json(model, halide, options.target, options.producer, library_bytes, seconds));

  PackageResult result = move_into_place(work, options.out_dir, model.name, library, {stubs});
  result.library_bytes = library_bytes;
  std::ostringstream summary;
  const auto on_halide = std::count_if(model.layers.begin(), model.layers.end(),
                                       [](const CudaStubLayer& l) { return l.backend == GpuBackend::kHalideCuda; });
  summary << "aotc: " << model.layers.size() << " layers on the GPU (" << on_halide
          << " Halide CUDA kernels, the rest CUDA stubs over cuDNN), device arena "
          << model.device_arena_bytes << " bytes (activations " << model.activation_bytes << ", weights "
          << model.weights.size() << "), library " << library_bytes << " bytes\n";
  const GpuPlanTotals& t = model.totals;
  if (t.groups > 0)
    summary << "aotc: backend plan over the " << t.groups << " groups with both backends (" << t.measured
            << " measured, the rest predicted): hybrid " << t.hybrid_us << " us, all Halide " << t.all_halide_us
            << " us, all cuDNN " << t.all_cudnn_us << " us\n";
  result.summary = summary.str();
  return result;
}

}  // namespace aotc
