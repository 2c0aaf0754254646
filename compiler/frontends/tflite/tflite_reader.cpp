#include "frontends/tflite/tflite_reader.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <utility>
#include <vector>

#include "frontends/aotc_fb/aotc_fb_reader.h"
#include "frontends/flatbuffer_input.h"
#include "frontends/tflite/tflite_lowering.h"
#include "frontends/tflite/tflite_names.h"
#include "schemas/tflite_generated.h"
#include "support/error.h"

namespace aotc {
namespace {

using flatbuffers::uoffset_t;
using tfl::BuiltinOperator;
using tfl::TensorType;

// The schema nests tables 6 deep (Model > SubGraph > Tensor > SparsityParameters >
// DimensionMetadata > Int32Vector).
constexpr uoffset_t kMaxTfliteTableDepth = 16;

// The custom op MediaPipe uses for its decoder's upsampling.
constexpr const char* kConvolution2DTransposeBias = "Convolution2DTransposeBias";

// The builtin ops the TFLite frontend is meant to lower (float models; DEQUANTIZE
// only of float16 constants, DENSIFY only of sparse constants).
constexpr BuiltinOperator kSupportedBuiltins[] = {
    BuiltinOperator::ADD,           BuiltinOperator::AVERAGE_POOL_2D,
    BuiltinOperator::CONCATENATION, BuiltinOperator::CONV_2D,
    BuiltinOperator::DEPTHWISE_CONV_2D, BuiltinOperator::DEPTH_TO_SPACE,
    BuiltinOperator::DEQUANTIZE,    BuiltinOperator::FULLY_CONNECTED,
    BuiltinOperator::LOGISTIC,      BuiltinOperator::MAX_POOL_2D,
    BuiltinOperator::MUL,           BuiltinOperator::RELU,
    BuiltinOperator::RELU6,         BuiltinOperator::RESHAPE,
    BuiltinOperator::RESIZE_BILINEAR, BuiltinOperator::SOFTMAX,
    BuiltinOperator::TANH,          BuiltinOperator::PAD,
    BuiltinOperator::MEAN,          BuiltinOperator::SUB,
    BuiltinOperator::PRELU,         BuiltinOperator::TRANSPOSE_CONV,
    BuiltinOperator::RESIZE_NEAREST_NEIGHBOR, BuiltinOperator::HARD_SWISH,
    BuiltinOperator::DENSIFY,       BuiltinOperator::QUANTIZE,
};

std::string supported_list() {
  std::vector<int> codes;
  for (const BuiltinOperator op : kSupportedBuiltins) codes.push_back(static_cast<int>(op));
  std::sort(codes.begin(), codes.end());
  std::string list;
  for (const int code : codes) list += tflite::builtin_name(code) + ", ";
  return list + "CUSTOM(" + kConvolution2DTransposeBias + ")";
}

// Bytes per element of the tensor types a float model may hold; 0 for the others.
size_t element_size(TensorType type) {
  switch (type) {
    case TensorType::FLOAT32: case TensorType::INT32: return 4;
    case TensorType::FLOAT16: case TensorType::INT16: return 2;
    case TensorType::INT64: return 8;
    case TensorType::UINT8: case TensorType::INT8: case TensorType::BOOL: return 1;
    default: return 0;
  }
}

// Indices walked in the file's vectors are charged against the file's size: a
// well-formed file stores each vector once, so only offsets that alias one large
// vector many times (a "FlatBuffers bomb") can overdraw it.
class WalkBudget {
 public:
  WalkBudget(size_t bytes, const std::string& path) : left_(bytes), path_(path) {}

  void charge(size_t elements) {
    const size_t bytes = elements * sizeof(int32_t);
    if (bytes > left_)
      fail(ExitCode::kInvalidModel, path_,
           ": corrupt TensorFlow Lite model: its tables share vectors (aliased offsets), so reading it "
           "would walk more entries than the file holds");
    left_ -= bytes;
  }

 private:
  size_t left_;
  const std::string& path_;
};

// Checks a verified Model for what the Verifier cannot (indices, shapes, constant
// sizes, definition order), takes the op census (refusing unsupported ops, all
// named at once), then lowers the graph (tflite_lowering.h).
class TfliteReader {
 public:
  TfliteReader(const tfl::Model& model, size_t file_size, const std::string& path)
      : model_(model), budget_(file_size, path), path_(path) {}

  Graph read() {
    const tfl::SubGraph& graph = main_subgraph();
    check_tensors(graph);
    check_operators(graph);
    take_census(graph);
    Graph g = tflite::lower_subgraph(model_, graph, path_);
    g.name = graph.name() && graph.name()->size() > 0 ? graph.name()->str() : std::filesystem::path(path_).stem().string();
    if (g.name.empty()) g.name = "model";
    return g;
  }

 private:
  // A tensor whose buffer holds data: a constant (weights). Converters give
  // activations buffers too, but empty ones.
  struct TensorInfo {
    bool constant = false;
    bool defined = false;  // a graph input, a constant, or an earlier op's output
  };

  const tfl::SubGraph& main_subgraph() {
    const auto* subgraphs = model_.subgraphs();
    if (!subgraphs || subgraphs->size() == 0)
      fail(ExitCode::kInvalidModel, path_, ": corrupt TensorFlow Lite model: it has no subgraph");
    if (subgraphs->size() != 1)
      fail(ExitCode::kUnsupported, path_, ": the model has ", subgraphs->size(),
           " subgraphs (control flow or signatures); aotc reads models with exactly one");
    return *subgraphs->Get(0);
  }

  size_t tensor_count(const tfl::SubGraph& graph) const { return graph.tensors() ? graph.tensors()->size() : 0; }

  void check_tensors(const tfl::SubGraph& graph) {
    const size_t buffer_count = model_.buffers() ? model_.buffers()->size() : 0;
    tensors_.assign(tensor_count(graph), {});
    for (size_t i = 0; i < tensors_.size(); ++i) {
      const tfl::Tensor& t = *graph.tensors()->Get(static_cast<uoffset_t>(i));
      const std::string ref = tflite::tensor_ref(graph, i);
      const size_t elem_size = element_size(t.type());
      if (elem_size == 0)
        fail(ExitCode::kUnsupported, path_, ": ", ref, " has type ", tfl::EnumNameTensorType(t.type()),
             "; aotc reads float32 models (with float16 or sparse constants)");
      if (t.is_variable())
        fail(ExitCode::kUnsupported, path_, ": ", ref, " is a variable; aotc reads stateless models only");
      const size_t rank = t.shape() ? t.shape()->size() : 0;
      if (rank > kMaxRank) fail(ExitCode::kInvalidModel, path_, ": ", ref, " has rank ", rank, " (at most ", kMaxRank, ")");
      int64_t elements = 1;
      for (size_t d = 0; d < rank; ++d) {
        const int32_t dim = t.shape()->Get(static_cast<uoffset_t>(d));
        if (dim < 0) fail(ExitCode::kInvalidModel, path_, ": ", ref, " has a negative dimension ", dim);
        elements *= dim;
        if (elements > kMaxElements)
          fail(ExitCode::kInvalidModel, path_, ": ", ref, " has more than 2^31 elements");
      }
      if (t.buffer() >= std::max<size_t>(buffer_count, 1))
        fail(ExitCode::kInvalidModel, path_, ": ", ref, " refers to buffer ", t.buffer(), " but the model has ",
             buffer_count, " buffers");
      if (buffer_count == 0) continue;
      const tfl::Buffer& buffer = *model_.buffers()->Get(t.buffer());
      if (buffer.offset() > 1)
        fail(ExitCode::kUnsupported, path_, ": ", ref,
             " keeps its data outside the FlatBuffer (a model over 2 GiB); aotc does not read those");
      const size_t data_size = buffer.data() ? buffer.data()->size() : 0;
      if (data_size == 0) continue;
      tensors_[i].constant = tensors_[i].defined = true;
      // A sparse tensor stores only its nonzero values; DENSIFY checks them.
      const size_t expected = static_cast<size_t>(elements) * elem_size;
      if (!t.sparsity() && data_size != expected)
        fail(ExitCode::kInvalidModel, path_, ": ", ref, " holds ", data_size, " bytes of data but its shape and type (",
             tfl::EnumNameTensorType(t.type()), ") need ", expected);
    }
  }

  // An index into the subgraph's tensors, or (where `optional`) -1.
  void check_tensor_index(const tfl::SubGraph& graph, int32_t index, bool optional, const std::string& where) {
    if (optional && index == -1) return;
    if (index < 0 || static_cast<size_t>(index) >= tensor_count(graph))
      fail(ExitCode::kInvalidModel, path_, ": ", where, " refers to tensor ", index, " but the subgraph has ",
           tensor_count(graph), " tensors");
  }

  std::string operator_ref(const tfl::SubGraph& graph, size_t index) {
    const tfl::Operator& op = *graph.operators()->Get(static_cast<uoffset_t>(index));
    return detail::concat("operator #", index, " (", tflite::operator_name(model_, op), ")");
  }

  // Graph inputs, then operators in execution order: every index in range, every
  // input defined before use, every tensor written once.
  void check_operators(const tfl::SubGraph& graph) {
    const auto check_graph_ends = [&](const flatbuffers::Vector<int32_t>* list, const char* side) {
      if (!list || list->size() == 0)
        fail(ExitCode::kInvalidModel, path_, ": corrupt TensorFlow Lite model: the subgraph has no ", side);
      budget_.charge(list->size());
      for (const int32_t index : *list) check_tensor_index(graph, index, false, detail::concat("subgraph ", side));
    };
    check_graph_ends(graph.inputs(), "inputs");
    check_graph_ends(graph.outputs(), "outputs");
    for (const int32_t index : *graph.inputs()) tensors_[static_cast<size_t>(index)].defined = true;

    const size_t opcode_count = model_.operator_codes() ? model_.operator_codes()->size() : 0;
    const size_t op_count = graph.operators() ? graph.operators()->size() : 0;
    for (size_t i = 0; i < op_count; ++i) {
      const tfl::Operator& op = *graph.operators()->Get(static_cast<uoffset_t>(i));
      if (op.opcode_index() >= opcode_count)
        fail(ExitCode::kInvalidModel, path_, ": operator #", i, " has op code index ", op.opcode_index(),
             " but the model has ", opcode_count, " op codes");
      const std::string ref = operator_ref(graph, i);
      if (op.large_custom_options_offset() > 1)
        fail(ExitCode::kUnsupported, path_, ": ", ref,
             " keeps its options outside the FlatBuffer (a model over 2 GiB); aotc does not read those");
      const size_t input_count = op.inputs() ? op.inputs()->size() : 0;
      const size_t output_count = op.outputs() ? op.outputs()->size() : 0;
      budget_.charge(input_count + output_count);
      for (size_t k = 0; k < input_count; ++k) {
        const int32_t index = op.inputs()->Get(static_cast<uoffset_t>(k));
        check_tensor_index(graph, index, true, detail::concat(ref, " input ", k));
        if (index != -1 && !tensors_[static_cast<size_t>(index)].defined)
          fail(ExitCode::kInvalidModel, path_, ": ", ref, " reads ", tflite::tensor_ref(graph, static_cast<size_t>(index)),
               " before any operator writes it (operators out of order, or a cycle)");
      }
      if (output_count == 0) fail(ExitCode::kInvalidModel, path_, ": ", ref, " has no outputs");
      for (size_t k = 0; k < output_count; ++k) {
        const int32_t index = op.outputs()->Get(static_cast<uoffset_t>(k));
        check_tensor_index(graph, index, false, detail::concat(ref, " output ", k));
        TensorInfo& out = tensors_[static_cast<size_t>(index)];
        if (out.defined)
          fail(ExitCode::kInvalidModel, path_, ": ", ref, " writes ", tflite::tensor_ref(graph, static_cast<size_t>(index)),
               ", which is already ", out.constant ? "a constant" : "defined (a graph input or an earlier output)");
        out.defined = true;
      }
    }
    for (const int32_t index : *graph.outputs())
      if (!tensors_[static_cast<size_t>(index)].defined)
        fail(ExitCode::kInvalidModel, path_, ": graph output ", tflite::tensor_ref(graph, static_cast<size_t>(index)),
             " is never written");
  }

  static bool is_supported(const tfl::OperatorCode& code) {
    const int builtin = tflite::builtin_code(code);
    if (builtin == static_cast<int>(BuiltinOperator::CUSTOM))
      return code.custom_code() && code.custom_code()->str() == kConvolution2DTransposeBias;
    return std::any_of(std::begin(kSupportedBuiltins), std::end(kSupportedBuiltins),
                       [&](BuiltinOperator op) { return static_cast<int>(op) == builtin; });
  }

  // Counts per op name; throws one UserError naming every unsupported op (with
  // its count).
  std::map<std::string, int> take_census(const tfl::SubGraph& graph) {
    std::map<std::string, int> census, unsupported;
    const size_t op_count = graph.operators() ? graph.operators()->size() : 0;
    for (size_t i = 0; i < op_count; ++i) {
      const tfl::Operator& op = *graph.operators()->Get(static_cast<uoffset_t>(i));
      const std::string name = tflite::operator_name(model_, op);
      ++census[name];
      if (!is_supported(*model_.operator_codes()->Get(op.opcode_index()))) ++unsupported[name];
    }
    if (unsupported.empty()) return census;
    std::string message = path_ + ": unsupported TensorFlow Lite operators:";
    const char* separator = " ";
    for (const auto& [name, count] : by_count(unsupported)) {
      message += detail::concat(separator, name, " x", count);
      separator = ", ";
    }
    throw UserError(ExitCode::kUnsupported, message + " (supported: " + supported_list() + ")");
  }

  // Most frequent first, then by name: the order a reader scans a census in.
  static std::vector<std::pair<std::string, int>> by_count(const std::map<std::string, int>& counts) {
    std::vector<std::pair<std::string, int>> sorted(counts.begin(), counts.end());
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    return sorted;
  }

  const tfl::Model& model_;
  WalkBudget budget_;
  const std::string& path_;
  std::vector<TensorInfo> tensors_;
};

}  // namespace

Graph read_tflite_model(const uint8_t* data, size_t size, const std::string& path) {
  if (size > kMaxFlatBufferBytes)
    fail(ExitCode::kInvalidModel, path, ": ", size, " bytes is more than a FlatBuffers file can hold (2 GiB)");
  if (size < 2 * flatbuffers::kFileIdentifierLength || !tfl::ModelBufferHasIdentifier(data))
    fail(ExitCode::kInvalidModel, path, ": not a TensorFlow Lite model (no \"", tfl::ModelIdentifier(),
         "\" file identifier)");

  const AlignedBytes aligned(data, size);
  data = aligned.data();

  if (!verify_flatbuffer(data, size, kMaxTfliteTableDepth,
                         [](flatbuffers::Verifier& v) { return tfl::VerifyModelBuffer(v); }))
    fail(ExitCode::kInvalidModel, path,
         ": corrupt TensorFlow Lite model: the FlatBuffers verifier rejected it (truncated or damaged file?)");
  return TfliteReader(*tfl::GetModel(data), size, path).read();
}

}  // namespace aotc
