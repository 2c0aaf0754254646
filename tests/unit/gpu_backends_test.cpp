// Tests of the backend choice of GPU libraries (backends/cuda_stubs/choose_gpu_backends.h):
// which groups have a Halide CUDA kernel, the cost model's choice, the tuning cache
// overriding it, the forced pure variants, the plan's totals, and how aotc --tune reads
// a profiling program's layer times into the tuning cache (tune/tune_gpu.h).
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "backends/cuda_stubs/choose_gpu_backends.h"
#include "backends/halide/candidates.h"
#include "generators/concat.h"
#include "generators/elementwise.h"
#include "ir/parser.h"
#include "support/error.h"
#include "tune/tune_gpu.h"
#include "tune/tuning_cache.h"

namespace aotc {
namespace {

// %a: a dense 3x3 conv + bias + relu (64 -> 64 at 56x56, 231 MFLOP); %d: a depthwise 3x3
// conv + bias + clamp on it; %y: a 2x2 max pool; %z: a flatten (a view: no kernel).
Graph chain() {
  return parse_graph(R"(graph g {
  input %x: f32[1,64,56,56]
  const %w1: f32[64,64,3,3] = random(1)
  const %b1: f32[64] = random(2)
  const %w2: f32[64,1,3,3] = random(3)
  const %b2: f32[64] = random(4)
  %a = conv2d(%x, %w1, %b1) {stride=[1,1], pad=[1,1,1,1], dilation=[1,1], groups=1} epilogue[relu]: f32[1,64,56,56]
  %d = conv2d(%a, %w2, %b2) {stride=[1,1], pad=[1,1,1,1], dilation=[1,1], groups=64} epilogue[clamp{min=0, max=6}]: f32[1,64,56,56]
  %y = max_pool2d(%d) {kernel=[2,2], stride=[2,2], pad=[0,0,0,0], dilation=[1,1]}: f32[1,64,28,28]
  %z = flatten(%y) {start_dim=1, end_dim=-1}: f32[1,50176]
  output %z
}
)",
                     "chain.air");
}

TEST(GpuBackends, HalideKernelsForConvolutionsAndPooling) {
  const Graph g = chain();
  EXPECT_TRUE(has_halide_cuda_kernel(g.nodes[0]));
  EXPECT_TRUE(has_halide_cuda_kernel(g.nodes[1]));
  EXPECT_TRUE(has_halide_cuda_kernel(g.nodes[2]));
  EXPECT_FALSE(has_halide_cuda_kernel(g.nodes[3]));
  for (const Node& node : g.nodes) EXPECT_EQ(has_gpu_cost_model(node), has_halide_cuda_kernel(node)) << node.name;
}

// %r: relu, %l: linear, %s: softmax, %c: concat. All have a Halide CUDA kernel (their
// generators' GPU schedules) but no cost model: without measured times they keep the
// stubs' call (the rules), outside the plan's totals; a tuning cache timing both
// backends decides, and --gpu-backends=halide forces them.
TEST(GpuBackends, OtherOpsHaveHalideKernelsChosenOnlyByMeasuredTimes) {
  const Graph g = parse_graph(R"(graph o {
  input %x: f32[1,512]
  const %w: f32[1000,512] = random(1)
  const %b: f32[1000] = random(2)
  %r = relu(%x): f32[1,512]
  %l = linear(%r, %w, %b): f32[1,1000]
  %s = softmax(%l) {axis=1}: f32[1,1000]
  %c = concat(%s, %l) {axis=1}: f32[1,2000]
  output %c
}
)",
                              "other_ops.air");
  EXPECT_EQ(has_halide_cuda_kernel(g.nodes[0]), true);
  EXPECT_EQ(has_halide_cuda_kernel(g.nodes[1]), true);
  EXPECT_EQ(has_halide_cuda_kernel(g.nodes[2]), true);
  EXPECT_EQ(has_halide_cuda_kernel(g.nodes[3]), true);
  EXPECT_TRUE(std::isnan(predict_gpu_us(g, g.nodes[1], GpuBackend::kHalideCuda, 90)));
  const GpuBackendPlan plan = choose_gpu_backends(g, {.mode = "auto", .cuda_capability = 90});
  EXPECT_EQ(plan.backend, std::vector<GpuBackend>(4, GpuBackend::kCudnn));
  ASSERT_EQ(plan.choices.size(), 4u);
  for (const ChoiceRecord& c : plan.choices) {
    EXPECT_EQ(c.by, "rules");
    EXPECT_EQ(c.chosen, "cudnn");
  }
  EXPECT_EQ(plan.totals.groups, 4);
  EXPECT_EQ(plan.totals.costed, 0);
  EXPECT_DOUBLE_EQ(plan.totals.hybrid_us, 0);

  TuningCache cache;
  cache.times_us[node_description(g, g.nodes[1])] = {{"cudnn", 9.0}, {"halide-cuda", 6.0}};
  cache.times_us[node_description(g, g.nodes[2])] = {{"halide-cuda", 2.0}};  // one backend only
  const GpuBackendPlan tuned = choose_gpu_backends(g, {.mode = "auto", .cuda_capability = 90, .tuning = &cache});
  EXPECT_EQ(tuned.backend, (std::vector<GpuBackend>{GpuBackend::kCudnn, GpuBackend::kHalideCuda, GpuBackend::kCudnn,
                                                      GpuBackend::kCudnn}));
  EXPECT_EQ(tuned.choices[1].by, "tuning cache");
  EXPECT_EQ(tuned.choices[2].by, "rules");
  EXPECT_EQ(tuned.totals.costed, 1);
  EXPECT_DOUBLE_EQ(tuned.totals.hybrid_us, 6.0);
  EXPECT_DOUBLE_EQ(tuned.totals.all_cudnn_us, 9.0);

  const GpuBackendPlan halide = choose_gpu_backends(g, {.mode = "halide"});
  EXPECT_EQ(halide.backend, std::vector<GpuBackend>(4, GpuBackend::kHalideCuda));
}

// A generator that gave its kernel (or a stage of it) no GPU schedule would compile for a
// CUDA target as host code over device pointers: the kernel's compile refuses it (a bug of
// aotc's, not the user's); the same generator's GPU schedule compiles.
TEST(GpuBackends, KernelWithoutGpuScheduleIsRefusedForACudaTarget) {
  gen::ElementwiseSpec spec;
  spec.kind = gen::ElementwiseSpec::Kind::kRelu;
  spec.input_shapes = {{1, 8, 4, 4}};
  spec.output_shape = {1, 8, 4, 4};
  const std::string object = ::testing::TempDir() + "/relu_gpu.o";
  const KernelSource host = halide_kernel_source(
      "relu_host", "relu", [spec](const Halide::Target&) { return gen::elementwise(spec, Halide::get_host_target()); });
  EXPECT_THROW(host.compile("host-cuda-cuda_capability_80", object, ""), InternalError);
  const KernelSource gpu =
      halide_kernel_source("relu_gpu", "relu", [spec](const Halide::Target& t) { return gen::elementwise(spec, t); });
  EXPECT_NE(gpu.compile("host-cuda-cuda_capability_80", object, "").schedule.find("gpu"), std::string::npos);
  // A concat computes in its update stages (one per input): each needs GPU loops.
  const gen::ConcatSpec concat{1, {{1, 2, 4, 4}, {1, 3, 4, 4}}, {}};
  const KernelSource concat_host = halide_kernel_source(
      "concat_host", "concat", [concat](const Halide::Target&) { return gen::concat(concat, Halide::get_host_target()); });
  EXPECT_THROW(concat_host.compile("host-cuda-cuda_capability_80", object, ""), InternalError);
  const KernelSource concat_gpu = halide_kernel_source(
      "concat_gpu", "concat", [concat](const Halide::Target& t) { return gen::concat(concat, t); });
  EXPECT_NE(concat_gpu.compile("host-cuda-cuda_capability_80", object, "").schedule.find("gpu"), std::string::npos);
}

TEST(GpuBackends, CostModelKeepsDenseConvsOnCudnnAndGivesDepthwiseAndPoolingToHalide) {
  const Graph g = chain();
  const GpuBackendPlan plan = choose_gpu_backends(g, {.mode = "auto", .cuda_capability = 80});
  EXPECT_EQ(plan.backend, (std::vector<GpuBackend>{GpuBackend::kCudnn, GpuBackend::kHalideCuda,
                                                     GpuBackend::kHalideCuda, GpuBackend::kCudnn}));
  ASSERT_EQ(plan.choices.size(), 3u);
  EXPECT_EQ(plan.choices[0].node, "a");
  EXPECT_EQ(plan.choices[0].by, "cost model");
  EXPECT_EQ(plan.choices[1].chosen, "halide-cuda");
  // The dense conv's arithmetic dominates: cuDNN's predicted time is well under Halide's.
  EXPECT_LT(predict_gpu_us(g, g.nodes[0], GpuBackend::kCudnn, 80) * 1.5,
            predict_gpu_us(g, g.nodes[0], GpuBackend::kHalideCuda, 80));
  // A faster GPU predicts less time for the same layer.
  EXPECT_LT(predict_gpu_us(g, g.nodes[0], GpuBackend::kCudnn, 90), predict_gpu_us(g, g.nodes[0], GpuBackend::kCudnn, 80));
  // The hybrid is no slower than either pure variant, and faster than both here.
  EXPECT_EQ(plan.totals.groups, 3);
  EXPECT_EQ(plan.totals.costed, 3);
  EXPECT_EQ(plan.totals.measured, 0);
  EXPECT_LT(plan.totals.hybrid_us, plan.totals.all_halide_us);
  EXPECT_LT(plan.totals.hybrid_us, plan.totals.all_cudnn_us);
}

// Groups of torchvision's models whose both backends an H100 timed (bench/gpu, µs,
// bench/gpu/results/h100-layer-times.json): the cost model, on that GPU (capability 90),
// predicts the backend that was faster there, and the dense conv within 25% of each
// measured time. The guessed constants before the fit got the last two wrong (cuDNN for
// the 1x1 conv of 16 channels, a tie, so cuDNN, for the pool).
TEST(GpuBackends, CostModelChoosesWhatTheH100Measured) {
  const Graph g = parse_graph(R"(graph h100 {
  input %x: f32[1,64,56,56]
  input %m: f32[1,96,112,112]
  input %n: f32[1,16,112,112]
  input %p: f32[1,1000,13,13]
  const %w1: f32[64,64,3,3] = random(1)
  const %b1: f32[64] = random(2)
  const %w2: f32[96,1,3,3] = random(3)
  const %b2: f32[96] = random(4)
  const %w3: f32[96,16,1,1] = random(5)
  const %b3: f32[96] = random(6)
  %dense = conv2d(%x, %w1, %b1) {stride=[1,1], pad=[1,1,1,1], dilation=[1,1], groups=1} epilogue[relu]: f32[1,64,56,56]
  %depthwise = conv2d(%m, %w2, %b2) {stride=[2,2], pad=[1,1,1,1], dilation=[1,1], groups=96} epilogue[clamp{min=0, max=6}]: f32[1,96,56,56]
  %pointwise = conv2d(%n, %w3, %b3) {stride=[1,1], pad=[0,0,0,0], dilation=[1,1], groups=1} epilogue[clamp{min=0, max=6}]: f32[1,96,112,112]
  %pool = global_avg_pool(%p): f32[1,1000,1,1]
  output %dense
  output %depthwise
  output %pointwise
  output %pool
}
)",
                                "h100.air");
  struct Measured {
    double cudnn_us, halide_us;
  };
  const Measured measured[] = {{30.404, 64.363}, {10.986, 3.267}, {26.156, 6.371}, {13.807, 4.774}};
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    SCOPED_TRACE(g.nodes[i].name);
    const double cudnn = predict_gpu_us(g, g.nodes[i], GpuBackend::kCudnn, 90);
    const double halide = predict_gpu_us(g, g.nodes[i], GpuBackend::kHalideCuda, 90);
    EXPECT_EQ(cudnn < halide, measured[i].cudnn_us < measured[i].halide_us) << cudnn << " vs " << halide << " us";
  }
  EXPECT_NEAR(predict_gpu_us(g, g.nodes[0], GpuBackend::kCudnn, 90), measured[0].cudnn_us, 0.25 * measured[0].cudnn_us);
  EXPECT_NEAR(predict_gpu_us(g, g.nodes[0], GpuBackend::kHalideCuda, 90), measured[0].halide_us,
              0.25 * measured[0].halide_us);
}

TEST(GpuBackends, TuningCacheOverridesTheCostModel) {
  const Graph g = chain();
  TuningCache cache;
  cache.times_us[node_description(g, g.nodes[0])] = {{"cudnn", 30.0}, {"halide-cuda", 12.0}};
  cache.times_us[node_description(g, g.nodes[1])] = {{"cudnn", 5.0}};  // one backend only: not measured
  const GpuBackendPlan plan = choose_gpu_backends(g, {.mode = "auto", .cuda_capability = 80, .tuning = &cache});
  EXPECT_EQ(plan.backend[0], GpuBackend::kHalideCuda);
  EXPECT_EQ(plan.choices[0].by, "tuning cache");
  EXPECT_DOUBLE_EQ(plan.choices[0].candidates[1].measured_us, 12.0);
  EXPECT_EQ(plan.choices[1].by, "cost model");
  EXPECT_EQ(plan.totals.measured, 1);
}

TEST(GpuBackends, PureVariantsAreForced) {
  const Graph g = chain();
  const GpuBackendPlan halide = choose_gpu_backends(g, {.mode = "halide"});
  EXPECT_EQ(halide.backend, (std::vector<GpuBackend>{GpuBackend::kHalideCuda, GpuBackend::kHalideCuda,
                                                       GpuBackend::kHalideCuda, GpuBackend::kCudnn}));
  EXPECT_EQ(halide.choices[0].by, "--gpu-backends=halide");
  EXPECT_DOUBLE_EQ(halide.totals.hybrid_us, halide.totals.all_halide_us);
  const GpuBackendPlan cudnn = choose_gpu_backends(g, {.mode = "cudnn"});
  for (GpuBackend b : cudnn.backend) EXPECT_EQ(b, GpuBackend::kCudnn);
  EXPECT_DOUBLE_EQ(cudnn.totals.hybrid_us, cudnn.totals.all_cudnn_us);
  EXPECT_THROW(choose_gpu_backends(g, {.mode = "fastest"}), UserError);
}

// The profile's layer lines become the times of their groups' keys (a name may hold
// spaces, as TFLite's tensor names may); the flatten (no kernel, so no choice), an
// unknown layer and malformed lines are left out; a second backend's profile completes
// the entries, which the choice then goes by.
TEST(GpuBackends, TuneRecordsProfiledLayerTimesUnderTheChoiceKeys) {
  Graph g = chain();
  g.tensor(g.nodes[0].outputs[0]).name = "block 1/conv a";
  const GpuBackendPlan plan = choose_gpu_backends(g, {.mode = "auto", .cuda_capability = 80});
  TuningCache cache;
  EXPECT_EQ(record_gpu_profile("aotc: built\nlayer block 1/conv a 40.5\nlayer d 9.25\nlayer y 3\nlayer z 1.5\n"
                               "layer q 7\nlayer d\nlayer d 5x\nlayer\n",
                               plan, GpuBackend::kCudnn, cache),
            3);
  EXPECT_EQ(record_gpu_profile("layer block 1/conv a 90\nlayer d 4\nlayer y 2.5\n", plan, GpuBackend::kHalideCuda, cache),
            3);
  ASSERT_EQ(cache.times_us.size(), 3u);
  const std::string a = node_description(g, g.nodes[0]), d = node_description(g, g.nodes[1]);
  ASSERT_NE(cache.time(a, "cudnn"), nullptr);
  EXPECT_DOUBLE_EQ(*cache.time(a, "cudnn"), 40.5);
  EXPECT_DOUBLE_EQ(*cache.time(a, "halide-cuda"), 90.0);
  EXPECT_DOUBLE_EQ(*cache.time(d, "cudnn"), 9.25);
  const GpuBackendPlan tuned = choose_gpu_backends(g, {.mode = "auto", .cuda_capability = 80, .tuning = &cache});
  EXPECT_EQ(tuned.totals.measured, 3);
  EXPECT_EQ(tuned.backend, (std::vector<GpuBackend>{GpuBackend::kCudnn, GpuBackend::kHalideCuda,
                                                      GpuBackend::kHalideCuda, GpuBackend::kCudnn}));
}

}  // namespace
}  // namespace aotc
