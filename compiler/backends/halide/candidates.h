// Candidate implementations of a fused group (one node of the optimised
// graph): each is a sequence of kernel calls, with where each call's arguments
// come from. An op family offers its candidates in one file
// (conv_candidates.cpp); the lowering turns the chosen one into calls over the
// memory plan, and `aotc --tune` (tune/) times every one of them.
#pragma once

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "backends/lowered_model.h"
#include "generators/conv2d.h"
#include "generators/kernel.h"
#include "generators/pool2d.h"
#include "ir/graph.h"

namespace aotc {

struct TuningCache;

// Where one kernel argument's bytes come from.
struct StepArg {
  enum class Kind { kTensor, kPacked, kScratch };
  Kind kind = Kind::kTensor;
  TensorId tensor = -1;  // kTensor: an input, epilogue operand or output of the node
  int packed = 0;        // kPacked: index into Candidate::packed
  int64_t offset = 0;    // kScratch: bytes into the node's scratch
  Shape shape;           // the dense view the kernel sees (a tensor's own bytes, reshaped)
  // kTensor: the layout the kernel reads or writes the tensor's bytes in
  // (kNCHWc: blocks of the target's gen::channel_block).
  Layout layout = Layout::kNCHW;
  DType dtype = DType::F32;  // kScratch: its elements
};

// One kernel call of a candidate.
struct KernelStep {
  std::string key;     // the kernel's description: calls with equal keys share one kernel
  std::string suffix;  // names the kernel's function ("conv2d", "winograd_gemm")
  std::string ops;     // the call's ops in the report ("conv2d+relu (winograd gemm)")
  std::function<gen::Kernel(const Halide::Target&)> build;
  std::vector<StepArg> args;  // inputs in the kernel's order, then the output
  double flops = 0;
};

struct Candidate {
  std::string name;  // "direct", "pointwise-gemm", "winograd-f4x4": a tuning cache's key
  std::vector<KernelStep> steps;
  // Weights in the layouts the steps read, packed when asked: only the chosen
  // candidate's are packed into the library.
  std::vector<std::function<gen::PackedWeights()>> packed;
  int64_t scratch_bytes = 0;  // arena scratch live during the node's step
  bool preferred_by_rules = false;
  // The cost model's time of one run on one thread, µs; NaN where it has none.
  double predicted_us = std::numeric_limits<double>::quiet_NaN();
};

// Which candidate a node runs, and why.
struct Choice {
  std::vector<Candidate> candidates;
  size_t chosen = 0;
  size_t by_rules = 0;  // the first candidate the rules prefer
  std::string by;       // "tuning cache", "cost model", "rules" or "only candidate"
  // Per candidate, the time the tuning cache holds (µs), NaN where it has none.
  std::vector<double> measured_us;
};

// Everything a node's kernel code depends on (op, shapes, attributes, epilogue),
// nothing else: equal descriptions make equal kernels and equal choices.
std::string node_description(const Graph& g, const Node& node);

// The Halide element type of a tensor of `dtype`.
Halide::Type halide_type(DType dtype);

// "64x3x7x7", "scalar".
std::string shape_text(const Shape& s);

// The node's epilogue as the generators take it.
std::vector<gen::PostOpSpec> epilogue_specs(const Graph& g, const Node& node);

// Input `i` of `node`, which must be constant (weights); throws
// UserError(kUnsupported) naming the node and `what` otherwise.
const Tensor& constant_input(const Graph& g, const Node& node, size_t i, const char* what);

// The kernel `build` makes for the target it is compiled for, as an object
// defining `function` (user_context first, then the buffers in call order; no
// Halide runtime in it: the packager adds one per library).
KernelSource halide_kernel_source(const std::string& function, const std::string& description,
                                  std::function<gen::Kernel(const Halide::Target&)> build);

// A conv2d node (constant weights, else UserError(kUnsupported)) and a pooling
// node (max, average, adaptive or global average) as the generators take them,
// with their epilogues.
gen::Conv2dSpec conv2d_spec(const Graph& g, const Node& node);
gen::Pool2dSpec pool2d_spec(const Graph& g, const Node& node);

// Picks among `candidates` for the node of description `key`: the fastest
// measured when the cache has a time for every candidate; else, when the cost
// model predicts the time of the rules' choice and of another, the fastest
// predicted (candidates it does not predict are left out); else the first the
// rules prefer. Ties keep the rules' choice.
Choice choose(std::vector<Candidate> candidates, const std::string& key, const TuningCache* cache);

}  // namespace aotc
