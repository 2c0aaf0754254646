// Tensors of an ONNX model decoded at compile time: initializers, Constant
// nodes' values and bound inputs (aotc --constant), as doubles, which hold every
// float32, float16, bool and integer value a CNN's weights and shape arithmetic
// use exactly (integers up to 2^53). External data is read from the file beside
// the model that `location` names, inside the model's folder, at the offset and
// length the tensor gives, all checked against that file's size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "onnx/onnx_pb.h"

namespace aotc::onnx_frontend {

// A compile-time value: the element type is ONNX's (TensorProto::DataType).
struct ConstantValue {
  int32_t elem_type = onnx::TensorProto::FLOAT;
  Shape shape;
  std::vector<double> values;  // num_elements(shape) of them, row-major
};

bool is_float_type(int32_t elem_type);
std::string elem_type_name(int32_t elem_type);

// Decodes `t`; `what` names it in messages. Throws UserError: kInvalidModel for
// data that does not match the dims, kUnsupported for element types aotc does
// not read (strings, complex, bfloat16...).
ConstantValue decode_tensor(const onnx::TensorProto& t, const std::string& what);

// Replaces every external-data tensor of `model`'s graph (initializers and
// Constant nodes' values) by its bytes read from beside `model_path`.
void load_external_data(onnx::ModelProto& model, const std::string& model_path);

}  // namespace aotc::onnx_frontend
