#include "backends/cuda_stubs/choose_gpu_backends.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "backends/halide/candidates.h"
#include "support/error.h"
#include "tune/tuning_cache.h"

namespace aotc {
namespace {

// A GPU of the target's compute capability, as the cost model sees it: FP32
// FMA peak and memory bandwidth of a typical part of that generation.
struct GpuDevice {
  int capability;
  double flops_per_s;
  double bytes_per_s;
};

// Ascending capability; the last one not above the target's is used.
constexpr GpuDevice kDevices[] = {
    {75, 8.1e12, 320e9},    // T4
    {80, 19.5e12, 1.55e12}, // A100
    {86, 31e12, 600e9},     // A10
    {87, 5.3e12, 204e9},    // Jetson AGX Orin
    {89, 30e12, 300e9},     // L4
    {90, 67e12, 3.35e12},   // H100 SXM
};

// A kernel node of the captured CUDA graph, launched and drained.
constexpr double kLaunchUs = 2.5;
// Fractions of the FP32 peak the kernels reach on a layer's arithmetic
// (estimates, not fits: libraries tuned on a GPU, by aotc --tune or bench/gpu,
// choose by measured times, not by these).
constexpr double kCudnnDenseEfficiency = 0.5;
constexpr double kCudnnGroupedEfficiency = 0.05;  // cuDNN's FP32 grouped and depthwise kernels
constexpr double kHalideDenseEfficiency = 0.15;   // conv2d_gpu's register tile, no shared memory
constexpr double kHalideDepthwiseEfficiency = 0.25;
constexpr double kPoolEfficiency = 0.25;  // either backend's one-thread-per-output pooling

const GpuDevice& device_for(int capability) {
  const GpuDevice* found = &kDevices[0];
  for (const GpuDevice& d : kDevices)
    if (d.capability <= capability) found = &d;
  return *found;
}

double bytes_of(const Graph& g, TensorId id) { return 4.0 * static_cast<double>(num_elements(g.tensor(id).shape)); }

}  // namespace

bool cudnn_fuses_epilogue(const Graph& g, const Node& node) {
  const std::vector<PostOp>& e = node.epilogue;
  if (node.op_operand_count() != 3 || e.empty() || e.size() > 2 || e.back().kind != PostOpKind::kRelu) return false;
  if (e.size() == 1) return true;
  return e[0].kind == PostOpKind::kAdd &&
         g.tensor(node.post_op_operands(e[0])[0]).shape == g.tensor(node.outputs[0]).shape;
}

double conv2d_flops(const Graph& g, const Node& node) {
  const Shape& w = g.tensor(node.inputs[1]).shape;  // [O, C/groups, KH, KW]
  return 2 * static_cast<double>(num_elements(g.tensor(node.outputs[0]).shape)) * static_cast<double>(w[1] * w[2] * w[3]);
}

const char* gpu_backend_name(GpuBackend backend) {
  return backend == GpuBackend::kHalideCuda ? "halide-cuda" : "cudnn";
}

bool has_halide_cuda_kernel(const Node& node) {
  switch (node.op) {
    case OpKind::Conv2d:
    case OpKind::MaxPool2d:
    case OpKind::AvgPool2d:
    case OpKind::AdaptiveAvgPool2d:
    case OpKind::GlobalAvgPool: return true;
    default: return false;
  }
}

double predict_gpu_us(const Graph& g, const Node& node, GpuBackend backend, int cuda_capability) {
  const GpuDevice& device = device_for(cuda_capability);
  double bytes = 0;
  for (TensorId in : node.inputs) bytes += bytes_of(g, in);
  const double out_bytes = bytes_of(g, node.outputs[0]);
  bytes += out_bytes;
  double flops = 0, efficiency = kPoolEfficiency, launches = 1;
  if (node.op == OpKind::Conv2d) {
    flops = conv2d_flops(g, node);
    const bool grouped = node.attr<Conv2dAttrs>().groups > 1;
    if (backend == GpuBackend::kHalideCuda) {
      efficiency = grouped ? kHalideDepthwiseEfficiency : kHalideDenseEfficiency;
    } else {
      efficiency = grouped ? kCudnnGroupedEfficiency : kCudnnDenseEfficiency;
      // An epilogue cuDNN cannot fuse is a second kernel over the output.
      if (!cudnn_fuses_epilogue(g, node) && (node.op_operand_count() == 3 || !node.epilogue.empty())) {
        launches = 2;
        bytes += 2 * out_bytes;
      }
    }
  } else {
    flops = static_cast<double>(num_elements(g.tensor(node.inputs[0]).shape));  // pooling: about one op per input
  }
  const double seconds = std::max(flops / (device.flops_per_s * efficiency), bytes / device.bytes_per_s);
  return launches * kLaunchUs + seconds * 1e6;
}

GpuBackendPlan choose_gpu_backends(const Graph& g, const GpuBackendOptions& options) {
  if (options.mode != "auto" && options.mode != "halide" && options.mode != "cudnn")
    fail(ExitCode::kUsage, "--gpu-backends=", options.mode, ": expected auto, halide or cudnn");
  GpuBackendPlan plan;
  plan.backend.assign(g.nodes.size(), GpuBackend::kCudnn);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& node = g.nodes[i];
    if (!has_halide_cuda_kernel(node)) continue;
    const std::string key = node_description(g, node);
    ChoiceRecord record;
    record.node = g.tensor(node.outputs[0]).name;
    record.description = key;
    double time[2];
    bool all_measured = options.tuning != nullptr;
    for (const GpuBackend b : {GpuBackend::kCudnn, GpuBackend::kHalideCuda}) {
      const double* measured = options.tuning ? options.tuning->time(key, gpu_backend_name(b)) : nullptr;
      const double predicted = predict_gpu_us(g, node, b, options.cuda_capability);
      record.candidates.push_back(
          {gpu_backend_name(b), measured ? *measured : std::numeric_limits<double>::quiet_NaN(), predicted});
      all_measured = all_measured && measured != nullptr;
      time[static_cast<int>(b)] = predicted;
    }
    if (all_measured)
      for (int b = 0; b < 2; ++b) time[b] = record.candidates[static_cast<size_t>(b)].measured_us;
    // Ties stay on cuDNN (the stubs' call), the rules' choice.
    const GpuBackend fastest = time[1] < time[0] ? GpuBackend::kHalideCuda : GpuBackend::kCudnn;
    GpuBackend chosen = fastest;
    record.by = all_measured ? "tuning cache" : "cost model";
    if (options.mode != "auto") {
      chosen = options.mode == "halide" ? GpuBackend::kHalideCuda : GpuBackend::kCudnn;
      record.by = "--gpu-backends=" + options.mode;
    }
    record.rules = gpu_backend_name(GpuBackend::kCudnn);
    record.fastest_alone = gpu_backend_name(fastest);
    record.chosen = gpu_backend_name(chosen);
    plan.backend[i] = chosen;
    plan.choices.push_back(std::move(record));
    ++plan.totals.groups;
    plan.totals.measured += all_measured ? 1 : 0;
    plan.totals.hybrid_us += time[static_cast<int>(chosen)];
    plan.totals.all_halide_us += time[1];
    plan.totals.all_cudnn_us += time[0];
  }
  return plan;
}

}  // namespace aotc
