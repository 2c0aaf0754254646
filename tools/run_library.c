/* Runs a model library compiled by aotc on raw float32 input files and writes
 * its outputs, concatenated, to one raw float32 file (an int8 or uint8 input's file holds
 * its integers as float32 values; an integer output is written as float32 values too):
 *
 *   run_library OUTPUT.bin INPUT0.bin [INPUT1.bin ...]
 *
 * Built per model with -DAOTC_MODEL=<name> against OUT/<name>.h and
 * OUT/lib<name>.a (tests/models/model_test.py, tools/aotc-fuzz and others do
 * this). Outputs start as NaN, so an output buffer the library never writes
 * cannot pass a comparison. A library compiled with --weights=external is built
 * with -DAOTC_EXTERNAL_WEIGHTS too, and takes the weights file first:
 *
 *   run_library WEIGHTS OUTPUT.bin INPUT0.bin [INPUT1.bin ...]
 *
 * It reads the file into an aligned buffer and checks it (check_weights) before
 * the run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aotc_model.h"

static float* read_floats(const char* path, int64_t count) {
  FILE* f = fopen(path, "rb");
  float* data = malloc((size_t)count * sizeof(float));
  if (f == NULL || data == NULL || fread(data, sizeof(float), (size_t)count, f) != (size_t)count || fgetc(f) != EOF) {
    fprintf(stderr, "%s: cannot read %lld floats\n", path, (long long)count);
    exit(2);
  }
  fclose(f);
  return data;
}

static size_t element_bytes(aotc_dtype dtype) { return dtype == AOTC_FLOAT32 ? 4 : 1; }

/* `values` (integers of the dtype, for an integer input) as elements of `dtype`. */
static const void* to_dtype(float* values, int64_t count, aotc_dtype dtype) {
  if (dtype == AOTC_FLOAT32) return values;
  uint8_t* bytes = malloc((size_t)count);
  for (int64_t k = 0; k < count; ++k)
    bytes[k] = dtype == AOTC_INT8 ? (uint8_t)(int8_t)values[k] : (uint8_t)values[k];
  return bytes;
}

#ifdef AOTC_EXTERNAL_WEIGHTS
/* The whole file in a 64-byte aligned buffer, as the library wants it. */
static void* read_weights(const char* path, size_t* bytes) {
  FILE* f = fopen(path, "rb");
  long size = -1;
  if (f != NULL && fseek(f, 0, SEEK_END) == 0) size = ftell(f);
  void* data = size > 0 ? aligned_alloc(AOTC_ARENA_ALIGNMENT, ((size_t)size / AOTC_ARENA_ALIGNMENT + 1) * AOTC_ARENA_ALIGNMENT)
                        : NULL;
  if (data == NULL || fseek(f, 0, SEEK_SET) != 0 || fread(data, 1, (size_t)size, f) != (size_t)size) {
    fprintf(stderr, "%s: cannot read\n", path);
    exit(2);
  }
  fclose(f);
  *bytes = (size_t)size;
  return data;
}
#endif

int main(int argc, char** argv) {
  const char* program = argv[0];
#ifdef AOTC_EXTERNAL_WEIGHTS
  if (argc < 2) {
    fprintf(stderr, "usage: %s WEIGHTS OUTPUT.bin INPUT.bin x %d\n", argv[0], (int)NUM_INPUTS);
    return 2;
  }
  size_t weights_bytes = 0;
  const void* weights = read_weights(argv[1], &weights_bytes);
  const int weights_status = AOTC_FN(AOTC_MODEL, _check_weights)(weights, weights_bytes);
  if (weights_status != AOTC_OK) {
    fprintf(stderr, "%s: %s\n", argv[1], aotc_status_message(weights_status));
    return 1;
  }
  ++argv;
  --argc;
#endif
  if (argc != 2 + (int)NUM_INPUTS) {
    fprintf(stderr, "usage: %s OUTPUT.bin INPUT.bin x %d\n", program, (int)NUM_INPUTS);
    return 2;
  }
  const void* inputs[NUM_INPUTS];
  void* outputs[NUM_OUTPUTS];
  aotc_dtype input_dtypes[NUM_INPUTS], output_dtypes[NUM_OUTPUTS];
  for (size_t i = 0; i < NUM_INPUTS; ++i) {
    const aotc_tensor_info* info = &AOTC_FN(AOTC_MODEL, _inputs)[i];
    input_dtypes[i] = info->dtype;
    inputs[i] = to_dtype(read_floats(argv[2 + i], info->elements), info->elements, info->dtype);
  }
  for (size_t i = 0; i < NUM_OUTPUTS; ++i) {
    const aotc_tensor_info* info = &AOTC_FN(AOTC_MODEL, _outputs)[i];
    output_dtypes[i] = info->dtype;
    outputs[i] = malloc((size_t)info->elements * element_bytes(info->dtype));
    if (info->dtype == AOTC_FLOAT32)
      for (int64_t k = 0; k < info->elements; ++k) ((float*)outputs[i])[k] = NAN;
    else  /* 0x5a: some value; an integer output's elements cannot all be checked by a sentinel */
      memset(outputs[i], 0x5a, (size_t)info->elements);
  }
  const size_t bytes = AOTC_FN(AOTC_MODEL, _arena_bytes)();
  /* aligned_alloc wants a multiple of the alignment, and at least one block. */
  void* arena = aligned_alloc(AOTC_ARENA_ALIGNMENT, (bytes / AOTC_ARENA_ALIGNMENT + 1) * AOTC_ARENA_ALIGNMENT);
#ifdef AOTC_EXTERNAL_WEIGHTS
  const int status = AOTC_FN(AOTC_MODEL, _run_typed_with_weights)(weights, weights_bytes, arena, bytes, input_dtypes,
                                                                   inputs, output_dtypes, outputs);
#else
  const int status = AOTC_FN(AOTC_MODEL, _run_typed)(arena, bytes, input_dtypes, inputs, output_dtypes, outputs);
#endif
  if (status != AOTC_OK) {
    fprintf(stderr, "run failed: %s\n", aotc_status_message(status));
    return 1;
  }
  FILE* out = fopen(argv[1], "wb");
  for (size_t i = 0; i < NUM_OUTPUTS; ++i) {
    const aotc_tensor_info* info = &AOTC_FN(AOTC_MODEL, _outputs)[i];
    for (int64_t k = 0; k < info->elements; ++k) {
      const float v = info->dtype == AOTC_FLOAT32 ? ((const float*)outputs[i])[k]
                      : info->dtype == AOTC_INT8  ? (float)((const int8_t*)outputs[i])[k]
                                                  : (float)((const uint8_t*)outputs[i])[k];
      fwrite(&v, sizeof v, 1, out);
    }
  }
  if (out == NULL || fclose(out) != 0) {
    fprintf(stderr, "%s: cannot write\n", argv[1]);
    return 2;
  }
  return 0;
}
