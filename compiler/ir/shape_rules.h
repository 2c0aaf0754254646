// The shape semantics of every op: validates a node's attributes against its
// input shapes and returns the shapes of its outputs. One function, used by the
// frontends, the text parser and the infer-shapes pass, so there is exactly one
// definition of what a well-formed node is.
#pragma once

#include <memory>
#include <vector>

#include "ir/graph.h"

namespace aotc {

// Throws UserError(kInvalidModel) naming the node (node.name) and the problem
// (wrong input count, rank, channel mismatch, non-positive kernel/stride,
// groups not dividing channels, output extent < 1, absurd sizes, ...).
// Epilogue operands are checked too (affine operands [C]; add/mul operands
// broadcastable to the output).
// Inputs must have the element type the op reads (graph.h: f32 but for quantized ops and
// those that keep any type).
std::vector<Shape> infer_node_shapes(const Graph& g, const Node& node);

// The element type of a node's output: f32, quantize's and qconv2d's dtype and quantization,
// or the input's for the ops that keep it. For a node that infer_node_shapes() accepts.
struct ElementType {
  DType dtype = DType::F32;
  std::shared_ptr<const Quantization> quant;
};
ElementType infer_element_type(const Graph& g, const Node& node);
void set_element_type(Tensor& t, const ElementType& type);

// Appends to `g` a node of `op` reading `inputs`, with a fresh output tensor
// named after `name` whose shape the rules compute; their errors are prefixed
// with `context` (a frontend's file and node). Returns the output. For
// frontends, which build graphs node by node.
TensorId append_node(Graph& g, OpKind op, Attrs attrs, std::vector<TensorId> inputs, const std::string& name,
                     const std::string& context);

// NumPy broadcasting of two shapes; throws UserError naming `context` if they
// do not broadcast.
Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& context);

// The output extent of a pooling/conv window along one dim (PyTorch rules,
// with separate begin/end padding; ceil_mode as in torch.nn.MaxPool2d).
int64_t window_output_extent(int64_t in, int kernel, int stride, int pad_begin, int pad_end,
                             int dilation, bool ceil_mode);

}  // namespace aotc
