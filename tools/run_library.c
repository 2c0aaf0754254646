/* Runs a model library compiled by aotc on raw float32 input files and writes
 * its outputs, concatenated, to one raw float32 file:
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
  const float* inputs[NUM_INPUTS];
  float* outputs[NUM_OUTPUTS];
  for (size_t i = 0; i < NUM_INPUTS; ++i)
    inputs[i] = read_floats(argv[2 + i], AOTC_FN(AOTC_MODEL, _inputs)[i].elements);
  for (size_t i = 0; i < NUM_OUTPUTS; ++i) {
    const size_t count = (size_t)AOTC_FN(AOTC_MODEL, _outputs)[i].elements;
    outputs[i] = malloc(count * sizeof(float));
    for (size_t k = 0; k < count; ++k) outputs[i][k] = NAN;
  }
  const size_t bytes = AOTC_FN(AOTC_MODEL, _arena_bytes)();
  /* aligned_alloc wants a multiple of the alignment, and at least one block. */
  void* arena = aligned_alloc(AOTC_ARENA_ALIGNMENT, (bytes / AOTC_ARENA_ALIGNMENT + 1) * AOTC_ARENA_ALIGNMENT);
#ifdef AOTC_EXTERNAL_WEIGHTS
  const int status = AOTC_FN(AOTC_MODEL, _run_with_weights)(weights, weights_bytes, arena, bytes, inputs, outputs);
#else
  const int status = AOTC_FN(AOTC_MODEL, _run)(arena, bytes, inputs, outputs);
#endif
  if (status != AOTC_OK) {
    fprintf(stderr, "run failed: %s\n", aotc_status_message(status));
    return 1;
  }
  FILE* out = fopen(argv[1], "wb");
  for (size_t i = 0; i < NUM_OUTPUTS; ++i)
    fwrite(outputs[i], sizeof(float), (size_t)AOTC_FN(AOTC_MODEL, _outputs)[i].elements, out);
  if (out == NULL || fclose(out) != 0) {
    fprintf(stderr, "%s: cannot write\n", argv[1]);
    return 2;
  }
  return 0;
}
