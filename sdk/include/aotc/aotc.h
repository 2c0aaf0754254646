/* aotc SDK: the one header shared by model libraries compiled by aotc and the
 * apps that link them. Plain C, with a thin C++ layer at the end.
 *
 * Ownership and memory, in one paragraph: the app owns everything. It passes
 * an arena (a block of at least <model>_arena_bytes() bytes, aligned to
 * AOTC_ARENA_ALIGNMENT) and the input and output buffers; a model library never
 * allocates, never keeps a pointer past the call, and never prints. One arena
 * must not be used by two runs at the same time; different arenas may.
 *
 * Everything here is header-only (static inline), so two model libraries in one
 * app never carry two copies of a symbol from this file.
 */
#ifndef AOTC_SDK_AOTC_H_
#define AOTC_SDK_AOTC_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Arenas must be aligned to this many bytes (cache line, widest vector). */
#define AOTC_ARENA_ALIGNMENT 64

/* What a call returned. Stable numbers: they are part of the C ABI. */
typedef enum aotc_status {
  AOTC_OK = 0,
  /* The arena pointer is null. */
  AOTC_ERROR_NULL_ARENA = 1,
  /* The arena is not aligned to AOTC_ARENA_ALIGNMENT. */
  AOTC_ERROR_MISALIGNED_ARENA = 2,
  /* The arena has fewer bytes than the model needs (<model>_arena_bytes()). */
  AOTC_ERROR_ARENA_TOO_SMALL = 3,
  /* An input or output pointer (or the array of them) is null. */
  AOTC_ERROR_NULL_TENSOR = 4,
  /* A generated kernel failed at run time; aotc_context.error says why. */
  AOTC_ERROR_KERNEL_FAILED = 5,
  /* An argument is out of range (e.g. a negative thread count). */
  AOTC_ERROR_INVALID_ARGUMENT = 6,
  /* The model was compiled for a GPU and no usable device or driver exists. */
  AOTC_ERROR_DEVICE_UNAVAILABLE = 7
} aotc_status;

static inline const char* aotc_status_message(int status) {
  switch (status) {
    case AOTC_OK: return "ok";
    case AOTC_ERROR_NULL_ARENA: return "the arena pointer is null";
    case AOTC_ERROR_MISALIGNED_ARENA: return "the arena is not aligned to AOTC_ARENA_ALIGNMENT (64) bytes";
    case AOTC_ERROR_ARENA_TOO_SMALL: return "the arena is smaller than the model's arena_bytes()";
    case AOTC_ERROR_NULL_TENSOR: return "an input or output pointer is null";
    case AOTC_ERROR_KERNEL_FAILED: return "a kernel failed at run time";
    case AOTC_ERROR_INVALID_ARGUMENT: return "an argument is out of range";
    case AOTC_ERROR_DEVICE_UNAVAILABLE: return "no usable GPU device or driver";
    default: return "unknown aotc status";
  }
}

/* Called after each kernel call when set: the layer's name (the fused group's
 * output tensor) and the call's wall time in microseconds. A layer may make
 * several calls, one after the other under the same name (a Winograd
 * convolution: input transform, GEMM, output transform); the report lists
 * the calls in the same order. */
typedef void (*aotc_timing_callback)(void* user_data, const char* layer, double microseconds);

/* Per-call state a run may use: the optional timing hook, and room for the
 * message of a kernel failure. Zero-initialise it (aotc_context ctx = {0}). */
typedef struct aotc_context {
  aotc_timing_callback timing;
  void* timing_user_data;
  char error[256];
} aotc_context;

/* Element types of model inputs and outputs. */
typedef enum aotc_dtype {
  AOTC_FLOAT32 = 0
} aotc_dtype;

/* A tensor's name, element type and shape, as constants in each model's header. */
typedef struct aotc_tensor_info {
  const char* name;
  aotc_dtype dtype;
  int rank;
  int64_t shape[8];
  int64_t elements;
} aotc_tensor_info;

/* The checks every run makes on its arena, before any work. */
static inline aotc_status aotc_check_arena(const void* arena, size_t arena_bytes, size_t required_bytes) {
  if (arena == NULL) return AOTC_ERROR_NULL_ARENA;
  if (((uintptr_t)arena) % AOTC_ARENA_ALIGNMENT != 0) return AOTC_ERROR_MISALIGNED_ARENA;
  if (arena_bytes < required_bytes) return AOTC_ERROR_ARENA_TOO_SMALL;
  return AOTC_OK;
}

#ifdef __cplusplus
} /* extern "C" */

namespace aotc {

// The C status as a C++ enum; same values.
enum class Status : int {
  kOk = AOTC_OK,
  kNullArena = AOTC_ERROR_NULL_ARENA,
  kMisalignedArena = AOTC_ERROR_MISALIGNED_ARENA,
  kArenaTooSmall = AOTC_ERROR_ARENA_TOO_SMALL,
  kNullTensor = AOTC_ERROR_NULL_TENSOR,
  kKernelFailed = AOTC_ERROR_KERNEL_FAILED,
  kInvalidArgument = AOTC_ERROR_INVALID_ARGUMENT,
  kDeviceUnavailable = AOTC_ERROR_DEVICE_UNAVAILABLE,
};

inline const char* message(Status s) { return aotc_status_message(static_cast<int>(s)); }

using TimingCallback = aotc_timing_callback;
using TensorInfo = aotc_tensor_info;

}  // namespace aotc
#endif /* __cplusplus */

#endif /* AOTC_SDK_AOTC_H_ */
