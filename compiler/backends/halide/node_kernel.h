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
#include <optional>
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

// Throws UserError(kUnsupported) when the node's weights are not constant.
NodeKernel node_kernel(const Graph& g, const Node& node);

// A qconv2d with AVX512-VNNI dot products on `target` (a Halide target string): two steps,
// its input written as uint8 quads of channels into the node's scratch, then the convolution
// reading them (gen::qconv2d_quads); nullopt where the target or the weights do not allow it
// (node_kernel() then serves it with int16 pairs).
std::optional<Candidate> qconv2d_vnni_candidate(const Graph& g, const Node& node, const std::string& target);

// A dense copy of a tensor of `shape` (a concat's input into its slice of the
// output): the copy kernel's key (one kernel per shape and alignment) and
// generator. `aligned`: whether the slice starts 16-byte aligned (only a GPU
// schedule depends on it: gen::ElementwiseSpec::aligned); `dtype`: its elements'.
std::string copy_kernel_key(const Shape& shape, bool aligned = true, DType dtype = DType::F32);
std::function<gen::Kernel(const Halide::Target&)> copy_kernel(const Shape& shape, bool aligned = true,
                                                              DType dtype = DType::F32);

}  // namespace aotc
