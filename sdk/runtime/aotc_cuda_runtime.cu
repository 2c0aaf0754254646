// The CUDA runtime every GPU library carries (aotc_cuda_runtime.h says what
// the generated stubs call): the cuDNN loader and convolution plans, and one
// small kernel per op family that cuDNN does not run. aotc embeds this file and
// nvcc compiles it as the library's own object, with the same text and command
// for every model of a CUDA capability, so that a compiler cache (ccache)
// compiles it once; the stubs, plain C++, build with the host compiler.
//
// The semantics of every op are those of the reference evaluator
// (compiler/reference/evaluator.cpp); where it computes in double, so do the
// kernels below, and they use the _rn intrinsics where nvcc could otherwise
// contract a multiply and an add into an FMA that the reference does not do
// (sample positions, affine, chained add/mul). cuDNN is not linked:
// libcudnn.so.9 is dlopen'ed by device_open. The CUDA runtime is (static cudart).
// Helpers and kernels are static; what the header declares is the interface.
#include "aotc_cuda_runtime.h"

#include <dlfcn.h>

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <new>

// The cuDNN functions used, without their "cudnn" prefix.
#define AOTC_CUDNN_FUNCTIONS(X)                                                                       \
  X(Create) X(Destroy) X(SetStream) X(GetErrorString) X(CreateTensorDescriptor)                       \
  X(DestroyTensorDescriptor) X(SetTensor4dDescriptor) X(CreateFilterDescriptor)                       \
  X(DestroyFilterDescriptor) X(SetFilter4dDescriptor) X(CreateConvolutionDescriptor)                  \
  X(DestroyConvolutionDescriptor) X(SetConvolution2dDescriptor) X(SetConvolutionGroupCount)           \
  X(SetConvolutionMathType) X(GetConvolution2dForwardOutputDim) X(GetConvolutionForwardAlgorithm_v7) \
  X(FindConvolutionForwardAlgorithm)                                                                  \
  X(ConvolutionForward) X(CreateActivationDescriptor) X(SetActivationDescriptor)                     \
  X(DestroyActivationDescriptor) X(ConvolutionBiasActivationForward)

namespace AOTC_CUDA_NS {

constexpr int kThreads = 256;         // per block
constexpr int64_t kMaxBlocks = 65535;  // grid-stride loops cover the rest
constexpr size_t kMaxConvWorkspace = size_t{256} << 20;

struct CudnnApi {
  void* library;  // from dlopen
#define AOTC_CUDNN_MEMBER(name) decltype(&cudnn##name) name;
  AOTC_CUDNN_FUNCTIONS(AOTC_CUDNN_MEMBER)
#undef AOTC_CUDNN_MEMBER
};

// ---- Errors ------------------------------------------------------------------------

int fail(Device* dev, int status, const char* format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(dev->error, sizeof dev->error, format, args);
  va_end(args);
  return status;
}

int check_cuda(Device* dev, const char* op, const char* call, cudaError_t e, int status) {
  return e == cudaSuccess ? kOk : fail(dev, status, "%s: %s: %s", op, call, cudaGetErrorString(e));
}

static int check_dnn(Device* dev, const char* op, const char* call, cudnnStatus_t s, int status = kKernelFailed) {
  return s == CUDNN_STATUS_SUCCESS ? kOk : fail(dev, status, "%s: %s: %s", op, call, dev->dnn->GetErrorString(s));
}

// Runs `kernel` over `work` threads (grid-stride loops take what a capped grid leaves).
template <typename... Params, typename... Args>
static int launch(Device* dev, const char* op, int64_t work, void (*kernel)(Params...), Args... args) {
  if (work <= 0) return kOk;
  const int64_t blocks = (work + kThreads - 1) / kThreads;
  kernel<<<static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks), kThreads, 0, dev->stream>>>(args...);
  return check_cuda(dev, op, "kernel launch", cudaGetLastError());
}

static __device__ int64_t thread_index() { return int64_t{blockIdx.x} * blockDim.x + threadIdx.x; }
static __device__ int64_t thread_count() { return int64_t{gridDim.x} * blockDim.x; }

// Element offset of a multi-index; loops over kMaxRank so the arrays stay in registers.
static __device__ int64_t offset_of(const int64_t* index, const int64_t* strides, int rank) {
  int64_t offset = 0;
#pragma unroll
  for (int d = 0; d < kMaxRank; ++d)
    if (d < rank) offset += index[d] * strides[d];
  return offset;
}

// Unravels flat index i over `shape` (outermost first) into index[0..rank).
static __device__ void unravel(int64_t i, const int64_t* shape, int rank, int64_t* index) {
#pragma unroll
  for (int d = kMaxRank - 1; d >= 0; --d)
    if (d < rank) {
      index[d] = i % shape[d];
      i /= shape[d];
    }
}

// ---- Device ------------------------------------------------------------------------

// Releases what device_open made; keeps dev->error.
void device_close(Device* dev) {
  if (dev->workspace != nullptr) cudaFree(dev->workspace);
  if (dev->handle != nullptr && dev->dnn != nullptr) dev->dnn->Destroy(dev->handle);
  if (dev->owns_stream && dev->stream != nullptr) cudaStreamDestroy(dev->stream);
  if (dev->dnn != nullptr) {
    if (dev->dnn->library != nullptr) dlclose(dev->dnn->library);
    delete dev->dnn;
  }
  dev->dnn = nullptr;
  dev->handle = nullptr;
  dev->stream = nullptr;
  dev->owns_stream = false;
  dev->workspace = nullptr;
  dev->workspace_bytes = 0;
}

static int device_open_steps(Device* dev, cudaStream_t stream) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess)
    return fail(dev, kDeviceUnavailable, "no CUDA device: cudaGetDeviceCount: %s", cudaGetErrorString(e));
  if (count == 0) return fail(dev, kDeviceUnavailable, "no CUDA device: cudaGetDeviceCount found none");

  dev->dnn = new (std::nothrow) CudnnApi{};
  if (dev->dnn == nullptr) return fail(dev, kDeviceUnavailable, "cuDNN: out of host memory");
  // AOTC_CUDNN_LIBRARY names another cuDNN 9 (an app's own copy); else the loader's search.
  const char* cudnn = getenv("AOTC_CUDNN_LIBRARY");
  if (cudnn == nullptr || cudnn[0] == '\0') cudnn = "libcudnn.so.9";
  dev->dnn->library = dlopen(cudnn, RTLD_NOW | RTLD_LOCAL);
  if (dev->dnn->library == nullptr) return fail(dev, kDeviceUnavailable, "cuDNN unavailable: %s", dlerror());
#define AOTC_CUDNN_LOAD(name)                                                                  \
  dev->dnn->name = reinterpret_cast<decltype(&cudnn##name)>(dlsym(dev->dnn->library, "cudnn" #name)); \
  if (dev->dnn->name == nullptr) return fail(dev, kDeviceUnavailable, "cuDNN unavailable: no symbol cudnn" #name);
  AOTC_CUDNN_FUNCTIONS(AOTC_CUDNN_LOAD)
#undef AOTC_CUDNN_LOAD

  if (stream == nullptr) {
    if (int s = check_cuda(dev, "device_open", "cudaStreamCreateWithFlags",
                           cudaStreamCreateWithFlags(&dev->stream, cudaStreamNonBlocking), kDeviceUnavailable))
      return s;
    dev->owns_stream = true;
  } else {
    dev->stream = stream;
  }
  if (int s = check_dnn(dev, "device_open", "cudnnCreate", dev->dnn->Create(&dev->handle), kDeviceUnavailable)) {
    dev->handle = nullptr;
    return s;
  }
  return check_dnn(dev, "device_open", "cudnnSetStream", dev->dnn->SetStream(dev->handle, dev->stream),
                   kDeviceUnavailable);
}

// On failure everything made so far is released and dev->error says why.
int device_open(Device* dev, cudaStream_t stream) {
  *dev = Device{};
  const int status = device_open_steps(dev, stream);
  if (status != kOk) device_close(dev);
  return status;
}

// ---- Convolution (cuDNN) -----------------------------------------------------------

void conv_plan_destroy(Device* dev, ConvPlan* plan) {
  if (dev->dnn != nullptr) {
    if (plan->bias_desc != nullptr) dev->dnn->DestroyTensorDescriptor(plan->bias_desc);
    if (plan->relu_desc != nullptr) dev->dnn->DestroyActivationDescriptor(plan->relu_desc);
    if (plan->x_desc != nullptr) dev->dnn->DestroyTensorDescriptor(plan->x_desc);
    if (plan->y_desc != nullptr) dev->dnn->DestroyTensorDescriptor(plan->y_desc);
    if (plan->w_desc != nullptr) dev->dnn->DestroyFilterDescriptor(plan->w_desc);
    if (plan->conv_desc != nullptr) dev->dnn->DestroyConvolutionDescriptor(plan->conv_desc);
  }
  *plan = ConvPlan{};
}

static int conv_plan_steps(Device* dev, ConvPlan* p, int n, int c, int h, int w, int o, int kh, int kw, int pad_h,
                           int pad_w, int stride_h, int stride_w, int dil_h, int dil_w, int groups) {
  const CudnnApi& d = *dev->dnn;
  const char* op = "conv2d";
  int s;
#define AOTC_DNN(call, ...) \
  if ((s = check_dnn(dev, op, "cudnn" #call, d.call(__VA_ARGS__))) != kOk) return s;
  AOTC_DNN(CreateTensorDescriptor, &p->x_desc)
  AOTC_DNN(CreateTensorDescriptor, &p->y_desc)
  AOTC_DNN(CreateFilterDescriptor, &p->w_desc)
  AOTC_DNN(CreateConvolutionDescriptor, &p->conv_desc)
  AOTC_DNN(SetTensor4dDescriptor, p->x_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, w)
  AOTC_DNN(SetFilter4dDescriptor, p->w_desc, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, o, c / groups, kh, kw)
  AOTC_DNN(SetConvolution2dDescriptor, p->conv_desc, pad_h, pad_w, stride_h, stride_w, dil_h, dil_w,
           CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT)
  AOTC_DNN(SetConvolutionGroupCount, p->conv_desc, groups)
  // FMA math only: CUDNN_DEFAULT_MATH lets Ampere and newer round the inputs to TF32.
  AOTC_DNN(SetConvolutionMathType, p->conv_desc, CUDNN_FMA_MATH)
  int on, oc, oh, ow;
  AOTC_DNN(GetConvolution2dForwardOutputDim, p->conv_desc, p->x_desc, p->w_desc, &on, &oc, &oh, &ow)
  AOTC_DNN(SetTensor4dDescriptor, p->y_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, on, oc, oh, ow)
  // Each algorithm timed on this GPU, fastest first (as PyTorch's cudnn.benchmark), at
  // create; the heuristic's order where timing fails (say, out of device memory).
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int returned = 0;
  if (d.FindConvolutionForwardAlgorithm(dev->handle, p->x_desc, p->w_desc, p->conv_desc, p->y_desc,
                                        CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf) != CUDNN_STATUS_SUCCESS ||
      returned == 0) {
    cudaGetLastError();
    AOTC_DNN(GetConvolutionForwardAlgorithm_v7, dev->handle, p->x_desc, p->w_desc, p->conv_desc, p->y_desc,
             CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf)
  }
#undef AOTC_DNN
  // Take the first that works in FMA math within the workspace cap.
  int chosen = -1;
  for (int i = 0; i < returned && chosen < 0; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= kMaxConvWorkspace &&
        perf[i].mathType != CUDNN_TENSOR_OP_MATH && perf[i].mathType != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)
      chosen = i;
  if (chosen < 0)
    return fail(dev, kKernelFailed, "conv2d: no cuDNN algorithm for [%d,%d,%d,%d] x [%d,%d,%d,%d]", n, c, h, w, o,
                c / groups, kh, kw);
  p->algo = perf[chosen].algo;
  p->workspace_bytes = perf[chosen].memory;
  if (p->workspace_bytes > dev->workspace_bytes) {
    if (dev->workspace != nullptr) cudaFree(dev->workspace);
    dev->workspace = nullptr;
    dev->workspace_bytes = 0;
    if ((s = check_cuda(dev, op, "cudaMalloc", cudaMalloc(&dev->workspace, p->workspace_bytes))) != kOk) return s;
    dev->workspace_bytes = p->workspace_bytes;
  }
  return kOk;
}

// Descriptors and algorithm of one convolution [N,C,H,W] x [O,C/groups,KH,KW], symmetric padding.
int conv_plan_create(Device* dev, ConvPlan* plan, int n, int c, int h, int w, int o, int kh, int kw,
                            int pad_h, int pad_w, int stride_h, int stride_w, int dil_h, int dil_w, int groups) {
  *plan = ConvPlan{};
  if (dev->dnn == nullptr) return fail(dev, kDeviceUnavailable, "conv2d: the device is not open");
  if (groups < 1 || c % groups != 0 || o % groups != 0)
    return fail(dev, kInvalidArgument, "conv2d: %d input and %d output channels in %d groups", c, o, groups);
  const int status =
      conv_plan_steps(dev, plan, n, c, h, w, o, kh, kw, pad_h, pad_w, stride_h, stride_w, dil_h, dil_w, groups);
  if (status != kOk) conv_plan_destroy(dev, plan);
  return status;
}

// Makes the plan run relu(conv(x) + z + bias) as one call (conv_bias_relu_forward).
int conv_plan_fuse_relu(Device* dev, ConvPlan* p, int channels) {
  const CudnnApi& d = *dev->dnn;
  const char* op = "conv2d";
  int s;
  if ((s = check_dnn(dev, op, "cudnnCreateTensorDescriptor", d.CreateTensorDescriptor(&p->bias_desc))) != kOk ||
      (s = check_dnn(dev, op, "cudnnSetTensor4dDescriptor",
                     d.SetTensor4dDescriptor(p->bias_desc, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, channels, 1, 1))) !=
          kOk ||
      (s = check_dnn(dev, op, "cudnnCreateActivationDescriptor", d.CreateActivationDescriptor(&p->relu_desc))) != kOk ||
      (s = check_dnn(dev, op, "cudnnSetActivationDescriptor",
                     d.SetActivationDescriptor(p->relu_desc, CUDNN_ACTIVATION_RELU, CUDNN_PROPAGATE_NAN, 0.0))) != kOk)
    return s;
  p->fused = true;
  return kOk;
}

// y = relu(conv(x) + z + bias), z optional (nullptr). Returns kNotFused, and turns
// the plan's fusion off, where cuDNN does not support it for the plan's algorithm:
// the caller then runs conv_forward and an elementwise kernel instead.
int conv_bias_relu_forward(Device* dev, ConvPlan* plan, const float* x, const float* w, const float* z,
                                  const float* bias, float* y) {
  const float one = 1, zero = 0;
  const cudnnStatus_t s = dev->dnn->ConvolutionBiasActivationForward(
      dev->handle, &one, plan->x_desc, x, plan->w_desc, w, plan->conv_desc, plan->algo, dev->workspace,
      plan->workspace_bytes, z != nullptr ? &one : &zero, plan->y_desc, z != nullptr ? z : y, plan->bias_desc, bias,
      plan->relu_desc, plan->y_desc, y);
  if (s >= CUDNN_STATUS_NOT_SUPPORTED && s < CUDNN_STATUS_NOT_SUPPORTED + 1000) {  // 3000-3999: refused, not failed
    plan->fused = false;
    return kNotFused;
  }
  return check_dnn(dev, "conv2d", "cudnnConvolutionBiasActivationForward", s);
}

int conv_forward(Device* dev, const ConvPlan* plan, const float* x, const float* w, float* y) {
  const float one = 1, zero = 0;
  return check_dnn(dev, "conv2d", "cudnnConvolutionForward",
                   dev->dnn->ConvolutionForward(dev->handle, &one, plan->x_desc, x, plan->w_desc, w, plan->conv_desc,
                                                plan->algo, dev->workspace, plan->workspace_bytes, &zero,
                                                plan->y_desc, y));
}

// ---- Elementwise post-ops ----------------------------------------------------------

static bool reads_a(int kind) { return (kind >= kAffine && kind <= kBias) || kind >= kMax; }
static bool reads_b(int kind) { return kind == kAffine; }

// The reference evaluator's functions, in the same precision. relu and clamp keep NaN.
static __device__ float apply_post_op(const PostOp& p, float v, const int64_t* index, int rank) {
  switch (p.kind) {
    case kRelu: return v < 0.0f ? 0.0f : v;
    case kClamp: v = v < p.min ? p.min : v; return p.max < v ? p.max : v;
    case kHardSwish: {
      const double d = v;
      double t = d + 3;
      t = t < 0 ? 0 : (6 < t ? 6 : t);
      return static_cast<float>(d * t / 6);
    }
    case kSigmoid: return static_cast<float>(1 / (1 + exp(-static_cast<double>(v))));
    case kTanh: return static_cast<float>(tanh(static_cast<double>(v)));
    case kElu: return v > 0 ? v : static_cast<float>(p.min * expm1(static_cast<double>(v)));
    case kSoftplus: return static_cast<float>(log1p(exp(static_cast<double>(v))));
    case kMax:
    case kMin: {
      const float a = p.a[offset_of(index, p.a_strides, rank)];
      if (isnan(v) || isnan(a)) return v + a;
      return p.kind == kMax ? fmaxf(v, a) : fminf(v, a);
    }
    case kDiv: return __fdiv_rn(v, p.a[offset_of(index, p.a_strides, rank)]);
    case kAffine:
      return static_cast<float>(__dadd_rn(__dmul_rn(v, p.a[offset_of(index, p.a_strides, rank)]),
                                          p.b[offset_of(index, p.b_strides, rank)]));
    case kAdd:
    case kBias: return __fadd_rn(v, p.a[offset_of(index, p.a_strides, rank)]);
    case kMul: return __fmul_rn(v, p.a[offset_of(index, p.a_strides, rank)]);
    case kPRelu: return v >= 0 ? v : __fmul_rn(p.a[offset_of(index, p.a_strides, rank)], v);
  }
  return v;
}

static __global__ void elementwise_kernel(const Elementwise e, const float* in, float* out, int64_t total) {
  for (int64_t i = thread_index(); i < total; i += thread_count()) {
    int64_t index[kMaxRank];
    unravel(i, e.shape, e.rank, index);
    float v = in[offset_of(index, e.in_strides, e.rank)];
#pragma unroll
    for (int k = 0; k < kMaxPostOps; ++k)
      if (k < e.count) v = apply_post_op(e.ops[k], v, index, e.rank);
    out[i] = v;
  }
}

// Drops size-1 dims and merges neighbours that every operand walks as one, so that
// the kernel unravels fewer dims (bias + relu on [1,C,H,W] becomes [C,H*W]).
static void collapse_dims(Elementwise& e) {
  const auto each_strides = [&e](auto fn) {
    fn(e.in_strides);
    for (int k = 0; k < e.count; ++k) {
      if (reads_a(e.ops[k].kind)) fn(e.ops[k].a_strides);
      if (reads_b(e.ops[k].kind)) fn(e.ops[k].b_strides);
    }
  };
  int r = 0;
  for (int d = 0; d < e.rank; ++d) {
    if (e.shape[d] == 1) continue;
    bool merge = r > 0;
    each_strides([&](int64_t* s) { merge = merge && s[r - 1] == s[d] * e.shape[d]; });
    if (merge) {
      e.shape[r - 1] *= e.shape[d];
      each_strides([&](int64_t* s) { s[r - 1] = s[d]; });
    } else {
      e.shape[r] = e.shape[d];
      each_strides([&](int64_t* s) { s[r] = s[d]; });
      ++r;
    }
  }
  e.rank = r;
}

// out[i] = ops(in[i broadcast]); in may equal out.
int elementwise(Device* dev, const Elementwise& e, const float* in, float* out) {
  if (e.rank < 0 || e.rank > kMaxRank || e.count < 0 || e.count > kMaxPostOps)
    return fail(dev, kInvalidArgument, "elementwise: rank %d with %d post-ops", e.rank, e.count);
  Elementwise c = e;
  collapse_dims(c);
  int64_t total = 1;
  for (int d = 0; d < c.rank; ++d) total *= c.shape[d];
  return launch(dev, "elementwise", total, elementwise_kernel, c, in, out, total);
}

// ---- Pooling -----------------------------------------------------------------------

struct Pool2d {
  int n, c, h, w, oh, ow, kh, kw, sh, sw, pad_top, pad_left, pad_bottom, pad_right, dh, dw;
  bool is_max, count_include_pad;
};

// Max: padding acts as -inf and NaN propagates. Average: the reference's divisor,
// with count_include_pad the window clipped to the padded input (a ceil_mode
// overhang past the end padding does not count), else the input elements read.
static __global__ void pool2d_kernel(const Pool2d p, const float* x, float* y) {
  const int64_t total = int64_t{p.n} * p.c * p.oh * p.ow;
  for (int64_t i = thread_index(); i < total; i += thread_count()) {
    const int64_t ow = i % p.ow, oh = i / p.ow % p.oh, nc = i / p.ow / p.oh;
    const float* plane = x + nc * p.h * p.w;
    const int64_t h0 = oh * p.sh - p.pad_top, w0 = ow * p.sw - p.pad_left;
    if (p.is_max) {
      float best = -INFINITY;
      for (int kh = 0; kh < p.kh; ++kh)
        for (int kw = 0; kw < p.kw; ++kw) {
          const int64_t ih = h0 + int64_t{kh} * p.dh, iw = w0 + int64_t{kw} * p.dw;
          if (ih < 0 || ih >= p.h || iw < 0 || iw >= p.w) continue;
          const float v = plane[ih * p.w + iw];
          if (v > best || isnan(v)) best = v;
        }
      y[i] = best;
    } else {
      const int64_t h1 = min(h0 + p.kh, int64_t{p.h} + p.pad_bottom), w1 = min(w0 + p.kw, int64_t{p.w} + p.pad_right);
      double sum = 0;
      int64_t count = 0;
      for (int64_t ih = max(h0, int64_t{0}); ih < min(h1, int64_t{p.h}); ++ih)
        for (int64_t iw = max(w0, int64_t{0}); iw < min(w1, int64_t{p.w}); ++iw, ++count) sum += plane[ih * p.w + iw];
      y[i] = static_cast<float>(sum / static_cast<double>(p.count_include_pad ? (h1 - h0) * (w1 - w0) : count));
    }
  }
}

// oh/ow come from the caller (ceil_mode is decided there); pads may be asymmetric.
int pool2d(Device* dev, const float* x, float* y, int n, int c, int h, int w, int oh, int ow, int kh, int kw,
                  int sh, int sw, int pad_top, int pad_left, int pad_bottom, int pad_right, int dh, int dw,
                  bool is_max, bool count_include_pad) {
  const Pool2d p{n, c, h, w, oh, ow, kh, kw, sh, sw, pad_top, pad_left, pad_bottom, pad_right, dh, dw,
                 is_max, count_include_pad};
  return launch(dev, is_max ? "max_pool2d" : "avg_pool2d", int64_t{n} * c * oh * ow, pool2d_kernel, p, x, y);
}

// Window of output o over an input of `in`: [floor(o*in/out), ceil((o+1)*in/out)).
static __global__ void adaptive_avg_pool2d_kernel(const float* x, float* y, int64_t nc, int64_t h, int64_t w, int64_t oh,
                                           int64_t ow) {
  for (int64_t i = thread_index(); i < nc * oh * ow; i += thread_count()) {
    const int64_t ox = i % ow, oy = i / ow % oh;
    const float* plane = x + i / ow / oh * h * w;
    const int64_t h0 = oy * h / oh, h1 = ((oy + 1) * h + oh - 1) / oh;
    const int64_t w0 = ox * w / ow, w1 = ((ox + 1) * w + ow - 1) / ow;
    double sum = 0;
    for (int64_t ih = h0; ih < h1; ++ih)
      for (int64_t iw = w0; iw < w1; ++iw) sum += plane[ih * w + iw];
    y[i] = static_cast<float>(sum / static_cast<double>((h1 - h0) * (w1 - w0)));
  }
}

int adaptive_avg_pool2d(Device* dev, const float* x, float* y, int n, int c, int h, int w, int oh, int ow) {
  return launch(dev, "adaptive_avg_pool2d", int64_t{n} * c * oh * ow, adaptive_avg_pool2d_kernel, x, y,
                int64_t{n} * c, int64_t{h}, int64_t{w}, int64_t{oh}, int64_t{ow});
}

// ---- Linear, concat, softmax -------------------------------------------------------

static __device__ float warp_sum(float v) {
  for (int s = 16; s > 0; s >>= 1) v += __shfl_xor_sync(0xffffffffu, v, s);
  return v;
}

// One warp per output y[row, col]; consecutive warps share a row of x.
static __global__ void linear_kernel(const float* x, const float* w, const float* bias, float* y, int64_t n, int64_t k,
                              int64_t m, bool vec4) {
  const int lane = threadIdx.x % 32;
  for (int64_t out = thread_index() / 32; out < n * m; out += thread_count() / 32) {
    const int64_t row = out / m, col = out % m;
    const float* xr = x + row * k;
    const float* wr = w + col * k;
    float acc = 0;
    if (vec4) {
      for (int64_t j = lane; j < k / 4; j += 32) {
        const float4 a = reinterpret_cast<const float4*>(xr)[j], b = reinterpret_cast<const float4*>(wr)[j];
        acc = fmaf(a.x, b.x, fmaf(a.y, b.y, fmaf(a.z, b.z, fmaf(a.w, b.w, acc))));
      }
    } else {
      for (int64_t j = lane; j < k; j += 32) acc = fmaf(xr[j], wr[j], acc);
    }
    acc = warp_sum(acc);
    if (lane == 0) y[out] = bias != nullptr ? acc + bias[col] : acc;
  }
}

int linear(Device* dev, const float* x, const float* w, const float* bias, float* y, int64_t n, int64_t k,
                  int64_t m) {
  const bool vec4 = k % 4 == 0 && (reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(w)) % 16 == 0;
  return launch(dev, "linear", n * m * 32, linear_kernel, x, w, bias, y, n, k, m, vec4);
}

static __global__ void concat_copy_kernel(const float* in, float* out, int64_t outer, int64_t in_inner, int64_t out_inner,
                                   int64_t offset) {
  for (int64_t i = thread_index(); i < outer * in_inner; i += thread_count())
    out[i / in_inner * out_inner + offset + i % in_inner] = in[i];
}

// out[o, offset + j] = in[o, j]: one operand of a concat.
int concat_copy(Device* dev, const float* in, float* out, int64_t outer, int64_t in_inner, int64_t out_inner,
                       int64_t offset) {
  return launch(dev, "concat", outer * in_inner, concat_copy_kernel, in, out, outer, in_inner, out_inner, offset);
}

// One warp per softmax row (outer * inner of them, `axis` elements `inner` apart):
// exp(x - max) / sum in double as the reference; NaN never wins the max, so it
// reaches the output through the sum.
static __global__ void softmax_kernel(const float* x, float* y, int64_t outer, int64_t axis, int64_t inner) {
  const int lane = threadIdx.x % 32;
  for (int64_t row = thread_index() / 32; row < outer * inner; row += thread_count() / 32) {
    const int64_t base = row / inner * axis * inner + row % inner;
    float max = -INFINITY;
    for (int64_t k = lane; k < axis; k += 32) {
      const float v = x[base + k * inner];
      max = max < v ? v : max;
    }
    for (int s = 16; s > 0; s >>= 1) {
      const float other = __shfl_xor_sync(0xffffffffu, max, s);
      max = max < other ? other : max;
    }
    double sum = 0;
    for (int64_t k = lane; k < axis; k += 32) sum += exp(static_cast<double>(x[base + k * inner]) - max);
    for (int s = 16; s > 0; s >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, s);
    for (int64_t k = lane; k < axis; k += 32)
      y[base + k * inner] = static_cast<float>(exp(static_cast<double>(x[base + k * inner]) - max) / sum);
  }
}

int softmax(Device* dev, const float* x, float* y, int64_t outer, int64_t axis, int64_t inner) {
  return launch(dev, "softmax", outer * inner * 32, softmax_kernel, x, y, outer, axis, inner);
}

// ---- Data movement: pad, transpose, depth_to_space ---------------------------------

struct PadParams {
  int rank;
  int64_t in_shape[kMaxRank], out_shape[kMaxRank], begin[kMaxRank];
  float value;
};

static __global__ void pad_kernel(const PadParams p, const float* x, float* y, int64_t total) {
  for (int64_t i = thread_index(); i < total; i += thread_count()) {
    int64_t index[kMaxRank];
    unravel(i, p.out_shape, p.rank, index);
    int64_t src = 0;
    bool inside = true;
#pragma unroll
    for (int d = 0; d < kMaxRank; ++d)
      if (d < p.rank) {
        const int64_t s = index[d] - p.begin[d];
        inside = inside && s >= 0 && s < p.in_shape[d];
        src = src * p.in_shape[d] + s;
      }
    y[i] = inside ? x[src] : p.value;
  }
}

// pads: begin of every dim, then end of every dim (negative crops).
int pad(Device* dev, const float* x, float* y, int rank, const int64_t* in_shape, const int64_t* pads,
               float value) {
  if (rank < 1 || rank > kMaxRank) return fail(dev, kInvalidArgument, "pad: rank %d", rank);
  PadParams p{};
  p.rank = rank;
  p.value = value;
  int64_t total = 1;
  for (int d = 0; d < rank; ++d) {
    p.in_shape[d] = in_shape[d];
    p.begin[d] = pads[d];
    p.out_shape[d] = in_shape[d] + pads[d] + pads[rank + d];
    if (p.out_shape[d] < 0) return fail(dev, kInvalidArgument, "pad: dim %d would have extent %lld", d,
                                        static_cast<long long>(p.out_shape[d]));
    total *= p.out_shape[d];
  }
  return launch(dev, "pad", total, pad_kernel, p, x, y, total);
}

struct TransposeParams {
  int rank;
  int64_t out_shape[kMaxRank];
  int64_t in_strides[kMaxRank];  // stride in x of output dim k, i.e. of x's dim perm[k]
};

static __global__ void transpose_kernel(const TransposeParams p, const float* x, float* y, int64_t total) {
  for (int64_t i = thread_index(); i < total; i += thread_count()) {
    int64_t index[kMaxRank];
    unravel(i, p.out_shape, p.rank, index);
    y[i] = x[offset_of(index, p.in_strides, p.rank)];
  }
}

// y.shape[k] = x.shape[perm[k]].
int transpose(Device* dev, const float* x, float* y, int rank, const int64_t* in_shape, const int* perm) {
  if (rank < 1 || rank > kMaxRank) return fail(dev, kInvalidArgument, "transpose: rank %d", rank);
  int64_t strides[kMaxRank];
  int64_t total = 1;
  for (int d = rank - 1; d >= 0; --d) {
    strides[d] = total;
    total *= in_shape[d];
  }
  TransposeParams p{};
  p.rank = rank;
  unsigned seen = 0;
  for (int k = 0; k < rank; ++k) {
    if (perm[k] < 0 || perm[k] >= rank || (seen >> perm[k] & 1) != 0)
      return fail(dev, kInvalidArgument, "transpose: perm is not a permutation of %d dims", rank);
    seen |= 1u << perm[k];
    p.out_shape[k] = in_shape[perm[k]];
    p.in_strides[k] = strides[perm[k]];
  }
  return launch(dev, "transpose", total, transpose_kernel, p, x, y, total);
}

// TensorFlow's DCR order: y[n, c, h*b + i, w*b + j] = x[n, (i*b + j) * C_out + c, h, w].
static __global__ void depth_to_space_kernel(const float* x, float* y, int64_t n, int64_t c_out, int64_t oh, int64_t ow,
                                      int64_t b) {
  for (int64_t i = thread_index(); i < n * c_out * oh * ow; i += thread_count()) {
    const int64_t w = i % ow, h = i / ow % oh, c = i / ow / oh % c_out, batch = i / ow / oh / c_out;
    const int64_t source_channel = (h % b * b + w % b) * c_out + c;
    y[i] = x[((batch * c_out * b * b + source_channel) * (oh / b) + h / b) * (ow / b) + w / b];
  }
}

int depth_to_space(Device* dev, const float* x, float* y, int n, int c, int h, int w, int block) {
  if (block < 1 || c % (block * block) != 0)
    return fail(dev, kInvalidArgument, "depth_to_space: %d channels, block %d", c, block);
  return launch(dev, "depth_to_space", int64_t{n} * c * h * w, depth_to_space_kernel, x, y, int64_t{n},
                int64_t{c / (block * block)}, int64_t{h} * block, int64_t{w} * block, int64_t{block});
}

// ---- Resize (TensorFlow Lite's sampling, positions in float as TFLite) -------------

struct ResizeParams {
  int64_t nc, h, w, oh, ow;
  float scale_h, scale_w;
  bool bilinear, align_corners, half_pixel_centers;
};

// Bilinear: output o blends input lo and hi with weight (lo == hi near the borders).
static __device__ void bilinear_tap(int64_t o, int64_t in, float scale, bool half_pixel, int64_t* lo, int64_t* hi,
                                    double* weight) {
  const float o_f = static_cast<float>(o);
  const float src = half_pixel ? __fsub_rn(__fmul_rn(__fadd_rn(o_f, 0.5f), scale), 0.5f) : __fmul_rn(o_f, scale);
  *lo = max(static_cast<int64_t>(floorf(src)), int64_t{0});
  *hi = min(static_cast<int64_t>(ceilf(src)), in - 1);
  *weight = static_cast<double>(src) - static_cast<double>(*lo);
}

// Nearest: floor, or round half away from zero with align_corners.
static __device__ int64_t nearest_index(int64_t o, int64_t in, float scale, bool align_corners, bool half_pixel) {
  const float src = __fmul_rn(__fadd_rn(static_cast<float>(o), half_pixel ? 0.5f : 0.0f), scale);
  const int64_t i = min(static_cast<int64_t>(align_corners ? roundf(src) : floorf(src)), in - 1);
  return half_pixel ? max(i, int64_t{0}) : i;
}

static __global__ void resize_kernel(const ResizeParams p, const float* x, float* y) {
  for (int64_t i = thread_index(); i < p.nc * p.oh * p.ow; i += thread_count()) {
    const int64_t ox = i % p.ow, oy = i / p.ow % p.oh;
    const float* plane = x + i / p.ow / p.oh * p.h * p.w;
    if (!p.bilinear) {
      y[i] = plane[nearest_index(oy, p.h, p.scale_h, p.align_corners, p.half_pixel_centers) * p.w +
                   nearest_index(ox, p.w, p.scale_w, p.align_corners, p.half_pixel_centers)];
      continue;
    }
    int64_t r0, r1, c0, c1;
    double dy, dx;
    bilinear_tap(oy, p.h, p.scale_h, p.half_pixel_centers, &r0, &r1, &dy);
    bilinear_tap(ox, p.w, p.scale_w, p.half_pixel_centers, &c0, &c1, &dx);
    const auto term = [&](int64_t r, int64_t c, double wy, double wx) {
      return __dmul_rn(__dmul_rn(plane[r * p.w + c], wy), wx);
    };
    const double v = __dadd_rn(__dadd_rn(__dadd_rn(term(r0, c0, 1 - dy, 1 - dx), term(r1, c0, dy, 1 - dx)),
                                         term(r0, c1, 1 - dy, dx)),
                               term(r1, c1, dy, dx));
    y[i] = static_cast<float>(v);
  }
}

// Sample scale in float: in/out, or (in-1)/(out-1) with align_corners.
static float resize_scale(int in, int out, bool align_corners) {
  return align_corners && out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                  : static_cast<float>(in) / static_cast<float>(out);
}

int resize(Device* dev, const float* x, float* y, int n, int c, int h, int w, int oh, int ow, bool bilinear,
                  bool align_corners, bool half_pixel_centers) {
  const ResizeParams p{int64_t{n} * c, h, w, oh, ow, resize_scale(h, oh, align_corners),
                       resize_scale(w, ow, align_corners), bilinear, align_corners, half_pixel_centers};
  return launch(dev, bilinear ? "resize_bilinear" : "resize_nearest", p.nc * oh * ow, resize_kernel, p, x, y);
}

// ---- Transposed convolution ----------------------------------------------------------

struct ConvTranspose2d {
  int n, c, h, w, o, kh, kw, sh, sw, pad_top, pad_left, oh, ow;
};

// Gather: output row oy reads input row ih through kernel row ky where
// ih * sh + ky = oy + pad_top, i.e. ky = (oy + pad_top) mod sh, stepping by sh.
static __global__ void conv_transpose2d_kernel(const ConvTranspose2d p, const float* x, const float* wt, const float* bias,
                                        float* y) {
  const int64_t total = int64_t{p.n} * p.o * p.oh * p.ow;
  for (int64_t i = thread_index(); i < total; i += thread_count()) {
    const int64_t ox = i % p.ow, oy = i / p.ow % p.oh, o = i / p.ow / p.oh % p.o, batch = i / p.ow / p.oh / p.o;
    const int64_t ty = oy + p.pad_top, tx = ox + p.pad_left;
    float acc = bias != nullptr ? bias[o] : 0.0f;
    for (int64_t c = 0; c < p.c; ++c) {
      const float* plane = x + (batch * p.c + c) * p.h * p.w;
      const float* kernel = wt + (c * p.o + o) * p.kh * p.kw;
      for (int64_t ky = ty % p.sh; ky < p.kh && ky <= ty; ky += p.sh) {
        const int64_t ih = (ty - ky) / p.sh;
        if (ih >= p.h) continue;
        for (int64_t kx = tx % p.sw; kx < p.kw && kx <= tx; kx += p.sw) {
          const int64_t iw = (tx - kx) / p.sw;
          if (iw < p.w) acc = fmaf(plane[ih * p.w + iw], kernel[ky * p.kw + kx], acc);
        }
      }
    }
    y[i] = acc;
  }
}

// Weights [C, O, KH, KW] (PyTorch's layout), groups 1; pads cropped from the full output.
int conv_transpose2d(Device* dev, const float* x, const float* w, const float* bias, float* y, int n, int c,
                            int h, int w_in, int o, int kh, int kw, int sh, int sw, int pad_top, int pad_left, int oh,
                            int ow) {
  const ConvTranspose2d p{n, c, h, w_in, o, kh, kw, sh, sw, pad_top, pad_left, oh, ow};
  return launch(dev, "conv_transpose2d", int64_t{n} * o * oh * ow, conv_transpose2d_kernel, p, x, w, bias, y);
}

}  // namespace AOTC_CUDA_NS
