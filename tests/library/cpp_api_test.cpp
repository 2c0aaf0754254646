// The C++ class of a generated header: arena checks at construction, run()
// against the reference evaluator, the timing callback (one call per layer of
// the report, in order), and set_num_threads' range check.
//
// usage: cpp_api_test REPORT.json INPUT.bin REFERENCE.bin   (convnet)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "convnet.h"
#include "test_support.h"

namespace {

static_assert(convnet::kNumInputs == 1 && convnet::kNumOutputs == 2);
static_assert(convnet::kArenaAlignment == AOTC_ARENA_ALIGNMENT);
static_assert(noexcept(std::declval<convnet::Model&>().run(nullptr, nullptr)));

// The "layer" values of report.json's "layers" array, in order. The key
// "layer" (singular) appears nowhere else in the report.
std::vector<std::string> report_layers(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  const std::string json = text.str();
  std::vector<std::string> layers;
  const std::string key = "\"layer\":";
  for (size_t at = json.find(key); at != std::string::npos; at = json.find(key, at + 1)) {
    size_t i = json.find('"', at + key.size());
    std::string name;
    for (++i; i < json.size() && json[i] != '"'; ++i) {
      if (json[i] == '\\') ++i;
      name += json[i];
    }
    layers.push_back(name);
  }
  return layers;
}

struct TimingLog {
  std::vector<std::string> layers;
  bool all_durations_valid = true;
};

void record_layer(void* user_data, const char* layer, double microseconds) {
  auto* log = static_cast<TimingLog*>(user_data);
  log->layers.push_back(layer);
  if (!(microseconds >= 0)) log->all_durations_valid = false;
}

struct AlignedArena {
  explicit AlignedArena(size_t bytes)
      : data(static_cast<uint8_t*>(std::aligned_alloc(AOTC_ARENA_ALIGNMENT, (bytes / AOTC_ARENA_ALIGNMENT + 2) * AOTC_ARENA_ALIGNMENT))) {}
  ~AlignedArena() { std::free(data); }
  uint8_t* data;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s REPORT.json INPUT.bin REFERENCE.bin\n", argv[0]);
    return 2;
  }
  const std::vector<std::string> expected_layers = report_layers(argv[1]);
  const size_t output_elements = convnet::kOutputs[0].elements + convnet::kOutputs[1].elements;
  float* input = read_floats(argv[2], convnet::kInputs[0].elements);
  float* reference = read_floats(argv[3], output_elements);
  std::vector<float> all_outputs(output_elements);
  const float* inputs[] = {input};
  float* outputs[] = {all_outputs.data(), all_outputs.data() + convnet::kOutputs[0].elements};

  AlignedArena arena(convnet::kArenaBytes);
  EXPECT(convnet::Model(nullptr, convnet::kArenaBytes).status() == aotc::Status::kNullArena);
  EXPECT(convnet::Model(arena.data, convnet::kArenaBytes - 1).status() == aotc::Status::kArenaTooSmall);
  convnet::Model misaligned(arena.data + 1, convnet::kArenaBytes);
  EXPECT(misaligned.status() == aotc::Status::kMisalignedArena);
  // A model whose arena was refused refuses to run, and writes nothing.
  fill_sentinel(all_outputs.data(), output_elements);
  EXPECT(misaligned.run(inputs, outputs) == aotc::Status::kMisalignedArena);
  EXPECT(all_sentinel(all_outputs.data(), output_elements));

  convnet::Model model(arena.data, convnet::kArenaBytes);
  EXPECT(model.status() == aotc::Status::kOk);
  const float* null_inputs[] = {nullptr};
  EXPECT(model.run(null_inputs, outputs) == aotc::Status::kNullTensor);
  EXPECT(all_sentinel(all_outputs.data(), output_elements));

  TimingLog log;
  model.set_timing_callback(record_layer, &log);
  EXPECT(model.run(inputs, outputs) == aotc::Status::kOk);
  EXPECT(std::string(model.last_error()).empty());
  close_to_reference("convnet outputs (timed run)", all_outputs.data(), reference, output_elements);
  std::printf("timing callback: %zu calls, report: %zu layers\n", log.layers.size(), expected_layers.size());
  EXPECT(!expected_layers.empty());
  EXPECT(log.layers == expected_layers);
  EXPECT(log.all_durations_valid);
  for (const std::string& layer : log.layers) std::printf("  %s\n", layer.c_str());

  // Turned off: no more calls.
  model.set_timing_callback(nullptr, nullptr);
  const size_t calls_before = log.layers.size();
  EXPECT(model.run(inputs, outputs) == aotc::Status::kOk);
  EXPECT(log.layers.size() == calls_before);

  EXPECT(convnet::Model::set_num_threads(-1) == aotc::Status::kInvalidArgument);
  // One thread: still the same numbers.
  EXPECT(convnet::Model::set_num_threads(1) == aotc::Status::kOk);
  fill_sentinel(all_outputs.data(), output_elements);
  EXPECT(model.run(inputs, outputs) == aotc::Status::kOk);
  close_to_reference("convnet outputs (1 thread)", all_outputs.data(), reference, output_elements);
  EXPECT(convnet::Model::set_num_threads(0) == aotc::Status::kOk);

  std::free(reference);
  std::free(input);
  return test_result();
}
