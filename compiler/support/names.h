// Names aotc derives for generated code.
#pragma once

#include <string>

namespace aotc {

// A C identifier made from `name` ("mobilenet-v2" -> "mobilenet_v2"; a leading
// digit gets an "m_" prefix).
std::string c_identifier(const std::string& name);

// `text` as a C/C++ string literal, quotes included ("a\"b").
std::string c_string_literal(const std::string& text);

}  // namespace aotc
