// Runs a GPU model library (aotc --target=host-cuda...) on raw float32 input files and
// writes its outputs, concatenated, to one raw float32 file:
//
//   run_gpu_library OUTPUT.bin INPUT0.bin [INPUT1.bin ...]
//   run_gpu_library --expect-unavailable
//   run_gpu_library --time RUNS INPUT0.bin [INPUT1.bin ...]
//
// Built per model with -DAOTC_MODEL=<name> against OUT/<name>.h and OUT/lib<name>.a.
// It runs the model twice: from host pointers (run) and from device pointers
// (run_device, with its own cudaMalloc'd tensors), and fails unless both give the same
// bytes and run_device refuses an output one float off 16-byte alignment; prints
// "cuda_graph 1" if those runs replayed a captured CUDA graph (0: a capture
// was refused, the layers ran one by one), and runs once more layer by layer (with a
// timing callback, which turns the library's CUDA graph off). Outputs start as NaN, so an
// output the library never writes cannot pass.
// Without a usable GPU, create returns AOTC_ERROR_DEVICE_UNAVAILABLE: the program prints
// the library's message and exits 77, which ctest reports as skipped. With
// --expect-unavailable it exits 0 exactly when create says so (CUDA_VISIBLE_DEVICES=,
// no driver), also through the header's C++ class, and checks the API's argument errors on
// the way. With --time it times RUNS
// runs from device pointers (bench/gpu) after as many warm-up runs, each between two CUDA
// events on the model's own stream, and prints "median_ms M min_ms L cuda_graph G"; then a line
// "layer NAME US" per layer: its time on the GPU alone (the library's profile_layers,
// RUNS replays of the layer as a CUDA graph of its own).
// Built with -DAOTC_EXTERNAL_WEIGHTS for a library of aotc --weights=external, it reads
// weights.bin beside itself (the library's <name>.weights) into an aligned buffer, creates
// the model from it and overwrites and frees the buffer at once (create uploads the
// weights: the model must not keep the image); --expect-unavailable first checks that
// create refuses broken weights with the status that names the fault, before it looks
// for a GPU.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "aotc_model.h"

#define GPU AOTC_FN(AOTC_MODEL, _gpu)

namespace {

constexpr int kSkip = 77;

std::vector<float> read_floats(const char* path, int64_t count) {
  std::vector<float> data(static_cast<size_t>(count));
  FILE* f = std::fopen(path, "rb");
  if (f == nullptr || std::fread(data.data(), sizeof(float), data.size(), f) != data.size() || std::fgetc(f) != EOF) {
    std::fprintf(stderr, "%s: cannot read %lld floats\n", path, static_cast<long long>(count));
    std::exit(2);
  }
  std::fclose(f);
  return data;
}

bool cuda_ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
  return false;
}

#ifdef AOTC_EXTERNAL_WEIGHTS
// The weights file beside this program, at a 64-byte aligned address (`image`).
struct WeightsImage {
  std::vector<uint8_t> storage;
  uint8_t* image = nullptr;
  size_t bytes = 0;
};

WeightsImage read_weights() {
  const std::filesystem::path path = std::filesystem::read_symlink("/proc/self/exe").parent_path() / "weights.bin";
  std::ifstream in(path, std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.is_open() || bytes.empty()) {
    std::fprintf(stderr, "%s: cannot read\n", path.c_str());
    std::exit(2);
  }
  WeightsImage w;
  w.storage.resize(bytes.size() + 2 * AOTC_ARENA_ALIGNMENT);
  w.image = w.storage.data() + (AOTC_ARENA_ALIGNMENT - reinterpret_cast<uintptr_t>(w.storage.data()) % AOTC_ARENA_ALIGNMENT);
  w.bytes = bytes.size();
  std::memcpy(w.image, bytes.data(), bytes.size());
  return w;
}

// Creates the model from its weights file, then overwrites and frees the image.
int create(GPU** model, void* stream, aotc_context* context) {
  WeightsImage w = read_weights();
  const int status = AOTC_FN(AOTC_MODEL, _create_with_weights)(model, w.image, w.bytes, stream, context);
  std::memset(w.storage.data(), 0xff, w.storage.size());
  return status;
}

// create refuses each broken image with its own status, before it looks for a GPU.
bool weights_refused() {
  WeightsImage w = read_weights();
  if (AOTC_FN(AOTC_MODEL, _weights_bytes)() != w.bytes ||
      AOTC_FN(AOTC_MODEL, _check_weights)(w.image, w.bytes) != AOTC_OK) {
    std::fprintf(stderr, "weights.bin: weights_bytes or check_weights disagree with the library\n");
    return false;
  }
  auto expect = [](const char* what, const void* image, size_t bytes, int want) {
    aotc_context context = {};
    GPU* model = reinterpret_cast<GPU*>(1);
    const int got = AOTC_FN(AOTC_MODEL, _create_with_weights)(&model, image, bytes, nullptr, &context);
    if (got == want && model == nullptr && context.error[0] != '\0') {
      std::printf("create_with_weights (%s): %s\n", what, context.error);
      return true;
    }
    std::fprintf(stderr, "create_with_weights (%s): expected %s, a null model and a message; got %s, '%s'\n", what,
                 aotc_status_message(want), aotc_status_message(got), context.error);
    return false;
  };
  bool ok = expect("null", nullptr, w.bytes, AOTC_ERROR_NULL_WEIGHTS) &&
            expect("truncated", w.image, w.bytes - 1, AOTC_ERROR_WEIGHTS_TRUNCATED);
  std::vector<uint8_t> shifted(w.bytes + 2 * AOTC_ARENA_ALIGNMENT);
  uint8_t* misaligned = shifted.data() + (AOTC_ARENA_ALIGNMENT - reinterpret_cast<uintptr_t>(shifted.data()) % AOTC_ARENA_ALIGNMENT) + 1;
  std::memcpy(misaligned, w.image, w.bytes);
  ok = ok && expect("misaligned", misaligned, w.bytes, AOTC_ERROR_MISALIGNED_WEIGHTS);
  w.image[offsetof(aotc_weights_header, fingerprint)] ^= 1;  // another model's weights
  ok = ok && expect("another model", w.image, w.bytes, AOTC_ERROR_WEIGHTS_WRONG_MODEL);
  w.image[offsetof(aotc_weights_header, fingerprint)] ^= 1;
  w.image[w.bytes - 1] ^= 1;  // a flipped payload bit: the checksum catches it, the class refuses it
  if (AOTC_FN(AOTC_MODEL, _check_weights)(w.image, w.bytes) != AOTC_ERROR_WEIGHTS_CORRUPTED ||
      AOTC_MODEL::GpuModel(w.image, w.bytes).status() != aotc::Status::kWeightsCorrupted) {
    std::fprintf(stderr, "a flipped payload bit: expected AOTC_ERROR_WEIGHTS_CORRUPTED\n");
    return false;
  }
  return ok;
}
#else
int create(GPU** model, void* stream, aotc_context* context) {
  return AOTC_FN(AOTC_MODEL, _create)(model, stream, context);
}
#endif

int expect_unavailable() {
#ifdef AOTC_EXTERNAL_WEIGHTS
  if (!weights_refused()) return 1;
#endif
  aotc_context context = {};
  GPU* model = reinterpret_cast<GPU*>(1);
  const int status = create(&model, nullptr, &context);
  if (status != AOTC_ERROR_DEVICE_UNAVAILABLE || model != nullptr || context.error[0] == '\0') {
    std::fprintf(stderr, "create: expected AOTC_ERROR_DEVICE_UNAVAILABLE, a null model and a message; got %d (%s), "
                 "model %p, message '%s'\n", status, aotc_status_message(status), static_cast<void*>(model), context.error);
    AOTC_FN(AOTC_MODEL, _destroy)(model);
    return 1;
  }
  std::printf("create: %s: %s\n", aotc_status_message(status), context.error);
  if (create(nullptr, nullptr, nullptr) != AOTC_ERROR_INVALID_ARGUMENT ||
      AOTC_FN(AOTC_MODEL, _run)(nullptr, nullptr, nullptr, nullptr) != AOTC_ERROR_INVALID_ARGUMENT) {
    std::fprintf(stderr, "null model arguments: expected AOTC_ERROR_INVALID_ARGUMENT\n");
    return 1;
  }
  AOTC_FN(AOTC_MODEL, _destroy)(nullptr);
  // The header's C++ class says the same.
#ifdef AOTC_EXTERNAL_WEIGHTS
  const WeightsImage w = read_weights();
  const AOTC_MODEL::GpuModel gpu_model(w.image, w.bytes);
#else
  const AOTC_MODEL::GpuModel gpu_model;
#endif
  if (gpu_model.status() != aotc::Status::kDeviceUnavailable || gpu_model.last_error()[0] == '\0') {
    std::fprintf(stderr, "GpuModel: expected kDeviceUnavailable and a message, got %d\n",
                 static_cast<int>(gpu_model.status()));
    return 1;
  }
  return 0;
}

// Median and minimum of `runs` timed runs from device pointers, after as many warm-up runs,
// and whether they replayed one captured CUDA graph (1) or launched the layers one by one (0).
int time_runs(GPU* model, cudaStream_t stream, aotc_context* context, const float* const* inputs,
              float* const* outputs, int runs) {
  cudaEvent_t begin, end;
  if (!cuda_ok(cudaEventCreate(&begin), "cudaEventCreate") || !cuda_ok(cudaEventCreate(&end), "cudaEventCreate"))
    return 1;
  std::vector<float> milliseconds;
  for (int i = 0; i < 2 * runs; ++i) {
    cudaEventRecord(begin, stream);
    const int status = AOTC_FN(AOTC_MODEL, _run_device)(model, context, inputs, outputs);
    cudaEventRecord(end, stream);
    float ms = 0;
    if (status != AOTC_OK || !cuda_ok(cudaEventSynchronize(end), "cudaEventSynchronize") ||
        !cuda_ok(cudaEventElapsedTime(&ms, begin, end), "cudaEventElapsedTime")) {
      std::fprintf(stderr, "run_device: %s: %s\n", aotc_status_message(status), context->error);
      return 1;
    }
    if (i >= runs) milliseconds.push_back(ms);
  }
  std::sort(milliseconds.begin(), milliseconds.end());
  std::printf("median_ms %.4f min_ms %.4f cuda_graph %d\n", milliseconds[milliseconds.size() / 2], milliseconds.front(),
              AOTC_FN(AOTC_MODEL, _runs_cuda_graph)(model));
  cudaEventDestroy(begin);
  cudaEventDestroy(end);
  return 0;
}

// Each layer's time on the GPU (the library's profile_layers: the layer alone as a CUDA
// graph, replayed `replays` times), in execution order.
int profile_layers(GPU* model, aotc_context* context, const float* const* inputs, float* const* outputs, int replays) {
  context->timing = [](void*, const char* layer, double us) { std::printf("layer %s %.3f\n", layer, us); };
  const int status = AOTC_FN(AOTC_MODEL, _profile_layers)(model, context, inputs, outputs, replays);
  context->timing = nullptr;
  if (status == AOTC_OK) return 0;
  std::fprintf(stderr, "profile_layers: %s: %s\n", aotc_status_message(status), context->error);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--expect-unavailable") == 0) return expect_unavailable();
  const bool timing = argc > 2 && std::strcmp(argv[1], "--time") == 0;
  const int runs = timing ? std::atoi(argv[2]) : 0;
  const int first_input = timing ? 3 : 2;
  if (argc != first_input + static_cast<int>(NUM_INPUTS) || (timing && runs < 1)) {
    std::fprintf(stderr, "usage: %s OUTPUT.bin INPUT.bin x %d | --time RUNS INPUT.bin x %d | --expect-unavailable\n",
                 argv[0], static_cast<int>(NUM_INPUTS), static_cast<int>(NUM_INPUTS));
    return 2;
  }
  std::vector<std::vector<float>> inputs, host_outputs, device_outputs;
  std::vector<const float*> input_pointers;
  std::vector<float*> output_pointers;
  for (size_t i = 0; i < NUM_INPUTS; ++i) {
    inputs.push_back(read_floats(argv[first_input + i], AOTC_FN(AOTC_MODEL, _inputs)[i].elements));
    input_pointers.push_back(inputs.back().data());
  }
  for (size_t i = 0; i < NUM_OUTPUTS; ++i) {
    const size_t count = static_cast<size_t>(AOTC_FN(AOTC_MODEL, _outputs)[i].elements);
    host_outputs.emplace_back(count, NAN);
    device_outputs.emplace_back(count, NAN);
    output_pointers.push_back(host_outputs.back().data());
  }

  // The model runs on a stream of ours, so that --time can record events on it.
  cudaStream_t stream = nullptr;
  aotc_context context = {};
  GPU* model = nullptr;
  int status = cudaStreamCreate(&stream) == cudaSuccess ? create(&model, stream, &context)
                                                       : create(&model, nullptr, &context);
  if (status == AOTC_ERROR_DEVICE_UNAVAILABLE) {
    std::printf("SKIPPED: no usable GPU: %s\n", context.error);
    return kSkip;
  }
  if (status != AOTC_OK) {
    std::fprintf(stderr, "create: %s: %s\n", aotc_status_message(status), context.error);
    return 1;
  }
  status = AOTC_FN(AOTC_MODEL, _run)(model, &context, input_pointers.data(), output_pointers.data());
  if (status != AOTC_OK) {
    std::fprintf(stderr, "run: %s: %s\n", aotc_status_message(status), context.error);
    return 1;
  }

  // The same run from device pointers.
  std::vector<float*> device_in(NUM_INPUTS), device_out(NUM_OUTPUTS);
  bool ok = true;
  for (size_t i = 0; i < NUM_INPUTS && ok; ++i)
    ok = cuda_ok(cudaMalloc(reinterpret_cast<void**>(&device_in[i]), inputs[i].size() * sizeof(float)), "cudaMalloc") &&
         cuda_ok(cudaMemcpy(device_in[i], inputs[i].data(), inputs[i].size() * sizeof(float), cudaMemcpyHostToDevice),
                 "cudaMemcpy");
  for (size_t i = 0; i < NUM_OUTPUTS && ok; ++i)
    ok = cuda_ok(cudaMalloc(reinterpret_cast<void**>(&device_out[i]), host_outputs[i].size() * sizeof(float)), "cudaMalloc");
  if (!ok) return 1;
  std::vector<const float*> const_device_in(device_in.begin(), device_in.end());
  status = AOTC_FN(AOTC_MODEL, _run_device)(model, &context, const_device_in.data(), device_out.data());
  if (status != AOTC_OK) {
    std::fprintf(stderr, "run_device: %s: %s\n", aotc_status_message(status), context.error);
    return 1;
  }
  for (size_t i = 0; i < NUM_OUTPUTS && ok; ++i)
    ok = cuda_ok(cudaMemcpy(device_outputs[i].data(), device_out[i], device_outputs[i].size() * sizeof(float),
                            cudaMemcpyDeviceToHost), "cudaMemcpy");
  if (!ok) return 1;
  for (size_t i = 0; i < NUM_OUTPUTS; ++i) {
    if (std::memcmp(host_outputs[i].data(), device_outputs[i].data(), host_outputs[i].size() * sizeof(float)) != 0) {
      std::fprintf(stderr, "output %zu: run and run_device differ\n", i);
      return 1;
    }
  }
  // Device tensors must be 16-byte aligned (the kernels move float4s): one float off is refused.
  float* first_output = device_out[0];
  device_out[0] = first_output + 1;
  status = AOTC_FN(AOTC_MODEL, _run_device)(model, &context, const_device_in.data(), device_out.data());
  device_out[0] = first_output;
  if (status != AOTC_ERROR_MISALIGNED_TENSOR) {
    std::fprintf(stderr, "run_device with a misaligned output: %s, expected AOTC_ERROR_MISALIGNED_TENSOR\n",
                 aotc_status_message(status));
    return 1;
  }
  if (!timing) std::printf("cuda_graph %d\n", AOTC_FN(AOTC_MODEL, _runs_cuda_graph)(model));
  // Once more layer by layer (a timing callback turns the CUDA graph off): the same bytes.
  int layers_timed = 0;
  context.timing = [](void* count, const char*, double) { ++*static_cast<int*>(count); };
  context.timing_user_data = &layers_timed;
  for (size_t i = 0; i < NUM_OUTPUTS; ++i) {
    std::fill(device_outputs[i].begin(), device_outputs[i].end(), NAN);
    output_pointers[i] = device_outputs[i].data();
  }
  status = AOTC_FN(AOTC_MODEL, _run)(model, &context, input_pointers.data(), output_pointers.data());
  if (status != AOTC_OK || layers_timed == 0) {
    std::fprintf(stderr, "run with a timing callback: %s (%d layers timed): %s\n", aotc_status_message(status),
                 layers_timed, context.error);
    return 1;
  }
  for (size_t i = 0; i < NUM_OUTPUTS; ++i) {
    if (std::memcmp(host_outputs[i].data(), device_outputs[i].data(), host_outputs[i].size() * sizeof(float)) != 0) {
      std::fprintf(stderr, "output %zu: the CUDA graph's run and the layer-by-layer run differ\n", i);
      return 1;
    }
  }
  context.timing = nullptr;
  if (timing && (time_runs(model, stream, &context, const_device_in.data(), device_out.data(), runs) != 0 ||
                 profile_layers(model, &context, const_device_in.data(), device_out.data(), runs) != 0))
    return 1;
  for (float* p : device_in) cudaFree(p);
  for (float* p : device_out) cudaFree(p);
  AOTC_FN(AOTC_MODEL, _destroy)(model);
  if (stream != nullptr) cudaStreamDestroy(stream);
  if (timing) return 0;

  FILE* f = std::fopen(argv[1], "wb");
  for (const std::vector<float>& out : host_outputs)
    if (f == nullptr || std::fwrite(out.data(), sizeof(float), out.size(), f) != out.size()) {
      std::fprintf(stderr, "%s: cannot write\n", argv[1]);
      return 2;
    }
  std::fclose(f);
  return 0;
}
