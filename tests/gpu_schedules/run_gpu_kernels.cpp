// Runs every kernel build_gpu_kernels made for an OpenCL target on an OpenCL device
// (POCL's CPU device in CI: no GPU needed), over fresh random inputs, against its
// reference: the same generator's CPU kernel, or for conv2d_gpu a direct convolution
// here. An output passes within 1e-4 of the reference's largest magnitude (the
// schedules sum in other orders). This checks what the GPU schedules compute (tiles,
// guards, shared-memory staging, split reductions), which is what a CUDA library's
// Halide kernels compute too; CUDA's own code generation is checked by ptxas only.
//
//   run_gpu_kernels [SEED]
//
// Prints one line per kernel and "N passed, M failed"; exits 77 (ctest: skipped)
// when no OpenCL platform is installed (tools/setup.sh installs POCL).
#include <dlfcn.h>

#include <HalideBuffer.h>
#include <HalideRuntime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace {

constexpr double kTolerance = 1e-4;  // of max|reference|
constexpr int kMaxArgs = 8;

struct Shape {
  int rank;
  int64_t dims[6];  // outermost first
};

// conv2d_gpu's spec where the reference is the direct convolution: square stride and
// dilation, the top and left padding (the output's shape implies the rest), bias, then a
// clamp to [lo, hi] (relu: [0, inf)).
struct ConvReference {
  bool used;
  int stride, pad_top, pad_left, dilation, groups;
  float lo, hi;
};

struct Case {
  const char* name;
  const char* schedule;
  int (*gpu)(void**);
  int (*cpu)(void**);  // nullptr: conv2d_gpu, checked against the direct convolution
  Shape args[kMaxArgs];  // inputs in call order, then the output
  ConvReference conv;
  const float* fixed[kMaxArgs];  // given values (resize's tables), else nullptr: random
};

#include "cases.inc"

using Buffer = Halide::Runtime::Buffer<float>;

Buffer make_buffer(const Shape& s) {
  std::vector<int> sizes;
  for (int d = s.rank; d-- > 0;) sizes.push_back(static_cast<int>(s.dims[d]));  // Halide: innermost first
  return Buffer(sizes);
}

// Row-major [n][c][h][w] throughout: the buffers are dense, innermost first.
void direct_conv(const ConvReference& p, const Buffer& x, const Buffer& w, const Buffer& bias, Buffer& y) {
  const int N = x.dim(3).extent(), C = x.dim(2).extent(), H = x.dim(1).extent(), W = x.dim(0).extent();
  const int O = y.dim(2).extent(), OH = y.dim(1).extent(), OW = y.dim(0).extent();
  const int K = w.dim(0).extent(), cg = C / p.groups, og = O / p.groups;
  for (int n = 0; n < N; ++n)
    for (int o = 0; o < O; ++o)
      for (int oy = 0; oy < OH; ++oy)
        for (int ox = 0; ox < OW; ++ox) {
          double sum = bias(o);
          for (int c = 0; c < cg; ++c)
            for (int ky = 0; ky < K; ++ky)
              for (int kx = 0; kx < K; ++kx) {
                const int iy = oy * p.stride - p.pad_top + ky * p.dilation;
                const int ix = ox * p.stride - p.pad_left + kx * p.dilation;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                sum += static_cast<double>(x(ix, iy, o / og * cg + c, n)) * w(kx, ky, c, o);
              }
          y(ox, oy, o, n) = std::min(std::max(static_cast<float>(sum), p.lo), p.hi);
        }
  (void)N;
}

bool opencl_available() {
  void* library = dlopen("libOpenCL.so", RTLD_LAZY | RTLD_LOCAL);
  if (library == nullptr) library = dlopen("libOpenCL.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (library == nullptr) return false;
  using GetPlatforms = int (*)(unsigned, void**, unsigned*);
  auto get_platforms = reinterpret_cast<GetPlatforms>(dlsym(library, "clGetPlatformIDs"));
  unsigned platforms = 0;
  return get_platforms != nullptr && get_platforms(0, nullptr, &platforms) == 0 && platforms > 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (!opencl_available()) {
    std::printf("SKIPPED: no OpenCL platform (tools/setup.sh installs pocl-opencl-icd)\n");
    return 77;
  }
  const unsigned seed = argc > 1 ? static_cast<unsigned>(std::strtoul(argv[1], nullptr, 10))
                                 : static_cast<unsigned>(std::chrono::steady_clock::now().time_since_epoch().count());
  std::printf("seed %u\n", seed);
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  int passed = 0, failed = 0;
  for (const Case& c : kCases) {
    int count = 0;
    while (count < kMaxArgs && c.args[count].rank > 0) ++count;
    std::vector<Buffer> gpu_args, cpu_args;
    for (int i = 0; i < count; ++i) {
      gpu_args.push_back(make_buffer(c.args[i]));
      if (i + 1 < count) {
        const float* given = c.fixed[i];
        gpu_args.back().for_each_value([&](float& v) { v = given != nullptr ? *given++ : uniform(random); });
        gpu_args.back().set_host_dirty();  // for_each_value does not: the device copy would be skipped
      }
      cpu_args.push_back(gpu_args.back().copy());
    }
    Buffer& out = gpu_args.back();
    Buffer& ref = cpu_args.back();
    out.fill(NAN);  // an output the kernel never writes cannot pass
    void* gpu_argv[kMaxArgs];
    void* cpu_argv[kMaxArgs];
    for (int i = 0; i < count; ++i) {
      gpu_argv[i] = gpu_args[static_cast<size_t>(i)].raw_buffer();
      cpu_argv[i] = cpu_args[static_cast<size_t>(i)].raw_buffer();
    }
    int status = c.gpu(gpu_argv);
    if (status == 0) status = out.copy_to_host();
    if (status == 0 && c.cpu != nullptr) status = c.cpu(cpu_argv);
    if (status == 0 && c.cpu == nullptr) direct_conv(c.conv, cpu_args[0], cpu_args[1], cpu_args[2], ref);
    double scale = 0, diff = 0;
    bool finite = true;
    ref.for_each_element([&](const int* at) {
      scale = std::max(scale, static_cast<double>(std::fabs(ref(at))));
      finite = finite && std::isfinite(out(at));
      diff = std::max(diff, static_cast<double>(std::fabs(out(at) - ref(at))));
    });
    const bool ok = status == 0 && finite && diff <= kTolerance * std::max(scale, 1e-30);
    std::printf("%-28s %s  max|diff| %.3g of max|ref| %.3g (%s)\n", c.name, ok ? "ok" : "MISMATCH", diff, scale,
                c.schedule);
    if (status != 0) std::printf("  status %d\n", status);
    (ok ? passed : failed) += 1;
    for (Buffer& b : gpu_args) b.device_free();
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
