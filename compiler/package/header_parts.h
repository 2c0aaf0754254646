// Pieces every backend's generated header <name>.h shares: the C tables of the
// inputs' and outputs' names and shapes, the C++ namespace's constants over
// them, and the text substitution that instantiates an API template.
#pragma once

#include <string>
#include <vector>

#include "backends/lowered_model.h"

namespace aotc {

// A graph input's or output's aotc_dtype ("AOTC_UINT8") and C element type ("uint8_t").
const char* c_dtype(DType dtype);
const char* c_element_type(DType dtype);
// Whether every tensor is float32 (the model keeps its float entry points).
bool all_float32(const std::vector<TensorInfo>& tensors);
// "resnet18" -> "RESNET18": the macros' prefix.
std::string upper(std::string s);
// `text` with every `from` replaced by `to`.
std::string replace_all(std::string text, const std::string& from, const std::string& to);
// The C tables <fn>_inputs and <fn>_outputs (inside extern "C").
std::string tensor_tables(const std::string& fn, const std::vector<TensorInfo>& inputs,
                          const std::vector<TensorInfo>& outputs);
// The C++ namespace's kNumInputs, kNumOutputs, kInputs and kOutputs.
std::string io_constants(const std::string& fn, size_t inputs, size_t outputs);

}  // namespace aotc
