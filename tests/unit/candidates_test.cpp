// Tests of the conv2d candidates, the choice among them (rules or tuning
// cache), the tuning cache file, and tune() measuring what the cache lacks.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "backends/halide/conv_candidates.h"
#include "backends/halide/group_plan.h"
#include "ir/parser.h"
#include "support/error.h"
#include "tune/tune.h"
#include "tune/tuning_cache.h"

namespace aotc {
namespace {

// One conv2d node `%y` of x[1, c, h, h] with `o` output channels, kernel k,
// padding (k-1)/2, `groups` and `stride`.
Graph conv_graph(int c, int h, int o, int k, int groups = 1, int stride = 1) {
  std::ostringstream os;
  const int p = (k - 1) / 2, out = (h + 2 * p - k) / stride + 1;
  os << "graph g {\n"
     << "  input %x: f32[1," << c << "," << h << "," << h << "]\n"
     << "  const %w: f32[" << o << "," << c / groups << "," << k << "," << k << "] = random(1)\n"
     << "  %y = conv2d(%x, %w) {stride=[" << stride << "," << stride << "], pad=[" << p << "," << p << "," << p << ","
     << p << "], dilation=[1,1], groups=" << groups << "}: f32[1," << o << "," << out << "," << out << "]\n"
     << "  output %y\n}\n";
  return parse_graph(os.str(), "test.air");
}

std::vector<std::string> names(const std::vector<Candidate>& candidates) {
  std::vector<std::string> n;
  for (const Candidate& c : candidates) n.push_back(c.name);
  return n;
}

const std::string kTarget = "x86-64-linux-avx2-fma";

TEST(ConvCandidates, OfferedWhereTheyApply) {
  const Graph c3 = conv_graph(16, 28, 32, 3);
  EXPECT_EQ(names(conv_candidates(c3, c3.nodes[0], {})), (std::vector<std::string>{"winograd-f4x4", "direct"}));
  EXPECT_EQ(names(conv_candidates(c3, c3.nodes[0], {.winograd = false})), (std::vector<std::string>{"direct"}));
  const Graph c1 = conv_graph(32, 56, 48, 1);
  EXPECT_EQ(names(conv_candidates(c1, c1.nodes[0], {})), (std::vector<std::string>{"pointwise-gemm", "direct"}));
  const Graph dw = conv_graph(32, 28, 32, 3, 32);
  EXPECT_EQ(names(conv_candidates(dw, dw.nodes[0], {})), (std::vector<std::string>{"direct"}));
  const Graph c5 = conv_graph(16, 28, 32, 5);
  EXPECT_EQ(names(conv_candidates(c5, c5.nodes[0], {})), (std::vector<std::string>{"direct"}));
  // Channel-blocked ones where asked for, when the channels fill blocks of the
  // target's vector (16 floats with AVX-512, 8 with AVX2).
  const HalideLoweringOptions blocked{.blocked_layouts = true, .target = "x86-64-linux-avx512"};
  EXPECT_EQ(names(conv_candidates(c1, c1.nodes[0], blocked)),
            (std::vector<std::string>{"pointwise-gemm", "pointwise-to-nchwc", "nchwc-pointwise", "direct"}));
  EXPECT_EQ(names(conv_candidates(dw, dw.nodes[0], blocked)), (std::vector<std::string>{"nchwc-depthwise", "direct"}));
  const Graph dw24 = conv_graph(24, 28, 24, 3, 24);
  EXPECT_EQ(names(conv_candidates(dw24, dw24.nodes[0], blocked)), (std::vector<std::string>{"direct"}));
  EXPECT_EQ(names(conv_candidates(dw24, dw24.nodes[0], {.blocked_layouts = true, .target = kTarget})),
            (std::vector<std::string>{"nchwc-depthwise", "direct"}));
  // Blocked direct for any other dense conv: from NCHWc where the input's
  // channels fill blocks, else from NCHW (an RGB stem).
  EXPECT_EQ(names(conv_candidates(c3, c3.nodes[0], blocked)),
            (std::vector<std::string>{"nchwc-direct", "winograd-f4x4", "direct"}));
  EXPECT_EQ(names(conv_candidates(c5, c5.nodes[0], blocked)), (std::vector<std::string>{"nchwc-direct", "direct"}));
  const Graph stem = conv_graph(3, 32, 16, 7, 1, 2);
  EXPECT_EQ(names(conv_candidates(stem, stem.nodes[0], blocked)), (std::vector<std::string>{"direct-to-nchwc", "direct"}));
  const Graph strided = conv_graph(32, 28, 48, 1, 1, 2);
  EXPECT_EQ(names(conv_candidates(strided, strided.nodes[0], blocked)),
            (std::vector<std::string>{"pointwise-gemm", "nchwc-direct", "direct"}));
}

TEST(ConvCandidates, BlockedDirectPadsIntoScratchFirst) {
  const HalideLoweringOptions blocked{.blocked_layouts = true, .target = kTarget};  // blocks of 8
  const Graph c3 = conv_graph(16, 28, 32, 3);
  const std::vector<Candidate> candidates = conv_candidates(c3, c3.nodes[0], blocked);
  ASSERT_EQ(candidates[0].name, "nchwc-direct");
  const Candidate& c = candidates[0];
  ASSERT_EQ(c.steps.size(), 2u);
  EXPECT_EQ(c.steps[0].suffix, "pad");
  EXPECT_EQ(c.steps[0].args[0].shape, (Shape{1, 2, 28, 28 * 8}));  // rows of W*B floats
  EXPECT_EQ(c.steps[0].args[0].layout, Layout::kNCHWc);
  EXPECT_EQ(c.steps[0].args[1].shape, (Shape{1, 2, 30, 30 * 8}));
  EXPECT_EQ(c.scratch_bytes, 16 * 30 * 30 * 4);
  EXPECT_EQ(c.steps[1].args[0].kind, StepArg::Kind::kScratch);
  EXPECT_EQ(c.steps[1].args.back().shape, (Shape{1, 4, 28, 28, 8}));
  EXPECT_EQ(c.steps[1].args.back().layout, Layout::kNCHWc);
  // An unpadded one (a strided 1x1) reads its input directly.
  const Graph strided = conv_graph(32, 28, 48, 1, 1, 2);
  const std::vector<Candidate> s = conv_candidates(strided, strided.nodes[0], blocked);
  ASSERT_EQ(s[1].name, "nchwc-direct");
  ASSERT_EQ(s[1].steps.size(), 1u);
  EXPECT_EQ(s[1].steps[0].args[0].kind, StepArg::Kind::kTensor);
  EXPECT_EQ(s[1].scratch_bytes, 0);
}

TEST(ConvCandidates, CostModelPredictsWinogradFromItsParts) {
  // Measured on one Zen 3 core (AVX2, aotc --tune, ResNet-50's layers):
  // 128x128 at 28x28 by Winograd 1.6 ms, blocked direct 2.5, direct 2.9;
  // 512x512 at 7x7 by Winograd 3.6 ms (37.7 MB of transformed weights),
  // blocked direct 3.1.
  const HalideLoweringOptions avx2{.blocked_layouts = true, .target = kTarget};
  const Graph c28 = conv_graph(128, 28, 128, 3);
  Choice choice = conv_choice(c28, c28.nodes[0], avx2);
  EXPECT_EQ(choice.by, "cost model");
  EXPECT_EQ(choice.candidates[choice.chosen].name, "winograd-f4x4");
  // More than its GEMMs' arithmetic at the FMA peak.
  const double gemm_peak_us = 2.0 * 36 * 128 * 128 * 49 / 117e3;
  EXPECT_GT(choice.candidates[choice.chosen].predicted_us, gemm_peak_us);
  const Graph c7 = conv_graph(512, 7, 512, 3);
  choice = conv_choice(c7, c7.nodes[0], avx2);
  EXPECT_EQ(choice.candidates[choice.chosen].name, "nchwc-direct");
  EXPECT_EQ(choice.candidates[choice.by_rules].name, "winograd-f4x4");
  // Winograd's transformed weights come from memory once per run.
  for (const Candidate& c : choice.candidates)
    if (c.name == "winograd-f4x4") EXPECT_GT(c.predicted_us, 36.0 * 512 * 512 * 4 / 15e3);
  const Graph dw = conv_graph(32, 28, 32, 3, 32);
  choice = conv_choice(dw, dw.nodes[0], {});
  EXPECT_EQ(choice.by, "only candidate");
}

TEST(ConvCandidates, WinogradTransformsScaleWithTheVectorWidth) {
  // SqueezeNet's 64x256 at 13x13 on one Zen 4 core (AVX-512, aotc --tune):
  // Winograd 289 µs, blocked direct 461. Its transforms run at twice the
  // 8-lane rate there; with the 8-lane rate the model chose blocked direct.
  const Graph c13 = conv_graph(64, 13, 256, 3);
  const auto winograd_us = [&](const std::string& target) {
    const Choice choice = conv_choice(c13, c13.nodes[0], {.blocked_layouts = true, .target = target});
    for (const Candidate& c : choice.candidates)
      if (c.name == "winograd-f4x4") return std::make_pair(c.predicted_us, choice.candidates[choice.chosen].name);
    return std::make_pair(0.0, std::string());
  };
  const auto [avx512_us, avx512_choice] = winograd_us("x86-64-linux-avx512_skylake");
  const auto [avx2_us, avx2_choice] = winograd_us(kTarget);
  EXPECT_EQ(avx512_choice, "winograd-f4x4");
  EXPECT_GT(avx512_us, 200.0);
  EXPECT_LT(avx512_us, 360.0);
  EXPECT_LT(avx512_us, avx2_us);
  // 36 x 64 x 256 weights (2.4 MB) read from memory take about as long as the
  // GEMMs: the two overlap, so Winograd costs less than their sum.
  EXPECT_LT(avx512_us, 36.0 * 64 * 256 * 4 / 15e3 + 2.0 * 36 * 64 * 256 * 16 / 117e3);
}

TEST(ConvCandidates, CostModelPredictsBlockedAndDepthwiseCandidates) {
  // Measured on one AVX-512 core (aotc --tune, MobileNetV2's shapes): the
  // blocked depthwise conv 1.5-2.8x faster than the NCHW one, the blocked 1x1
  // 0.91-1.00x the NCHW 1x1's time.
  const HalideLoweringOptions blocked{.blocked_layouts = true, .target = "x86-64-linux-avx512"};
  const Graph dw = conv_graph(192, 28, 192, 3, 192);
  Choice choice = conv_choice(dw, dw.nodes[0], blocked);
  EXPECT_EQ(choice.by, "cost model");
  EXPECT_EQ(choice.candidates[choice.chosen].name, "nchwc-depthwise");
  EXPECT_EQ(choice.candidates[choice.by_rules].name, "direct");
  const double ratio = choice.candidates[choice.by_rules].predicted_us / choice.candidates[choice.chosen].predicted_us;
  EXPECT_GT(ratio, 1.3);
  EXPECT_LT(ratio, 3);
  const Graph c1 = conv_graph(576, 14, 96, 1);
  choice = conv_choice(c1, c1.nodes[0], blocked);
  EXPECT_EQ(choice.by, "cost model");
  const double peak_us = 2.0 * 576 * 96 * 14 * 14 / 117e3;
  for (const Candidate& c : choice.candidates) {
    EXPECT_GE(c.predicted_us, peak_us) << c.name;
    EXPECT_LE(c.predicted_us, 1.3 * peak_us) << c.name;
  }
}

TEST(ConvCandidates, CostModelChooses1x1ConvsAsMeasured) {
  // Measured on one AVX-512 core (aotc --tune): 7x7 maps run faster with
  // conv2d's vectorise-channels tiles, 56x56 maps as a GEMM, and 14x14 maps of
  // 512 channels directly (227 vs 236 µs), where the rules chose the GEMM; with
  // 64 input channels the GEMM wins again (95 vs 112 µs).
  struct Case {
    int c, h, o;
    const char* model, *rules;
  };
  for (const Case& k : {Case{64, 7, 64, "direct", "direct"}, Case{32, 56, 48, "pointwise-gemm", "pointwise-gemm"},
                        Case{512, 14, 128, "direct", "pointwise-gemm"},
                        Case{64, 14, 384, "pointwise-gemm", "pointwise-gemm"}}) {
    const Graph g = conv_graph(k.c, k.h, k.o, 1);
    const Choice choice = conv_choice(g, g.nodes[0], {.target = "x86-64-linux-avx512"});
    EXPECT_EQ(choice.by, "cost model");
    EXPECT_EQ(choice.candidates[choice.chosen].name, k.model) << k.c << "x" << k.h << "->" << k.o;
    EXPECT_EQ(choice.candidates[choice.by_rules].name, k.rules) << k.c << "x" << k.h << "->" << k.o;
    // Each prediction lies between the time at the FMA peak (117 GFLOP/s) and twice that.
    const double peak_us = 2.0 * k.c * k.o * k.h * k.h / 117e3;
    for (const Candidate& c : choice.candidates) {
      EXPECT_GE(c.predicted_us, peak_us) << c.name;
      EXPECT_LE(c.predicted_us, 2 * peak_us) << c.name;
    }
  }
}

TEST(ConvCandidates, StridedPointwiseRunsAsSubsampleThenGemm) {
  // ResNet-50's downsampling 1x1/2: the GEMM candidate copies the pixels it
  // reads into the node's scratch first. Measured on one Zen 3 core (AVX2,
  // aotc --tune): 256@56 -> 512, GEMM 2.6 ms against the direct conv's 6.7.
  const Graph g = conv_graph(256, 56, 512, 1, 1, 2);
  const Choice choice = conv_choice(g, g.nodes[0], {.target = kTarget});
  ASSERT_EQ(names(choice.candidates), (std::vector<std::string>{"pointwise-gemm", "direct"}));
  const Candidate& gemm = choice.candidates[0];
  ASSERT_EQ(gemm.steps.size(), 2u);
  EXPECT_EQ(gemm.steps[0].suffix, "subsample");
  EXPECT_EQ(gemm.scratch_bytes, 256 * 28 * 28 * 4);
  EXPECT_EQ(gemm.steps[0].args[1].shape, (Shape{1, 256, 28, 28}));
  EXPECT_EQ(gemm.steps[1].args[0].shape, (Shape{1, 256, 28 * 28}));
  EXPECT_EQ(choice.candidates[choice.chosen].name, "pointwise-gemm");
  EXPECT_EQ(choice.candidates[choice.by_rules].name, "direct");
  // The subsample's copy is in the prediction: more than the GEMM's arithmetic alone.
  EXPECT_GT(gemm.predicted_us, 2.0 * 256 * 512 * 28 * 28 / 117e3);
}

TEST(ConvCandidates, CostModelOn16RegistersCountsWeightsReadAgain) {
  // On AVX2 the GEMM's pixel tiles run outside its channel blocks, so weights
  // larger than L2 come from L3 again for every tile. Measured on one Zen 3
  // core (aotc --tune): 512@28/2 -> 1024 (2 MB of weights, 196 pixels) 3.1 ms
  // as a GEMM against 4.7 direct; 2048 -> 512 at 7x7 (4 MB, 49 pixels) 2.4 ms
  // against 1.2 channel-blocked.
  // (With channel-blocked candidates, the blocked direct conv beats both
  // there: 2.6 ms.)
  const Graph strided = conv_graph(512, 28, 1024, 1, 1, 2);
  Choice choice = conv_choice(strided, strided.nodes[0], {.target = kTarget});
  EXPECT_EQ(choice.candidates[choice.chosen].name, "pointwise-gemm");
  choice = conv_choice(strided, strided.nodes[0], {.blocked_layouts = true, .target = kTarget});
  EXPECT_EQ(choice.candidates[choice.chosen].name, "nchwc-direct");
  const Graph deep = conv_graph(2048, 7, 512, 1);
  choice = conv_choice(deep, deep.nodes[0], {.blocked_layouts = true, .target = kTarget});
  EXPECT_EQ(choice.candidates[choice.chosen].name, "nchwc-pointwise");
}

TEST(ConvCandidates, TuningCacheChoosesTheFastestWhenItTimesEveryCandidate) {
  const Graph c3 = conv_graph(16, 28, 32, 3);
  const std::string key = node_description(c3, c3.nodes[0]);
  TuningCache cache;
  cache.target = kTarget;
  cache.times_us[key]["direct"] = 50;
  const HalideLoweringOptions options{.winograd = true, .tuning = &cache};
  // Winograd untimed: the cost model chooses as without a cache, and the
  // report still sees direct's time.
  Choice choice = conv_choice(c3, c3.nodes[0], options);
  EXPECT_EQ(choice.by, "cost model");
  EXPECT_EQ(choice.chosen, conv_choice(c3, c3.nodes[0], {.winograd = true}).chosen);
  EXPECT_EQ(choice.measured_us[1], 50);
  cache.times_us[key]["winograd-f4x4"] = 40;
  EXPECT_GT(halide_scratch_bytes(plan_groups(c3, options), 0), 0);

  cache.times_us[key]["winograd-f4x4"] = 80;
  choice = conv_choice(c3, c3.nodes[0], options);
  EXPECT_EQ(choice.by, "tuning cache");
  EXPECT_EQ(choice.candidates[choice.chosen].name, "direct");
  EXPECT_EQ(choice.candidates[choice.by_rules].name, "winograd-f4x4");
  EXPECT_EQ(choice.measured_us[0], 80);
  // Direct needs no scratch: the memory plan follows the choice.
  EXPECT_EQ(halide_scratch_bytes(plan_groups(c3, options), 0), 0);

  cache.times_us[key]["winograd-f4x4"] = 50;  // a tie keeps the rules' choice
  choice = conv_choice(c3, c3.nodes[0], options);
  EXPECT_EQ(choice.candidates[choice.chosen].name, "winograd-f4x4");
  EXPECT_EQ(choice.by, "tuning cache");
}

TEST(ConvCandidates, PointwiseViewsNeedOperandsThatFlatten) {
  // An add operand broadcast along W only cannot be viewed as [N, C, H*W].
  const Graph g = parse_graph(R"(graph g {
  input %x: f32[1,16,16,16]
  input %r: f32[1,32,16,1]
  const %w: f32[32,16,1,1] = random(1)
  %c = conv2d(%x, %w) {stride=[1,1], pad=[0,0,0,0], dilation=[1,1], groups=1}: f32[1,32,16,16]
  %y = add(%c, %r): f32[1,32,16,16]
  output %y
}
)",
                              "test.air");
  Graph fused = g;
  fused.nodes[0].epilogue.push_back({.kind = PostOpKind::kAdd, .input = 2});
  fused.nodes[0].inputs.push_back(fused.nodes[1].inputs[1]);
  fused.nodes[0].outputs = fused.nodes[1].outputs;
  fused.nodes.pop_back();
  EXPECT_EQ(names(conv_candidates(fused, fused.nodes[0], {})), (std::vector<std::string>{"direct"}));
}

class TuningCacheFile : public ::testing::Test {
 protected:
  // One file per test: ctest runs the tests of this binary side by side.
  std::string path = ::testing::TempDir() + "aotc_tuning_cache_" +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".json";
  void write(const std::string& text) { std::ofstream(path) << text; }
  void TearDown() override { std::remove(path.c_str()); }
};

TEST_F(TuningCacheFile, RoundTrips) {
  TuningCache cache;
  cache.target = kTarget;
  cache.times_us["conv2d (1x16x8x8, 16x16x3x3) -> 1x16x8x8 {}"] = {{"direct", 12.5}, {"winograd-f4x4", 9.25}};
  cache.times_us["other"] = {{"direct", 1}};
  write(tuning_cache_json(cache));
  std::ostringstream messages;
  const TuningCache read = read_tuning_cache(path, kTarget, messages);
  EXPECT_EQ(read.target, kTarget);
  EXPECT_EQ(read.times_us, cache.times_us);
  EXPECT_EQ(messages.str(), "");
  ASSERT_NE(read.time("other", "direct"), nullptr);
  EXPECT_EQ(*read.time("other", "direct"), 1);
  EXPECT_EQ(read.time("other", "winograd-f4x4"), nullptr);
  EXPECT_EQ(read.time("missing", "direct"), nullptr);
}

TEST_F(TuningCacheFile, AnotherTargetOrVersionIsIgnoredWithAMessage) {
  TuningCache cache;
  cache.target = "arm-64-linux";
  cache.times_us["k"] = {{"direct", 3}};
  write(tuning_cache_json(cache));
  std::ostringstream messages;
  TuningCache read = read_tuning_cache(path, kTarget, messages);
  EXPECT_TRUE(read.times_us.empty());
  EXPECT_EQ(read.target, kTarget);
  EXPECT_NE(messages.str().find("measured for target arm-64-linux, not " + kTarget + ": ignored"), std::string::npos)
      << messages.str();

  std::string text = tuning_cache_json(cache);
  text.replace(text.find("\"version\": 1"), 12, "\"version\": 2");
  write(text);
  messages.str("");
  read = read_tuning_cache(path, "arm-64-linux", messages);
  EXPECT_TRUE(read.times_us.empty());
  EXPECT_NE(messages.str().find("tuning cache version 2, not 1: ignored"), std::string::npos) << messages.str();
}

TEST_F(TuningCacheFile, MalformedFilesAreRefused) {
  const std::string valid_head = R"({"format": "aotc tuning cache", "version": 1, "target": ")" + kTarget + "\", ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{not json", "not a JSON object"},
      {R"({"format": "something else", "version": 1})", "no \"format\""},
      {R"({"format": "aotc tuning cache"})", "no integer \"version\""},
      {valid_head + R"("entries": 3})", "no \"entries\" array"},
      {valid_head + R"("entries": [{"kernel": "k"}]})", "entries[0] needs"},
      {valid_head + R"("entries": [{"kernel": "k", "times_us": {"direct": -1}}]})",
       "entries[0].times_us.direct is not a positive number"},
      {valid_head + R"("entries": [{"kernel": "k", "times_us": {"direct": "fast"}}]})",
       "entries[0].times_us.direct is not a positive number"},
  };
  for (const auto& [text, expected] : cases) {
    write(text);
    std::ostringstream messages;
    try {
      (void)read_tuning_cache(path, kTarget, messages);
      ADD_FAILURE() << "accepted: " << text;
    } catch (const UserError& e) {
      EXPECT_EQ(e.code(), ExitCode::kUsage);
      EXPECT_NE(std::string(e.what()).find(path + ": not an aotc tuning cache: " + expected), std::string::npos)
          << e.what();
    }
  }
  std::ostringstream messages;
  try {
    (void)read_tuning_cache(path + ".missing", kTarget, messages);
    ADD_FAILURE() << "read a missing file";
  } catch (const UserError& e) {
    EXPECT_EQ(e.code(), ExitCode::kIo);
  }
}

// tune() JIT-compiles and times every candidate of a node on this machine.
TEST(Tune, TimesEveryCandidateOfWhatTheCacheLacks) {
  const Graph g = parse_graph(R"(graph g {
  input %x: f32[1,16,12,12]
  const %w1: f32[16,16,3,3] = random(1)
  const %b1: f32[16] = random(2)
  const %w2: f32[24,16,1,1] = random(3)
  const %wd: f32[24,1,3,3] = random(4)
  %c1 = conv2d(%x, %w1, %b1) {stride=[1,1], pad=[1,1,1,1], dilation=[1,1], groups=1}: f32[1,16,12,12]
  %c2 = conv2d(%c1, %w2) {stride=[1,1], pad=[0,0,0,0], dilation=[1,1], groups=1}: f32[1,24,12,12]
  %c3 = conv2d(%c2, %wd) {stride=[1,1], pad=[1,1,1,1], dilation=[1,1], groups=24}: f32[1,24,12,12]
  output %c3
}
)",
                              "test.air");
  const std::string host = halide_target_string("host");
  TuningCache cache;
  cache.target = host;
  std::ostringstream log;
  tune(g, {}, host, cache, log);
  ASSERT_EQ(cache.times_us.size(), 2u) << log.str();  // the depthwise conv has one candidate
  for (const Node& node : {g.nodes[0], g.nodes[1]}) {
    for (const Candidate& c : conv_candidates(g, node, {})) {
      const double* us = cache.time(node_description(g, node), c.name);
      ASSERT_NE(us, nullptr) << c.name;
      EXPECT_GT(*us, 0);
    }
  }
  EXPECT_NE(log.str().find("aotc: tune c1: winograd-f4x4 "), std::string::npos) << log.str();

  // A complete cache measures nothing again.
  const TuningCache before = cache;
  std::ostringstream again;
  tune(g, {}, host, cache, again);
  EXPECT_EQ(again.str(), "");
  EXPECT_EQ(cache.times_us, before.times_us);
}

}  // namespace
}  // namespace aotc
