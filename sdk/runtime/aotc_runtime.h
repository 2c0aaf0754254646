// What a generated runner calls in the runtime every model library carries
// (aotc_runtime.cpp, compiled as the library's own object). A runner is data: a
// table of kernel calls over buffer descriptors, which aotc_rt1_run_calls walks;
// so that the runner, the one source that changes with every model, compiles in
// a fraction of a second however many layers the model has.
#ifndef AOTC_RUNTIME_H_
#define AOTC_RUNTIME_H_

#include <HalideRuntime.h>

#include <cstddef>
#include <cstdint>

#include "aotc/aotc.h"

extern "C" {

// A kernel's argv entry point, which Halide emits beside each pipeline:
// args[0] points at the user context, args[1 + i] is its i-th buffer.
typedef int (*aotc_rt1_kernel)(void** args);

// Where a buffer's data lies.
enum aotc_rt1_source { AOTC_RT1_ARENA = 0, AOTC_RT1_WEIGHTS = 1, AOTC_RT1_INPUT = 2, AOTC_RT1_OUTPUT = 3 };

// One buffer argument of a kernel call: elements of `type` (halide_type_code_t * 256 +
// bits: float32, int8, uint8 or int32), `rank` dimensions whose extents and strides (in
// elements, innermost first) are dims[2 d], dims[2 d + 1], at byte `offset` of the arena or
// the weights blob, or the caller's input or output number `offset`. Plain integers, so
// that a runner's tables are constant data (halide_dimension_t's constructors would make
// them run-time initialised).
struct aotc_rt1_buffer {
  int64_t offset;
  const int32_t* dims;
  int32_t rank;
  int32_t source;  // an aotc_rt1_source
  int32_t type;
};

// One layer's kernel call, over buffers[first .. first + count).
struct aotc_rt1_call {
  const char* layer;
  aotc_rt1_kernel kernel;
  int32_t first;
  int32_t count;
};

// Runs the calls in order on `context` (whose error names the failing layer;
// whose timing hook, if set, gets each layer's time): prepares the pool and the
// error handler, registers the run. `bound`, `dims` and `args` are the caller's
// scratch for the widest call: a buffer per argument, a dimension per dimension
// of its arguments, an argument pointer per argument and one more.
// Returns AOTC_OK or AOTC_ERROR_KERNEL_FAILED.
int aotc_rt1_run_calls(aotc_context* context, const aotc_rt1_call* calls, int num_calls,
                       const aotc_rt1_buffer* buffers, uint8_t* arena, const uint8_t* weights,
                       const void* const* inputs, void* const* outputs, halide_buffer_t* bound,
                       halide_dimension_t* dims, void** args);

// Threads taking part in parallel loops, the caller included (0: one per core).
void aotc_rt1_set_num_threads(int threads);

// An external weights file's checks (aotc_weights.h): its header; its header and CRC-32.
int aotc_rt1_check_weights_header(const void* weights, size_t weights_bytes, const char* model_name,
                                  uint64_t fingerprint, uint64_t payload_bytes);
int aotc_rt1_check_weights(const void* weights, size_t weights_bytes, const char* model_name, uint64_t fingerprint,
                           uint64_t payload_bytes);

}  // extern "C"

#endif  // AOTC_RUNTIME_H_
