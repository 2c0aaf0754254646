#include "package/header_parts.h"

#include <cctype>
#include <cstdio>
#include <sstream>

#include "support/names.h"

namespace aotc {
namespace {

// `v` as a C float literal that reads back exactly ("0.0500000007f", "0.0f").
std::string float_literal(float v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", static_cast<double>(v));
  std::string literal = text;
  if (literal.find_first_of(".e") == std::string::npos) literal += ".0";
  return literal + "f";
}

std::string tensor_infos(const std::vector<TensorInfo>& tensors) {
  std::ostringstream os;
  for (const TensorInfo& t : tensors) {
    os << "    {" << c_string_literal(t.name) << ", " << c_dtype(t.dtype) << ", " << t.shape.size() << ", {";
    for (size_t i = 0; i < t.shape.size(); ++i) os << (i ? ", " : "") << t.shape[i];
    os << "}, " << num_elements(t.shape) << ", " << float_literal(t.scale) << ", " << t.zero_point << "},\n";
  }
  return os.str();
}

}  // namespace

const char* c_dtype(DType dtype) {
  switch (dtype) {
    case DType::I8: return "AOTC_INT8";
    case DType::U8: return "AOTC_UINT8";
    case DType::F32:
    case DType::I32: break;  // no graph input or output is i32
  }
  return "AOTC_FLOAT32";
}

const char* c_element_type(DType dtype) {
  switch (dtype) {
    case DType::I8: return "int8_t";
    case DType::U8: return "uint8_t";
    case DType::F32:
    case DType::I32: break;
  }
  return "float";
}

bool all_float32(const std::vector<TensorInfo>& tensors) {
  for (const TensorInfo& t : tensors)
    if (t.dtype != DType::F32) return false;
  return true;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

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

}  // namespace aotc
