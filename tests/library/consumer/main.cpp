// Runs the tiny model once and checks it against the reference evaluator's
// output (the test's driver passes both files).
//
// usage: app INPUT.bin REFERENCE.bin
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../test_support.h"
#include "tiny.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s INPUT.bin REFERENCE.bin\n", argv[0]);
    return 2;
  }
  float* input = read_floats(argv[1], tiny::kInputs[0].elements);
  float* reference = read_floats(argv[2], tiny::kOutputs[0].elements);
  std::vector<float> output(tiny::kOutputs[0].elements);

  void* arena = std::aligned_alloc(tiny::kArenaAlignment, (tiny::kArenaBytes / tiny::kArenaAlignment + 1) *
                                                              tiny::kArenaAlignment);
  tiny::Model model(arena, tiny::kArenaBytes);
  EXPECT(model.status() == aotc::Status::kOk);
  const aotc::Status status = model.run(input, output.data());
  std::printf("run: %s\n", aotc::message(status));
  EXPECT(status == aotc::Status::kOk);
  close_to_reference("tiny output", output.data(), reference, output.size());

  std::free(arena);
  std::free(reference);
  std::free(input);
  return test_result();
}
