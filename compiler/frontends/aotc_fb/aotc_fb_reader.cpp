#include "frontends/aotc_fb/aotc_fb_reader.h"

#include <bit>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/printer.h"
#include "ir/shape_rules.h"
#include "schemas/aotc_model_generated.h"
#include "frontends/flatbuffer_input.h"
#include "support/error.h"

namespace aotc {
namespace {

static_assert(std::endian::native == std::endian::little, "constant data is copied as little-endian values");

using flatbuffers::uoffset_t;

constexpr uint32_t kFormatVersionMajor = 1;
// The schema nests tables 3 deep (Model > Node > options).
constexpr uoffset_t kMaxFbTableDepth = 8;

// What defines each tensor; node indices are >= 0.
constexpr int kUndefined = -3;
constexpr int kGraphInput = -2;
constexpr int kConstant = -1;

// Everything copied out of the buffer is charged against the buffer's size. A
// well-formed file stores each string and vector once, so only offsets that
// alias one large vector many times (a "FlatBuffers bomb") can overdraw it.
class CopyBudget {
 public:
  CopyBudget(size_t bytes, const std::string& path) : left_(bytes), path_(path) {}

  void charge(size_t bytes) {
    if (bytes > left_)
      fail(ExitCode::kInvalidModel, path_,
           ": corrupt aotc model: its tables share vectors (aliased offsets), so reading it would copy "
           "more bytes than the file holds");
    left_ -= bytes;
  }

 private:
  size_t left_;
  const std::string& path_;
};

// "AOTC", or the four identifier bytes with unprintable ones escaped.
std::string quoted_identifier(const uint8_t* data) {
  std::string s = "\"";
  for (size_t i = flatbuffers::kFileIdentifierLength; i < 2 * flatbuffers::kFileIdentifierLength; ++i) {
    const unsigned char c = data[i];
    if (std::isprint(c) && c != '"' && c != '\\') {
      s += static_cast<char>(c);
    } else {
      static const char kHex[] = "0123456789abcdef";
      s += "\\x";
      s += kHex[c >> 4];
      s += kHex[c & 15];
    }
  }
  return s + "\"";
}

// The Verifier checks the alignment of a vector's length but not that of its
// 64-bit elements, so these are copied bytewise instead of being read in place.
std::vector<int64_t> copy_int64s(const flatbuffers::Vector<int64_t>& v) {
  std::vector<int64_t> values(v.size());
  if (!values.empty()) std::memcpy(values.data(), v.Data(), values.size() * sizeof(int64_t));
  return values;
}

// The IR dtype of a file's dtype; false for those aotc does not read (Int64, unknown codes).
bool dtype_of(fb::DType type, DType* dtype) {
  switch (type) {
    case fb::DType::Float32: *dtype = DType::F32; return true;
    case fb::DType::Int8: *dtype = DType::I8; return true;
    case fb::DType::UInt8: *dtype = DType::U8; return true;
    case fb::DType::Int32: *dtype = DType::I32; return true;
    case fb::DType::Int64: break;
  }
  return false;
}

// A constant's little-endian elements of `dtype` as the IR's floats (exact: graph.h). An
// int32 beyond +-2^24 would round, so the caller checks those before converting.
template <typename T>
void copy_elements(const uint8_t* bytes, std::vector<float>& out) {
  for (size_t i = 0; i < out.size(); ++i) {
    T v;
    std::memcpy(&v, bytes + i * sizeof(T), sizeof(T));  // the bytes need not be aligned for T
    out[i] = static_cast<float>(v);
  }
}

// The IR op of a file's op code; false for codes this aotc does not know.
bool op_kind_of(fb::OpCode code, OpKind* kind) {
  switch (code) {
    case fb::OpCode::Conv2d: *kind = OpKind::Conv2d; return true;
    case fb::OpCode::BatchNorm: *kind = OpKind::BatchNorm; return true;
    case fb::OpCode::Relu: *kind = OpKind::Relu; return true;
    case fb::OpCode::Clamp: *kind = OpKind::Clamp; return true;
    case fb::OpCode::HardSwish: *kind = OpKind::HardSwish; return true;
    case fb::OpCode::Sigmoid: *kind = OpKind::Sigmoid; return true;
    case fb::OpCode::Add: *kind = OpKind::Add; return true;
    case fb::OpCode::Mul: *kind = OpKind::Mul; return true;
    case fb::OpCode::MaxPool2d: *kind = OpKind::MaxPool2d; return true;
    case fb::OpCode::AvgPool2d: *kind = OpKind::AvgPool2d; return true;
    case fb::OpCode::AdaptiveAvgPool2d: *kind = OpKind::AdaptiveAvgPool2d; return true;
    case fb::OpCode::GlobalAvgPool: *kind = OpKind::GlobalAvgPool; return true;
    case fb::OpCode::Linear: *kind = OpKind::Linear; return true;
    case fb::OpCode::Flatten: *kind = OpKind::Flatten; return true;
    case fb::OpCode::Reshape: *kind = OpKind::Reshape; return true;
    case fb::OpCode::Concat: *kind = OpKind::Concat; return true;
    case fb::OpCode::Dropout: *kind = OpKind::Dropout; return true;
    case fb::OpCode::Softmax: *kind = OpKind::Softmax; return true;
    case fb::OpCode::Pad: *kind = OpKind::Pad; return true;
    case fb::OpCode::Quantize: *kind = OpKind::Quantize; return true;
    case fb::OpCode::Dequantize: *kind = OpKind::Dequantize; return true;
  }
  return false;  // a newer exporter's op, or garbage
}

std::string options_name(fb::OpOptions type) {
  const char* name = fb::EnumNameOpOptions(type);
  if (*name == '\0') return detail::concat("options of unknown type ", static_cast<int>(type));
  return name;
}

// A node of a graph that topological_sort() rejected, lying on a cycle: the
// first node found on the current path of a depth-first walk up the producers.
size_t node_on_cycle(const Graph& g) {
  enum class Mark : uint8_t { kUnvisited, kOnPath, kDone };
  const std::vector<int> producer_of = defining_nodes(g);
  std::vector<Mark> mark(g.nodes.size(), Mark::kUnvisited);
  for (size_t root = 0; root < g.nodes.size(); ++root) {
    if (mark[root] != Mark::kUnvisited) continue;
    std::vector<std::pair<size_t, size_t>> path{{root, 0}};  // (node, next input to follow)
    mark[root] = Mark::kOnPath;
    while (!path.empty()) {
      const size_t node = path.back().first;
      const size_t input = path.back().second++;
      if (input == g.nodes[node].inputs.size()) {
        mark[node] = Mark::kDone;
        path.pop_back();
        continue;
      }
      const int producer = producer_of[static_cast<size_t>(g.nodes[node].inputs[input])];
      if (producer < 0) continue;
      const size_t p = static_cast<size_t>(producer);
      if (mark[p] == Mark::kOnPath) return p;
      if (mark[p] == Mark::kUnvisited) {
        mark[p] = Mark::kOnPath;
        path.push_back({p, 0});
      }
    }
  }
  AOTC_CHECK(false, "topological_sort found a cycle that node_on_cycle cannot");
  return 0;
}

// Reads a verified Model into a Graph, checking what the Verifier cannot: that
// indices, definitions, dtypes, shapes and options make a well-formed graph.
class ModelReader {
 public:
  ModelReader(const fb::Model& model, size_t file_bytes, const std::string& path)
      : model_(model), path_(path), budget_(file_bytes, path) {}

  Graph read() {
    check_version();
    g_.name = graph_name();
    read_tensors();
    read_graph_inputs();
    read_nodes();
    check_node_inputs_defined();
    read_graph_outputs();
    check_shapes();
    sort_nodes();
    return std::move(g_);
  }

 private:
  template <typename... Args>
  [[noreturn]] void error(ExitCode code, const Args&... args) const {
    fail(code, path_, ": ", args...);
  }

  std::string tensor_ref(TensorId id) const {
    return detail::concat("tensor '", g_.tensor(id).name, "' (#", id, ")");
  }
  static std::string node_ref(const Node& node, size_t index) {
    return detail::concat("node '", node.name, "' (#", index, ", ", op_name(node.op), ")");
  }

  std::string copy_string(const flatbuffers::String* s) {
    if (!s) return {};
    budget_.charge(s->size());
    return s->str();
  }

  void check_version() const {
    if (model_.version_major() != kFormatVersionMajor)
      error(ExitCode::kUnsupported, "model format version ", model_.version_major(), ".", model_.version_minor(),
            " is not supported (this aotc reads version ", kFormatVersionMajor, ".x)");
  }

  std::string graph_name() {
    std::string name = copy_string(model_.name());
    if (name.empty()) name = std::filesystem::path(path_).stem().string();
    return name.empty() ? "model" : name;
  }

  // A tensor index read from the file, checked against the tensor count; `where`
  // says who holds the index.
  template <typename... Where>
  TensorId tensor_id(int32_t index, const Where&... where) const {
    if (index < 0 || static_cast<size_t>(index) >= g_.tensors.size())
      error(ExitCode::kInvalidModel, where..., " refers to tensor #", index, ", but the model has ",
            g_.tensors.size(), " tensors");
    return index;
  }

  std::string definition(TensorId id) const {
    const int def = definer_[static_cast<size_t>(id)];
    if (def == kGraphInput) return "a graph input";
    if (def == kConstant) return "a constant";
    return "the output of " + node_ref(g_.nodes[static_cast<size_t>(def)], static_cast<size_t>(def));
  }

  void read_tensors() {
    const auto* tensors = model_.tensors();
    if (!tensors) return;  // such a model fails below, for want of an output
    const auto* buffers = model_.buffers();
    const size_t buffer_count = buffers ? buffers->size() : 0;
    // Tensors of one dtype may share a buffer; they then share its (converted) data.
    std::map<std::pair<uint32_t, DType>, std::shared_ptr<const std::vector<float>>> buffer_data;
    std::unordered_set<std::string> names;
    for (uoffset_t i = 0; i < tensors->size(); ++i) {
      const fb::Tensor& ft = *tensors->Get(i);
      Tensor t;
      t.name = copy_string(ft.name());
      if (t.name.empty()) error(ExitCode::kInvalidModel, "tensor #", i, " has no name");
      if (!names.insert(t.name).second)
        error(ExitCode::kInvalidModel, "tensor '", t.name, "' (#", i, ") has the same name as an earlier tensor");
      const std::string ref = detail::concat("tensor '", t.name, "' (#", i, ")");
      if (!dtype_of(ft.dtype(), &t.dtype)) {
        const char* dtype = fb::EnumNameDType(ft.dtype());
        error(ExitCode::kUnsupported, ref, " has dtype ",
              *dtype ? std::string(dtype) : detail::concat("#", static_cast<int>(ft.dtype())),
              "; aotc reads Float32, Int8, UInt8 and Int32");
      }
      t.shape = read_shape(ft.shape(), ref);
      if (const fb::Quantization* q = ft.quantization()) t.quant = read_quantization(*q);
      if (const uint32_t b = ft.buffer(); b != 0) {
        if (b >= buffer_count)
          error(ExitCode::kInvalidModel, ref, " refers to buffer #", b, ", but the model has ", buffer_count,
                " buffers");
        const auto* bytes = buffers->Get(b)->data();
        const size_t byte_count = bytes ? bytes->size() : 0;
        const int64_t elements = num_elements(t.shape);
        if (byte_count != static_cast<size_t>(elements * dtype_bytes(t.dtype)))
          error(ExitCode::kInvalidModel, ref, " has shape ", to_string(t.shape), " (", elements, " ",
                dtype_name(t.dtype), " = ", elements * dtype_bytes(t.dtype), " bytes) but its buffer #", b, " holds ",
                byte_count, " bytes");
        std::shared_ptr<const std::vector<float>>& data = buffer_data[{b, t.dtype}];
        if (!data) data = read_constant(bytes ? bytes->data() : nullptr, static_cast<size_t>(elements), t.dtype, ref);
        t.data = data;
      }
      // The quantization suits the dtype and shape, a constant's values its dtype.
      check_element_type(t, path_);
      g_.add_tensor(std::move(t));
      definer_.push_back(g_.tensors.back().is_constant() ? kConstant : kUndefined);
    }
  }

  std::shared_ptr<const Quantization> read_quantization(const fb::Quantization& fq) {
    auto q = std::make_shared<Quantization>();
    if (const auto* scale = fq.scale()) {
      budget_.charge(scale->size() * sizeof(float));
      q->scale.assign(scale->begin(), scale->end());
    }
    if (const auto* zero_point = fq.zero_point()) {
      budget_.charge(zero_point->size() * sizeof(int64_t));
      q->zero_point = copy_int64s(*zero_point);
    }
    q->axis = fq.axis();
    return q;
  }

  // `elements` values of `dtype` from `bytes` (already checked to hold them), as floats.
  std::shared_ptr<const std::vector<float>> read_constant(const uint8_t* bytes, size_t elements, DType dtype,
                                                          const std::string& ref) {
    budget_.charge(elements * static_cast<size_t>(dtype_bytes(dtype)));
    auto data = std::make_shared<std::vector<float>>(elements);
    if (elements == 0) return data;
    switch (dtype) {
      case DType::F32: std::memcpy(data->data(), bytes, elements * sizeof(float)); break;
      case DType::I8: copy_elements<int8_t>(bytes, *data); break;
      case DType::U8: copy_elements<uint8_t>(bytes, *data); break;
      case DType::I32:
        for (size_t i = 0; i < elements; ++i) {
          int32_t v;
          std::memcpy(&v, bytes + i * sizeof v, sizeof v);
          if (v < dtype_min(DType::F32) || v > dtype_max(DType::F32))
            error(ExitCode::kInvalidModel, ref, " (i32): value ", v, " at ", i, " is beyond +-2^24, which aotc ",
                  "holds exactly (docs/int8.md)");
        }
        copy_elements<int32_t>(bytes, *data);
        break;
    }
    return data;
  }

  // A tensor's shape: rank <= kMaxRank, every dim >= 1, at most 2^31 elements.
  Shape read_shape(const flatbuffers::Vector<int64_t>* dims, const std::string& ref) {
    if (!dims) return {};
    if (dims->size() > kMaxRank)
      error(ExitCode::kUnsupported, ref, " has rank ", dims->size(), "; at most ", kMaxRank, " is supported");
    budget_.charge(dims->size() * sizeof(int64_t));
    const Shape shape = copy_int64s(*dims);
    int64_t elements = 1;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] < 1)
        error(ExitCode::kInvalidModel, ref, " has shape ", to_string(shape), ": dim ", d, " is ", shape[d],
              " (every dim must be >= 1)");
      if (shape[d] > kMaxElements / elements)
        error(ExitCode::kInvalidModel, ref, " has shape ", to_string(shape), ", more than 2^31 elements");
      elements *= shape[d];
    }
    return shape;
  }

  void read_graph_inputs() {
    const auto* inputs = model_.inputs();
    if (!inputs) return;
    budget_.charge(inputs->size() * sizeof(int32_t));
    for (uoffset_t k = 0; k < inputs->size(); ++k) {
      const TensorId id = tensor_id(inputs->Get(k), "graph input #", k);
      int& def = definer_[static_cast<size_t>(id)];
      if (def == kConstant) error(ExitCode::kInvalidModel, "graph input ", tensor_ref(id), " is a constant");
      if (def == kGraphInput) error(ExitCode::kInvalidModel, tensor_ref(id), " is listed twice as a graph input");
      def = kGraphInput;
      g_.inputs.push_back(id);
    }
  }

  void read_nodes() {
    const auto* nodes = model_.nodes();
    if (!nodes) return;
    for (uoffset_t i = 0; i < nodes->size(); ++i) {
      const fb::Node& fn = *nodes->Get(i);
      Node node;
      node.name = copy_string(fn.name());
      if (node.name.empty()) node.name = detail::concat("node#", i);  // only used in messages
      if (!op_kind_of(fn.op(), &node.op))
        error(ExitCode::kUnsupported, "node '", node.name, "' (#", i, ") has op code ", static_cast<int>(fn.op()),
              ", which this aotc does not know (a model from a newer exporter?)");
      const std::string ref = node_ref(node, i);
      node.inputs = read_tensor_ids(fn.inputs(), ref, "input");
      node.outputs = read_tensor_ids(fn.outputs(), ref, "output");
      for (TensorId out : node.outputs) {
        int& def = definer_[static_cast<size_t>(out)];
        if (def == static_cast<int>(i)) error(ExitCode::kInvalidModel, ref, " lists output ", tensor_ref(out), " twice");
        if (def != kUndefined)
          error(ExitCode::kInvalidModel, ref, " writes ", tensor_ref(out), ", which already is ", definition(out));
        def = static_cast<int>(i);
      }
      node.attrs = OptionsReader(*this, fn, node, ref).read();
      g_.nodes.push_back(std::move(node));
    }
  }

  std::vector<TensorId> read_tensor_ids(const flatbuffers::Vector<int32_t>* ids, const std::string& ref,
                                        const char* role) {
    std::vector<TensorId> result;
    if (!ids) return result;
    budget_.charge(ids->size() * sizeof(int32_t));
    result.reserve(ids->size());
    for (uoffset_t k = 0; k < ids->size(); ++k)
      result.push_back(tensor_id(ids->Get(k), ref, " ", role, " ", k));
    return result;
  }

  void check_node_inputs_defined() const {
    for (size_t i = 0; i < g_.nodes.size(); ++i)
      for (TensorId in : g_.nodes[i].inputs)
        if (definer_[static_cast<size_t>(in)] == kUndefined)
          error(ExitCode::kInvalidModel, node_ref(g_.nodes[i], i), " reads ", tensor_ref(in),
                ", which is neither a graph input, a constant nor the output of a node");
  }

  void read_graph_outputs() {
    const auto* outputs = model_.outputs();
    if (!outputs || outputs->size() == 0) error(ExitCode::kInvalidModel, "the model declares no graph outputs");
    budget_.charge(outputs->size() * sizeof(int32_t));
    std::vector<bool> listed(g_.tensors.size(), false);
    for (uoffset_t k = 0; k < outputs->size(); ++k) {
      const TensorId id = tensor_id(outputs->Get(k), "graph output #", k);
      if (definer_[static_cast<size_t>(id)] == kUndefined)
        error(ExitCode::kInvalidModel, "graph output ", tensor_ref(id), " is not computed by any node");
      if (listed[static_cast<size_t>(id)])
        error(ExitCode::kInvalidModel, tensor_ref(id), " is listed twice as a graph output");
      listed[static_cast<size_t>(id)] = true;
      g_.outputs.push_back(id);
    }
  }

  // The declared shape and element type of every node output must be what the op computes. Input
  // shapes are all declared, so file order serves as well as execution order.
  void check_shapes() const {
    for (size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& node = g_.nodes[i];
      std::vector<Shape> computed;
      try {
        computed = infer_node_shapes(g_, node);
      } catch (const UserError& e) {
        error(e.code(), e.what());
      }
      AOTC_CHECK(computed.size() == node.outputs.size(), node.name);
      for (size_t k = 0; k < computed.size(); ++k) {
        const Tensor& out = g_.tensor(node.outputs[k]);
        if (out.shape != computed[k])
          error(ExitCode::kInvalidModel, node_ref(node, i), ": output '", out.name, "' is declared as ",
                to_string(out.shape), " but ", op_name(node.op), " computes ", to_string(computed[k]));
      }
      Tensor expected = g_.tensor(node.outputs[0]);
      set_element_type(expected, infer_element_type(g_, node));
      const Tensor& out = g_.tensor(node.outputs[0]);
      if (!same_element_type(out, expected))
        error(ExitCode::kInvalidModel, node_ref(node, i), ": output '", out.name, "' is declared as ",
              type_text(out), " but ", op_name(node.op), " computes ", type_text(expected));
    }
  }

  void sort_nodes() {
    if (topological_sort(g_)) return;
    const size_t i = node_on_cycle(g_);
    error(ExitCode::kInvalidModel, "the graph has a cycle through ", node_ref(g_.nodes[i], i));
  }

  // Maps one node's options table onto the IR attributes of its op.
  class OptionsReader {
   public:
    OptionsReader(ModelReader& reader, const fb::Node& fn, const Node& node, const std::string& ref)
        : reader_(reader), fn_(fn), node_(node), ref_(ref) {}

    Attrs read() {
      switch (node_.op) {
        case OpKind::Conv2d: {
          const auto& o = required_options<fb::Conv2dOptions>();
          Conv2dAttrs a;
          a.stride = ints<2>(o.stride(), "stride");
          a.pad = ints<4>(o.padding(), "padding");
          a.dilation = ints<2>(o.dilation(), "dilation");
          a.groups = o.groups();
          return a;
        }
        case OpKind::BatchNorm: {
          BatchNormAttrs a;  // eps has a default in the schema, so the options may be absent
          if (const auto* o = optional_options<fb::BatchNormOptions>()) a.eps = o->eps();
          return a;
        }
        case OpKind::Clamp: {
          const auto& o = required_options<fb::ClampOptions>();
          return ClampAttrs{.min = o.min(), .max = o.max()};
        }
        case OpKind::MaxPool2d:
        case OpKind::AvgPool2d: {
          const auto& o = required_options<fb::Pool2dOptions>();
          Pool2dAttrs a;
          a.kernel = ints<2>(o.kernel(), "kernel");
          a.stride = ints<2>(o.stride(), "stride");
          a.pad = ints<4>(o.padding(), "padding");
          a.dilation = ints<2>(o.dilation(), "dilation");
          a.ceil_mode = o.ceil_mode();
          a.count_include_pad = o.count_include_pad();
          return a;
        }
        case OpKind::AdaptiveAvgPool2d: {
          const auto& o = required_options<fb::AdaptiveAvgPool2dOptions>();
          return AdaptiveAvgPool2dAttrs{.output_size = ints<2>(o.output_size(), "output_size")};
        }
        case OpKind::Flatten: {
          FlattenAttrs a;  // start_dim and end_dim have defaults in the schema
          if (const auto* o = optional_options<fb::FlattenOptions>()) {
            a.start_dim = o->start_dim();
            a.end_dim = o->end_dim();
          }
          return a;
        }
        case OpKind::Reshape: {
          const auto& o = required_options<fb::ReshapeOptions>();
          return ReshapeAttrs{.shape = longs(o.shape(), "shape")};
        }
        case OpKind::Concat: return AxisAttrs{.axis = axis(required_options<fb::ConcatOptions>().axis())};
        case OpKind::Softmax: return AxisAttrs{.axis = axis(required_options<fb::SoftmaxOptions>().axis())};
        case OpKind::Dropout:
          optional_options<fb::DropoutOptions>();  // the ratio does not matter at inference
          return NoAttrs{};
        case OpKind::Pad: {
          const auto& o = required_options<fb::PadOptions>();
          return PadAttrs{.pads = longs(o.pads(), "pads"), .value = o.value()};
        }
        case OpKind::Quantize: {
          no_options();
          // The output tensor says what the quantize writes (the shape rules check it); without
          // one, the shape rules report the missing output.
          QuantizeAttrs a;
          if (!node_.outputs.empty()) {
            const Tensor& out = reader_.g_.tensor(node_.outputs[0]);
            a.dtype = out.dtype;
            if (out.quant) a.quant = *out.quant;
          }
          return a;
        }
        case OpKind::Relu:
        case OpKind::HardSwish:
        case OpKind::Sigmoid:
        case OpKind::Add:
        case OpKind::Mul:
        case OpKind::GlobalAvgPool:
        case OpKind::Linear:
        case OpKind::Dequantize:
          no_options();
          return NoAttrs{};
        // Ops of the IR that the AOTC schema has no op code for (affine is IR-only;
        // the others come from TFLite and ONNX), so never mapped here.
        case OpKind::Affine:
        case OpKind::Tanh:
        case OpKind::PRelu:
        case OpKind::Transpose:
        case OpKind::ResizeBilinear:
        case OpKind::ResizeNearest:
        case OpKind::ConvTranspose2d:
        case OpKind::DepthToSpace:
        case OpKind::Elu:
        case OpKind::Softplus:
        case OpKind::Max:
        case OpKind::Min:
        case OpKind::Div:
        case OpKind::QConv2d:
        case OpKind::QAdd:
        case OpKind::QGlobalAvgPool:
        case OpKind::QLookup: break;
      }
      AOTC_CHECK(false, "no options mapping for ", op_name(node_.op));
      return NoAttrs{};
    }

   private:
    template <typename... Args>
    [[noreturn]] void error(const Args&... args) const {
      reader_.error(ExitCode::kInvalidModel, ref_, ": ", args...);
    }

    void no_options() const {
      if (fn_.options_type() != fb::OpOptions::NONE) error("takes no options, but has ", options_name(fn_.options_type()));
    }

    // The node's options table of type T, or nullptr if it has none.
    template <typename T>
    const T* optional_options() const {
      constexpr fb::OpOptions expected = fb::OpOptionsTraits<T>::enum_value;
      const fb::OpOptions actual = fn_.options_type();
      if (actual != fb::OpOptions::NONE && actual != expected)
        error("needs ", options_name(expected), ", but has ", options_name(actual));
      return fn_.options_as<T>();
    }

    template <typename T>
    const T& required_options() const {
      const T* o = optional_options<T>();
      if (!o) error("needs ", options_name(fb::OpOptionsTraits<T>::enum_value), ", but has none");
      return *o;
    }

    template <size_t N>
    std::array<int, N> ints(const flatbuffers::Vector<int32_t>* v, const char* field) const {
      if (!v) error("option '", field, "' is missing (", N, " values expected)");
      if (v->size() != N) error("option '", field, "' has ", v->size(), " values, expected ", N);
      std::array<int, N> a;
      for (size_t k = 0; k < N; ++k) a[k] = v->Get(static_cast<uoffset_t>(k));
      return a;
    }

    std::vector<int64_t> longs(const flatbuffers::Vector<int64_t>* v, const char* field) const {
      if (!v) error("option '", field, "' is missing");
      reader_.budget_.charge(v->size() * sizeof(int64_t));
      return copy_int64s(*v);
    }

    // `axis` made non-negative against the rank of the first input. Without
    // inputs it stays as it is, and the shape rules report the missing input.
    int axis(int32_t axis) const {
      if (node_.inputs.empty()) return axis;
      const int rank = static_cast<int>(reader_.g_.tensor(node_.inputs[0]).shape.size());
      if (axis < -rank || axis >= rank)
        error("axis ", axis, " is out of range for input ", reader_.tensor_ref(node_.inputs[0]), " of rank ", rank);
      return axis < 0 ? axis + rank : axis;
    }

    ModelReader& reader_;
    const fb::Node& fn_;
    const Node& node_;
    const std::string& ref_;
  };

  const fb::Model& model_;
  const std::string& path_;
  CopyBudget budget_;
  Graph g_;
  std::vector<int> definer_;  // per tensor: kUndefined, kGraphInput, kConstant or a node index
};

}  // namespace

Graph read_aotc_model(const uint8_t* data, size_t size, const std::string& path) {
  if (size > kMaxFlatBufferBytes)
    fail(ExitCode::kInvalidModel, path, ": ", size, " bytes is more than a FlatBuffers file can hold (2 GiB)");
  if (size < 2 * flatbuffers::kFileIdentifierLength)
    fail(ExitCode::kInvalidModel, path, ": not an aotc model (the file has only ", size, " bytes)");
  if (!fb::ModelBufferHasIdentifier(data))
    fail(ExitCode::kInvalidModel, path, ": not an aotc model (file identifier ", quoted_identifier(data),
         ", expected \"", fb::ModelIdentifier(), "\")");

  const AlignedBytes aligned(data, size);
  data = aligned.data();

  if (!verify_flatbuffer(data, size, kMaxFbTableDepth,
                         [](flatbuffers::Verifier& v) { return fb::VerifyModelBuffer(v); }))
    fail(ExitCode::kInvalidModel, path,
         ": corrupt aotc model: the FlatBuffers verifier rejected it (truncated or damaged file?)");
  return ModelReader(*fb::GetModel(data), size, path).read();
}

}  // namespace aotc
