// Reader for TensorFlow Lite models (schemas/tflite.fbs, file identifier "TFL3").
// This is the only code that sees the generated TFLite FlatBuffers types.
//
// What it does now: verifies the file (FlatBuffers Verifier, then every index,
// shape and constant size), then takes an op census. A model using an operator
// outside the supported list, or int8/uint8 quantization, is rejected with one
// message listing all of them with their counts. Lowering the supported ops
// (NHWC) onto the IR is not written yet: a model that passes every check is
// rejected with kUnsupported and its op census, e.g.
//   face.tflite: TensorFlow Lite graphs are recognised but not yet lowered to
//   the IR (164 operators: DEQUANTIZE x74, CONV_2D x21, ...)
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "ir/graph.h"

namespace aotc {

// Verifies and reads the TFLite model held in `data` (any alignment; nothing
// outside [data, data + size) is read). `path` names the file in messages.
// Throws UserError: kInvalidModel for a malformed or inconsistent file,
// kUnsupported for a well-formed one using what aotc does not support.
Graph read_tflite_model(const uint8_t* data, size_t size, const std::string& path);

}  // namespace aotc
