#include "frontends/onnx/onnx_tensors.h"

#include <cstring>
#include <filesystem>
#include <fstream>

#include "frontends/tflite/tflite_constants.h"
#include "support/error.h"

namespace aotc::onnx_frontend {
namespace {

namespace fs = std::filesystem;
using onnx::TensorProto;

// Bytes per element of the types decode_tensor reads; 0 for the others.
size_t element_size(int32_t type) {
  switch (type) {
    case TensorProto::FLOAT: case TensorProto::INT32: case TensorProto::UINT32: return 4;
    case TensorProto::DOUBLE: case TensorProto::INT64: case TensorProto::UINT64: return 8;
    case TensorProto::FLOAT16: case TensorProto::INT16: case TensorProto::UINT16: return 2;
    case TensorProto::INT8: case TensorProto::UINT8: case TensorProto::BOOL: return 1;
    default: return 0;
  }
}

template <typename T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// One little-endian element of `type` at `p`.
double raw_element(int32_t type, const char* p) {
  switch (type) {
    case TensorProto::FLOAT: return load<float>(p);
    case TensorProto::DOUBLE: return load<double>(p);
    case TensorProto::FLOAT16: return tflite::half_to_float(load<uint16_t>(p));
    case TensorProto::INT8: return load<int8_t>(p);
    case TensorProto::UINT8: return load<uint8_t>(p);
    case TensorProto::INT16: return load<int16_t>(p);
    case TensorProto::UINT16: return load<uint16_t>(p);
    case TensorProto::INT32: return load<int32_t>(p);
    case TensorProto::UINT32: return load<uint32_t>(p);
    case TensorProto::INT64: return static_cast<double>(load<int64_t>(p));
    case TensorProto::UINT64: return static_cast<double>(load<uint64_t>(p));
    case TensorProto::BOOL: return load<uint8_t>(p) != 0 ? 1 : 0;
    default: return 0;
  }
}

std::string external_field(const TensorProto& t, const std::string& key) {
  for (const auto& entry : t.external_data())
    if (entry.key() == key) return entry.value();
  return "";
}

int64_t parse_count(const std::string& text, const std::string& what, const char* field) {
  if (text.empty()) return -1;
  size_t used = 0;
  long long v = -1;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || v < 0)
    fail(ExitCode::kInvalidModel, what, ": external data ", field, " '", text, "' is not a byte count");
  return v;
}

void load_external(TensorProto& t, const fs::path& folder, const std::string& what) {
  const std::string location = external_field(t, "location");
  if (location.empty()) fail(ExitCode::kInvalidModel, what, ": external data without a location");
  const fs::path relative(location);
  if (relative.is_absolute() || location.find('\0') != std::string::npos)
    fail(ExitCode::kInvalidModel, what, ": external data location '", location,
         "' must be a path relative to the model's folder");
  for (const fs::path& part : relative)
    if (part == "..")
      fail(ExitCode::kInvalidModel, what, ": external data location '", location, "' leaves the model's folder");
  const fs::path file = folder / relative;
  std::error_code error;
  if (!fs::is_regular_file(file, error))
    fail(ExitCode::kIo, what, ": external data file ", file.string(), " does not exist or is not a file");
  const auto file_size = static_cast<int64_t>(fs::file_size(file, error));
  if (error) fail(ExitCode::kIo, what, ": cannot read the size of ", file.string(), ": ", error.message());
  const int64_t offset = std::max<int64_t>(0, parse_count(external_field(t, "offset"), what, "offset"));
  int64_t length = parse_count(external_field(t, "length"), what, "length");
  if (offset > file_size)
    fail(ExitCode::kInvalidModel, what, ": external data offset ", offset, " is past the end of ", file.string(),
         " (", file_size, " bytes)");
  if (length < 0) length = file_size - offset;
  if (length > file_size - offset)
    fail(ExitCode::kInvalidModel, what, ": external data [", offset, ", ", offset + length, ") is past the end of ",
         file.string(), " (", file_size, " bytes)");
  std::string bytes(static_cast<size_t>(length), '\0');
  std::ifstream in(file, std::ios::binary);
  in.seekg(offset);
  if (!in.read(bytes.data(), length)) fail(ExitCode::kIo, what, ": cannot read ", file.string());
  t.set_raw_data(std::move(bytes));
  t.clear_external_data();
  t.set_data_location(TensorProto::DEFAULT);
}

}  // namespace

bool is_float_type(int32_t elem_type) {
  return elem_type == TensorProto::FLOAT || elem_type == TensorProto::DOUBLE || elem_type == TensorProto::FLOAT16;
}

std::string elem_type_name(int32_t elem_type) {
  return TensorProto::DataType_IsValid(elem_type)
             ? TensorProto::DataType_Name(static_cast<TensorProto::DataType>(elem_type))
             : "type " + std::to_string(elem_type);
}

ConstantValue decode_tensor(const TensorProto& t, const std::string& what) {
  ConstantValue c;
  c.elem_type = t.data_type();
  int64_t count = 1;
  for (const int64_t d : t.dims()) {
    if (d < 0) fail(ExitCode::kInvalidModel, what, ": dimension ", d, " is negative");
    if (d > 0 && count > kMaxElements / d)
      fail(ExitCode::kUnsupported, what, ": more than 2^31 elements");
    count *= d;
    c.shape.push_back(d);
  }
  const size_t size = element_size(c.elem_type);
  if (size == 0)
    fail(ExitCode::kUnsupported, what, ": element type ", elem_type_name(c.elem_type),
         " (aotc reads float, float16, double, bool and integer tensors)");
  if (t.data_location() == TensorProto::EXTERNAL)
    fail(ExitCode::kInvalidModel, what, ": external data was not loaded");
  const auto n = static_cast<size_t>(count);
  const auto mismatch = [&](size_t stored) {
    fail(ExitCode::kInvalidModel, what, ": holds ", stored, " values but its dims ", to_string(c.shape), " need ", n);
  };
  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    if (raw.size() != n * size) mismatch(raw.size() / size);
    c.values.reserve(n);
    for (size_t i = 0; i < n; ++i) c.values.push_back(raw_element(c.elem_type, raw.data() + i * size));
    return c;
  }
  switch (c.elem_type) {
    case TensorProto::FLOAT:
      if (static_cast<size_t>(t.float_data_size()) != n) mismatch(static_cast<size_t>(t.float_data_size()));
      c.values.assign(t.float_data().begin(), t.float_data().end());
      break;
    case TensorProto::DOUBLE:
      if (static_cast<size_t>(t.double_data_size()) != n) mismatch(static_cast<size_t>(t.double_data_size()));
      c.values.assign(t.double_data().begin(), t.double_data().end());
      break;
    case TensorProto::INT64:
      if (static_cast<size_t>(t.int64_data_size()) != n) mismatch(static_cast<size_t>(t.int64_data_size()));
      for (const int64_t v : t.int64_data()) c.values.push_back(static_cast<double>(v));
      break;
    case TensorProto::UINT32: case TensorProto::UINT64:
      if (static_cast<size_t>(t.uint64_data_size()) != n) mismatch(static_cast<size_t>(t.uint64_data_size()));
      for (const uint64_t v : t.uint64_data()) c.values.push_back(static_cast<double>(v));
      break;
    default:  // int32_data holds int32, int16, int8, uint16, uint8, bool and float16's bits
      if (static_cast<size_t>(t.int32_data_size()) != n) mismatch(static_cast<size_t>(t.int32_data_size()));
      for (const int32_t v : t.int32_data())
        c.values.push_back(c.elem_type == TensorProto::FLOAT16 ? tflite::half_to_float(static_cast<uint16_t>(v))
                           : c.elem_type == TensorProto::BOOL  ? (v != 0 ? 1 : 0)
                                                               : v);
      break;
  }
  return c;
}

void load_external_data(onnx::ModelProto& model, const std::string& model_path) {
  const fs::path folder = fs::path(model_path).parent_path();
  onnx::GraphProto& graph = *model.mutable_graph();
  for (TensorProto& t : *graph.mutable_initializer())
    if (t.data_location() == TensorProto::EXTERNAL) load_external(t, folder, model_path + ": initializer '" + t.name() + "'");
  for (onnx::NodeProto& node : *graph.mutable_node())
    for (onnx::AttributeProto& a : *node.mutable_attribute())
      if (a.has_t() && a.t().data_location() == TensorProto::EXTERNAL)
        load_external(*a.mutable_t(), folder, model_path + ": node '" + node.name() + "' attribute " + a.name());
}

}  // namespace aotc::onnx_frontend
