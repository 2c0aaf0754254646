// Compile check of sdk/runtime/aotc_cuda_runtime.h as generated stubs use it:
// plain C++ for the host compiler, with the Halide CUDA part on, calling every
// function once in a function that nothing runs. Built with (one line)
//   c++ -std=c++17 -c -Wall -Wextra -Werror -DAOTC_CUDA_SM=80 -I sdk/runtime -I /usr/local/cuda/include
//       -I /usr/include/halide14 tests/cuda/runtime_header_check.cpp -o /tmp/x.o
#define AOTC_HALIDE_CUDA
#include "aotc_cuda_runtime.h"

int aotc_cuda_compile_check(const float* x, const float* w, const float* b, float* y) {
  using namespace aotc_cuda;
  Device dev{};
  int s = device_open(&dev, nullptr);
  s |= halide_open(&dev);
  HalideArgs<2> args;
  const int64_t dims[4] = {1, 8, 16, 16};
  bind(&args, 0, x, 4, dims);
  bind(&args, 1, y, 4, dims);
  s |= halide_status(&dev, "kernel", 0);
  ConvPlan plan{};
  s |= conv_plan_create(&dev, &plan, 1, 8, 16, 16, 8, 3, 3, 1, 1, 1, 1, 1, 1, 2);
  s |= conv_forward(&dev, &plan, x, w, y);
  s |= conv_plan_fuse_relu(&dev, &plan, 8);
  s |= conv_bias_relu_forward(&dev, &plan, x, w, y, b, y);
  conv_plan_destroy(&dev, &plan);

  Elementwise e{};
  e.rank = 4;
  const int64_t shape[4] = {1, 8, 16, 16};
  for (int d = 3, stride = 1; d >= 0; stride *= static_cast<int>(shape[d]), --d) {
    e.shape[d] = shape[d];
    e.in_strides[d] = stride;
  }
  e.count = 2;
  e.ops[0].kind = kBias;
  e.ops[0].a = b;
  e.ops[0].a_strides[1] = 1;
  e.ops[1].kind = kRelu;
  s |= elementwise(&dev, e, y, y);

  s |= pool2d(&dev, x, y, 1, 8, 16, 16, 8, 8, 3, 3, 2, 2, 1, 1, 0, 0, 1, 1, true, false);
  s |= adaptive_avg_pool2d(&dev, x, y, 1, 8, 16, 16, 1, 1);
  s |= linear(&dev, x, w, b, y, 1, 2048, 10);
  s |= concat_copy(&dev, x, y, 1, 2048, 4096, 2048);
  s |= softmax(&dev, x, y, 1, 10, 1);
  const int64_t pads[8] = {0, 0, 1, 1, 0, 0, 1, 1};
  s |= pad(&dev, x, y, 4, shape, pads, 0.0f);
  const int perm[4] = {0, 2, 3, 1};
  s |= transpose(&dev, x, y, 4, shape, perm);
  s |= resize(&dev, x, y, 1, 8, 16, 16, 32, 32, true, false, true);
  s |= conv_transpose2d(&dev, x, w, b, y, 1, 8, 16, 16, 4, 4, 4, 2, 2, 1, 1, 32, 32);
  s |= depth_to_space(&dev, x, y, 1, 8, 16, 16, 2);
  device_close(&dev);
  return s;
}
