// The generated public header of a CPU library: constants describing the
// model, the plain C entry points, and a header-only C++ class over them.
#include <sstream>

#include "backends/halide/halide_library.h"
#include "package/header_parts.h"
#include "support/names.h"

namespace aotc {
namespace {

// Model::run with one argument per input and output, each a pointer to its element type
// (const for inputs), over the typed C entry point `call` ("FN_run_typed_with_context(...").
std::string typed_run(const LoweredModel& model, const std::string& call) {
  std::ostringstream os;
  os << "\n  // Each input and output as a pointer to its element type (kInputs[i].dtype, kOutputs[i].dtype).\n"
     << "  aotc::Status run(";
  for (size_t i = 0; i < model.inputs.size(); ++i)
    os << (i ? ", " : "") << "const " << c_element_type(model.inputs[i].dtype) << "* input" << i;
  for (size_t i = 0; i < model.outputs.size(); ++i)
    os << ", " << c_element_type(model.outputs[i].dtype) << "* output" << i;
  os << ") noexcept {\n    const void* inputs[" << model.inputs.size() << "] = {";
  for (size_t i = 0; i < model.inputs.size(); ++i) os << (i ? ", " : "") << "input" << i;
  os << "};\n    void* outputs[" << model.outputs.size() << "] = {";
  for (size_t i = 0; i < model.outputs.size(); ++i) os << (i ? ", " : "") << "output" << i;
  os << "};\n    const aotc_dtype input_dtypes[" << model.inputs.size() << "] = {";
  for (size_t i = 0; i < model.inputs.size(); ++i) os << (i ? ", " : "") << c_dtype(model.inputs[i].dtype);
  os << "};\n    const aotc_dtype output_dtypes[" << model.outputs.size() << "] = {";
  for (size_t i = 0; i < model.outputs.size(); ++i) os << (i ? ", " : "") << c_dtype(model.outputs[i].dtype);
  os << "};\n    return static_cast<aotc::Status>(" << call << "input_dtypes, inputs, output_dtypes, outputs));\n  }\n";
  return os.str();
}

}  // namespace

std::string model_header(const LoweredModel& model, const std::string& producer, bool external_weights) {
  const std::string id = c_identifier(model.name);
  const std::string ID = upper(id);
  const std::string fn = "aotc_" + id;
  const bool all_float = all_float32(model.inputs) && all_float32(model.outputs);
  std::string run_declarations;
  if (external_weights) {
    run_declarations = R"(/* External weights (aotc --weights=external): the file <name>.weights beside the
 * library, passed to every run as a 64-byte aligned image of the whole file (mmap it
 * read-only, or read it into an aligned buffer); a run never writes it. */
/* Bytes of the weights file (header and payload). */
size_t FN_weights_bytes(void);
/* Verifies weights once, when the app loads them: the header (magic, format version,
 * model, sizes) and the payload's CRC-32, which reads every byte. Returns AOTC_OK or
 * the AOTC_ERROR_*WEIGHTS* status that says what is wrong. */
int FN_check_weights(const void* weights, size_t weights_bytes);
/* Runs the model on tensors of the element types input_dtypes[i] and output_dtypes[i]
 * state (AOTC_ERROR_WRONG_DTYPE unless they are FN_inputs[i].dtype and
 * FN_outputs[i].dtype). Checks the weights' header and size only, not the checksum (too
 * slow for every run): call FN_check_weights once at load. Returns 0 (AOTC_OK) or an
 * aotc_status (aotc/aotc.h). */
int FN_run_typed_with_weights(const void* weights, size_t weights_bytes, void* arena, size_t arena_bytes,
    const aotc_dtype* input_dtypes, const void* const* inputs, const aotc_dtype* output_dtypes,
    void* const* outputs);
/* The same, with a context for per-layer timing and the message of a kernel failure. */
int FN_run_typed_with_weights_and_context(aotc_context* context, const void* weights, size_t weights_bytes,
    void* arena, size_t arena_bytes, const aotc_dtype* input_dtypes, const void* const* inputs,
    const aotc_dtype* output_dtypes, void* const* outputs);
)";
    if (all_float)
      run_declarations += R"(/* The same for this model's float32 inputs and outputs. */
int FN_run_with_weights(const void* weights, size_t weights_bytes, void* arena, size_t arena_bytes,
    const float* const* inputs, float* const* outputs);
int FN_run_with_weights_and_context(aotc_context* context, const void* weights, size_t weights_bytes,
    void* arena, size_t arena_bytes, const float* const* inputs, float* const* outputs);
)";
  } else {
    run_declarations = R"(/* Runs the model on tensors of the element types input_dtypes[i] and output_dtypes[i]
 * state (AOTC_ERROR_WRONG_DTYPE unless they are FN_inputs[i].dtype and
 * FN_outputs[i].dtype). Returns 0 (AOTC_OK) or an aotc_status (aotc/aotc.h). */
int FN_run_typed(void* arena, size_t arena_bytes, const aotc_dtype* input_dtypes, const void* const* inputs,
    const aotc_dtype* output_dtypes, void* const* outputs);
/* The same, with a context for per-layer timing and the message of a kernel failure. */
int FN_run_typed_with_context(aotc_context* context, void* arena, size_t arena_bytes,
    const aotc_dtype* input_dtypes, const void* const* inputs, const aotc_dtype* output_dtypes,
    void* const* outputs);
)";
    if (all_float)
      run_declarations += R"(/* The same for this model's float32 inputs and outputs. */
int FN_run(void* arena, size_t arena_bytes, const float* const* inputs, float* const* outputs);
int FN_run_with_context(aotc_context* context, void* arena, size_t arena_bytes,
    const float* const* inputs, float* const* outputs);
)";
  }
  const std::string typed_call = external_weights
      ? "FN_run_typed_with_weights_and_context(&context_, weights_, weights_bytes_, arena_, arena_bytes_, "
      : "FN_run_typed_with_context(&context_, arena_, arena_bytes_, ";
  std::string model_class = external_weights ? R"(// The model over caller-provided weights (an image of the .weights file, which must
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
)" : R"(// The model over a caller-provided arena. Construction checks the arena
// (status()); run() allocates nothing and returns a status, never throws.
class Model {
 public:
  Model(void* arena, size_t arena_bytes) noexcept
      : arena_(arena), arena_bytes_(arena_bytes),
        status_(static_cast<aotc::Status>(aotc_check_arena(arena, arena_bytes, kArenaBytes))) {}

  // kOk, or why the arena given to the constructor cannot be used.
  aotc::Status status() const noexcept { return status_; }
)";
  if (all_float) {
    model_class += R"(
  // inputs[i] / outputs[i] point to kInputs[i].elements / kOutputs[i].elements floats.
  aotc::Status run(const float* const* inputs, float* const* outputs) noexcept {
    return static_cast<aotc::Status>()" +
                   std::string(external_weights ? "FN_run_with_weights_and_context(&context_, weights_, weights_bytes_, "
                                                  "arena_, arena_bytes_, inputs, outputs));\n"
                                                : "FN_run_with_context(&context_, arena_, arena_bytes_, inputs, outputs));\n") +
                   "  }\n";
  }
  // One argument per input and output, each of its element type: another type does not compile.
  if (!all_float || model.inputs.size() != 1 || model.outputs.size() != 1)
    model_class += typed_run(model, typed_call);
  std::ostringstream os;
  os << "/* " << id << ".h: generated by " << producer << ". Do not edit.\n"
     << " *\n"
     << " * Link lib" << model.name << ".a (plus -lpthread -ldl -lm). Inputs and outputs are dense\n"
     << " * row-major tensors of the element types and shapes below (NCHW as exported), in this\n"
     << " * order; an int8 or uint8 one is quantized by its scale and zero point there.\n"
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
  if (all_float && model.inputs.size() == 1 && model.outputs.size() == 1) {
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

}  // namespace aotc
