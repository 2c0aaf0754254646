// The generated public header: constants describing the model, the plain C
// entry points, and a header-only C++ class over them.
#include <sstream>

#include "package/cuda_package.h"
#include "package/package.h"
#include "support/names.h"

namespace aotc {
namespace {

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string tensor_infos(const std::vector<TensorInfo>& tensors) {
  std::ostringstream os;
  for (const TensorInfo& t : tensors) {
    os << "    {" << c_string_literal(t.name) << ", AOTC_FLOAT32, " << t.shape.size() << ", {";
    for (size_t i = 0; i < t.shape.size(); ++i) os << (i ? ", " : "") << t.shape[i];
    os << "}, " << num_elements(t.shape) << "},\n";
  }
  return os.str();
}

// The C tables of the inputs' and outputs' names and shapes (inside extern "C").
std::string tensor_tables(const std::string& fn, const std::vector<TensorInfo>& inputs,
                          const std::vector<TensorInfo>& outputs) {
  std::ostringstream os;
  os << "/* Names and shapes of the inputs and outputs. */\n"
     << "static const aotc_tensor_info " << fn << "_inputs[" << inputs.size() << "] = {\n"
     << tensor_infos(inputs) << "};\n"
     << "static const aotc_tensor_info " << fn << "_outputs[" << outputs.size() << "] = {\n"
     << tensor_infos(outputs) << "};\n\n";
  return os.str();
}

// The C++ namespace's input and output counts and tables.
std::string io_constants(const std::string& fn, size_t inputs, size_t outputs) {
  std::ostringstream os;
  os << "inline constexpr int kNumInputs = " << inputs << ";\n"
     << "inline constexpr int kNumOutputs = " << outputs << ";\n"
     << "const aotc::TensorInfo* const kInputs = " << fn << "_inputs;\n"
     << "const aotc::TensorInfo* const kOutputs = " << fn << "_outputs;\n\n";
  return os.str();
}

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

}  // namespace

std::string model_header(const LoweredModel& model, const std::string& producer, bool external_weights) {
  const std::string id = c_identifier(model.name);
  const std::string ID = upper(id);
  const std::string fn = "aotc_" + id;
  const std::string run_declarations = external_weights ? R"(/* External weights (aotc --weights=external): the file <name>.weights beside the
 * library, passed to every run as a 64-byte aligned image of the whole file (mmap it
 * read-only, or read it into an aligned buffer); a run never writes it. */
/* Bytes of the weights file (header and payload). */
size_t FN_weights_bytes(void);
/* Verifies weights once, when the app loads them: the header (magic, format version,
 * model, sizes) and the payload's CRC-32, which reads every byte. Returns AOTC_OK or
 * the AOTC_ERROR_*WEIGHTS* status that says what is wrong. */
int FN_check_weights(const void* weights, size_t weights_bytes);
/* Runs the model. Checks the weights' header and size only, not the checksum (too slow
 * for every run): call FN_check_weights once at load. Returns 0 (AOTC_OK) or an
 * aotc_status (aotc/aotc.h). */
int FN_run_with_weights(const void* weights, size_t weights_bytes, void* arena, size_t arena_bytes,
    const float* const* inputs, float* const* outputs);
/* The same, with a context for per-layer timing and the message of a kernel failure. */
int FN_run_with_weights_and_context(aotc_context* context, const void* weights, size_t weights_bytes,
    void* arena, size_t arena_bytes, const float* const* inputs, float* const* outputs);
)" : R"(/* Runs the model. Returns 0 (AOTC_OK) or an aotc_status (aotc/aotc.h). */
int FN_run(void* arena, size_t arena_bytes, const float* const* inputs, float* const* outputs);
/* The same, with a context for per-layer timing and the message of a kernel failure. */
int FN_run_with_context(aotc_context* context, void* arena, size_t arena_bytes,
    const float* const* inputs, float* const* outputs);
)";
  const std::string model_class = external_weights ? R"(// The model over caller-provided weights (an image of the .weights file, which must
// outlive the Model) and arena. Construction checks the arena and verifies the weights,
// checksum included (status()); run() allocates nothing and returns a status, never throws.
class Model {
 public:
  Model(const void* weights, size_t weights_bytes, void* arena, size_t arena_bytes) noexcept
      : weights_(weights), weights_bytes_(weights_bytes), arena_(arena), arena_bytes_(arena_bytes),
        status_(static_cast<aotc::Status>(aotc_check_arena(arena, arena_bytes, kArenaBytes))) {
    if (status_ == aotc::Status::kOk) status_ = static_cast<aotc::Status>(FN_check_weights(weights, weights_bytes));
  }

  // kOk, or why the arena or weights given to the constructor cannot be used.
  aotc::Status status() const noexcept { return status_; }

  // inputs[i] / outputs[i] point to kInputs[i].elements / kOutputs[i].elements floats.
  aotc::Status run(const float* const* inputs, float* const* outputs) noexcept {
    return static_cast<aotc::Status>(
        FN_run_with_weights_and_context(&context_, weights_, weights_bytes_, arena_, arena_bytes_, inputs, outputs));
  }
)" : R"(// The model over a caller-provided arena. Construction checks the arena
// (status()); run() allocates nothing and returns a status, never throws.
class Model {
 public:
  Model(void* arena, size_t arena_bytes) noexcept
      : arena_(arena), arena_bytes_(arena_bytes),
        status_(static_cast<aotc::Status>(aotc_check_arena(arena, arena_bytes, kArenaBytes))) {}

  // kOk, or why the arena given to the constructor cannot be used.
  aotc::Status status() const noexcept { return status_; }

  // inputs[i] / outputs[i] point to kInputs[i].elements / kOutputs[i].elements floats.
  aotc::Status run(const float* const* inputs, float* const* outputs) noexcept {
    return static_cast<aotc::Status>(FN_run_with_context(&context_, arena_, arena_bytes_, inputs, outputs));
  }
)";
  std::ostringstream os;
  os << "/* " << id << ".h: generated by " << producer << ". Do not edit.\n"
     << " *\n"
     << " * Link lib" << model.name << ".a (plus -lpthread -ldl -lm). Inputs and outputs are dense\n"
     << " * row-major float32 in the shapes below (NCHW as exported), in this order.\n"
     << " */\n"
     << "#ifndef AOTC_MODEL_" << ID << "_H_\n"
     << "#define AOTC_MODEL_" << ID << "_H_\n\n"
     << "#include \"aotc/aotc.h\"\n\n"
     << "#define " << ID << "_ARENA_BYTES " << model.arena_bytes << "\n"
     << "#define " << ID << "_NUM_INPUTS " << model.inputs.size() << "\n"
     << "#define " << ID << "_NUM_OUTPUTS " << model.outputs.size() << "\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
     << "/* Bytes of arena a run needs (" << ID << "_ARENA_BYTES). */\n"
     << "size_t " << fn << "_arena_bytes(void);\n"
     << replace_all(run_declarations, "FN_", fn + "_")
     << "/* Threads for all aotc models in the process, the caller's included (one pool is shared);\n"
     << " * 0 = one per core. Also starts them: after this call, no run allocates memory (else the\n"
     << " * first run starts one per core). Idle workers spin briefly between layers, then sleep. */\n"
     << "int " << fn << "_set_num_threads(int threads);\n"
     << tensor_tables(fn, model.inputs, model.outputs)
     << "#ifdef __cplusplus\n}  /* extern \"C\" */\n\n"
     << "namespace " << id << " {\n\n"
     << "inline constexpr size_t kArenaBytes = " << ID << "_ARENA_BYTES;\n"
     << "inline constexpr size_t kArenaAlignment = AOTC_ARENA_ALIGNMENT;\n"
     << io_constants(fn, model.inputs.size(), model.outputs.size())
     << replace_all(model_class, "FN_", fn + "_");
  if (model.inputs.size() == 1 && model.outputs.size() == 1) {
    os << "\n  aotc::Status run(const float* input, float* output) noexcept {\n"
       << "    const float* inputs[1] = {input};\n"
       << "    float* outputs[1] = {output};\n"
       << "    return run(inputs, outputs);\n"
       << "  }\n";
  }
  os << "\n  // Called after each layer with its name and time in microseconds; nullptr turns it off.\n"
     << "  void set_timing_callback(aotc::TimingCallback callback, void* user_data) noexcept {\n"
     << "    context_.timing = callback;\n"
     << "    context_.timing_user_data = user_data;\n"
     << "  }\n\n"
     << "  // Process-wide: one worker pool serves every aotc model of the app. 0 = one per core.\n"
     << "  // Starts the workers, so that even the first run allocates nothing.\n"
     << "  static aotc::Status set_num_threads(int threads) noexcept {\n"
     << "    return static_cast<aotc::Status>(" << fn << "_set_num_threads(threads));\n"
     << "  }\n\n"
     << "  // The message of the last kKernelFailed, or \"\".\n"
     << "  const char* last_error() const noexcept { return context_.error; }\n\n"
     << " private:\n"
     << (external_weights ? "  const void* weights_;\n  size_t weights_bytes_;\n" : "")
     << "  void* arena_;\n"
     << "  size_t arena_bytes_;\n"
     << "  aotc::Status status_;\n"
     << "  aotc_context context_{};\n"
     << "};\n\n"
     << "}  // namespace " << id << "\n"
     << "#endif  /* __cplusplus */\n\n"
     << "#endif  /* AOTC_MODEL_" << ID << "_H_ */\n";
  return os.str();
}

std::string cuda_model_header(const CudaStubModel& model, const std::string& producer) {
  const std::string id = c_identifier(model.name);
  const std::string ID = upper(id);
  const std::string fn = "aotc_" + id;
  const std::string api = R"(/* Bytes of device memory a model takes (ID_DEVICE_ARENA_BYTES): activations, staging
 * of the inputs and outputs, weights. cuDNN's workspace comes on top (at most 256 MiB). */
size_t FN_device_arena_bytes(void);
/* Opens the GPU, loads cuDNN, allocates the device arena and uploads the weights (once).
 * `cuda_stream` (a cudaStream_t, or NULL for a stream of its own) orders every run.
 * Returns AOTC_OK, AOTC_ERROR_DEVICE_UNAVAILABLE (no GPU, driver or cuDNN: context->error
 * says which) or AOTC_ERROR_KERNEL_FAILED; *model is NULL unless AOTC_OK. `context` may be NULL. */
int FN_create(FN_gpu** model, void* cuda_stream, aotc_context* context);
/* Runs from host pointers: copies the inputs in, runs, copies the outputs out, and
 * returns when they are there. Allocates nothing. */
int FN_run(FN_gpu* model, aotc_context* context, const float* const* inputs, float* const* outputs);
/* Runs from device pointers (no copies): enqueues the run on the model's stream and
 * returns; synchronise the stream before reading the outputs. */
int FN_run_device(FN_gpu* model, aotc_context* context, const float* const* inputs, float* const* outputs);
/* Times each layer alone on the GPU as a run replays it: the layer captured into a CUDA
 * graph of its own and replayed `replays` times between two CUDA events, over the given
 * device tensors; reports the mean microseconds per replay through context->timing
 * (required), in execution order. For tuning (bench/gpu writes a tuning cache from it). */
int FN_profile_layers(FN_gpu* model, aotc_context* context, const float* const* inputs, float* const* outputs,
                      int replays);
/* Frees the device arena and cuDNN's handle. NULL is ignored. */
void FN_destroy(FN_gpu* model);
)";
  const std::string model_class = R"(// The model on the GPU, made at construction (status()); run() allocates nothing.
class GpuModel {
 public:
  explicit GpuModel(void* cuda_stream = nullptr) noexcept
      : status_(static_cast<aotc::Status>(FN_create(&model_, cuda_stream, &context_))) {}
  ~GpuModel() { FN_destroy(model_); }
  GpuModel(const GpuModel&) = delete;
  GpuModel& operator=(const GpuModel&) = delete;

  // kOk, or why the model could not be made (last_error() says more).
  aotc::Status status() const noexcept { return status_; }

  // Host pointers: inputs[i] / outputs[i] point to kInputs[i].elements / kOutputs[i].elements floats.
  aotc::Status run(const float* const* inputs, float* const* outputs) noexcept {
    return static_cast<aotc::Status>(FN_run(model_, &context_, inputs, outputs));
  }
  // Device pointers, enqueued on the model's stream.
  aotc::Status run_device(const float* const* inputs, float* const* outputs) noexcept {
    return static_cast<aotc::Status>(FN_run_device(model_, &context_, inputs, outputs));
  }

  // Called after each layer with its name and time in microseconds (the stream is
  // synchronised around each layer while it is set); nullptr turns it off.
  void set_timing_callback(aotc::TimingCallback callback, void* user_data) noexcept {
    context_.timing = callback;
    context_.timing_user_data = user_data;
  }

  // The message of the last failure, or "".
  const char* last_error() const noexcept { return context_.error; }

 private:
  FN_gpu* model_ = nullptr;
  aotc_context context_{};
  aotc::Status status_;
};
)";
  std::ostringstream os;
  os << "/* " << id << ".h: generated by " << producer << ". Do not edit.\n"
     << " *\n"
     << " * A GPU library: every layer runs on an NVIDIA GPU. Link lib" << model.name << ".a (plus -lpthread\n"
     << " * -ldl -lrt). At run time it needs the NVIDIA driver (libcuda.so.1) and cuDNN 9\n"
     << " * (libcudnn.so.9 on the loader's path, or the file AOTC_CUDNN_LIBRARY names), both loaded\n"
     << " * when a model is created; the CUDA runtime is linked in. Without them, create returns\n"
     << " * AOTC_ERROR_DEVICE_UNAVAILABLE.\n"
     << " * Inputs and outputs are dense row-major float32 in the shapes below (NCHW), in this order.\n"
     << " */\n"
     << "#ifndef AOTC_MODEL_" << ID << "_H_\n"
     << "#define AOTC_MODEL_" << ID << "_H_\n\n"
     << "#include \"aotc/aotc.h\"\n\n"
     << "#define " << ID << "_DEVICE_ARENA_BYTES " << model.device_arena_bytes << "\n"
     << "#define " << ID << "_NUM_INPUTS " << model.inputs.size() << "\n"
     << "#define " << ID << "_NUM_OUTPUTS " << model.outputs.size() << "\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
     << "typedef struct " << fn << "_gpu " << fn << "_gpu;\n\n"
     << replace_all(replace_all(api, "FN_", fn + "_"), "ID_", ID + "_")
     << tensor_tables(fn, model.inputs, model.outputs)
     << "#ifdef __cplusplus\n}  /* extern \"C\" */\n\n"
     << "namespace " << id << " {\n\n"
     << "inline constexpr size_t kDeviceArenaBytes = " << ID << "_DEVICE_ARENA_BYTES;\n"
     << io_constants(fn, model.inputs.size(), model.outputs.size())
     << replace_all(model_class, "FN_", fn + "_") << "\n"
     << "}  // namespace " << id << "\n"
     << "#endif  /* __cplusplus */\n\n"
     << "#endif  /* AOTC_MODEL_" << ID << "_H_ */\n";
  return os.str();
}

}  // namespace aotc
