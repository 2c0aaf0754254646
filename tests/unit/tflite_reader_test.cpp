// Tests of the TensorFlow Lite reader on small models built here with the
// generated C++ API (the only file besides the reader that includes it). The
// real MediaPipe models are checked in tests/tflite/.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "frontends/tflite/tflite_constants.h"
#include "frontends/tflite/tflite_reader.h"
#include "ir/printer.h"
#include "pass_test_support.h"
#include "passes/pipeline.h"
#include "schemas/tflite_generated.h"
#include "support/error.h"

namespace aotc {
namespace {

using flatbuffers::FlatBufferBuilder;
using tfl::BuiltinOperator;
using tfl::TensorType;

struct TensorSpec {
  std::vector<int32_t> shape;
  TensorType type = TensorType::FLOAT32;
  uint32_t buffer = 0;
  bool quantized = false;
};

struct OpCodeSpec {
  int8_t deprecated_code;
  BuiltinOperator code;
  std::string custom;
};

struct OperatorSpec {
  uint32_t opcode_index;
  std::vector<int32_t> inputs, outputs;
};

// A TFLite model as plain data; build() serialises it exactly as given, broken or not.
struct ModelSpec {
  std::vector<TensorSpec> tensors;
  std::vector<std::vector<uint8_t>> buffers{{}};  // [0]: the empty sentinel
  std::vector<OpCodeSpec> opcodes;
  std::vector<OperatorSpec> operators;
  std::vector<int32_t> inputs, outputs;
  int subgraph_count = 1;

  int32_t tensor(std::vector<int32_t> shape, TensorType type = TensorType::FLOAT32) {
    tensors.push_back({std::move(shape), type});
    return static_cast<int32_t>(tensors.size() - 1);
  }
  int32_t constant(std::vector<int32_t> shape, size_t bytes, TensorType type = TensorType::FLOAT32) {
    buffers.emplace_back(bytes, uint8_t{1});
    tensors.push_back({std::move(shape), type, static_cast<uint32_t>(buffers.size() - 1)});
    return static_cast<int32_t>(tensors.size() - 1);
  }
  // A float32 constant holding `values`.
  int32_t floats(std::vector<int32_t> shape, const std::vector<float>& values) {
    const int32_t t = constant(std::move(shape), values.size() * sizeof(float));
    std::memcpy(buffers.back().data(), values.data(), buffers.back().size());
    return t;
  }
  // A builtin op code as current converters write it: the byte saturates at 127
  // (PLACEHOLDER_FOR_GREATER_OP_CODES), the int holds the code.
  uint32_t builtin(BuiltinOperator code) {
    opcodes.push_back({static_cast<int8_t>(std::min(static_cast<int>(code), 127)), code, ""});
    return static_cast<uint32_t>(opcodes.size() - 1);
  }
  uint32_t custom(const std::string& name) {
    opcodes.push_back({static_cast<int8_t>(BuiltinOperator::CUSTOM), BuiltinOperator::CUSTOM, name});
    return static_cast<uint32_t>(opcodes.size() - 1);
  }
  int32_t op(uint32_t opcode, std::vector<int32_t> op_inputs, std::vector<int32_t> output_shape) {
    const int32_t out = tensor(std::move(output_shape));
    operators.push_back({opcode, std::move(op_inputs), {out}});
    return out;
  }

  std::vector<uint8_t> build() const {
    FlatBufferBuilder b;
    std::vector<flatbuffers::Offset<tfl::Buffer>> fb_buffers;
    for (const auto& data : buffers) fb_buffers.push_back(tfl::CreateBufferDirect(b, data.empty() ? nullptr : &data));
    std::vector<flatbuffers::Offset<tfl::Tensor>> fb_tensors;
    for (size_t i = 0; i < tensors.size(); ++i) {
      const TensorSpec& t = tensors[i];
      const std::vector<float> scale{0.5f};
      const std::vector<int64_t> zero_point{0};
      const auto quantization =
          t.quantized ? tfl::CreateQuantizationParametersDirect(b, nullptr, nullptr, &scale, &zero_point) : 0;
      const std::string name = "t" + std::to_string(i);
      fb_tensors.push_back(tfl::CreateTensorDirect(b, &t.shape, t.type, t.buffer, name.c_str(), quantization));
    }
    std::vector<flatbuffers::Offset<tfl::Operator>> fb_operators;
    for (const OperatorSpec& o : operators) {
      // Convolutions get their options (SAME, stride 1); other ops need none here.
      const bool conv = o.opcode_index < opcodes.size() && opcodes[o.opcode_index].code == BuiltinOperator::CONV_2D;
      const auto options = conv ? tfl::CreateConv2DOptions(b, tfl::Padding::SAME, 1, 1).Union() : 0;
      fb_operators.push_back(tfl::CreateOperatorDirect(
          b, o.opcode_index, &o.inputs, &o.outputs,
          conv ? tfl::BuiltinOptions::Conv2DOptions : tfl::BuiltinOptions::NONE, options));
    }
    std::vector<flatbuffers::Offset<tfl::SubGraph>> subgraphs;
    for (int i = 0; i < subgraph_count; ++i)
      subgraphs.push_back(tfl::CreateSubGraphDirect(b, &fb_tensors, &inputs, &outputs, &fb_operators, "main"));
    std::vector<flatbuffers::Offset<tfl::OperatorCode>> fb_codes;
    for (const OpCodeSpec& c : opcodes)
      fb_codes.push_back(
          tfl::CreateOperatorCodeDirect(b, c.deprecated_code, c.custom.empty() ? nullptr : c.custom.c_str(), 1, c.code));
    b.Finish(tfl::CreateModelDirect(b, 3, &fb_codes, &subgraphs, "test", &fb_buffers), tfl::ModelIdentifier());
    return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
  }
};

// input [1,8,8,3] -> CONV_2D (float16 weights through DEQUANTIZE) -> RELU -> output.
ModelSpec tiny_model() {
  ModelSpec m;
  const int32_t x = m.tensor({1, 8, 8, 3});
  const int32_t w16 = m.constant({4, 3, 3, 3}, 4 * 3 * 3 * 3 * 2, TensorType::FLOAT16);
  const int32_t bias = m.constant({4}, 4 * 4);
  const int32_t w = m.op(m.builtin(BuiltinOperator::DEQUANTIZE), {w16}, {4, 3, 3, 3});
  const int32_t conv = m.op(m.builtin(BuiltinOperator::CONV_2D), {x, w, bias}, {1, 8, 8, 4});
  const int32_t relu = m.op(m.builtin(BuiltinOperator::RELU), {conv}, {1, 8, 8, 4});
  m.inputs = {x};
  m.outputs = {relu};
  return m;
}

// The UserError that reading `bytes` throws; fails the test if none is thrown.
UserError read_error(const std::vector<uint8_t>& bytes) {
  try {
    read_tflite_model(bytes.data(), bytes.size(), "m.tflite");
  } catch (const UserError& e) {
    return e;
  }
  ADD_FAILURE() << "no UserError";
  return UserError(ExitCode::kOk, "");
}

void expect_error(const ModelSpec& m, ExitCode code, const std::string& fragment) {
  const UserError e = read_error(m.build());
  EXPECT_EQ(e.code(), code) << e.what();
  EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
}

// The NHWC interface is kept; inside, the conv runs in NCHW with its float16
// weights folded into a float32 constant [O, I, KH, KW].
TEST(TfliteReader, ValidTinyModelIsLoweredKeepingItsInterface) {
  const std::vector<uint8_t> bytes = tiny_model().build();
  const Graph g = read_tflite_model(bytes.data(), bytes.size(), "m.tflite");
  ASSERT_EQ(g.inputs.size(), 1u);
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(g.tensor(g.inputs[0]).shape, (Shape{1, 8, 8, 3}));
  EXPECT_EQ(g.tensor(g.outputs[0]).shape, (Shape{1, 8, 8, 4}));
  EXPECT_EQ(g.tensor(g.outputs[0]).name, "t5");
  std::vector<OpKind> ops;
  for (const Node& n : g.nodes) ops.push_back(n.op);
  EXPECT_EQ(ops, (std::vector<OpKind>{OpKind::Transpose, OpKind::Conv2d, OpKind::Relu, OpKind::Transpose}))
      << print_graph(g);
  const Node& conv = g.nodes[1];
  EXPECT_EQ(g.tensor(conv.inputs[1]).shape, (Shape{4, 3, 3, 3}));
  EXPECT_TRUE(g.tensor(conv.inputs[1]).is_constant());
  EXPECT_EQ(conv.attr<Conv2dAttrs>().pad, (std::array<int, 4>{1, 1, 1, 1}));
}

TEST(TfliteReader, TruncatedBytesAreInvalidAtEveryLength) {
  const std::vector<uint8_t> bytes = tiny_model().build();
  for (size_t size = 0; size < bytes.size(); size += 7) {
    const UserError e = read_error({bytes.begin(), bytes.begin() + static_cast<ptrdiff_t>(size)});
    EXPECT_EQ(e.code(), ExitCode::kInvalidModel) << "size " << size << ": " << e.what();
  }
}

TEST(TfliteReader, UnalignedBufferReadsTheSame) {
  const std::vector<uint8_t> bytes = tiny_model().build();
  std::vector<uint8_t> shifted(bytes.size() + 1);
  std::memcpy(shifted.data() + 1, bytes.data(), bytes.size());
  EXPECT_EQ(print_graph(read_tflite_model(shifted.data() + 1, bytes.size(), "m.tflite")),
            print_graph(read_tflite_model(bytes.data(), bytes.size(), "m.tflite")));
}

TEST(TfliteReader, BadTensorIndex) {
  ModelSpec m = tiny_model();
  m.operators[1].inputs[0] = 42;
  expect_error(m, ExitCode::kInvalidModel, "operator #1 (CONV_2D) input 0 refers to tensor 42 but the subgraph has 6 tensors");
  m = tiny_model();
  m.outputs = {-1};
  expect_error(m, ExitCode::kInvalidModel, "subgraph outputs refers to tensor -1");
}

TEST(TfliteReader, OptionalInputMinusOneIsAccepted) {
  ModelSpec m = tiny_model();
  m.operators[1].inputs[2] = -1;  // a conv without bias
  const std::vector<uint8_t> bytes = m.build();
  const Graph g = read_tflite_model(bytes.data(), bytes.size(), "m.tflite");
  EXPECT_EQ(g.nodes[1].inputs.size(), 2u) << print_graph(g);
}

TEST(TfliteReader, BadOpcodeIndex) {
  ModelSpec m = tiny_model();
  m.operators[2].opcode_index = 3;
  expect_error(m, ExitCode::kInvalidModel, "operator #2 has op code index 3 but the model has 3 op codes");
}

TEST(TfliteReader, BadBufferIndexAndSize) {
  ModelSpec m = tiny_model();
  m.tensors[2].buffer = 9;
  expect_error(m, ExitCode::kInvalidModel, "tensor #2 't2' refers to buffer 9 but the model has 3 buffers");
  m = tiny_model();
  m.buffers[2].pop_back();  // bias [4] float32 needs 16 bytes
  expect_error(m, ExitCode::kInvalidModel, "tensor #2 't2' holds 15 bytes of data but its shape and type (FLOAT32) need 16");
  m = tiny_model();
  m.buffers[1].resize(4 * 3 * 3 * 3 * 4);  // float16 weights sized as float32
  expect_error(m, ExitCode::kInvalidModel, "(FLOAT16) need 216");
}

TEST(TfliteReader, InsaneShapes) {
  ModelSpec m = tiny_model();
  m.tensors[0].shape = {1, -8, 8, 3};
  expect_error(m, ExitCode::kInvalidModel, "tensor #0 't0' has a negative dimension -8");
  m = tiny_model();
  m.tensors[0].shape = {65536, 65536, 1, 1};
  expect_error(m, ExitCode::kInvalidModel, "tensor #0 't0' has more than 2^31 elements");
}

TEST(TfliteReader, DefinitionOrder) {
  ModelSpec m = tiny_model();
  std::swap(m.operators[1], m.operators[2]);  // RELU before the CONV_2D it reads
  expect_error(m, ExitCode::kInvalidModel, "operator #1 (RELU) reads tensor #4 't4' before any operator writes it");
  m = tiny_model();
  m.operators[2].outputs = {m.operators[1].outputs[0]};
  expect_error(m, ExitCode::kInvalidModel, "operator #2 (RELU) writes tensor #4 't4', which is already defined");
}

TEST(TfliteReader, MoreThanOneSubgraphIsUnsupported) {
  ModelSpec m = tiny_model();
  m.subgraph_count = 2;
  expect_error(m, ExitCode::kUnsupported, "m.tflite: the model has 2 subgraphs");
}

TEST(TfliteReader, UnsupportedOperatorsAreListedWithCounts) {
  ModelSpec m = tiny_model();
  const uint32_t exp = m.builtin(BuiltinOperator::EXP);
  const uint32_t foo = m.custom("foo");
  const uint32_t gelu = m.builtin(BuiltinOperator::GELU);  // 150: only in builtin_code
  int32_t t = m.outputs[0];
  for (uint32_t code : {exp, foo, exp, gelu}) t = m.op(code, {t}, {1, 8, 8, 4});
  m.outputs = {t};
  expect_error(m, ExitCode::kUnsupported,
               "m.tflite: unsupported TensorFlow Lite operators: EXP x2, CUSTOM(foo) x1, GELU x1 (supported: ADD, "
               "AVERAGE_POOL_2D, CONCATENATION, CONV_2D, DEPTHWISE_CONV_2D, DEPTH_TO_SPACE, DEQUANTIZE, ");
  expect_error(m, ExitCode::kUnsupported, ", QUANTIZE, HARD_SWISH, DENSIFY, CUSTOM(Convolution2DTransposeBias))");
}

TEST(TfliteReader, EffectiveCodeIsTheLargerOfDeprecatedAndNewCode) {
  // An old converter writes only the byte (builtin_code stays 0 = ADD).
  ModelSpec m = tiny_model();
  m.opcodes[2] = {static_cast<int8_t>(BuiltinOperator::TANH), BuiltinOperator::ADD, ""};
  const std::vector<uint8_t> bytes = m.build();
  const Graph g = read_tflite_model(bytes.data(), bytes.size(), "m.tflite");
  EXPECT_EQ(g.nodes[2].op, OpKind::Tanh) << print_graph(g);
  // A new one writes both; codes >= 127 only in the int.
  m.opcodes[2] = {127, BuiltinOperator::CUMSUM, ""};
  expect_error(m, ExitCode::kUnsupported, "unsupported TensorFlow Lite operators: CUMSUM x1 (");
  // A code this schema does not name.
  m.opcodes[2] = {127, static_cast<BuiltinOperator>(300), ""};
  expect_error(m, ExitCode::kUnsupported, "unsupported TensorFlow Lite operators: BUILTIN(300) x1 (");
}

// The verifier aligns a vector's length, not its int64 elements: a file whose zero points lie
// at an address of 4 mod 8 (found by the fuzzer, a misaligned load under UBSan) reads right.
TEST(TfliteReader, ZeroPointsAreReadWhereverTheFilePutsThem) {
  ModelSpec m = tiny_model();
  m.tensors[0].quantized = true;
  const std::vector<uint8_t> bytes = m.build();
  std::vector<uint64_t> storage(bytes.size() / 8 + 2);
  for (const size_t offset : {size_t{0}, size_t{4}}) {  // the model's start (and its vectors) 8- or 4-aligned
    auto* start = reinterpret_cast<uint8_t*>(storage.data()) + offset;
    std::memcpy(start, bytes.data(), bytes.size());
    const tfl::Tensor& t = *tfl::GetModel(start)->subgraphs()->Get(0)->tensors()->Get(0);
    EXPECT_EQ(tflite::zero_points(*t.quantization()), std::vector<int64_t>{0}) << "offset " << offset;
  }
}

// An int8 graph input is a quantized tensor (typed entry points): it needs a quantization,
// and other integer types are refused.
TEST(TfliteReader, IntegerGraphInputsNeedQuantizationAndInt8OrUint8) {
  ModelSpec m = tiny_model();
  m.tensors[0].type = TensorType::INT8;
  m.tensors[0].quantized = true;  // scale 0.5, zero point 0
  const std::vector<uint8_t> bytes = m.build();
  const Graph g = read_tflite_model(bytes.data(), bytes.size(), "m.tflite");
  const Tensor& input = g.tensor(g.inputs[0]);
  EXPECT_EQ(input.dtype, DType::I8);
  ASSERT_NE(input.quant, nullptr);
  EXPECT_EQ(*input.quant, (Quantization{{0.5f}, {0}, -1}));
  m.tensors[0].quantized = false;
  expect_error(m, ExitCode::kInvalidModel, "tensor #0 't0' has type INT8 but no quantization scale");
  m.tensors[0].type = TensorType::INT16;
  expect_error(m, ExitCode::kUnsupported, "graph input tensor #0 't0' has type INT16; aotc compiles float32, int8 and uint8");
}

// Weights-only int8 quantization (an int8 constant read only by DEQUANTIZE) is a
// float model: the weights are dequantized at compile time, scale * (q - zero point).
TEST(TfliteReader, Int8WeightsBehindDequantizeAreFolded) {
  ModelSpec m = tiny_model();
  const int32_t w8 = m.constant({4, 3, 3, 3}, 4 * 3 * 3 * 3, TensorType::INT8);  // every byte 1
  m.tensors[static_cast<size_t>(w8)].quantized = true;                          // scale 0.5, zero point 0
  m.operators[0].inputs = {w8};
  const std::vector<uint8_t> bytes = m.build();
  const Graph g = read_tflite_model(bytes.data(), bytes.size(), "m.tflite");
  const Tensor& weight = g.tensor(g.nodes[1].inputs[1]);
  ASSERT_TRUE(weight.is_constant());
  EXPECT_EQ(*weight.data, std::vector<float>(4 * 3 * 3 * 3, 0.5f));
}

// The pass pipeline works on TFLite graphs as on any other: Conv -> Mul -> Add by
// per-channel constants (a converted batch norm) folds into the conv, ADD of two
// constants is folded, the relu fuses, and the result is unchanged.
TEST(TfliteReader, PipelineFoldsAConvertedBatchNorm) {
  ModelSpec m;
  const int32_t x = m.tensor({1, 6, 6, 3});
  std::vector<float> w(4 * 3 * 3 * 3);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 7) * 0.1f - 0.3f;
  const int32_t conv = m.op(m.builtin(BuiltinOperator::CONV_2D),
                            {x, m.floats({4, 3, 3, 3}, w), m.floats({4}, {0.1f, -0.2f, 0.3f, 0})}, {1, 6, 6, 4});
  const int32_t scaled = m.op(m.builtin(BuiltinOperator::MUL), {conv, m.floats({4}, {2, 0.5f, -1, 3})}, {1, 6, 6, 4});
  const int32_t shift = m.op(m.builtin(BuiltinOperator::ADD),
                             {m.floats({4}, {1, 2, 3, 4}), m.floats({4}, {-1, -1, -1, -1})}, {4});
  const int32_t shifted = m.op(m.builtin(BuiltinOperator::ADD), {scaled, shift}, {1, 6, 6, 4});
  m.outputs = {m.op(m.builtin(BuiltinOperator::RELU), {shifted}, {1, 6, 6, 4})};
  m.inputs = {x};
  const std::vector<uint8_t> bytes = m.build();
  const Graph g = read_tflite_model(bytes.data(), bytes.size(), "m.tflite");
  const Graph after = run_pipeline(g, {}, nullptr);
  EXPECT_EQ(testing::count_ops(after, OpKind::Conv2d), 1) << print_graph(after);
  EXPECT_EQ(testing::count_ops(after, OpKind::Mul), 0) << print_graph(after);
  EXPECT_EQ(testing::count_ops(after, OpKind::Add), 0) << print_graph(after);
  EXPECT_EQ(testing::count_ops(after, OpKind::Relu), 0) << print_graph(after);
  testing::expect_same_results(g, after);
}

TEST(TfliteReader, WrongIdentifier) {
  std::vector<uint8_t> bytes = tiny_model().build();
  bytes[4] = 'X';
  const UserError e = read_error(bytes);
  EXPECT_EQ(e.code(), ExitCode::kInvalidModel);
  EXPECT_NE(std::string(e.what()).find("not a TensorFlow Lite model"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace aotc
