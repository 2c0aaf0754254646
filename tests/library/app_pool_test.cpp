// An app that installed its own halide_do_par_for before any model ran keeps
// it: the model's parallel loops go through the app's hook (counted here,
// forwarding to Halide's default pool), before and after set_num_threads, and
// the results still match the reference.
//
// usage: app_pool_test INPUT.bin REFERENCE.bin   (bigconv)
#include <HalideRuntime.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bigconv.h"
#include "test_support.h"

namespace {

std::atomic<int> app_loops{0};

int app_do_par_for(void* user_context, halide_task_t task, int min, int size, uint8_t* closure) {
  ++app_loops;
  return halide_default_do_par_for(user_context, task, min, size, closure);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s INPUT.bin REFERENCE.bin\n", argv[0]);
    return 2;
  }
  halide_set_custom_do_par_for(app_do_par_for);
  const size_t out_elements = bigconv::kOutputs[0].elements;
  const float* input = read_floats(argv[1], bigconv::kInputs[0].elements);
  const float* reference = read_floats(argv[2], out_elements);
  std::vector<float> output(out_elements);
  void* arena = std::aligned_alloc(AOTC_ARENA_ALIGNMENT, (bigconv::kArenaBytes / 64 + 1) * 64);
  bigconv::Model model(arena, bigconv::kArenaBytes);

  EXPECT(model.run(input, output.data()) == aotc::Status::kOk);
  close_to_reference("run", output.data(), reference, out_elements);
  const int after_run = app_loops.load();
  std::printf("parallel loops through the app's hook in one run: %d\n", after_run);
  EXPECT(after_run > 0);

  EXPECT(bigconv::Model::set_num_threads(2) == aotc::Status::kOk);
  EXPECT(model.run(input, output.data()) == aotc::Status::kOk);
  close_to_reference("run after set_num_threads(2)", output.data(), reference, out_elements);
  EXPECT(app_loops.load() > after_run);
  EXPECT(halide_set_custom_do_par_for(app_do_par_for) == app_do_par_for);  // still the app's
  std::free(arena);
  std::free(const_cast<float*>(input));
  std::free(const_cast<float*>(reference));
  return test_result();
}
