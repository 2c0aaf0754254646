// Kernel benchmark: JIT-compiles conv2d kernels for the host and prints their
// speed with 1 and 2 threads, to compare with docs in TOOLCHAIN.md (ResNet-18
// layer1 conv: 1x64x56x56 -> 64, 3x3, pad 1, bias + relu). Not run by ctest.
//
//   kernels_bench          the ResNet-18 layer1 conv
//   kernels_bench --all    a few more layer shapes (1x1, depthwise, strided, deep)
//   kernels_bench TEXT     the layers whose name contains TEXT
//
// Each measurement runs in a child process, because Halide's thread pool reads
// HL_NUM_THREADS once. Each layer runs for `kSeconds` after a warm-up run; the
// best run is reported (this machine is shared: the median shows the noise).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "generators/conv2d.h"

namespace {

using aotc::gen::Conv2dSpec;
using aotc::gen::PostOpSpec;

constexpr double kSeconds = 1.0;

struct Layer {
  const char* name;
  Conv2dSpec spec;
};

Conv2dSpec conv(aotc::gen::Shape input, int64_t out, int k, int stride, int pad, int groups = 1) {
  Conv2dSpec s;
  s.input_shape = std::move(input);
  s.out_channels = out;
  s.kernel = {k, k};
  s.stride = {stride, stride};
  s.pad = {pad, pad, pad, pad};
  s.groups = groups;
  s.has_bias = true;
  s.epilogue = {PostOpSpec{PostOpSpec::Kind::kRelu, 0, 0, {}}};
  return s;
}

Halide::Buffer<float> random_buffer(const aotc::gen::Shape& shape, std::mt19937& rng) {
  std::vector<int> extents(shape.rbegin(), shape.rend());
  Halide::Buffer<float> b(extents);
  std::uniform_real_distribution<float> dist(-1, 1);
  b.for_each_value([&](float& v) { v = dist(rng); });
  return b;
}

// Runs in a child process: compiles the layer, times it, prints one line.
void measure(const Layer& layer, int threads) {
  const Conv2dSpec& s = layer.spec;
  std::mt19937 rng(1);
  const aotc::gen::Shape out_shape = aotc::gen::conv2d_output_shape(s);
  const int64_t weight_count = s.out_channels * (s.input_shape[1] / s.groups) * s.kernel[0] * s.kernel[1];
  std::vector<float> oihw(static_cast<size_t>(weight_count), 0.01f);
  const aotc::gen::PackedWeights packed = aotc::gen::pack_conv2d_weights(s, oihw.data());

  aotc::gen::Kernel k = aotc::gen::conv2d(s, Halide::get_host_target());
  std::vector<Halide::Buffer<float>> inputs = {random_buffer(s.input_shape, rng), random_buffer(packed.shape, rng),
                                               random_buffer({s.out_channels}, rng)};
  for (size_t i = 0; i < inputs.size(); ++i) k.inputs[i].set(inputs[i]);
  Halide::Buffer<float> out = random_buffer(out_shape, rng);
  k.output.compile_jit(Halide::get_host_target());
  k.output.realize(out);
  std::vector<double> runs;
  for (double total = 0; total < kSeconds;) {
    const auto start = std::chrono::steady_clock::now();
    k.output.realize(out);
    runs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    total += runs.back();
  }
  std::sort(runs.begin(), runs.end());
  const double best = runs.front(), median = runs[runs.size() / 2];
  const double flops = 2.0 * static_cast<double>(aotc::gen::num_elements(out_shape)) *
                       static_cast<double>(weight_count / s.out_channels);
  std::printf("%-30s %d thread%s best %7.3f ms %6.1f GFLOP/s (median %6.1f)  %s\n", layer.name, threads,
              threads > 1 ? "s" : " ", best * 1e3, flops / best * 1e-9, flops / median * 1e-9, k.schedule.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<Layer> table = {
      {"resnet18 layer1 3x3 64@56", conv({1, 64, 56, 56}, 64, 3, 1, 1)},
      {"resnet18 conv1 7x7/2 3@224", conv({1, 3, 224, 224}, 64, 7, 2, 3)},
      {"resnet18 layer2 3x3/2 64@56", conv({1, 64, 56, 56}, 128, 3, 2, 1)},
      {"resnet18 layer3 3x3 256@14", conv({1, 256, 14, 14}, 256, 3, 1, 1)},
      {"resnet18 layer4 3x3 512@7", conv({1, 512, 7, 7}, 512, 3, 1, 1)},
      {"resnet50 1x1 64->256 @56", conv({1, 64, 56, 56}, 256, 1, 1, 0)},
      {"resnet50 1x1 1024->256 @14", conv({1, 1024, 14, 14}, 256, 1, 1, 0)},
      {"mobilenetv2 dw 3x3 144@56", conv({1, 144, 56, 56}, 144, 3, 1, 1, 144)},
      {"mobilenetv2 dw 3x3/2 96@112", conv({1, 96, 112, 112}, 96, 3, 2, 1, 96)},
  };
  const std::string filter = argc > 1 ? argv[1] : table[0].name;
  std::vector<Layer> layers;
  for (const Layer& layer : table)
    if (filter == "--all" || std::string(layer.name).find(filter) != std::string::npos) layers.push_back(layer);
  for (const Layer& layer : layers)
    for (int threads : {1, 2}) {
      std::fflush(stdout);
      const pid_t pid = fork();
      if (pid == 0) {
        setenv("HL_NUM_THREADS", std::to_string(threads).c_str(), 1);
        try {
          measure(layer, threads);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "%s: %s\n", layer.name, e.what());
          _exit(1);
        }
        std::fflush(stdout);
        _exit(0);
      }
      int status = 0;
      waitpid(pid, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "%s: the measurement failed (status %d)\n", layer.name, status);
        return 1;
      }
    }
  return 0;
}
