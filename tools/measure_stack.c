/* Measures the peak stack one run of a model library uses: the run (on one thread,
 * so that every kernel runs on it) happens on a thread whose stack is a buffer this
 * program painted with a pattern; afterwards, the deepest byte no longer holding the
 * pattern gives the peak. Prints `stack_bytes N` (and the arena and weights sizes the
 * library reports). Inputs are zeros: the stack depth does not depend on the values.
 *
 *   measure_stack [WEIGHTS]      (WEIGHTS with -DAOTC_EXTERNAL_WEIGHTS)
 *
 * Built per model with -DAOTC_MODEL=<name> against OUT/<name>.h and OUT/lib<name>.a,
 * natively or with a cross compiler and run under qemu (bench/footprint). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aotc_model.h"

enum { kStackBytes = 8 << 20, kPattern = 0xa5 };

struct Run {
  const void* weights;
  size_t weights_bytes;
  int status;
};

static void* run_model(void* arg) {
  struct Run* run = (struct Run*)arg;
  const float* inputs[NUM_INPUTS];
  float* outputs[NUM_OUTPUTS];
  for (size_t i = 0; i < NUM_INPUTS; ++i)
    inputs[i] = calloc((size_t)AOTC_FN(AOTC_MODEL, _inputs)[i].elements, sizeof(float));
  for (size_t i = 0; i < NUM_OUTPUTS; ++i)
    outputs[i] = calloc((size_t)AOTC_FN(AOTC_MODEL, _outputs)[i].elements, sizeof(float));
  const size_t bytes = AOTC_FN(AOTC_MODEL, _arena_bytes)();
  void* arena = aligned_alloc(AOTC_ARENA_ALIGNMENT, (bytes / AOTC_ARENA_ALIGNMENT + 1) * AOTC_ARENA_ALIGNMENT);
#ifdef AOTC_EXTERNAL_WEIGHTS
  run->status = AOTC_FN(AOTC_MODEL, _run_with_weights)(run->weights, run->weights_bytes, arena, bytes, inputs, outputs);
#else
  run->status = AOTC_FN(AOTC_MODEL, _run)(arena, bytes, inputs, outputs);
#endif
  return NULL;
}

int main(int argc, char** argv) {
  struct Run run = {NULL, 0, -1};
#ifdef AOTC_EXTERNAL_WEIGHTS
  FILE* f = argc == 2 ? fopen(argv[1], "rb") : NULL;
  if (f == NULL || fseek(f, 0, SEEK_END) != 0) {
    fprintf(stderr, "usage: %s WEIGHTS\n", argv[0]);
    return 2;
  }
  run.weights_bytes = (size_t)ftell(f);
  void* weights = aligned_alloc(AOTC_ARENA_ALIGNMENT, (run.weights_bytes / 64 + 1) * 64);
  rewind(f);
  if (fread(weights, 1, run.weights_bytes, f) != run.weights_bytes) return 2;
  fclose(f);
  run.weights = weights;
#else
  (void)argv;
  if (argc != 1) return 2;
#endif
  AOTC_FN(AOTC_MODEL, _set_num_threads)(1);
  unsigned char* stack = aligned_alloc(4096, kStackBytes);
  memset(stack, kPattern, kStackBytes);
  pthread_attr_t attr;
  pthread_t thread;
  pthread_attr_init(&attr);
  pthread_attr_setstack(&attr, stack, kStackBytes);
  if (pthread_create(&thread, &attr, run_model, &run) != 0 || pthread_join(thread, NULL) != 0) return 2;
  if (run.status != AOTC_OK) {
    fprintf(stderr, "run failed: %s\n", aotc_status_message(run.status));
    return 1;
  }
  size_t untouched = 0;  /* the stack grows down from stack + kStackBytes */
  while (untouched < kStackBytes && stack[untouched] == kPattern) ++untouched;
  printf("stack_bytes %zu\n", (size_t)kStackBytes - untouched);
  return 0;
}
