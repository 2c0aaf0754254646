// Kernel failures and Halide's process-wide error handler, as an app that has
// Halide code of its own sees them:
//  - the app's handler, installed before the model ever runs, still receives
//    the app's own errors (with the app's user_context, untouched) after runs;
//  - a failing kernel's message lands in the run's aotc_context, not in the
//    app's handler, and the run returns AOTC_ERROR_KERNEL_FAILED;
//  - a context reused through the C entry point holds no stale message after a
//    successful run; nor does the C++ Model's last_error().
// The failure is injected with Halide's custom do_par_for hook: every kernel
// of convnet has a parallel loop.
//
// usage: error_handler_test INPUT.bin REFERENCE.bin   (convnet)
#include <HalideRuntime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "convnet.h"
#include "test_support.h"

namespace {

// What the app's own handler received.
void* app_handler_context = nullptr;
int app_handler_calls = 0;

void app_error_handler(void* user_context, const char* message) {
  app_handler_context = user_context;
  ++app_handler_calls;
  std::printf("app handler: %s\n", message);
}

constexpr const char* kInjected = "injected task failure";

int failing_do_par_for(void* user_context, halide_task_t, int, int, uint8_t*) {
  halide_error(user_context, kInjected);
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s INPUT.bin REFERENCE.bin\n", argv[0]);
    return 2;
  }
  halide_set_error_handler(app_error_handler);  // before the model runs

  const size_t output_elements = convnet::kOutputs[0].elements + convnet::kOutputs[1].elements;
  const float* input = read_floats(argv[1], convnet::kInputs[0].elements);
  const float* reference = read_floats(argv[2], output_elements);
  std::vector<float> all_outputs(output_elements);
  float* outputs[2] = {all_outputs.data(), all_outputs.data() + convnet::kOutputs[0].elements};
  const float* inputs[1] = {input};
  void* arena = std::aligned_alloc(AOTC_ARENA_ALIGNMENT, (convnet::kArenaBytes / 64 + 1) * 64);
  aotc_context context = {};

  // A run, then the app's own error: its handler, its context.
  EXPECT(aotc_convnet_run_with_context(&context, arena, convnet::kArenaBytes, inputs, outputs) == AOTC_OK);
  close_to_reference("first run", all_outputs.data(), reference, output_elements);
  int app_owned = 0;
  halide_error(&app_owned, "the app's own error");
  EXPECT(app_handler_calls == 1 && app_handler_context == &app_owned);

  // A failing kernel: the message goes into the run's context only.
  const halide_do_par_for_t previous = halide_set_custom_do_par_for(failing_do_par_for);
  const int failed = aotc_convnet_run_with_context(&context, arena, convnet::kArenaBytes, inputs, outputs);
  std::printf("failing run: status %d, error \"%s\"\n", failed, context.error);
  EXPECT(failed == AOTC_ERROR_KERNEL_FAILED);
  EXPECT(std::strstr(context.error, kInjected) != nullptr);
  EXPECT(app_handler_calls == 1);

  // The same context again, after the failure: no stale message.
  halide_set_custom_do_par_for(previous);
  EXPECT(aotc_convnet_run_with_context(&context, arena, convnet::kArenaBytes, inputs, outputs) == AOTC_OK);
  std::printf("run after the failure: error \"%s\"\n", context.error);
  EXPECT(context.error[0] == '\0');
  close_to_reference("run after the failure", all_outputs.data(), reference, output_elements);

  // The C++ class: last_error() after a failure, then after a success.
  convnet::Model model(arena, convnet::kArenaBytes);
  halide_set_custom_do_par_for(failing_do_par_for);
  EXPECT(model.run(inputs, outputs) == aotc::Status::kKernelFailed);
  EXPECT(std::strstr(model.last_error(), kInjected) != nullptr);
  halide_set_custom_do_par_for(previous);
  EXPECT(model.run(inputs, outputs) == aotc::Status::kOk);
  EXPECT(model.last_error()[0] == '\0');

  // And the app's handler is still the one for the app's errors.
  halide_error(&app_owned, "the app's own error, again");
  EXPECT(app_handler_calls == 2 && app_handler_context == &app_owned);
  std::free(arena);
  std::free(const_cast<float*>(input));
  std::free(const_cast<float*>(reference));
  return test_result();
}
