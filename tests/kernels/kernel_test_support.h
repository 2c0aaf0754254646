// Helpers for the kernel tests: a one-node graph with random input values,
// whose reference-evaluator output is the oracle, and a JIT runner for a
// generated kernel that counts the kernel's heap allocations.
#pragma once

#include <gtest/gtest.h>

#include <Halide.h>

#include <random>
#include <string>
#include <vector>

#include "generators/kernel.h"
#include "ir/graph.h"
#include "reference/evaluator.h"

namespace aotc::kernel_test {

// A post-op of a test case. `operand` is the add/mul operand's shape (affine
// operands are [C] of the output).
struct PostOpCase {
  PostOpKind kind = PostOpKind::kRelu;
  Shape operand;
  float min = 0, max = 0;
  float alpha = 0;  // elu
};

inline PostOpCase relu() { return {PostOpKind::kRelu, {}, 0, 0}; }
inline PostOpCase clamp(float min, float max) { return {PostOpKind::kClamp, {}, min, max}; }
inline PostOpCase hardswish() { return {PostOpKind::kHardSwish, {}, 0, 0}; }
inline PostOpCase sigmoid() { return {PostOpKind::kSigmoid, {}, 0, 0}; }
inline PostOpCase affine() { return {PostOpKind::kAffine, {}, 0, 0}; }
inline PostOpCase add(Shape operand) { return {PostOpKind::kAdd, std::move(operand), 0, 0}; }
inline PostOpCase mul(Shape operand) { return {PostOpKind::kMul, std::move(operand), 0, 0}; }
inline PostOpCase tanh() { return {PostOpKind::kTanh, {}, 0, 0}; }
inline PostOpCase prelu(Shape alpha) { return {PostOpKind::kPRelu, std::move(alpha), 0, 0}; }
inline PostOpCase elu(float alpha) { return {PostOpKind::kElu, {}, 0, 0, alpha}; }
inline PostOpCase softplus() { return {PostOpKind::kSoftplus, {}, 0, 0}; }

// The node under test, in a graph of its own, with random values (uniform in
// [-1, 1)) for each of its inputs.
class NodeUnderTest {
 public:
  NodeUnderTest(OpKind op, Attrs attrs, unsigned seed);

  // Adds an operand of the op itself (call before add_post_op).
  void add_operand(const Shape& shape);
  // Appends a post-op, with random operands.
  void add_post_op(const PostOpCase& post_op);
  void add_post_ops(const std::vector<PostOpCase>& post_ops);

  // The output shape (shape inference of the IR).
  Shape output_shape() const;
  // The epilogue as the generators take it.
  std::vector<gen::PostOpSpec> epilogue_specs() const;

  const Value& value(size_t input) const { return values_.at(input); }
  Value& value(size_t input) { return values_.at(input); }
  // The reference evaluator's output for the node.
  Value reference() const;

 private:
  TensorId add_input(const Shape& shape);

  Graph graph_;
  Node node_;
  std::vector<Value> values_;
  std::mt19937 rng_;
};

struct KernelRun {
  std::vector<float> output;
  int heap_allocations = 0;  // halide_malloc calls during the run
};

// JIT-compiles `kernel` for `target` and runs it once on `inputs` (one per
// kernel input, in order, each with the shape the kernel expects).
KernelRun run_kernel(gen::Kernel& kernel, const std::vector<const Value*>& inputs, const Shape& output_shape,
                     const Halide::Target& target);

// "host", or a Halide target string.
Halide::Target target_named(const std::string& name);
// The x86 targets below AVX-512 that the schedules also serve (for target_named).
inline const std::string kAvx2 = "x86-64-linux-avx-avx2-fma-f16c-sse41";
inline const std::string kSse41 = "x86-64-linux-sse41";
// The host as aotc compiles for it (backends/halide: without the features
// Halide 14 wrongly claims for AMD Zen 4).
Halide::Target host_target();

// Makes every `every`-th element of `v` (from `first`) a quiet NaN.
void sprinkle_nans(Value& v, size_t first, size_t every);

// max|got - ref| <= 1e-4 * max(1, max|ref|), reported with the worst index; a
// NaN must be where the reference has one.
void expect_close(const Value& reference, const std::vector<float>& got);

// Checks a kernel run against the reference: numerics, and no heap allocation.
void expect_matches(const Value& reference, const KernelRun& run);

// Runs `kernel` (its inputs are the node's first ones) for the host on the node's values and
// checks it against the node's reference output.
void run_and_compare(NodeUnderTest& node, gen::Kernel kernel, const Shape& output_shape);

}  // namespace aotc::kernel_test
