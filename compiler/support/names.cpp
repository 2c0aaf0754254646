#include "support/names.h"

#include <cctype>

#include "support/digest.h"

namespace aotc {

std::string c_identifier(const std::string& name) {
  std::string id;
  for (char c : name) id += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (id.empty() || std::isdigit(static_cast<unsigned char>(id[0]))) id = "m_" + id;
  return id;
}

std::string c_string_literal(const std::string& text) {
  std::string literal = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') literal += '\\';
    if (c == '\n') {
      literal += "\\n";
      continue;
    }
    literal += c;
  }
  return literal + "\"";
}

std::string kernel_symbol(const std::string& family, const std::string& description, const std::string& target) {
  // Bump the tag when a description stops naming one computation.
  const std::string digest = sha256_hex("aotc kernel symbol 1\n" + target + "\n" + description);
  return "aotc_" + c_identifier(family) + "_" + digest.substr(0, 16);
}

}  // namespace aotc
