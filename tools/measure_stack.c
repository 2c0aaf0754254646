/* Measures the peak stack one run of a model library uses: the run (on one thread,
 * so that every kernel runs on it) happens on a thread whose stack is a buffer this
 * program painted with a pattern; afterwards, the deepest byte no longer holding the
 * pattern gives the peak. Prints `stack_bytes N`. Inputs are zeros: the stack depth
 * depends neither on the values nor on where the weights live.
 *
 *   measure_stack
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
  run->status = AOTC_FN(AOTC_MODEL, _run)(arena, bytes, inputs, outputs);
  return NULL;
}

int main(int argc, char** argv) {
  struct Run run = {-1};
  if (argc != 1) {
    fprintf(stderr, "usage: %s\n", argv[0]);
    return 2;
  }
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
