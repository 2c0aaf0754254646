// The one Halide kernel that runs a node of any op but conv2d (whose candidates
// are conv_candidates.cpp's) and the aliases (reshape, flatten, dropout: free,
// or a copy): its generator for the node's exact shapes, attributes and
// epilogue, and where each argument comes from. The CPU lowering
// (backends/halide/lower.cpp) and a CUDA library's Halide kernels
// (backends/cuda_stubs/lower_cuda_stubs.cpp) both build their calls from it, so
// a node computes the same thing on either; the generator picks the schedule
// for the target it is compiled for.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "backends/halide/candidates.h"
#include "ir/graph.h"

namespace aotc {

struct NodeKernel {
  // key: node_description(); suffix: the op's name; args: the op's inputs
  // (kTensor, possibly a reshaped view, or kPacked), the epilogue operands,
  // then the output.
  KernelStep step;
  // The weights the kPacked arguments read, in the layout the generator takes.
  std::vector<std::function<gen::PackedWeights()>> packed;
};

// Whether node_kernel() covers `op`.
bool has_node_kernel(OpKind op);

// Throws UserError(kUnsupported) when the node's weights are not constant. `target` (a
// Halide target string) decides what its instructions allow (qconv2d's VNNI dot products).
NodeKernel node_kernel(const Graph& g, const Node& node, const std::string& target);

// A dense copy of a tensor of `shape` (a concat's input into its slice of the
// output): the copy kernel's key (one kernel per shape and alignment) and
// generator. `aligned`: whether the slice starts 16-byte aligned (only a GPU
// schedule depends on it: gen::ElementwiseSpec::aligned); `dtype`: its elements'.
std::string copy_kernel_key(const Shape& shape, bool aligned = true, DType dtype = DType::F32);
std::function<gen::Kernel(const Halide::Target&)> copy_kernel(const Shape& shape, bool aligned = true,
                                                              DType dtype = DType::F32);

}  // namespace aotc
