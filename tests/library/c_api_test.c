/* The C entry points of a generated library, from a C11 program: the arena
 * size, a run checked against the reference evaluator, and the documented
 * status of every refused call, which must leave the outputs untouched.
 *
 * usage: c_api_test INPUT.bin REFERENCE.bin   (convnet: one input, two outputs) */
#include <stdint.h>
#include <string.h>

#include "convnet.h"
#include "test_support.h"

static size_t total_output_elements(void) {
  size_t total = 0;
  for (int i = 0; i < CONVNET_NUM_OUTPUTS; ++i) total += (size_t)aotc_convnet_outputs[i].elements;
  return total;
}

/* A refused run: the expected status, and not one output value written. */
static void expect_refused(const char* what, int status, aotc_status expected, float* const* outputs) {
  printf("%s: status %d (%s)\n", what, status, aotc_status_message(status));
  EXPECT(status == (int)expected);
  for (int i = 0; i < CONVNET_NUM_OUTPUTS; ++i) EXPECT(all_sentinel(outputs[i], (size_t)aotc_convnet_outputs[i].elements));
}

static void fill_outputs_sentinel(float* const* outputs) {
  for (int i = 0; i < CONVNET_NUM_OUTPUTS; ++i) fill_sentinel(outputs[i], (size_t)aotc_convnet_outputs[i].elements);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s INPUT.bin REFERENCE.bin\n", argv[0]);
    return 2;
  }
  EXPECT(CONVNET_NUM_INPUTS == 1 && CONVNET_NUM_OUTPUTS == 2);
  EXPECT(aotc_convnet_inputs[0].rank == 4 && aotc_convnet_inputs[0].elements == 1 * 3 * 16 * 16);
  EXPECT(aotc_convnet_outputs[0].elements == 5 && aotc_convnet_outputs[1].elements == 8 * 8 * 8);
  const size_t input_elements = (size_t)aotc_convnet_inputs[0].elements;
  const size_t output_elements = total_output_elements();
  float* input = read_floats(argv[1], input_elements);
  float* reference = read_floats(argv[2], output_elements);

  const size_t arena_bytes = aotc_convnet_arena_bytes();
  printf("arena: %zu bytes\n", arena_bytes);
  EXPECT(arena_bytes == CONVNET_ARENA_BYTES);
  EXPECT(arena_bytes > 0); /* else the too-small case below tests nothing */
  /* A multiple of the alignment with one spare unit, so that arena + 1 still has arena_bytes behind it. */
  const size_t allocated_bytes = (arena_bytes / AOTC_ARENA_ALIGNMENT + 2) * AOTC_ARENA_ALIGNMENT;
  uint8_t* arena = (uint8_t*)aligned_alloc(AOTC_ARENA_ALIGNMENT, allocated_bytes);
  float* all_outputs = (float*)malloc(output_elements * sizeof(float));
  float* outputs[CONVNET_NUM_OUTPUTS] = {all_outputs, all_outputs + aotc_convnet_outputs[0].elements};
  const float* inputs[CONVNET_NUM_INPUTS] = {input};

  fill_outputs_sentinel(outputs);
  expect_refused("null arena", aotc_convnet_run(NULL, arena_bytes, inputs, outputs), AOTC_ERROR_NULL_ARENA, outputs);
  expect_refused("misaligned arena", aotc_convnet_run(arena + 1, arena_bytes, inputs, outputs),
                 AOTC_ERROR_MISALIGNED_ARENA, outputs);
  expect_refused("arena one byte too small", aotc_convnet_run(arena, arena_bytes - 1, inputs, outputs),
                 AOTC_ERROR_ARENA_TOO_SMALL, outputs);
  expect_refused("null inputs array", aotc_convnet_run(arena, arena_bytes, NULL, outputs), AOTC_ERROR_NULL_TENSOR,
                 outputs);
  expect_refused("null outputs array", aotc_convnet_run(arena, arena_bytes, inputs, NULL), AOTC_ERROR_NULL_TENSOR,
                 outputs);
  const float* null_input[CONVNET_NUM_INPUTS] = {NULL};
  expect_refused("null input pointer", aotc_convnet_run(arena, arena_bytes, null_input, outputs),
                 AOTC_ERROR_NULL_TENSOR, outputs);
  /* The last output null: the first must not have been written either. */
  float* second_output_null[CONVNET_NUM_OUTPUTS] = {outputs[0], NULL};
  expect_refused("null second output pointer", aotc_convnet_run(arena, arena_bytes, inputs, second_output_null),
                 AOTC_ERROR_NULL_TENSOR, outputs);

  /* The arena's contents are the library's business: start from garbage. */
  memset(arena, 0xA5, allocated_bytes);
  const int status = aotc_convnet_run(arena, arena_bytes, inputs, outputs);
  printf("run: status %d (%s)\n", status, aotc_status_message(status));
  EXPECT(status == AOTC_OK);
  close_to_reference("convnet outputs", all_outputs, reference, output_elements);

  /* The same run with a context and a larger-than-needed arena: the same bits, no error text. */
  float* again = (float*)malloc(output_elements * sizeof(float));
  float* outputs_again[CONVNET_NUM_OUTPUTS] = {again, again + aotc_convnet_outputs[0].elements};
  aotc_context context;
  memset(&context, 0, sizeof context);
  EXPECT(aotc_convnet_run_with_context(&context, arena, allocated_bytes, inputs, outputs_again) == AOTC_OK);
  EXPECT(context.error[0] == '\0');
  EXPECT(memcmp(again, all_outputs, output_elements * sizeof(float)) == 0);

  EXPECT(aotc_convnet_set_num_threads(-1) == AOTC_ERROR_INVALID_ARGUMENT);
  EXPECT(aotc_convnet_set_num_threads(0) == AOTC_OK);

  free(again);
  free(all_outputs);
  free(arena);
  free(reference);
  free(input);
  return test_result();
}
