#include "backends/cuda_stubs/choose_gpu_backends.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "backends/halide/candidates.h"
#include "backends/halide/node_kernel.h"
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

// How one backend's kernels run, as fractions of the device's FP32 peak and
// bandwidth, plus a launch and a latency floor. Fitted (least squares on log
// time) to both backends' times of 227 groups measured on an H100 (the seven
// models at batch 1, bench/gpu; bench/gpu/fit-gpu-cost-model re-fits them from
// bench/gpu/results/h100-layer-times.json): the choice they predict is the
// measured one for 219 of the 227 (the constants guessed before reached 185).
// Other GPUs get the same fractions of their own peaks: an assumption, as only
// an H100 was measured.
struct BackendCost {
  double launch_us;         // a kernel node of the captured CUDA graph, launched and drained
  double dense_efficiency;  // of the FP32 peak on a dense convolution's arithmetic
  double grouped_efficiency;  // ... on a grouped or depthwise one's
  // A thread's serial chain of multiply-adds (the taps of one output): with few
  // outputs and a long reduction (a 1x1 conv of 1024 channels on a 7x7 map) a
  // layer takes at least this per tap, as neither backend splits the reduction.
  double us_per_tap;
  double pool_efficiency;  // of the FP32 peak, one operation per input element read
};
// cuDNN's FP32 convolutions; pooling is the stubs' own kernel, a thread per output
// (global pools read their window serially: 7.5-14 µs against Halide's 2.4-4.8).
constexpr BackendCost kCudnnCost = {4.83, 0.206, 0.0649, 0.0379, 0.0154};
// generators/conv2d_gpu.h and pool2d.h as the H100 measured them: register tiles, no
// shared memory or split reduction (the split schedule for small maps with long
// reductions, the staged one and the 4-pixel one came after, and have not been timed:
// these constants describe the schedule before them until bench/gpu measures again);
// pooling bandwidth-bound.
constexpr BackendCost kHalideCost = {2.74, 0.114, 0.147, 0.0972, 0.958};

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
  return node.op == OpKind::Conv2d || has_node_kernel(node.op);
}

bool has_gpu_cost_model(const Node& node) {
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
  if (!has_gpu_cost_model(node)) return std::numeric_limits<double>::quiet_NaN();
  const GpuDevice& device = device_for(cuda_capability);
  const BackendCost& cost = backend == GpuBackend::kHalideCuda ? kHalideCost : kCudnnCost;
  double bytes = 0;
  for (TensorId in : node.inputs) bytes += bytes_of(g, in);
  const double out_bytes = bytes_of(g, node.outputs[0]);
  bytes += out_bytes;
  if (node.op != OpKind::Conv2d) {  // pooling: about one operation per input element
    const double flops = static_cast<double>(num_elements(g.tensor(node.inputs[0]).shape));
    return cost.launch_us +
           1e6 * std::max(flops / (device.flops_per_s * cost.pool_efficiency), bytes / device.bytes_per_s);
  }
  const bool grouped = node.attr<Conv2dAttrs>().groups > 1;
  const double efficiency = grouped ? cost.grouped_efficiency : cost.dense_efficiency;
  double launches = 1;
  // An epilogue cuDNN cannot fuse is a second kernel over the output.
  if (backend == GpuBackend::kCudnn && !cudnn_fuses_epilogue(g, node) &&
      (node.op_operand_count() == 3 || !node.epilogue.empty())) {
    launches = 2;
    bytes += 2 * out_bytes;
  }
  const Shape& w = g.tensor(node.inputs[1]).shape;  // [O, C/groups, KH, KW]
  const double taps = static_cast<double>(w[1] * w[2] * w[3]);
  const double seconds =
      std::max(conv2d_flops(g, node) / (device.flops_per_s * efficiency), bytes / device.bytes_per_s);
  return launches * cost.launch_us + std::max(1e6 * seconds, taps * cost.us_per_tap);
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
    const bool costed = all_measured || (!std::isnan(time[0]) && !std::isnan(time[1]));
    if (all_measured)
      for (int b = 0; b < 2; ++b) time[b] = record.candidates[static_cast<size_t>(b)].measured_us;
    // Ties, and groups neither measured nor predicted, stay on the stubs' call:
    // the rules' choice.
    const GpuBackend fastest = costed && time[1] < time[0] ? GpuBackend::kHalideCuda : GpuBackend::kCudnn;
    GpuBackend chosen = fastest;
    record.by = all_measured ? "tuning cache" : costed ? "cost model" : "rules";
    if (options.mode != "auto") {
      chosen = options.mode == "halide" ? GpuBackend::kHalideCuda : GpuBackend::kCudnn;
      record.by = "--gpu-backends=" + options.mode;
    }
    record.rules = gpu_backend_name(GpuBackend::kCudnn);
    record.fastest_alone = costed ? gpu_backend_name(fastest) : "";
    record.chosen = gpu_backend_name(chosen);
    plan.backend[i] = chosen;
    plan.choices.push_back(std::move(record));
    ++plan.totals.groups;
    if (!costed) continue;
    ++plan.totals.costed;
    plan.totals.measured += all_measured ? 1 : 0;
    plan.totals.hybrid_us += time[static_cast<int>(chosen)];
    plan.totals.all_halide_us += time[1];
    plan.totals.all_cudnn_us += time[0];
  }
  return plan;
}

}  // namespace aotc
