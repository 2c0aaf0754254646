// Tests of the AOTC FlatBuffers reader and of load_model's dispatch. Models are
// built here with the generated C++ API (the only file besides the reader that
// includes it); the broken-model corpus and the fuzzer live in tests/frontend/.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "frontends/aotc_fb/aotc_fb_reader.h"
#include "frontends/frontend.h"
#include "schemas/aotc_model_generated.h"
#include "support/error.h"

namespace aotc {
namespace {

using flatbuffers::FlatBufferBuilder;
using OptionsFn = std::function<std::pair<fb::OpOptions, flatbuffers::Offset<void>>(FlatBufferBuilder&)>;

// Wraps the generator of one options table for a NodeSpec.
template <typename T>
OptionsFn options(std::function<flatbuffers::Offset<T>(FlatBufferBuilder&)> make) {
  return [make](FlatBufferBuilder& b) { return std::make_pair(fb::OpOptionsTraits<T>::enum_value, make(b).Union()); };
}

struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;
  uint32_t buffer = 0;
  fb::DType dtype = fb::DType::Float32;
};

struct NodeSpec {
  std::string name;
  fb::OpCode op;
  std::vector<int32_t> inputs, outputs;
  OptionsFn options;
};

// A model as plain data; build() serialises it exactly as given, broken or not.
struct ModelSpec {
  uint32_t version_major = 1;
  std::string name = "m";
  std::vector<TensorSpec> tensors;
  std::vector<std::vector<float>> buffers{{}};  // [0]: the empty "not a constant" sentinel
  std::vector<NodeSpec> nodes;
  std::vector<int32_t> inputs, outputs;

  int32_t tensor(const std::string& tensor_name, std::vector<int64_t> shape) {
    tensors.push_back({tensor_name, std::move(shape)});
    return static_cast<int32_t>(tensors.size() - 1);
  }
  int32_t constant(const std::string& tensor_name, std::vector<int64_t> shape, std::vector<float> data) {
    buffers.push_back(std::move(data));
    tensors.push_back({tensor_name, std::move(shape), static_cast<uint32_t>(buffers.size() - 1)});
    return static_cast<int32_t>(tensors.size() - 1);
  }
  int32_t node(const std::string& node_name, fb::OpCode op, std::vector<int32_t> node_inputs,
               std::vector<int64_t> output_shape, OptionsFn node_options = {}) {
    const int32_t out = tensor(node_name, std::move(output_shape));
    nodes.push_back({node_name, op, std::move(node_inputs), {out}, std::move(node_options)});
    return out;
  }

  std::vector<uint8_t> build() const {
    FlatBufferBuilder b;
    std::vector<flatbuffers::Offset<fb::Buffer>> fb_buffers;
    for (const auto& data : buffers) {
      std::vector<uint8_t> bytes(data.size() * sizeof(float));
      if (!data.empty()) std::memcpy(bytes.data(), data.data(), bytes.size());
      fb_buffers.push_back(fb::CreateBufferDirect(b, data.empty() ? nullptr : &bytes));
    }
    std::vector<flatbuffers::Offset<fb::Tensor>> fb_tensors;
    for (const TensorSpec& t : tensors)
      fb_tensors.push_back(fb::CreateTensorDirect(b, t.name.c_str(), t.dtype, &t.shape, t.buffer));
    std::vector<flatbuffers::Offset<fb::Node>> fb_nodes;
    for (const NodeSpec& n : nodes) {
      auto [type, table] = n.options ? n.options(b) : std::make_pair(fb::OpOptions::NONE, flatbuffers::Offset<void>());
      fb_nodes.push_back(fb::CreateNodeDirect(b, n.name.c_str(), n.op, &n.inputs, &n.outputs, type, table));
    }
    b.Finish(fb::CreateModelDirect(b, version_major, 0, 0, name.c_str(), &fb_tensors, &fb_buffers, &fb_nodes,
                                   &inputs, &outputs),
             fb::ModelIdentifier());
    return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
  }
};

OptionsFn conv_options(std::vector<int32_t> stride, std::vector<int32_t> padding, std::vector<int32_t> dilation,
                       int groups) {
  return options<fb::Conv2dOptions>([=](FlatBufferBuilder& b) {
    return fb::CreateConv2dOptionsDirect(b, &stride, &padding, &dilation, groups);
  });
}

std::vector<float> iota(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i) * scale - 1.0f;
  return v;
}

// x[1,2,5,5] -> conv2d (3 out, 3x3, stride 2, asymmetric padding) -> relu.
ModelSpec conv_relu() {
  ModelSpec m;
  const int32_t x = m.tensor("x", {1, 2, 5, 5});
  m.inputs = {x};
  const int32_t w = m.constant("w", {3, 2, 3, 3}, iota(54, 0.03125f));
  const int32_t bias = m.constant("b", {3}, {0.5f, -0.25f, 2.0f});
  const int32_t c = m.node("conv", fb::OpCode::Conv2d, {x, w, bias}, {1, 3, 3, 2},
                           conv_options({2, 2}, {2, 0, 1, 1}, {1, 1}, 1));
  m.outputs = {m.node("relu", fb::OpCode::Relu, {c}, {1, 3, 3, 2})};
  return m;
}

Graph read(const std::vector<uint8_t>& bytes) { return read_aotc_model(bytes.data(), bytes.size(), "test.fb"); }

// Reading must fail with `code` and a message naming the file and containing `fragment`.
void expect_rejected(const std::vector<uint8_t>& bytes, ExitCode code, const std::string& fragment) {
  try {
    read(bytes);
    ADD_FAILURE() << "the model loaded; expected: " << fragment;
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("test.fb: ", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

const Node& node_named(const Graph& g, const std::string& name) {
  for (const Node& n : g.nodes)
    if (n.name == name) return n;
  throw std::runtime_error("no node " + name);
}

TEST(AotcFbReader, ReadsTensorsConstantsAndConvAttributes) {
  const ModelSpec spec = conv_relu();
  const Graph g = read(spec.build());
  EXPECT_EQ(g.name, "m");
  ASSERT_EQ(g.tensors.size(), 5u);
  EXPECT_EQ(g.inputs, std::vector<TensorId>{0});
  EXPECT_EQ(g.outputs, std::vector<TensorId>{4});
  EXPECT_EQ(g.tensor(0).shape, (Shape{1, 2, 5, 5}));
  EXPECT_FALSE(g.tensor(0).is_constant());
  ASSERT_TRUE(g.tensor(1).is_constant());
  EXPECT_EQ(*g.tensor(1).data, spec.buffers[1]);  // the exact floats written
  EXPECT_EQ(*g.tensor(2).data, (std::vector<float>{0.5f, -0.25f, 2.0f}));
  ASSERT_EQ(g.nodes.size(), 2u);
  const Node& conv = g.nodes[0];
  EXPECT_EQ(conv.name, "conv");
  EXPECT_EQ(conv.op, OpKind::Conv2d);
  EXPECT_EQ(conv.inputs, (std::vector<TensorId>{0, 1, 2}));
  EXPECT_EQ(conv.outputs, std::vector<TensorId>{3});
  EXPECT_EQ(conv.attr<Conv2dAttrs>(), (Conv2dAttrs{.stride = {2, 2}, .pad = {2, 0, 1, 1}, .dilation = {1, 1}, .groups = 1}));
  EXPECT_EQ(g.nodes[1].op, OpKind::Relu);
  EXPECT_TRUE(std::holds_alternative<NoAttrs>(g.nodes[1].attrs));
}

TEST(AotcFbReader, MapsEveryOptionsTableAndAppliesSchemaDefaults) {
  ModelSpec m;
  const int32_t x = m.tensor("x", {1, 4, 6, 6});
  m.inputs = {x};
  const int32_t mean = m.constant("mean", {4}, {0, 0, 0, 0});
  const int32_t var = m.constant("var", {4}, {1, 1, 1, 1});
  const int32_t bn = m.node("bn", fb::OpCode::BatchNorm, {x, mean, var}, {1, 4, 6, 6});  // no options: eps default
  const int32_t clamp = m.node("clamp", fb::OpCode::Clamp, {bn}, {1, 4, 6, 6},
                               options<fb::ClampOptions>([](auto& b) { return fb::CreateClampOptions(b, -1.5f, 6.0f); }));
  const int32_t pool = m.node("pool", fb::OpCode::MaxPool2d, {clamp}, {1, 4, 3, 3}, options<fb::Pool2dOptions>([](auto& b) {
                                const std::vector<int32_t> k{3, 3}, s{2, 2}, p{1, 1, 0, 0}, d{1, 1};
                                return fb::CreatePool2dOptionsDirect(b, &k, &s, &p, &d, true, false);
                              }));
  const int32_t avg = m.node("avg", fb::OpCode::AvgPool2d, {pool}, {1, 4, 2, 2}, options<fb::Pool2dOptions>([](auto& b) {
                               const std::vector<int32_t> k{2, 2}, s{1, 1}, p{0, 0, 0, 0}, d{1, 1};
                               return fb::CreatePool2dOptionsDirect(b, &k, &s, &p, &d);  // defaults: false, true
                             }));
  const int32_t ada = m.node("ada", fb::OpCode::AdaptiveAvgPool2d, {avg}, {1, 4, 1, 2},
                             options<fb::AdaptiveAvgPool2dOptions>([](auto& b) {
                               const std::vector<int32_t> size{1, 2};
                               return fb::CreateAdaptiveAvgPool2dOptionsDirect(b, &size);
                             }));
  const int32_t cat = m.node("cat", fb::OpCode::Concat, {ada, ada}, {1, 4, 2, 2},
                             options<fb::ConcatOptions>([](auto& b) { return fb::CreateConcatOptions(b, -2); }));
  const int32_t pad = m.node("pad", fb::OpCode::Pad, {cat}, {1, 4, 3, 5}, options<fb::PadOptions>([](auto& b) {
                               const std::vector<int64_t> pads{0, 0, 1, 2, 0, 0, 0, 1};
                               return fb::CreatePadOptionsDirect(b, &pads, -3.0f);
                             }));
  const int32_t drop = m.node("drop", fb::OpCode::Dropout, {pad}, {1, 4, 3, 5},
                              options<fb::DropoutOptions>([](auto& b) { return fb::CreateDropoutOptions(b, 0.5f); }));
  const int32_t flat = m.node("flat", fb::OpCode::Flatten, {drop}, {1, 60});  // no options: dims 1..-1
  const int32_t reshape = m.node("reshape", fb::OpCode::Reshape, {flat}, {1, 6, 10}, options<fb::ReshapeOptions>([](auto& b) {
                                   const std::vector<int64_t> shape{1, 6, 10};
                                   return fb::CreateReshapeOptionsDirect(b, &shape);
                                 }));
  m.outputs = {m.node("softmax", fb::OpCode::Softmax, {reshape}, {1, 6, 10},
                      options<fb::SoftmaxOptions>([](auto& b) { return fb::CreateSoftmaxOptions(b, -1); }))};

  const Graph g = read(m.build());
  EXPECT_EQ(node_named(g, "bn").attr<BatchNormAttrs>().eps, 1e-5f);
  EXPECT_EQ(node_named(g, "clamp").attr<ClampAttrs>(), (ClampAttrs{.min = -1.5f, .max = 6.0f}));
  EXPECT_EQ(node_named(g, "pool").attr<Pool2dAttrs>(),
            (Pool2dAttrs{.kernel = {3, 3}, .stride = {2, 2}, .pad = {1, 1, 0, 0}, .dilation = {1, 1},
                         .ceil_mode = true, .count_include_pad = false}));
  EXPECT_FALSE(node_named(g, "avg").attr<Pool2dAttrs>().ceil_mode);
  EXPECT_TRUE(node_named(g, "avg").attr<Pool2dAttrs>().count_include_pad);
  EXPECT_EQ(node_named(g, "ada").attr<AdaptiveAvgPool2dAttrs>().output_size, (std::array<int, 2>{1, 2}));
  EXPECT_EQ(node_named(g, "cat").attr<AxisAttrs>().axis, 2);  // -2 of rank 4
  EXPECT_EQ(node_named(g, "pad").attr<PadAttrs>(), (PadAttrs{.pads = {0, 0, 1, 2, 0, 0, 0, 1}, .value = -3.0f}));
  EXPECT_TRUE(std::holds_alternative<NoAttrs>(node_named(g, "drop").attrs));
  EXPECT_EQ(node_named(g, "flat").attr<FlattenAttrs>(), (FlattenAttrs{.start_dim = 1, .end_dim = -1}));
  EXPECT_EQ(node_named(g, "reshape").attr<ReshapeAttrs>().shape, (Shape{1, 6, 10}));
  EXPECT_EQ(node_named(g, "softmax").attr<AxisAttrs>().axis, 2);  // -1 of rank 3
}

TEST(AotcFbReader, SortsNodesStoredOutOfOrder) {
  ModelSpec m = conv_relu();
  std::swap(m.nodes[0], m.nodes[1]);
  const Graph g = read(m.build());
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].name, "conv");
  EXPECT_EQ(g.nodes[1].name, "relu");
}

TEST(AotcFbReader, TensorsSharingABufferShareItsData) {
  ModelSpec m = conv_relu();
  const int32_t shift = m.tensor("shift", {3, 1, 1});
  m.tensors[static_cast<size_t>(shift)].buffer = m.tensors[2].buffer;  // the bias's buffer
  const int32_t y = m.outputs[0];
  m.outputs = {m.node("add", fb::OpCode::Add, {y, shift}, {1, 3, 3, 2})};
  const Graph g = read(m.build());
  EXPECT_EQ(g.tensor(2).data, g.tensor(shift).data);
}

TEST(AotcFbReader, NamesUnnamedNodesAfterTheirPositionAndGraphsAfterTheFile) {
  ModelSpec m = conv_relu();
  m.nodes[1].name.clear();
  m.name.clear();
  std::vector<uint8_t> bytes = m.build();
  const Graph g = read_aotc_model(bytes.data(), bytes.size(), "/some/dir/resnet.v2.fb");
  EXPECT_EQ(g.nodes[1].name, "node#1");
  EXPECT_EQ(g.name, "resnet.v2");
}

TEST(AotcFbReader, ReadsAnUnalignedBuffer) {
  const std::vector<uint8_t> bytes = conv_relu().build();
  std::vector<uint8_t> shifted(bytes.size() + 1);
  std::memcpy(shifted.data() + 1, bytes.data(), bytes.size());
  const Graph g = read_aotc_model(shifted.data() + 1, bytes.size(), "test.fb");
  EXPECT_EQ(*g.tensor(1).data, conv_relu().buffers[1]);
}

TEST(AotcFbReader, RejectsStructuralFaults) {
  {
    ModelSpec m = conv_relu();
    m.tensors[3].name.clear();
    expect_rejected(m.build(), ExitCode::kInvalidModel, "tensor #3 has no name");
  }
  {
    ModelSpec m = conv_relu();
    m.inputs = {0, 0};
    expect_rejected(m.build(), ExitCode::kInvalidModel, "tensor 'x' (#0) is listed twice as a graph input");
  }
  {
    ModelSpec m = conv_relu();
    m.outputs = {4, 4};
    expect_rejected(m.build(), ExitCode::kInvalidModel, "tensor 'relu' (#4) is listed twice as a graph output");
  }
  {
    ModelSpec m = conv_relu();
    m.nodes[1].outputs = {4, 4};
    expect_rejected(m.build(), ExitCode::kInvalidModel, "node 'relu' (#1, relu) lists output tensor 'relu' (#4) twice");
  }
  {
    ModelSpec m = conv_relu();
    m.nodes[1].inputs = {4};  // relu reads its own output
    expect_rejected(m.build(), ExitCode::kInvalidModel, "the graph has a cycle through node 'relu' (#1, relu)");
  }
  {
    ModelSpec m = conv_relu();
    m.nodes[1].outputs = {};
    m.outputs = {3};
    expect_rejected(m.build(), ExitCode::kInvalidModel, "node 'relu' (relu): expected 1 output, got 0");
  }
  {
    ModelSpec m = conv_relu();
    m.version_major = 0;
    expect_rejected(m.build(), ExitCode::kUnsupported, "model format version 0.0 is not supported");
  }
}

TEST(AotcFbReader, RejectsBadOptions) {
  {
    ModelSpec m = conv_relu();
    m.nodes[0].options = conv_options({1, 1}, {1, 1, 1, 1}, {1, 1, 1}, 1);
    expect_rejected(m.build(), ExitCode::kInvalidModel,
                    "node 'conv' (#0, conv2d): option 'dilation' has 3 values, expected 2");
  }
  {
    ModelSpec m = conv_relu();
    m.nodes[0].options = conv_options({0, 1}, {2, 0, 1, 1}, {1, 1}, 1);  // the shape rules reject the value
    expect_rejected(m.build(), ExitCode::kInvalidModel, "node 'conv' (conv2d): stride must be positive");
  }
  {
    ModelSpec m = conv_relu();
    m.nodes[1].op = fb::OpCode::Clamp;
    expect_rejected(m.build(), ExitCode::kInvalidModel, "node 'relu' (#1, clamp): needs ClampOptions, but has none");
  }
  {
    ModelSpec m = conv_relu();
    m.nodes[1].op = fb::OpCode::Softmax;
    m.nodes[1].options = options<fb::SoftmaxOptions>([](auto& b) { return fb::CreateSoftmaxOptions(b, 4); });
    expect_rejected(m.build(), ExitCode::kInvalidModel, "axis 4 is out of range for input tensor 'conv' (#3) of rank 4");
  }
  {
    ModelSpec m = conv_relu();
    m.nodes[1].options = [](FlatBufferBuilder& b) {
      return std::make_pair(static_cast<fb::OpOptions>(200), fb::CreateDropoutOptions(b).Union());
    };
    expect_rejected(m.build(), ExitCode::kInvalidModel, "takes no options, but has options of unknown type 200");
  }
}

TEST(AotcFbReader, RejectsOversizedInputBeforeReadingIt) {
  const std::vector<uint8_t> bytes = conv_relu().build();
  // Only the size is looked at: nothing past the real bytes is read.
  EXPECT_THROW(read_aotc_model(bytes.data(), kMaxFlatBufferBytes + 1, "test.fb"), UserError);
}

// Every proper prefix of a valid model is rejected as a UserError, never read out
// of bounds (run under the sanitizers in the asan build).
TEST(AotcFbReader, RejectsEveryTruncation) {
  const std::vector<uint8_t> bytes = conv_relu().build();
  for (size_t size = 0; size < bytes.size(); ++size) {
    const std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(size));
    EXPECT_THROW(read(prefix), UserError) << "prefix of " << size << " bytes";
  }
}

// Every single-bit flip of a valid model either still loads or is rejected as a
// UserError; flips in constant data load, flips in structure must not.
TEST(AotcFbReader, SurvivesEverySingleBitFlip) {
  const std::vector<uint8_t> bytes = conv_relu().build();
  size_t loaded = 0, rejected = 0;
  for (size_t bit = 0; bit < bytes.size() * 8; ++bit) {
    std::vector<uint8_t> flipped = bytes;
    flipped[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    try {
      read(flipped);
      ++loaded;
    } catch (const UserError&) {
      ++rejected;
    }
  }
  EXPECT_GT(loaded, 54u * 32 / 2);  // most flips in the 54 weights change only values
  EXPECT_GT(rejected, bytes.size());
}

// ---- load_model: reading the file and choosing the frontend ---------------------

class LoadModel : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("aotc_load_model_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& name, const std::vector<uint8_t>& bytes) const {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                static_cast<std::streamsize>(bytes.size()));
    return path;
  }

  static void expect_fails(const std::string& path, ExitCode code, const std::string& fragment) {
    try {
      load_model(path);
      ADD_FAILURE() << path << " loaded";
    } catch (const UserError& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  }

  std::filesystem::path dir_;
};

TEST_F(LoadModel, ReadsAnAotcModelWhateverItsExtension) {
  const Graph g = load_model(write("model.bin", conv_relu().build()));
  EXPECT_EQ(g.nodes.size(), 2u);
}

TEST_F(LoadModel, ParsesAirText) {
  const std::string text =
      "graph g {\n  input %x: f32[1,2]\n  %y = relu(%x): f32[1,2]\n  output %y\n}\n";
  const Graph g = load_model(write("g.air", std::vector<uint8_t>(text.begin(), text.end())));
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op, OpKind::Relu);
}

TEST_F(LoadModel, ReportsIoErrorsWithThePath) {
  expect_fails((dir_ / "missing.fb").string(), ExitCode::kIo, "cannot open: No such file or directory");
  expect_fails(dir_.string(), ExitCode::kIo, "cannot read: Is a directory");
}

TEST_F(LoadModel, DispatchesOnTheFileIdentifier) {
  std::vector<uint8_t> tflite = conv_relu().build();
  std::memcpy(tflite.data() + 4, "TFL3", 4);
  expect_fails(write("m.tflite", tflite), ExitCode::kInvalidModel, "corrupt TensorFlow Lite model");
  expect_fails(write("text.fb", {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd'}), ExitCode::kInvalidModel,
               "not an aotc model (file identifier \"o wo\", expected \"AOTC\")");
}

}  // namespace
}  // namespace aotc
