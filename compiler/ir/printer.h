// The stable text form of the Graph IR (the currency of tests and debugging).
//
//   graph tiny {
//     input %x: f32[1,3,8,8]
//     const %w: f32[4,3,3,3]
//     const %b: f32[4] = [0.5, -1, 0, 2]
//     %c = conv2d(%x, %w, %b) {stride=[1,1], pad=[1,1,1,1], dilation=[1,1], groups=1} epilogue[relu]: f32[1,4,8,8]
//     %p = max_pool2d(%c) {kernel=[2,2], stride=[2,2], pad=[0,0,0,0], dilation=[1,1], ceil_mode=false, count_include_pad=true}: f32[1,4,4,4]
//     output %p
//   }
//
// - A type is dtype, shape and, for an integer dtype, its quantization:
//   f32[1,4,8,8], u8[1,3,8,8]{scale=[0.0078125], zero_point=[128]},
//   i8[4,3,3,3]{axis=0, scale=[0.1,0.2,0.1,0.3], zero_point=[0,0,0,0]}.
// - Inputs, then the constants in order of first use, then nodes in execution
//   order, then outputs. Only tensors reachable from nodes/outputs are printed.
// - Constants of at most kMaxInlineElements are printed with their values;
//   larger ones are elided (the parser then refuses them).
// - Epilogue operands are printed inside the epilogue, not in the op's operand
//   list: `add(%a, %b) epilogue[affine(%s, %t), relu]`.
// - Names that are not [A-Za-z0-9_./-]+ are quoted: %"a name".
// The parser (ir/parser.h) reads this form back.
#pragma once

#include <ostream>
#include <string>

#include "ir/graph.h"

namespace aotc {

constexpr int64_t kMaxInlineElements = 16;

void print_graph(std::ostream& os, const Graph& g);
std::string print_graph(const Graph& g);

// A tensor's type as printed, e.g. "f32[1,4,8,8]" or "u8[1,3,8,8]{scale=[0.5], zero_point=[128]}".
std::string type_text(const Tensor& t);

// A node's attributes as printed, e.g. "{stride=[1,1], pad=[1,1,1,1], ...}" ("" if none).
std::string print_attrs(const Attrs& attrs);

// The op and its fused epilogue, e.g. "conv2d+relu".
std::string op_signature(const Node& node);

// One node on one line, as inside print_graph (without indentation or newline).
std::string print_node(const Graph& g, const Node& node);

}  // namespace aotc
