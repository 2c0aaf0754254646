// Model loading: picks the frontend from the file's contents (FlatBuffers file
// identifier) or extension and returns a verified Graph.
//
// Every frontend guarantees, or throws UserError naming the file and node:
//  - the buffer passed the FlatBuffers Verifier before anything was read;
//  - every tensor index is in range; every tensor is defined exactly once;
//  - constant data sizes match shapes; dtypes are supported;
//  - the graph is acyclic (nodes are returned in topological order);
//  - graph inputs/outputs exist; shapes agree with infer_node_shapes().
#pragma once

#include <string>

#include "ir/graph.h"

namespace aotc {

Graph load_model(const std::string& path);

}  // namespace aotc
