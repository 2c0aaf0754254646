// Model loading: picks the frontend from the file's contents (FlatBuffers file
// identifier, ONNX's protobuf) or extension and returns a verified Graph.
//
// Every frontend guarantees, or throws UserError naming the file and node:
//  - the buffer passed the FlatBuffers Verifier before anything was read;
//  - every tensor index is in range; every tensor is defined exactly once;
//  - constant data sizes match shapes; dtypes are supported;
//  - the graph is acyclic (nodes are returned in topological order);
//  - graph inputs/outputs exist; shapes agree with infer_node_shapes().
#pragma once

#include <map>
#include <string>

#include "ir/graph.h"

namespace aotc {

// What the command line fixes in a model whose file leaves it open (ONNX only:
// the other formats have static shapes and constant weights).
struct ModelBindings {
  // Graph input name -> its shape, for inputs with symbolic dims (aotc --input-shape).
  std::map<std::string, Shape> input_shapes;
  // Graph input name -> a serialized ONNX TensorProto file, made a constant (aotc --constant).
  std::map<std::string, std::string> constants;

  bool empty() const { return input_shapes.empty() && constants.empty(); }
};

// Throws UserError(kUsage) when `bindings` are given for a model that is not ONNX.
Graph load_model(const std::string& path, const ModelBindings& bindings = {});

}  // namespace aotc
