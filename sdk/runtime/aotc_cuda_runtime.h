// What a GPU library's generated stubs (<name>_stubs.cpp, plain C++) call in
// the CUDA runtime every GPU library carries (aotc_cuda_runtime.cu, compiled
// by nvcc as the library's own object). The stubs hold no device code, so the
// host compiler builds them in a fraction of nvcc's time, and the runtime has
// the same text and command for every model of a CUDA capability: a compiler
// cache compiles it once.
//
// Tensors are dense, row-major NCHW float32 in device memory. The semantics of
// every op are those of the reference evaluator (compiler/reference/evaluator.cpp).
// Only device_open and conv_plan_create allocate; the per-run functions launch
// on Device::stream and return kOk or a status with Device::error set.
//
// The namespace carries the runtime's version and the CUDA capability
// (AOTC_CUDA_SM, which both compiles get): libraries for one capability in one
// app share a copy, libraries for different capabilities each keep their own.
#ifndef AOTC_CUDA_RUNTIME_H_
#define AOTC_CUDA_RUNTIME_H_

#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstddef>
#include <cstdint>

#ifndef AOTC_CUDA_SM
#error "AOTC_CUDA_SM must name the CUDA capability the library is built for (e.g. 80)"
#endif
#define AOTC_CUDA_NS_(sm) aotc_cuda_rt1_sm##sm
#define AOTC_CUDA_NS_OF(sm) AOTC_CUDA_NS_(sm)
#define AOTC_CUDA_NS AOTC_CUDA_NS_OF(AOTC_CUDA_SM)  // e.g. aotc_cuda_rt1_sm80

namespace AOTC_CUDA_NS {

constexpr int kOk = 0, kKernelFailed = 5, kInvalidArgument = 6, kDeviceUnavailable = 7;
constexpr int kMaxRank = 6;
constexpr int kMaxPostOps = 6;

struct CudnnApi;  // the cuDNN functions device_open loads

// What a model's Halide CUDA kernels get as their user_context (see Halide
// CUDA kernels below).
struct HalideSession {
  uint64_t magic;   // kHalideSessionMagic once halide_open succeeded
  void* context;    // the CUDA runtime's context (a CUcontext)
  void* stream;     // Device::stream
  char error[256];  // Halide's last error message
};

struct Device {
  CudnnApi* dnn;  // owned
  cudnnHandle_t handle;
  cudaStream_t stream;  // the caller's, or a stream we created (owns_stream)
  bool owns_stream;
  void* workspace;  // cuDNN workspace, grown only in conv_plan_create
  size_t workspace_bytes;
  HalideSession halide;
  char error[256];
};

// ---- Errors ------------------------------------------------------------------------

// Sets dev->error from the format; returns status.
__attribute__((format(printf, 3, 4))) int fail(Device* dev, int status, const char* format, ...);
int check_cuda(Device* dev, const char* op, const char* call, cudaError_t e, int status = kKernelFailed);

// ---- Device ------------------------------------------------------------------------

// Loads cuDNN (dlopen of libcudnn.so.9, or AOTC_CUDNN_LIBRARY: apps link no
// cuDNN and start without it) and opens a handle on `stream`, or on a stream of
// its own when it is null. On failure everything made so far is released and
// dev->error says why.
int device_open(Device* dev, cudaStream_t stream);
// Releases what device_open made; keeps dev->error.
void device_close(Device* dev);

// ---- Convolution (cuDNN) -----------------------------------------------------------

struct ConvPlan {
  cudnnTensorDescriptor_t x_desc, y_desc;
  cudnnFilterDescriptor_t w_desc;
  cudnnConvolutionDescriptor_t conv_desc;
  cudnnConvolutionFwdAlgo_t algo;
  size_t workspace_bytes;  // what algo needs of dev->workspace
  // conv + bias (+ residual) + relu as one cuDNN call (conv_plan_fuse_relu), until
  // cuDNN says it does not support that for this algorithm.
  cudnnTensorDescriptor_t bias_desc;
  cudnnActivationDescriptor_t relu_desc;
  bool fused;
};

// Descriptors and algorithm of one convolution [N,C,H,W] x [O,C/groups,KH,KW], symmetric padding.
int conv_plan_create(Device* dev, ConvPlan* plan, int n, int c, int h, int w, int o, int kh, int kw, int pad_h,
                     int pad_w, int stride_h, int stride_w, int dil_h, int dil_w, int groups);
void conv_plan_destroy(Device* dev, ConvPlan* plan);
// Makes the plan run relu(conv(x) + z + bias) as one call (conv_bias_relu_forward).
int conv_plan_fuse_relu(Device* dev, ConvPlan* plan, int channels);

constexpr int kNotFused = -1;

// y = relu(conv(x) + z + bias), z optional (nullptr). Returns kNotFused, and turns
// the plan's fusion off, where cuDNN does not support it for the plan's algorithm:
// the caller then runs conv_forward and an elementwise kernel instead.
int conv_bias_relu_forward(Device* dev, ConvPlan* plan, const float* x, const float* w, const float* z,
                           const float* bias, float* y);
int conv_forward(Device* dev, const ConvPlan* plan, const float* x, const float* w, float* y);

// ---- Elementwise post-ops ----------------------------------------------------------

enum PostOpKind : int { kRelu, kClamp, kHardSwish, kSigmoid, kTanh, kAffine, kAdd, kMul, kPRelu, kBias, kElu, kSoftplus, kMax, kMin, kDiv };

struct PostOp {
  int kind;
  float min, max;  // kClamp; kElu: min is alpha
  const float* a;  // kAffine: scale[C]; kAdd/kMul/kPRelu/kMax/kMin/kDiv: the operand; kBias: bias[C]
  const float* b;  // kAffine: shift[C]
  int64_t a_strides[kMaxRank];  // element strides of `a` per OUTPUT dim (0 where broadcast)
  int64_t b_strides[kMaxRank];
};

struct Elementwise {
  int rank;  // of the output, <= kMaxRank
  int64_t shape[kMaxRank];
  int64_t in_strides[kMaxRank];
  int count;
  PostOp ops[kMaxPostOps];
};

// out[i] = ops(in[i broadcast]); in may equal out.
int elementwise(Device* dev, const Elementwise& e, const float* in, float* out);

// ---- Pooling -----------------------------------------------------------------------

// Max: padding acts as -inf and NaN propagates. Average: the reference's divisor,
// with count_include_pad the window clipped to the padded input (a ceil_mode
// overhang past the end padding does not count), else the input elements read.
// oh/ow come from the caller (ceil_mode is decided there); pads may be asymmetric.
int pool2d(Device* dev, const float* x, float* y, int n, int c, int h, int w, int oh, int ow, int kh, int kw, int sh,
           int sw, int pad_top, int pad_left, int pad_bottom, int pad_right, int dh, int dw, bool is_max,
           bool count_include_pad);
// Window of output o over an input of `in`: [floor(o*in/out), ceil((o+1)*in/out)).
int adaptive_avg_pool2d(Device* dev, const float* x, float* y, int n, int c, int h, int w, int oh, int ow);

// ---- Linear, concat, softmax -------------------------------------------------------

// y[n, m] = x[n, k] . w[m, k] + bias[m] (bias optional).
int linear(Device* dev, const float* x, const float* w, const float* bias, float* y, int64_t n, int64_t k, int64_t m);
// out[o, offset + j] = in[o, j]: one operand of a concat.
int concat_copy(Device* dev, const float* in, float* out, int64_t outer, int64_t in_inner, int64_t out_inner,
                int64_t offset);
// Over `axis` elements `inner` apart, outer * inner rows: exp(x - max) / sum in double as the reference.
int softmax(Device* dev, const float* x, float* y, int64_t outer, int64_t axis, int64_t inner);

// ---- Data movement -------------------------------------------------------------------

// pads: begin of every dim, then end of every dim (negative crops).
int pad(Device* dev, const float* x, float* y, int rank, const int64_t* in_shape, const int64_t* pads, float value);
// y.shape[k] = x.shape[perm[k]].
int transpose(Device* dev, const float* x, float* y, int rank, const int64_t* in_shape, const int* perm);
// TensorFlow's DCR order: y[n, c, h*b + i, w*b + j] = x[n, (i*b + j) * C_out + c, h, w].
int depth_to_space(Device* dev, const float* x, float* y, int n, int c, int h, int w, int block);
// TensorFlow Lite's sampling, positions in float as TFLite.
int resize(Device* dev, const float* x, float* y, int n, int c, int h, int w, int oh, int ow, bool bilinear,
           bool align_corners, bool half_pixel_centers);
// Weights [C, O, KH, KW] (PyTorch's layout), groups 1; pads cropped from the full output.
int conv_transpose2d(Device* dev, const float* x, const float* w, const float* bias, float* y, int n, int c, int h,
                     int w_in, int o, int kh, int kw, int sh, int sw, int pad_top, int pad_left, int oh, int ow);

}  // namespace AOTC_CUDA_NS

namespace aotc_cuda = AOTC_CUDA_NS;

#ifdef AOTC_HALIDE_CUDA
#include <dlfcn.h>

#include <cstdio>
#include <mutex>

#include "HalideRuntimeCuda.h"

// Host code only, with internal linkage: each hybrid library installs its own
// handlers, chained to the ones before.
namespace AOTC_CUDA_NS {
namespace {

// ---- Halide CUDA kernels -------------------------------------------------------------
// The Halide kernels of a model launch through Halide's own CUDA runtime (one
// object in the library), which loads the driver itself. They must run in the
// CUDA runtime's context, on Device::stream, over the tensors in the device
// arena: the buffers they get hold device pointers only (no host copies), and
// their user_context is the Device's HalideSession. Halide's context, stream
// and error handlers are process-wide, so the ones below serve any aotc
// library's session and pass any other user_context on to the handlers they
// replaced.

constexpr uint64_t kHalideSessionMagic = 0x616f74632d687364;  // "aotc-hsd"

halide_cuda_acquire_context_t previous_acquire_context;
halide_cuda_release_context_t previous_release_context;
halide_cuda_get_stream_t previous_get_stream;
halide_error_handler_t previous_error_handler;

inline HalideSession* session_of(void* user_context) {
  auto* s = static_cast<HalideSession*>(user_context);
  return s != nullptr && s->magic == kHalideSessionMagic ? s : nullptr;
}

int acquire_context(void* user_context, void** context, bool create) {
  if (HalideSession* s = session_of(user_context)) {
    *context = s->context;
    return 0;
  }
  return previous_acquire_context(user_context, context, create);
}

int release_context(void* user_context) {
  return session_of(user_context) != nullptr ? 0 : previous_release_context(user_context);
}

int get_stream(void* user_context, void* context, void** stream) {
  if (HalideSession* s = session_of(user_context)) {
    *stream = s->stream;
    return 0;
  }
  return previous_get_stream(user_context, context, stream);
}

void report_error(void* user_context, const char* message) {
  if (HalideSession* s = session_of(user_context)) {
    snprintf(s->error, sizeof s->error, "%s", message);
    return;
  }
  previous_error_handler(user_context, message);
}

// Opens the session of dev's Halide kernels; after device_open.
inline int halide_open(Device* dev) {
  // Halide's runtime looks the driver's symbols up in the process first, then
  // in "libcuda.so", which only development installs have: load the driver
  // into the global scope (the CUDA runtime loaded it privately).
  if (dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL) == nullptr)
    return fail(dev, kDeviceUnavailable, "Halide kernels: the CUDA driver: %s", dlerror());
  void* get_current = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (int s = check_cuda(dev, "halide_open", "cudaFree(nullptr)", cudaFree(nullptr), kDeviceUnavailable)) return s;
  if (int s = check_cuda(dev, "halide_open", "cudaGetDriverEntryPointByVersion",
                         cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &get_current, 12000, cudaEnableDefault,
                                                          &found),
                         kDeviceUnavailable))
    return s;
  if (found != cudaDriverEntryPointSuccess || get_current == nullptr)
    return fail(dev, kDeviceUnavailable, "Halide kernels: the driver has no cuCtxGetCurrent");
  void* context = nullptr;
  const int result = reinterpret_cast<int (*)(void**)>(get_current)(&context);
  if (result != 0 || context == nullptr)
    return fail(dev, kDeviceUnavailable, "Halide kernels: cuCtxGetCurrent: error %d", result);
  dev->halide = HalideSession{kHalideSessionMagic, context, dev->stream, {}};
  static std::once_flag installed;
  std::call_once(installed, [] {
    previous_acquire_context = halide_set_cuda_acquire_context(acquire_context);
    previous_release_context = halide_set_cuda_release_context(release_context);
    previous_get_stream = halide_set_cuda_get_stream(get_stream);
    previous_error_handler = halide_set_error_handler(report_error);
  });
  return kOk;
}

// The arguments of one Halide kernel call: N dense float32 device tensors.
template <size_t N>
struct HalideArgs {
  halide_buffer_t buffers[N];
  halide_dimension_t dims[N][kMaxRank];
};

// Argument i: `rank` dims of `shape` (outermost first) at device address `data`.
template <size_t N>
inline void bind(HalideArgs<N>* a, size_t i, const float* data, int rank, const int64_t* shape) {
  halide_buffer_t& b = a->buffers[i];
  b = halide_buffer_t{};
  b.device = reinterpret_cast<uint64_t>(data);
  b.device_interface = halide_cuda_device_interface();
  b.type.code = halide_type_float;
  b.type.bits = 32;
  b.type.lanes = 1;
  b.dimensions = rank;
  b.dim = a->dims[i];
  int32_t stride = 1;
  for (int d = 0; d < rank; ++d) {  // Halide lists dims innermost first
    const auto extent = static_cast<int32_t>(shape[rank - 1 - d]);
    b.dim[d] = halide_dimension_t(0, extent, stride);
    stride *= extent;
  }
}

inline int halide_status(Device* dev, const char* kernel, int result) {
  if (result == 0) return kOk;
  return fail(dev, kKernelFailed, "%s: Halide error %d: %s", kernel, result, dev->halide.error);
}

}  // namespace
}  // namespace AOTC_CUDA_NS
#endif  // AOTC_HALIDE_CUDA

#endif  // AOTC_CUDA_RUNTIME_H_
