/* Every output buffer of a model is written by a run, whatever defines the
 * output: a node, a constant, a graph input, or a tensor listed more than once.
 * The outputs start as the sentinel (a value no kernel produces here) and must
 * match the reference evaluator. Built once per model with -DAOTC_MODEL=<name>.
 *
 * usage: outputs_test INPUT0.bin [INPUT1.bin ...] REFERENCE.bin */
#include <stdint.h>

#include "aotc_model.h"
#include "test_support.h"

int main(int argc, char** argv) {
  if (argc != 2 + (int)NUM_INPUTS) {
    fprintf(stderr, "usage: %s INPUT.bin x %d REFERENCE.bin\n", argv[0], (int)NUM_INPUTS);
    return 2;
  }
  const float* inputs[NUM_INPUTS];
  for (size_t i = 0; i < NUM_INPUTS; ++i)
    inputs[i] = read_floats(argv[1 + i], (size_t)AOTC_FN(AOTC_MODEL, _inputs)[i].elements);
  size_t total = 0;
  for (size_t i = 0; i < NUM_OUTPUTS; ++i) total += (size_t)AOTC_FN(AOTC_MODEL, _outputs)[i].elements;
  const float* reference = read_floats(argv[1 + NUM_INPUTS], total);
  float* all_outputs = (float*)malloc(total * sizeof(float));
  fill_sentinel(all_outputs, total);
  float* outputs[NUM_OUTPUTS];
  size_t offset = 0;
  for (size_t i = 0; i < NUM_OUTPUTS; ++i) {
    outputs[i] = all_outputs + offset;
    offset += (size_t)AOTC_FN(AOTC_MODEL, _outputs)[i].elements;
  }
  const size_t bytes = AOTC_FN(AOTC_MODEL, _arena_bytes)();
  void* arena = aligned_alloc(AOTC_ARENA_ALIGNMENT, (bytes / AOTC_ARENA_ALIGNMENT + 1) * AOTC_ARENA_ALIGNMENT);
  const int status = AOTC_FN(AOTC_MODEL, _run)(arena, bytes, inputs, outputs);
  printf("run: status %d (%s)\n", status, aotc_status_message(status));
  EXPECT(status == AOTC_OK);
  offset = 0;
  for (size_t i = 0; i < NUM_OUTPUTS; ++i) {
    const size_t count = (size_t)AOTC_FN(AOTC_MODEL, _outputs)[i].elements;
    char what[128];
    snprintf(what, sizeof what, "output %zu (%s)", i, AOTC_FN(AOTC_MODEL, _outputs)[i].name);
    close_to_reference(what, outputs[i], reference + offset, count);
    offset += count;
  }
  for (size_t i = 0; i < NUM_INPUTS; ++i) free((void*)inputs[i]);
  free((void*)reference);
  free(all_outputs);
  free(arena);
  return test_result();
}
