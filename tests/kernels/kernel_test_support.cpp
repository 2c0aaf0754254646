#include "kernel_test_support.h"

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "backends/halide/halide_backend.h"
#include "ir/shape_rules.h"

namespace aotc::kernel_test {
namespace {

gen::PostOpSpec::Kind spec_kind(PostOpKind kind) {
  switch (kind) {
    case PostOpKind::kRelu: return gen::PostOpSpec::Kind::kRelu;
    case PostOpKind::kClamp: return gen::PostOpSpec::Kind::kClamp;
    case PostOpKind::kHardSwish: return gen::PostOpSpec::Kind::kHardSwish;
    case PostOpKind::kSigmoid: return gen::PostOpSpec::Kind::kSigmoid;
    case PostOpKind::kTanh: return gen::PostOpSpec::Kind::kTanh;
    case PostOpKind::kAffine: return gen::PostOpSpec::Kind::kAffine;
    case PostOpKind::kAdd: return gen::PostOpSpec::Kind::kAdd;
    case PostOpKind::kMul: return gen::PostOpSpec::Kind::kMul;
    case PostOpKind::kPRelu: return gen::PostOpSpec::Kind::kPRelu;
    case PostOpKind::kElu: return gen::PostOpSpec::Kind::kElu;
    case PostOpKind::kSoftplus: return gen::PostOpSpec::Kind::kSoftplus;
  }
  return gen::PostOpSpec::Kind::kRelu;
}

std::atomic<int> heap_allocations{0};

void* counting_malloc(Halide::JITUserContext*, size_t size) {
  ++heap_allocations;
  // Halide wants 64-byte alignment on AVX-512 and may read a little past the end.
  return std::aligned_alloc(64, (size + 64 + 63) / 64 * 64);
}

void counting_free(Halide::JITUserContext*, void* p) { std::free(p); }

Halide::Buffer<float> buffer_of(const Value& v) {
  std::vector<int> extents(v.shape.rbegin(), v.shape.rend());  // Halide: innermost first
  Halide::Buffer<float> b(extents);
  std::memcpy(b.data(), v.data.data(), v.data.size() * sizeof(float));
  return b;
}

}  // namespace

NodeUnderTest::NodeUnderTest(OpKind op, Attrs attrs, unsigned seed) : rng_(seed) {
  graph_.name = "kernel_test";
  node_.name = "node_under_test";
  node_.op = op;
  node_.attrs = std::move(attrs);
  Tensor out;  // shape inference counts outputs but does not read their shapes
  out.name = "out";
  node_.outputs.push_back(graph_.add_tensor(out));
}

TensorId NodeUnderTest::add_input(const Shape& shape) {
  Tensor t;
  t.name = "in" + std::to_string(graph_.tensors.size());
  t.shape = shape;
  const TensorId id = graph_.add_tensor(t);
  graph_.inputs.push_back(id);
  Value v{shape, std::vector<float>(static_cast<size_t>(num_elements(shape)))};
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (float& x : v.data) x = uniform(rng_);
  values_.push_back(std::move(v));
  return id;
}

void NodeUnderTest::add_operand(const Shape& shape) {
  ASSERT_TRUE(node_.epilogue.empty()) << "operands go before post-ops";
  node_.inputs.push_back(add_input(shape));
}

void NodeUnderTest::add_post_op(const PostOpCase& p) {
  std::vector<TensorId> operands;
  if (p.kind == PostOpKind::kAffine) {
    const Shape channels{output_shape()[1]};
    operands = {add_input(channels), add_input(channels)};
  } else if (post_op_operand_count(p.kind) == 1) {
    operands = {add_input(p.operand)};
  }
  PostOp post_op;
  post_op.kind = p.kind;
  post_op.min = p.min;
  post_op.max = p.max;
  post_op.alpha = p.alpha;
  node_.append_post_op(post_op, operands);
}

void NodeUnderTest::add_post_ops(const std::vector<PostOpCase>& post_ops) {
  for (const PostOpCase& p : post_ops) add_post_op(p);
}

Shape NodeUnderTest::output_shape() const { return infer_node_shapes(graph_, node_)[0]; }

std::vector<gen::PostOpSpec> NodeUnderTest::epilogue_specs() const {
  std::vector<gen::PostOpSpec> specs;
  for (const PostOp& p : node_.epilogue) {
    gen::PostOpSpec spec;
    spec.kind = spec_kind(p.kind);
    spec.min = p.min;
    spec.max = p.max;
    spec.alpha = p.alpha;
    if (post_op_operand_count(p.kind) == 1)
      spec.operand_shape = graph_.tensor(node_.inputs[static_cast<size_t>(p.input)]).shape;
    specs.push_back(spec);
  }
  return specs;
}

Value NodeUnderTest::reference() const {
  std::vector<const Value*> inputs;
  for (const Value& v : values_) inputs.push_back(&v);
  return evaluate_node(graph_, node_, inputs)[0];
}

KernelRun run_kernel(gen::Kernel& kernel, const std::vector<const Value*>& inputs, const Shape& output_shape,
                     const Halide::Target& target) {
  KernelRun run;
  EXPECT_EQ(kernel.inputs.size(), inputs.size()) << "kernel inputs";
  if (kernel.inputs.size() != inputs.size()) return run;
  std::vector<Halide::Buffer<float>> buffers;
  for (size_t i = 0; i < inputs.size(); ++i) {
    buffers.push_back(buffer_of(*inputs[i]));
    kernel.inputs[i].set(buffers.back());
  }
  Value out{output_shape, std::vector<float>(static_cast<size_t>(num_elements(output_shape)), NAN)};
  Halide::Buffer<float> out_buffer = buffer_of(out);

  Halide::Pipeline pipeline(kernel.output);
  pipeline.jit_handlers().custom_malloc = counting_malloc;
  pipeline.jit_handlers().custom_free = counting_free;
  pipeline.compile_jit(gen::kernel_target(target, kernel));
  heap_allocations = 0;
  pipeline.realize(out_buffer);
  run.heap_allocations = heap_allocations;
  run.output.assign(out_buffer.data(), out_buffer.data() + out_buffer.number_of_elements());
  return run;
}

Halide::Target target_named(const std::string& name) {
  return name == "host" ? host_target() : Halide::Target(name);
}

Halide::Target host_target() { return Halide::Target(halide_target_string("host")); }

void sprinkle_nans(Value& v, size_t first, size_t every) {
  for (size_t i = first; i < v.data.size(); i += every) v.data[i] = std::numeric_limits<float>::quiet_NaN();
}

void expect_close(const Value& reference, const std::vector<float>& got) {
  ASSERT_EQ(reference.data.size(), got.size()) << "output element count";
  double max_ref = 0, max_diff = 0;
  size_t worst = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    max_ref = std::max(max_ref, std::fabs(static_cast<double>(reference.data[i])));
    if (std::isnan(got[i]) && std::isnan(reference.data[i])) continue;
    const double diff = std::fabs(static_cast<double>(got[i]) - reference.data[i]);
    if (!(diff <= max_diff)) {  // NaN counts as the worst
      max_diff = std::isnan(diff) ? INFINITY : diff;
      worst = i;
    }
  }
  const double tolerance = 1e-4 * std::max(1.0, max_ref);
  EXPECT_LE(max_diff, tolerance) << "worst at flat index " << worst << " of " << to_string(reference.shape)
                                 << ": got " << got[worst] << ", reference " << reference.data[worst];
}

void expect_matches(const Value& reference, const KernelRun& run) {
  expect_close(reference, run.output);
  EXPECT_EQ(run.heap_allocations, 0) << "the kernel allocated on the heap while running";
}

void run_and_compare(NodeUnderTest& node, gen::Kernel kernel, const Shape& output_shape) {
  std::vector<const Value*> inputs;
  for (size_t i = 0; i < kernel.inputs.size(); ++i) inputs.push_back(&node.value(i));
  SCOPED_TRACE(kernel.schedule);
  expect_matches(node.reference(), run_kernel(kernel, inputs, output_shape, host_target()));
}

}  // namespace aotc::kernel_test
