// The generated public header of a GPU library: the device arena's size, the
// create / run / run_device / profile_layers / runs_cuda_graph / destroy entry points, and a
// header-only C++ class over them.
#include <sstream>

#include "backends/cuda_stubs/cuda_library.h"
#include "package/header_parts.h"
#include "support/names.h"

namespace aotc {

std::string cuda_model_header(const CudaStubModel& model, const std::string& producer) {
  const std::string id = c_identifier(model.name);
  const std::string ID = upper(id);
  const std::string fn = "aotc_" + id;
  const std::string api = R"(/* Bytes of device memory a model takes (ID_DEVICE_ARENA_BYTES): activations, staging
 * of the inputs and outputs, weights. cuDNN's workspace comes on top (at most 256 MiB). */
size_t FN_device_arena_bytes(void);
CREATE_)/* Runs from host pointers: copies the inputs in, runs, copies the outputs out, and
 * returns when they are there. Allocates nothing. */
int FN_run(FN_gpu* model, aotc_context* context, const float* const* inputs, float* const* outputs);
/* Runs from device pointers (no copies), each aligned to AOTC_DEVICE_TENSOR_ALIGNMENT
 * (16) bytes, else AOTC_ERROR_MISALIGNED_TENSOR: enqueues the run on the model's stream
 * and returns; synchronise the stream before reading the outputs. */
int FN_run_device(FN_gpu* model, aotc_context* context, const float* const* inputs, float* const* outputs);
/* Times each layer alone on the GPU as a run replays it: the layer captured into a CUDA
 * graph of its own and replayed `replays` times between two CUDA events, over the given
 * device tensors (aligned as run_device's); reports the mean microseconds per replay
 * through context->timing (required), in execution order. For tuning (bench/gpu writes a tuning cache from it). */
int FN_profile_layers(FN_gpu* model, aotc_context* context, const float* const* inputs, float* const* outputs,
                      int replays);
/* 1 while runs replay the layers as one captured CUDA graph (one launch a run), 0 before
 * the first run and once a capture was refused (by the stream, or by a library call that
 * cannot be captured): the layers are then launched one by one, which costs a host call
 * each. Runs with a timing callback launch them one by one too, but leave this as it is. */
int FN_runs_cuda_graph(const FN_gpu* model);
/* Frees the device arena and cuDNN's handle. NULL is ignored. */
void FN_destroy(FN_gpu* model);
)";
  const std::string create = model.external_weights ? R"(/* External weights (aotc --weights=external): the file <name>.weights beside the
 * library, whose image (64-byte aligned: mmap it read-only, or read it into an aligned
 * buffer) create uploads to the GPU; it need not outlive create. */
/* Bytes of the weights file (header and payload). */
size_t FN_weights_bytes(void);
/* Verifies weights once, when the app loads them: the header (magic, format version,
 * model, sizes) and the payload's CRC-32, which reads every byte. Returns AOTC_OK or
 * the AOTC_ERROR_*WEIGHTS* status that says what is wrong. */
int FN_check_weights(const void* weights, size_t weights_bytes);
/* Checks the weights' header and size (not the checksum: FN_check_weights), then opens
 * the GPU, loads cuDNN, allocates the device arena and uploads the weights' payload.
 * `cuda_stream` (a cudaStream_t, or NULL for a stream of its own) orders every run.
 * Returns AOTC_OK, an AOTC_ERROR_*WEIGHTS* status (before touching the GPU),
 * AOTC_ERROR_DEVICE_UNAVAILABLE (no GPU, driver or cuDNN: context->error says which) or
 * AOTC_ERROR_KERNEL_FAILED; *model is NULL unless AOTC_OK. `context` may be NULL. */
int FN_create_with_weights(FN_gpu** model, const void* weights, size_t weights_bytes, void* cuda_stream,
                           aotc_context* context);
)" : R"(/* Opens the GPU, loads cuDNN, allocates the device arena and uploads the weights (once).
 * `cuda_stream` (a cudaStream_t, or NULL for a stream of its own) orders every run.
 * Returns AOTC_OK, AOTC_ERROR_DEVICE_UNAVAILABLE (no GPU, driver or cuDNN: context->error
 * says which) or AOTC_ERROR_KERNEL_FAILED; *model is NULL unless AOTC_OK. `context` may be NULL. */
int FN_create(FN_gpu** model, void* cuda_stream, aotc_context* context);
)";
  const std::string constructor = model.external_weights ? R"(// The model on the GPU over the image of its weights file, verified first (checksum
// included), then uploaded: the image need not outlive the constructor. Made at
// construction (status()); run() allocates nothing.
class GpuModel {
 public:
  GpuModel(const void* weights, size_t weights_bytes, void* cuda_stream = nullptr) noexcept
      : status_(static_cast<aotc::Status>(FN_check_weights(weights, weights_bytes))) {
    if (status_ == aotc::Status::kOk)
      status_ = static_cast<aotc::Status>(FN_create_with_weights(&model_, weights, weights_bytes, cuda_stream, &context_));
  }
)" : R"(// The model on the GPU, made at construction (status()); run() allocates nothing.
class GpuModel {
 public:
  explicit GpuModel(void* cuda_stream = nullptr) noexcept
      : status_(static_cast<aotc::Status>(FN_create(&model_, cuda_stream, &context_))) {}
)";
  const std::string model_class = R"(  ~GpuModel() { FN_destroy(model_); }
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

  // Whether runs replay one captured CUDA graph (FN_runs_cuda_graph).
  bool runs_cuda_graph() const noexcept { return FN_runs_cuda_graph(model_) == 1; }

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
     << replace_all(replace_all(replace_all(api, "CREATE_)", create), "FN_", fn + "_"), "ID_", ID + "_")
     << tensor_tables(fn, model.inputs, model.outputs)
     << "#ifdef __cplusplus\n}  /* extern \"C\" */\n\n"
     << "namespace " << id << " {\n\n"
     << "inline constexpr size_t kDeviceArenaBytes = " << ID << "_DEVICE_ARENA_BYTES;\n"
     << io_constants(fn, model.inputs.size(), model.outputs.size())
     << replace_all(constructor + model_class, "FN_", fn + "_") << "\n"
     << "}  // namespace " << id << "\n"
     << "#endif  /* __cplusplus */\n\n"
     << "#endif  /* AOTC_MODEL_" << ID << "_H_ */\n";
  return os.str();
}

}  // namespace aotc
