// Two model libraries in one app (each carries its kernels and a Halide
// runtime): the link succeeds and both models run correctly in one process,
// one after the other, interleaved on one shared arena, and at the same time
// on two threads with their own arenas (aotc/aotc.h: "different arenas may").
//
// usage: two_models_test CONVNET_INPUT.bin CONVNET_REFERENCE.bin MLP_INPUT.bin MLP_REFERENCE.bin
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "convnet.h"
#include "mlp.h"
#include "test_support.h"

namespace {

struct Arena {
  explicit Arena(size_t bytes)
      : data(std::aligned_alloc(AOTC_ARENA_ALIGNMENT, (bytes / AOTC_ARENA_ALIGNMENT + 1) * AOTC_ARENA_ALIGNMENT)) {}
  ~Arena() { std::free(data); }
  void* data;
};

struct Case {
  const float* input;
  const float* reference;
  size_t output_elements;
};

// Whether a run's status and outputs are right; prints one line (any thread).
bool matches(const char* what, aotc::Status status, const std::vector<float>& out, const Case& c) {
  double max_diff, tolerance;
  const bool ok = within_tolerance(out.data(), c.reference, c.output_elements, &max_diff, &tolerance) &&
                  status == aotc::Status::kOk;
  std::printf("%s: status %d, max|diff| %.3g, tolerance %.3g: %s\n", what, static_cast<int>(status), max_diff,
              tolerance, ok ? "ok" : "FAILED");
  return ok;
}

// One run of convnet into fresh outputs, compared with the reference.
bool convnet_matches(convnet::Model& model, const Case& c, const char* what) {
  std::vector<float> out(c.output_elements);
  const float* inputs[] = {c.input};
  float* outputs[] = {out.data(), out.data() + convnet::kOutputs[0].elements};
  return matches(what, model.run(inputs, outputs), out, c);
}

bool mlp_matches(mlp::Model& model, const Case& c, const char* what) {
  std::vector<float> out(c.output_elements);
  return matches(what, model.run(c.input, out.data()), out, c);  // the one-tensor overload
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s CONVNET_INPUT CONVNET_REFERENCE MLP_INPUT MLP_REFERENCE\n", argv[0]);
    return 2;
  }
  const size_t convnet_outputs = convnet::kOutputs[0].elements + convnet::kOutputs[1].elements;
  const Case conv{read_floats(argv[1], convnet::kInputs[0].elements), read_floats(argv[2], convnet_outputs),
                  convnet_outputs};
  const Case dense{read_floats(argv[3], mlp::kInputs[0].elements), read_floats(argv[4], mlp::kOutputs[0].elements),
                   static_cast<size_t>(mlp::kOutputs[0].elements)};
  EXPECT(aotc_convnet_arena_bytes() == convnet::kArenaBytes);
  EXPECT(aotc_mlp_arena_bytes() == mlp::kArenaBytes);

  Arena conv_arena(convnet::kArenaBytes), mlp_arena(mlp::kArenaBytes);
  convnet::Model conv_model(conv_arena.data, convnet::kArenaBytes);
  mlp::Model mlp_model(mlp_arena.data, mlp::kArenaBytes);
  EXPECT(conv_model.status() == aotc::Status::kOk && mlp_model.status() == aotc::Status::kOk);
  EXPECT(convnet_matches(conv_model, conv, "convnet"));
  EXPECT(mlp_matches(mlp_model, dense, "mlp"));

  // One arena for both, taking turns: neither may rely on what the other left in it.
  Arena shared(std::max(convnet::kArenaBytes, mlp::kArenaBytes));
  convnet::Model conv_shared(shared.data, convnet::kArenaBytes);
  mlp::Model mlp_shared(shared.data, mlp::kArenaBytes);
  for (int i = 0; i < 3; ++i) {
    EXPECT(convnet_matches(conv_shared, conv, "convnet, shared arena"));
    EXPECT(mlp_matches(mlp_shared, dense, "mlp, shared arena"));
  }

  // Concurrently, own arenas: each thread's runs must all match.
  bool conv_thread_ok = true, mlp_thread_ok = true;
  std::thread conv_thread([&] {
    for (int i = 0; i < 5; ++i) conv_thread_ok = convnet_matches(conv_model, conv, "convnet, thread") && conv_thread_ok;
  });
  std::thread mlp_thread([&] {
    for (int i = 0; i < 5; ++i) mlp_thread_ok = mlp_matches(mlp_model, dense, "mlp, thread") && mlp_thread_ok;
  });
  conv_thread.join();
  mlp_thread.join();
  EXPECT(conv_thread_ok);
  EXPECT(mlp_thread_ok);

  for (const Case* c : {&conv, &dense}) {
    std::free(const_cast<float*>(c->input));
    std::free(const_cast<float*>(c->reference));
  }
  return test_result();
}
