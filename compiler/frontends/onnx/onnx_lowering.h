// Lowers a checked, shape-inferred ONNX graph onto the IR, node by node. Values
// known at compile time (initializers, Constant nodes, and the shape arithmetic
// exporters emit: Shape, Gather, Unsqueeze, Concat, Cast...) stay constants and
// are folded here; the rest become IR nodes, whose shapes the IR's rules compute
// and which must agree with the shapes ONNX inferred.
#pragma once

#include <string>

#include "ir/graph.h"
#include "onnx/onnx_pb.h"

namespace aotc::onnx_frontend {

constexpr int kMinOpset = 7;
constexpr int kMaxOpset = 17;

// Whether aotc lowers `op_type` of the default domain (at some opset; the
// lowering refuses attribute values and versions it cannot map, naming them).
bool is_supported_op(const std::string& op_type);
// "Add, AveragePool, ..." for messages.
std::string supported_op_list();

// The IR graph of `model` (checked, shapes inferred), which imports `opset` of
// the default domain. `path` names the file in messages.
Graph lower_graph(const onnx::ModelProto& model, int opset, const std::string& path);

}  // namespace aotc::onnx_frontend
