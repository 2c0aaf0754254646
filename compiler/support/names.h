// Names aotc derives for generated code.
#pragma once

#include <string>

namespace aotc {

// A C identifier made from `name` ("mobilenet-v2" -> "mobilenet_v2"; a leading
// digit gets an "m_" prefix).
std::string c_identifier(const std::string& name);

// `text` as a C/C++ string literal, quotes included ("a\"b").
std::string c_string_literal(const std::string& text);

// The symbol of a compiled kernel: "aotc_<family>_<digest>", the digest of the
// kernel's description (what it computes: op, shapes, layouts, epilogue) and of
// the target it is compiled for. The same kernel has the same symbol in every
// model and GPU variant, so the kernel cache shares its object between them;
// two libraries of one app that hold it link one copy of the same computation.
std::string kernel_symbol(const std::string& family, const std::string& description, const std::string& target);

}  // namespace aotc
