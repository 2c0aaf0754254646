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
/* A GPU library's run_device takes device tensors aligned to this many bytes
 * (its kernels move float4s; cudaMalloc's pointers are 256-byte aligned). */
#define AOTC_DEVICE_TENSOR_ALIGNMENT 16

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
  AOTC_ERROR_DEVICE_UNAVAILABLE = 7,
  /* External weights (aotc --weights=external): the weights pointer is null. */
  AOTC_ERROR_NULL_WEIGHTS = 8,
  /* The weights are not aligned to AOTC_ARENA_ALIGNMENT (mmap and malloc'd copies of
   * at least 64-byte alignment are). */
  AOTC_ERROR_MISALIGNED_WEIGHTS = 9,
  /* The weights are fewer bytes than their header and payload. */
  AOTC_ERROR_WEIGHTS_TRUNCATED = 10,
  /* The weights file was written for another model (name, layout or size differ). */
  AOTC_ERROR_WEIGHTS_WRONG_MODEL = 11,
  /* The weights file has a format version this library does not read. */
  AOTC_ERROR_WEIGHTS_WRONG_VERSION = 12,
  /* Not an aotc weights file (magic), or its payload fails the checksum. */
  AOTC_ERROR_WEIGHTS_CORRUPTED = 13,
  /* A device tensor given to a GPU library's run_device is not aligned to
   * AOTC_DEVICE_TENSOR_ALIGNMENT. */
  AOTC_ERROR_MISALIGNED_TENSOR = 14,
  /* A typed run (<model>_run_typed) was given an input or output of another element
   * type than the model's (<model>_inputs[i].dtype, <model>_outputs[i].dtype). */
  AOTC_ERROR_WRONG_DTYPE = 15
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
    case AOTC_ERROR_NULL_WEIGHTS: return "the weights pointer is null";
    case AOTC_ERROR_MISALIGNED_WEIGHTS: return "the weights are not aligned to AOTC_ARENA_ALIGNMENT (64) bytes";
    case AOTC_ERROR_WEIGHTS_TRUNCATED: return "the weights are shorter than their header and payload";
    case AOTC_ERROR_WEIGHTS_WRONG_MODEL: return "the weights file was written for another model";
    case AOTC_ERROR_WEIGHTS_WRONG_VERSION: return "the weights file has a format version this library does not read";
    case AOTC_ERROR_WEIGHTS_CORRUPTED: return "the weights are not an aotc weights file or fail their checksum";
    case AOTC_ERROR_MISALIGNED_TENSOR:
      return "a device tensor is not aligned to AOTC_DEVICE_TENSOR_ALIGNMENT (16) bytes";
    case AOTC_ERROR_WRONG_DTYPE: return "an input or output has another element type than the model's";
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

/* Element types of model inputs and outputs: float32, or int8 / uint8 quantized per tensor
 * (real = scale * (q - zero_point)). Stable numbers: part of the C ABI. */
typedef enum aotc_dtype {
  AOTC_FLOAT32 = 0,
  AOTC_INT8 = 1,
  AOTC_UINT8 = 2
} aotc_dtype;

/* A tensor's name, element type, shape and (for AOTC_INT8, AOTC_UINT8) quantization, as
 * constants in each model's header; scale 0 and zero_point 0 for float32. */
typedef struct aotc_tensor_info {
  const char* name;
  aotc_dtype dtype;
  int rank;
  int64_t shape[8];
  int64_t elements;
  float scale;
  int32_t zero_point;
} aotc_tensor_info;

/* The file aotc --weights=external writes beside the library, <name>.weights: this
 * header (little-endian), then the packed weights (payload_bytes) at offset
 * header_bytes, a multiple of 64, so that a 64-byte aligned file image has aligned
 * weights. `fingerprint` identifies the model's weight layout (its name, and the
 * offset and shape of every weight tensor): new weights for the same graph keep it;
 * another graph's do not. `payload_crc32` is CRC-32 (IEEE, as zlib's crc32) of the
 * payload. */
#define AOTC_WEIGHTS_MAGIC "AOTCWGHT"
#define AOTC_WEIGHTS_VERSION 1
typedef struct aotc_weights_header {
  char magic[8];
  uint32_t version;
  uint32_t header_bytes;
  uint64_t payload_bytes;
  uint64_t fingerprint;
  uint32_t payload_crc32;
  uint32_t reserved;
  char model_name[88]; /* NUL-padded; a longer name is cut (the fingerprint has it all) */
} aotc_weights_header;

/* The checks every run makes on its arena, before any work. */
static inline aotc_status aotc_check_arena(const void* arena, size_t arena_bytes, size_t required_bytes) {
  if (arena == NULL) return AOTC_ERROR_NULL_ARENA;
  if (((uintptr_t)arena) % AOTC_ARENA_ALIGNMENT != 0) return AOTC_ERROR_MISALIGNED_ARENA;
  if (arena_bytes < required_bytes) return AOTC_ERROR_ARENA_TOO_SMALL;
  return AOTC_OK;
}

#ifdef __cplusplus
} /* extern "C" */
#endif

/* The C++ layer (namespace aotc). aotc's own compiler, which has types of these
 * names, includes this header with AOTC_SDK_C_ONLY defined. */
#if defined(__cplusplus) && !defined(AOTC_SDK_C_ONLY)

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
  kNullWeights = AOTC_ERROR_NULL_WEIGHTS,
  kMisalignedWeights = AOTC_ERROR_MISALIGNED_WEIGHTS,
  kWeightsTruncated = AOTC_ERROR_WEIGHTS_TRUNCATED,
  kWeightsWrongModel = AOTC_ERROR_WEIGHTS_WRONG_MODEL,
  kWeightsWrongVersion = AOTC_ERROR_WEIGHTS_WRONG_VERSION,
  kWeightsCorrupted = AOTC_ERROR_WEIGHTS_CORRUPTED,
  kMisalignedTensor = AOTC_ERROR_MISALIGNED_TENSOR,
  kWrongDtype = AOTC_ERROR_WRONG_DTYPE,
};

inline const char* message(Status s) { return aotc_status_message(static_cast<int>(s)); }

using TimingCallback = aotc_timing_callback;
using TensorInfo = aotc_tensor_info;

}  // namespace aotc
#endif /* __cplusplus && !AOTC_SDK_C_ONLY */

#endif /* AOTC_SDK_AOTC_H_ */
