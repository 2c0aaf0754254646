// Reader for ONNX models (.onnx), on Debian's libonnx: the protobuf classes
// generated from onnx-ml.proto, ONNX's checker and its shape inference. This and
// onnx_lowering.cpp are the only code that sees ONNX's types.
//
// It parses the file, reads external data from beside it, applies the caller's
// bindings (a fixed shape for a symbolic input dimension, a tensor file as the
// constant value of a graph input), runs the checker and strict shape inference,
// takes an op census (every operator outside the supported list or opset, and
// every quantized operator, is refused in one message with counts and node
// names), then lowers the graph onto the IR (onnx_lowering.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "frontends/frontend.h"
#include "ir/graph.h"

namespace aotc {

// Reads the ONNX model held in `data`; `path` names the file in messages and
// locates external data. Throws UserError: kInvalidModel for a malformed or
// inconsistent file, kUnsupported for a well-formed one using what aotc does not
// support, kUsage for bindings that name no graph input, kIo for unreadable
// external data or bound tensor files.
Graph read_onnx_model(const uint8_t* data, size_t size, const std::string& path, const ModelBindings& bindings);

}  // namespace aotc
