// The quantized kernels (generators/quantize.h, qconv2d.h, qadd.h, qglobal_avg_pool.h, qlookup.h), JIT-compiled, bit-exact
// against the reference evaluator's semantics (docs/int8.md) on random integer values: ties of
// the rounding, NaN and infinities, saturation, zero points (padding reads the input's), per
// channel scales, strides, dilations, groups, and the AVX2 and SSE4.1 targets beside the host.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "generators/qadd.h"
#include "generators/qconv2d.h"
#include "generators/qglobal_avg_pool.h"
#include "generators/qlookup.h"
#include "generators/quantize.h"
#include "ir/shape_rules.h"
#include "kernel_test_support.h"

namespace aotc::kernel_test {
namespace {

// `values` (row-major, outermost first) as a dense buffer of `type`.
Halide::Buffer<> typed_buffer(Halide::Type type, const Shape& shape, const std::vector<float>& values) {
  std::vector<int> extents(shape.rbegin(), shape.rend());
  Halide::Buffer<> b(type, extents);
  for (size_t i = 0; i < values.size(); ++i) {
    void* at = static_cast<uint8_t*>(b.data()) + i * static_cast<size_t>(type.bytes());
    if (type == Halide::Float(32)) *static_cast<float*>(at) = values[i];
    else if (type == Halide::Int(8)) *static_cast<int8_t*>(at) = static_cast<int8_t>(values[i]);
    else if (type == Halide::UInt(8)) *static_cast<uint8_t*>(at) = static_cast<uint8_t>(values[i]);
    else *static_cast<int32_t*>(at) = static_cast<int32_t>(values[i]);
  }
  return b;
}

std::vector<float> values_of(const Halide::Buffer<>& b) {
  std::vector<float> out(static_cast<size_t>(b.number_of_elements()));
  for (size_t i = 0; i < out.size(); ++i) {
    const void* at = static_cast<const uint8_t*>(b.data()) + i * static_cast<size_t>(b.type().bytes());
    if (b.type() == Halide::Float(32)) out[i] = *static_cast<const float*>(at);
    else if (b.type() == Halide::Int(8)) out[i] = *static_cast<const int8_t*>(at);
    else if (b.type() == Halide::UInt(8)) out[i] = *static_cast<const uint8_t*>(at);
    else out[i] = static_cast<float>(*static_cast<const int32_t*>(at));
  }
  return out;
}

// Runs `kernel` on `inputs` (values, one per kernel input, each of its parameter's type).
std::vector<float> run_typed(gen::Kernel& kernel, const std::vector<std::vector<float>>& inputs,
                             const std::vector<Shape>& shapes, const Shape& out_shape, const Halide::Target& target) {
  std::vector<Halide::Buffer<>> buffers;
  for (size_t i = 0; i < inputs.size(); ++i) {
    buffers.push_back(typed_buffer(kernel.inputs[i].type(), shapes[i], inputs[i]));
    kernel.inputs[i].set(buffers.back());
  }
  const std::vector<int> extents(out_shape.rbegin(), out_shape.rend());
  Halide::Buffer<> out = kernel.output.realize(extents, gen::kernel_target(target, kernel));
  return values_of(out);
}

Halide::Type halide_of(DType dtype) {
  return dtype == DType::I8 ? Halide::Int(8) : dtype == DType::U8 ? Halide::UInt(8) : Halide::Int(32);
}

const std::vector<std::string> kTargets = {"host", kAvx2, kSse41};

TEST(QuantizeKernel, MatchesTheEvaluatorOnTiesNansInfinitiesAndSaturation) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {0.5f, 1.5f, 2.5f, -0.5f, -2.5f, 1000, -1000, nan, inf, -inf, 0.1f, 0.3f};
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> uniform(-40, 40);
  while (x.size() < 2 * 3 * 37) x.push_back(uniform(rng));
  const Shape shape{2, 3, 37};
  for (const DType dtype : {DType::I8, DType::U8}) {
    for (const int axis : {-1, 1}) {
     for (const Arithmetic arithmetic : {Arithmetic::kOnnx, Arithmetic::kTflite}) {
      const Quantization q = axis < 0 ? Quantization{{0.25f}, {dtype == DType::I8 ? 3 : 128}, -1}
                                      : Quantization{{0.25f, 0.1f, 3.0f}, {dtype == DType::I8 ? -5 : 0, 7, 100}, 1};
      gen::QuantizeSpec spec{gen::QuantizeSpec::Kind::kQuantize, shape,   halide_of(dtype),
                             q.scale,                              q.zero_point, axis,
                             arithmetic == Arithmetic::kTflite};
      std::vector<float> want(x.size());
      for (size_t i = 0; i < x.size(); ++i) {
        const size_t c = axis < 0 ? 0 : i / 37 % 3;
        want[i] = static_cast<float>(quantize_value(x[i], dtype, q.scale[c], q.zero_point[c], arithmetic));
      }
      for (const std::string& target : kTargets) {
        gen::Kernel kernel = gen::quantize(spec, target_named(target));
        EXPECT_EQ(run_typed(kernel, {x}, {shape}, shape, target_named(target)), want)
            << dtype_name(dtype) << " axis " << axis << " " << arithmetic_name(arithmetic) << " on " << target;
      }
      if (arithmetic == Arithmetic::kTflite) continue;
      // Dequantizing the integers back: (q - zero_point) * scale in float32.
      spec.kind = gen::QuantizeSpec::Kind::kDequantize;
      std::vector<float> real(want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        const size_t c = axis < 0 ? 0 : i / 37 % 3;
        real[i] = static_cast<float>(static_cast<int64_t>(want[i]) - q.zero_point[c]) * q.scale[c];
      }
      gen::Kernel kernel = gen::quantize(spec, host_target());
      EXPECT_EQ(run_typed(kernel, {want}, {shape}, shape, host_target()), real) << dtype_name(dtype) << " axis " << axis;
     }
    }
  }
}

// qadd on every pair of values (a 256 x 256 tensor of them), int8 and uint8, with ONNX's
// arithmetic (the kernel's double arithmetic against the evaluator's fused multiply-adds) and
// TFLite's (fixed point), with and without folded relu bounds, scales whose ratios are inexact
// and exact (0.5 and 0.25: sums at ties).
TEST(QAddKernel, MatchesTheEvaluatorOnEveryPairOfValues) {
  for (const Arithmetic arithmetic : {Arithmetic::kOnnx, Arithmetic::kTflite}) {
    for (const DType dtype : {DType::I8, DType::U8}) {
      for (const bool relu : {false, true}) {
        const int64_t lo = dtype_min(dtype);
        const bool ties = relu;
        const Quantization aq{{ties ? 0.5f : 0.0371f}, {lo + 3}, -1}, bq{{ties ? 0.25f : 0.0219f}, {lo + 250}, -1},
            yq{{ties ? 1.0f : 0.0457f}, {lo + 17}, -1};
        const QAddConstants k = qadd_constants(aq, bq, yq, dtype);
        const TfliteAddParameters p = tflite_add_parameters(aq, bq, yq);
        ASSERT_TRUE(qadd_exact_in_double(k));
        const Shape shape{1, 256, 256};
        std::vector<float> a, b, want;
        const int64_t min = relu ? yq.zero_point[0] : lo, max = dtype_max(dtype);
        for (int64_t i = 0; i < 256; ++i) {
          for (int64_t j = 0; j < 256; ++j) {
            a.push_back(static_cast<float>(lo + i));
            b.push_back(static_cast<float>(lo + j));
            const int64_t sum =
                arithmetic == Arithmetic::kTflite ? tflite_add_value(lo + i, lo + j, p) : qadd_value(lo + i, lo + j, k);
            want.push_back(static_cast<float>(std::clamp(sum, min, max)));
          }
        }
        gen::QAddSpec spec{shape, halide_of(dtype), k.a_ratio, k.b_ratio, k.offset, k.shift};
        spec.min = min;
        spec.max = max;
        spec.fixed_point = arithmetic == Arithmetic::kTflite;
        spec.multipliers = {p.a.multiplier, p.b.multiplier, p.out.multiplier};
        spec.shifts = {p.a.shift, p.b.shift, p.out.shift};
        spec.offsets = {p.a_offset, p.b_offset, p.out_offset};
        for (const std::string& target : kTargets) {
          gen::Kernel kernel = gen::qadd(spec, target_named(target));
          EXPECT_EQ(run_typed(kernel, {a, b}, {shape, shape}, shape, target_named(target)), want)
              << arithmetic_name(arithmetic) << " " << dtype_name(dtype) << (relu ? " relu" : "") << " on " << target;
        }
      }
    }
  }
}

// qglobal_avg_pool on random integers: int8 and uint8, zero points at and inside the type's
// edges, planes of 1 to 77 values, channel tails.
TEST(QGlobalAvgPoolKernel, MatchesTheEvaluatorExactly) {
  std::mt19937 rng(23);
  unsigned seed = 0;
  for (const Shape& shape : {Shape{1, 37, 7, 7}, Shape{2, 5, 3, 11}, Shape{1, 64, 1, 1}, Shape{1, 9, 7, 11}}) {
    for (const DType dtype : {DType::I8, DType::U8}) {
      const int64_t lo = dtype_min(dtype);
      const Quantization xq{{0.037f}, {lo + 11 * (++seed % 20)}, -1}, yq{{0.0213f}, {lo + 255 - 13 * (seed % 17)}, -1};
      Graph g;
      const TensorId x = g.add_tensor({.name = "x", .dtype = dtype, .shape = shape, .data = nullptr,
                                       .quant = std::make_shared<const Quantization>(xq)});
      g.inputs = {x};
      g.outputs = {append_node(g, OpKind::QGlobalAvgPool, QuantizeAttrs{dtype, yq}, {x}, "y", "test")};
      std::uniform_int_distribution<int> values(static_cast<int>(lo), static_cast<int>(lo + 255));
      Value input{shape, std::vector<float>(static_cast<size_t>(num_elements(shape)))};
      for (float& v : input.data) v = static_cast<float>(values(rng));
      const Value want = evaluate(g, {input}).at(0);
      const gen::QGlobalAvgPoolSpec spec{shape, halide_of(dtype), xq.zero_point[0], yq.zero_point[0],
                                         global_avg_pool_multiplier(xq, yq, shape[2] * shape[3])};
      for (const std::string& target : kTargets) {
        gen::Kernel kernel = gen::qglobal_avg_pool(spec, target_named(target));
        EXPECT_EQ(run_typed(kernel, {input.data}, {shape}, want.shape, target_named(target)), want.data)
            << to_string(shape) << " " << dtype_name(dtype) << " on " << target;
      }
    }
  }
}

// qlookup on every value of its input type, into both output types.
TEST(QLookupKernel, ReadsTheTableAtEveryValue) {
  for (const DType in : {DType::I8, DType::U8}) {
    for (const DType out : {DType::I8, DType::U8}) {
      std::vector<int64_t> table;
      for (int64_t i = 0; i < 256; ++i) table.push_back(dtype_min(out) + (i * 37 + 11) % 256);
      std::vector<float> x, want;
      for (int64_t i = 0; i < 256; ++i) {
        x.push_back(static_cast<float>(dtype_min(in) + (i * 101) % 256));
        want.push_back(static_cast<float>(table[static_cast<size_t>((i * 101) % 256)]));
      }
      const Shape shape{2, 128};
      const gen::QLookupSpec spec{shape, halide_of(in), halide_of(out), table};
      for (const std::string& target : kTargets) {
        gen::Kernel kernel = gen::qlookup(spec, target_named(target));
        EXPECT_EQ(run_typed(kernel, {x}, {shape}, shape, target_named(target)), want)
            << dtype_name(in) << " -> " << dtype_name(out) << " on " << target;
      }
    }
  }
}

struct QConvCase {
  Shape input;
  int64_t out_channels;
  std::array<int, 2> kernel, stride, dilation;
  std::array<int, 4> pad;
  int groups;
  DType x_dtype, w_dtype, y_dtype;
  bool per_channel, weight_zero_points, bias, relu;
};

// A qconv2d node of `c` with random integers and scales, evaluated by the reference, and the
// generator's kernel on the same values (with VNNI dot products if `vnni`), with ONNX's or
// TFLite's arithmetic.
void check_qconv2d(const QConvCase& c, unsigned seed, const std::string& target, bool vnni = false,
                   Arithmetic arithmetic = Arithmetic::kOnnx) {
  std::mt19937 rng(seed);
  const auto integers = [&rng](DType dtype, int64_t count) {
    std::uniform_int_distribution<int> d(static_cast<int>(dtype_min(dtype)), static_cast<int>(dtype_max(dtype)));
    std::vector<float> v(static_cast<size_t>(count));
    for (float& e : v) e = static_cast<float>(d(rng));
    return v;
  };
  std::uniform_real_distribution<float> scales(0.001f, 0.05f);
  const int64_t o = c.out_channels;
  Graph g;
  const Quantization xq{{scales(rng)}, {c.x_dtype == DType::U8 ? 117 : -9}, -1};
  const TensorId x = g.add_tensor({.name = "x", .dtype = c.x_dtype, .shape = c.input, .data = nullptr,
                                   .quant = std::make_shared<const Quantization>(xq)});
  g.inputs = {x};
  Quantization wq;
  wq.axis = c.per_channel ? 0 : -1;
  for (int64_t i = 0; i < (c.per_channel ? o : 1); ++i) {
    wq.scale.push_back(scales(rng));
    wq.zero_point.push_back(c.weight_zero_points ? (c.w_dtype == DType::U8 ? 120 + i % 7 : i % 5 - 2) : 0);
  }
  const Shape wshape{o, c.input[1] / c.groups, c.kernel[0], c.kernel[1]};
  const TensorId w = g.add_tensor({.name = "w", .dtype = c.w_dtype, .shape = wshape,
                                   .data = std::make_shared<const std::vector<float>>(integers(c.w_dtype, num_elements(wshape))),
                                   .quant = std::make_shared<const Quantization>(wq)});
  std::vector<TensorId> inputs = {x, w};
  if (c.bias) {
    Quantization bq{{}, std::vector<int64_t>(static_cast<size_t>(c.per_channel ? o : 1), 0), wq.axis};
    for (const float s : wq.scale) bq.scale.push_back(xq.scale[0] * s);
    std::uniform_int_distribution<int> b(-20000, 20000);
    std::vector<float> bias(static_cast<size_t>(o));
    for (float& e : bias) e = static_cast<float>(b(rng));
    inputs.push_back(g.add_tensor({.name = "b", .dtype = DType::I32, .shape = {o},
                                   .data = std::make_shared<const std::vector<float>>(bias),
                                   .quant = std::make_shared<const Quantization>(bq)}));
  }
  QConv2dAttrs a;
  a.conv = {c.stride, c.pad, c.dilation, c.groups};
  // An output scale that keeps most values inside the type, some saturating.
  a.out = {c.y_dtype, {{xq.scale[0] * wq.scale[0] * 40.0f}, {c.y_dtype == DType::U8 ? 30 : 3}, -1}, arithmetic};
  a.min = c.relu ? a.out.quant.zero_point[0] : dtype_min(c.y_dtype);
  a.max = dtype_max(c.y_dtype);
  g.outputs = {append_node(g, OpKind::QConv2d, a, inputs, "y", "test")};
  const Value input{c.input, integers(c.x_dtype, num_elements(c.input))};
  const Value want = evaluate(g, {input}).at(0);

  gen::QConv2dSpec spec;
  spec.input_shape = c.input;
  spec.input_type = halide_of(c.x_dtype);
  spec.in_zero = xq.zero_point[0];
  spec.out_channels = o;
  spec.kernel = c.kernel;
  spec.stride = c.stride;
  spec.pad = c.pad;
  spec.dilation = c.dilation;
  spec.groups = c.groups;
  spec.weight_type = c.weight_zero_points || c.w_dtype == DType::U8 ? Halide::Int(32) : Halide::Int(8);
  spec.out_type = halide_of(c.y_dtype);
  spec.out_zero = a.out.quant.zero_point[0];
  spec.min = a.min;
  spec.max = a.max;
  spec.vnni = vnni;
  spec.fixed_point = arithmetic == Arithmetic::kTflite;
  const gen::PackedWeights packed = gen::pack_qconv2d_weights(spec, g.tensor(w).data->data(), wq.zero_point);
  std::vector<float> bias(static_cast<size_t>(o), 0.0f);
  if (c.bias) bias = *g.tensor(inputs[2]).data;
  gen::PackedWeights multipliers{{o}, {}};
  if (spec.fixed_point) {
    std::vector<int32_t> fixed;
    std::vector<int> shifts;
    for (int64_t i = 0; i < o; ++i) {
      const FixedPointMultiplier m = tflite_requantization_multiplier(xq, wq, a.out.quant, i);
      fixed.push_back(m.multiplier);
      shifts.push_back(m.shift);
    }
    multipliers = gen::pack_fixed_point_multipliers(fixed, shifts);
  } else {
    for (int64_t i = 0; i < o; ++i) multipliers.data.push_back(requantization_multiplier(xq, wq, a.out.quant, i));
  }
  gen::Kernel kernel = gen::qconv2d(spec, target_named(target));
  std::vector<std::vector<float>> inputs_data = {input.data, packed.data, bias, multipliers.data};
  std::vector<Shape> shapes = {c.input, packed.shape, {o}, multipliers.shape};
  if (vnni) {
    // The convolution reads the input's quads, which their own kernel writes.
    gen::Kernel quads = gen::qconv2d_quads(spec, target_named(target));
    shapes[0] = gen::qconv2d_quads_shape(spec);
    inputs_data[0] = run_typed(quads, {input.data}, {c.input}, shapes[0], target_named(target));
    inputs_data.push_back(gen::qconv2d_weight_sums(spec, g.tensor(w).data->data()).data);
    shapes.push_back({o});
  }
  const std::vector<float> got = run_typed(kernel, inputs_data, shapes, want.shape, target_named(target));
  ASSERT_EQ(got.size(), want.data.size());
  size_t wrong = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want.data[i] && wrong++ == 0) first = i;
  EXPECT_EQ(wrong, 0u) << "first at " << first << ": " << got[first] << " against " << want.data[first] << " on "
                       << target;
}

std::vector<QConvCase> qconv_cases() {
  return {
      // input, O, kernel, stride, dilation, pad, groups, x, w, y, per channel, w zero points, bias, relu
      {{1, 3, 17, 19}, 8, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, DType::U8, DType::I8, DType::U8, false, false, true, true},
      {{1, 16, 9, 9}, 16, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, 16, DType::U8, DType::I8, DType::U8, true, false, true, false},
      {{2, 8, 12, 10}, 12, {3, 2}, {1, 2}, {2, 1}, {2, 0, 1, 1}, 4, DType::I8, DType::I8, DType::I8, true, false, false, false},
      {{1, 24, 7, 7}, 40, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, DType::U8, DType::U8, DType::U8, false, true, true, true},
      {{1, 5, 6, 33}, 6, {5, 5}, {3, 1}, {1, 1}, {2, 2, 2, 2}, 1, DType::I8, DType::I8, DType::U8, true, true, true, false},
      {{1, 64, 1, 1}, 10, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, DType::U8, DType::I8, DType::U8, true, false, true, false},
      // dense: two channel blocks per tile, channels staged in two chunks, a row tail
      {{1, 40, 9, 11}, 64, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, DType::U8, DType::I8, DType::I8, true, false, true, true},
      // dense: stride and dilation 2, odd channels, uneven padding
      {{1, 7, 10, 10}, 32, {3, 3}, {2, 2}, {2, 2}, {2, 2, 1, 1}, 1, DType::I8, DType::I8, DType::U8, false, false, false, false},
  };
}

TEST(QConv2dKernel, MatchesTheEvaluatorExactly) {
  const std::vector<QConvCase> cases = qconv_cases();
  unsigned seed = 100;
  for (const QConvCase& c : cases) {
    SCOPED_TRACE(to_string(c.input) + " -> " + std::to_string(c.out_channels));
    check_qconv2d(c, seed++, "host");
  }
  check_qconv2d(cases[0], 200, kAvx2);
  check_qconv2d(cases[2], 201, kAvx2);
  check_qconv2d(cases[1], 202, kSse41);
  check_qconv2d(cases[6], 203, kAvx2);
  check_qconv2d(cases[7], 204, kSse41);
}

// TFLite's fixed-point requantization (MultiplyByQuantizedMultiplier) on every case, the
// VNNI kernel's included where the host has it.
TEST(QConv2dKernel, FixedPointMatchesTheEvaluatorExactly) {
  const bool vnni = gen::has_avx512_vnni(target_named("host"));
  unsigned seed = 400;
  for (const QConvCase& c : qconv_cases()) {
    SCOPED_TRACE(to_string(c.input) + " -> " + std::to_string(c.out_channels));
    check_qconv2d(c, seed++, "host", false, Arithmetic::kTflite);
    if (vnni && c.groups == 1 && c.w_dtype == DType::I8 && !c.weight_zero_points)
      check_qconv2d(c, seed++, "host", true, Arithmetic::kTflite);
  }
  check_qconv2d(qconv_cases()[1], 450, kAvx2, false, Arithmetic::kTflite);
  check_qconv2d(qconv_cases()[6], 451, kSse41, false, Arithmetic::kTflite);
}

// The VNNI kernel (uint8 x int8 quads, the input's zero point folded into the bias) on the
// dense cases with int8 weights of zero point 0: u8 and i8 inputs, odd channel counts (3, 7:
// zero channels pad the last quad), two chunks, strides, dilation, tails.
TEST(QConv2dKernel, VnniMatchesTheEvaluatorExactly) {
  const Halide::Target host = target_named("host");
  if (!gen::has_avx512_vnni(host)) GTEST_SKIP() << "this CPU has no AVX512-VNNI (host target " << host.to_string() << ")";
  unsigned seed = 300, checked = 0;
  for (const QConvCase& c : qconv_cases()) {
    if (c.groups != 1 || c.w_dtype != DType::I8 || c.weight_zero_points) continue;
    SCOPED_TRACE(to_string(c.input) + " -> " + std::to_string(c.out_channels));
    check_qconv2d(c, seed++, "host", true);
    ++checked;
  }
  EXPECT_EQ(checked, 4u);
}

}  // namespace
}  // namespace aotc::kernel_test
