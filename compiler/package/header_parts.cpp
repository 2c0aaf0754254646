#include "package/header_parts.h"

#include <cctype>
#include <sstream>

#include "support/names.h"

namespace aotc {
namespace {

std::string tensor_infos(const std::vector<TensorInfo>& tensors) {
  std::ostringstream os;
  for (const TensorInfo& t : tensors) {
    os << "    {" << c_string_literal(t.name) << ", AOTC_FLOAT32, " << t.shape.size() << ", {";
    for (size_t i = 0; i < t.shape.size(); ++i) os << (i ? ", " : "") << t.shape[i];
    os << "}, " << num_elements(t.shape) << "},\n";
  }
  return os.str();
}

}  // namespace

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
