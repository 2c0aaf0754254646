// The plan over the whole chain: the dynamic program of plan/choose_layouts.h
// on hand-made costs (chains, a fork, graph outputs, a join), and the Halide
// backend's plan (backends/halide/group_plan.h) turning its choice into kernel
// steps with the layout conversions they owe.
#include <gtest/gtest.h>

#include <sstream>

#include "backends/halide/conv_candidates.h"
#include "backends/halide/group_plan.h"
#include "ir/parser.h"
#include "plan/choose_layouts.h"
#include "backends/halide/halide_backend.h"
#include "generators/depthwise_conv_blocked.h"
#include "tune/tune.h"
#include "tune/tuning_cache.h"

namespace aotc {
namespace {

// `n` 1x1 convs in a chain from %x (each %cK reading the one before), then
// `tail` text (more nodes and the outputs).
Graph conv_chain(int n, const std::string& tail) {
  std::ostringstream os;
  os << "graph g {\n  input %x: f32[1,32,8,8]\n  const %w: f32[32,32,1,1] = random(1)\n";
  for (int i = 0; i < n; ++i)
    os << "  %c" << i << " = conv2d(" << (i == 0 ? "%x" : "%c" + std::to_string(i - 1))
       << ", %w) {stride=[1,1], pad=[0,0,0,0], dilation=[1,1], groups=1}: f32[1,32,8,8]\n";
  os << tail << "}\n";
  return parse_graph(os.str(), "test.air");
}

// Per conv node: NCHW at `nchw_us`, or NCHWc in and out at `blocked_us`;
// every conversion costs `conversion_us`.
LayoutProblem two_layouts(const Graph& g, double nchw_us, double blocked_us, double conversion_us) {
  LayoutProblem p;
  for (const Node& node : g.nodes) {
    if (node.op != OpKind::Conv2d) {
      p.options.emplace_back();
      continue;
    }
    const TensorId in = node.inputs[0];
    p.options.push_back({LayoutOption{nchw_us, {{in, Layout::kNCHW}}, Layout::kNCHW},
                         LayoutOption{blocked_us, {{in, Layout::kNCHWc}}, Layout::kNCHWc}});
  }
  p.conversion_us = [conversion_us](TensorId, Layout from, Layout to) {
    EXPECT_NE(from, to);
    return conversion_us;
  };
  return p;
}

TensorId tensor(const Graph& g, const std::string& name) {
  for (size_t t = 0; t < g.tensors.size(); ++t)
    if (g.tensors[t].name == name) return static_cast<TensorId>(t);
  ADD_FAILURE() << "no tensor " << name;
  return 0;
}

TEST(ChooseLayouts, AChainTakesALayoutThatNoGroupTakesAlone) {
  // Alone, a blocked group costs 4 + a conversion in and out (2 x 5) > 10;
  // three in a row pay the two conversions once: 3 x 4 + 10 = 22 < 30.
  const Graph g = conv_chain(3, "  output %c2\n");
  LayoutPlan plan = choose_layouts(g, two_layouts(g, 10, 4, 5));
  EXPECT_EQ(plan.chosen, (std::vector<size_t>{1, 1, 1}));
  EXPECT_DOUBLE_EQ(plan.total_us, 22);
  EXPECT_EQ(plan.stored[static_cast<size_t>(tensor(g, "c0"))], Layout::kNCHWc);
  EXPECT_EQ(plan.stored[static_cast<size_t>(tensor(g, "c2"))], Layout::kNCHW);  // a graph output stays NCHW
  // Conversions dearer than what three groups gain: NCHW throughout.
  plan = choose_layouts(g, two_layouts(g, 10, 4, 10));
  EXPECT_EQ(plan.chosen, (std::vector<size_t>{0, 0, 0}));
  EXPECT_DOUBLE_EQ(plan.total_us, 30);
  const Graph one = conv_chain(1, "  output %c0\n");
  EXPECT_EQ(choose_layouts(one, two_layouts(one, 10, 4, 5)).chosen, (std::vector<size_t>{0}));
}

TEST(ChooseLayouts, ATensorReadByAGroupWithoutOptionsStaysNchw) {
  // %c0 feeds %c1 and a relu (no options): it is stored NCHW, so %c1 would
  // convert it; the chain %c1 -> %c2 -> %c3 still pays off.
  const Graph g = conv_chain(4, "  %r = relu(%c0): f32[1,32,8,8]\n  output %c3\n  output %r\n");
  const LayoutPlan plan = choose_layouts(g, two_layouts(g, 10, 4, 5));
  EXPECT_EQ(plan.stored[static_cast<size_t>(tensor(g, "c0"))], Layout::kNCHW);
  EXPECT_EQ(plan.chosen[0], 0u);
  EXPECT_EQ((std::vector<size_t>{plan.chosen[1], plan.chosen[2], plan.chosen[3]}), (std::vector<size_t>{1, 1, 1}));
  EXPECT_DOUBLE_EQ(plan.total_us, 10 + 3 * 4 + 2 * 5);
}

TEST(ChooseLayouts, ForksAndJoinsAreWeighedTogether) {
  // %c0 is read by %c1 and, as its residual, by %a (a conv adding %c0 to its
  // output): both read it in the layout %c0 is stored in, or convert it.
  const Graph g = parse_graph(R"(graph g {
  input %x: f32[1,32,8,8]
  const %w: f32[32,32,1,1] = random(1)
  %c0 = conv2d(%x, %w) {stride=[1,1], pad=[0,0,0,0], dilation=[1,1], groups=1}: f32[1,32,8,8]
  %c1 = conv2d(%c0, %w) {stride=[1,1], pad=[0,0,0,0], dilation=[1,1], groups=1}: f32[1,32,8,8]
  %c2 = conv2d(%c1, %w) {stride=[1,1], pad=[0,0,0,0], dilation=[1,1], groups=1}: f32[1,32,8,8]
  %a = add(%c2, %c0): f32[1,32,8,8]
  %c3 = conv2d(%a, %w) {stride=[1,1], pad=[0,0,0,0], dilation=[1,1], groups=1}: f32[1,32,8,8]
  output %c3
}
)",
                              "test.air");
  // Hand-made: the add is a group with options too, reading both inputs in one layout.
  LayoutProblem p = two_layouts(g, 10, 4, 5);
  const Node& add = g.nodes[3];
  p.options[3] = {LayoutOption{1, {{add.inputs[0], Layout::kNCHW}, {add.inputs[1], Layout::kNCHW}}, Layout::kNCHW},
                  LayoutOption{1, {{add.inputs[0], Layout::kNCHWc}, {add.inputs[1], Layout::kNCHWc}}, Layout::kNCHWc}};
  const LayoutPlan plan = choose_layouts(g, p);
  // Everything blocked: one conversion in (%x), one out (%c3): 4 x 4 + 1 + 10.
  EXPECT_EQ(plan.chosen, (std::vector<size_t>{1, 1, 1, 1, 1}));
  EXPECT_DOUBLE_EQ(plan.total_us, 27);
  // The same cost, option by option, under the plan's layouts.
  double sum = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) sum += option_cost_us(g.nodes[i], p.options[i][plan.chosen[i]], plan.stored, p);
  EXPECT_DOUBLE_EQ(sum, plan.total_us);
}

TEST(ChooseLayouts, ManyLiveTensorsKeepTheStatesBounded) {
  // 20 convs all reading %x and all joined at the end: at most kMaxFreeLive
  // of their outputs may be blocked at once; the plan still completes.
  std::ostringstream os;
  os << "graph g {\n  input %x: f32[1,32,8,8]\n  const %w: f32[32,32,1,1] = random(1)\n";
  std::string concat = "  %y = concat(";
  for (int i = 0; i < 20; ++i) {
    os << "  %b" << i << " = conv2d(%x, %w) {stride=[1,1], pad=[0,0,0,0], dilation=[1,1], groups=1}: f32[1,32,8,8]\n";
    os << "  %e" << i << " = conv2d(%b" << i
       << ", %w) {stride=[1,1], pad=[0,0,0,0], dilation=[1,1], groups=1}: f32[1,32,8,8]\n";
  }
  for (int i = 0; i < 20; ++i) concat += std::string(i ? ", " : "") + "%e" + std::to_string(i);
  os << concat << ") {axis=1}: f32[1,640,8,8]\n  output %y\n}\n";
  const Graph g = parse_graph(os.str(), "test.air");
  const LayoutPlan plan = choose_layouts(g, two_layouts(g, 10, 1, 0.5));
  size_t blocked = 0;
  for (Layout l : plan.stored) blocked += l == Layout::kNCHWc;
  EXPECT_GT(blocked, 0u);
  EXPECT_LE(blocked, 20u);
}

// x -> depthwise 3x3 -> 1x1 -> output, 32 channels.
Graph depthwise_then_pointwise() {
  return parse_graph(R"(graph g {
  input %x: f32[1,32,14,14]
  const %wd: f32[32,1,3,3] = random(1)
  const %wp: f32[32,32,1,1] = random(2)
  %d = conv2d(%x, %wd) {stride=[1,1], pad=[1,1,1,1], dilation=[1,1], groups=32}: f32[1,32,14,14]
  %p = conv2d(%d, %wp) {stride=[1,1], pad=[0,0,0,0], dilation=[1,1], groups=1}: f32[1,32,14,14]
  output %p
}
)",
                     "test.air");
}

const std::string kAvx512 = "x86-64-linux-avx-avx2-avx512-avx512_skylake-f16c-fma-sse41";

TEST(GroupPlan, ConversionsBecomeKernelStepsThroughTheScratch) {
  const Graph g = depthwise_then_pointwise();
  TuningCache cache;
  cache.target = kAvx512;
  const std::string d = node_description(g, g.nodes[0]), p = node_description(g, g.nodes[1]);
  cache.times_us[d] = {{"direct", 50}, {"nchwc-depthwise", 10}};
  cache.times_us[p] = {{"pointwise-gemm", 30}, {"pointwise-to-nchwc", 30}, {"nchwc-pointwise", 29}, {"direct", 40}};
  HalideLoweringOptions options{.blocked_layouts = true, .tuning = &cache, .target = kAvx512};
  GroupPlan plan = plan_groups(g, options);
  // The blocked depthwise conv converts %x in and hands %d over blocked to
  // the 1x1 conv, which converts its output (a graph output) back to NCHW.
  const PlannedGroup& dw = plan.groups.at(0);
  const PlannedGroup& pw = plan.groups.at(1);
  EXPECT_EQ(dw.choice.candidates[dw.choice.chosen].name, "nchwc-depthwise");
  EXPECT_EQ(pw.choice.candidates[pw.choice.chosen].name, "nchwc-pointwise");
  ASSERT_EQ(dw.run.steps.size(), 2u);
  EXPECT_EQ(dw.run.steps[0].suffix, "layout");
  EXPECT_EQ(dw.run.steps[0].key, conversion_description({1, 32, 14, 14}, Layout::kNCHW, Layout::kNCHWc, 16));
  EXPECT_GE(dw.run.scratch_bytes, 32 * 14 * 14 * 4);
  EXPECT_EQ(dw.conversions, (std::vector<std::string>{"input x nchw -> nchw16c"}));
  ASSERT_EQ(pw.run.steps.size(), 2u);
  EXPECT_EQ(pw.run.steps[1].suffix, "layout");
  EXPECT_EQ(pw.run.steps[1].args[1].kind, StepArg::Kind::kTensor);  // written into the output
  EXPECT_EQ(pw.conversions, (std::vector<std::string>{"output nchw16c -> nchw"}));
  EXPECT_EQ(halide_scratch_bytes(plan, 1), pw.run.scratch_bytes);
  EXPECT_EQ(plan.totals.costed, 2);
  EXPECT_DOUBLE_EQ(plan.totals.all_direct_us, 90);
  EXPECT_DOUBLE_EQ(plan.totals.fastest_alone_us, 39);
  EXPECT_DOUBLE_EQ(plan.totals.chosen_us, 39 + 2 * predicted_conversion_us({1, 32, 14, 14}));

  // Measured conversions in the cache count instead of the predicted ones:
  // dear enough, and NCHW throughout is cheaper than each group's fastest alone.
  for (auto [from, to] : {std::pair{Layout::kNCHW, Layout::kNCHWc}, std::pair{Layout::kNCHWc, Layout::kNCHW}})
    cache.times_us[conversion_description({1, 32, 14, 14}, from, to, 16)][kConversionCandidate] = 100;
  plan = plan_groups(g, options);
  const PlannedGroup& dw2 = plan.groups.at(0);
  EXPECT_EQ(dw2.choice.candidates[dw2.choice.chosen].name, "direct");
  EXPECT_EQ(dw2.choice.candidates[dw2.fastest_alone].name, "nchwc-depthwise");
  EXPECT_EQ(plan.groups.at(1).choice.candidates[plan.groups.at(1).choice.chosen].name, "pointwise-gemm");
  EXPECT_EQ(dw2.run.steps.size(), 1u);
  EXPECT_DOUBLE_EQ(plan.totals.chosen_us, 80);
  EXPECT_DOUBLE_EQ(plan.totals.fastest_alone_us, 39);
}

std::vector<std::string> names_of(const Choice& choice) {
  std::vector<std::string> n;
  for (const Candidate& c : choice.candidates) n.push_back(c.name);
  return n;
}

TEST(GroupPlan, WithoutTimesForTheBlockedCandidatesNothingChanges) {
  // The cost model predicts no blocked candidate: it chooses among the others, as without them.
  const Graph g = depthwise_then_pointwise();
  const GroupPlan with = plan_groups(g, {.blocked_layouts = true, .target = kAvx512});
  const GroupPlan without = plan_groups(g, {.target = kAvx512});
  for (size_t step : {0u, 1u}) {
    const Choice& a = with.groups.at(step).choice;
    const Choice& b = without.groups.at(step).choice;
    EXPECT_EQ(a.candidates[a.chosen].name, b.candidates[b.chosen].name);
    EXPECT_TRUE(with.groups.at(step).conversions.empty());
  }
  EXPECT_EQ(names_of(with.groups.at(0).choice), (std::vector<std::string>{"nchwc-depthwise", "direct"}));
}

TEST(GroupPlan, TuneTimesBlockedCandidatesAndTheirConversions) {
  // Each blocked candidate runs on inputs converted on the host and is checked
  // against the reference evaluator (tune() throws otherwise); the conversions
  // of every tensor a blocked candidate takes are timed both ways.
  const Graph g = depthwise_then_pointwise();
  const std::string host = halide_target_string("host");
  const int block = gen::channel_block(Halide::Target(host));
  TuningCache cache;
  cache.target = host;
  std::ostringstream log;
  const HalideLoweringOptions options{.blocked_layouts = true, .target = host};
  tune(g, options, host, cache, log);
  for (const Node& node : g.nodes)
    for (const Candidate& c : conv_candidates(g, node, options))
      EXPECT_NE(cache.time(node_description(g, node), c.name), nullptr) << c.name << "\n" << log.str();
  for (const char* name : {"x", "d", "p"})
    for (auto [from, to] : {std::pair{Layout::kNCHW, Layout::kNCHWc}, std::pair{Layout::kNCHWc, Layout::kNCHW}}) {
      const Shape& shape = g.tensor(tensor(g, name)).shape;
      EXPECT_NE(cache.time(conversion_description(shape, from, to, block), kConversionCandidate), nullptr)
          << name << "\n" << log.str();
    }
  const GroupPlan plan = plan_groups(g, {.blocked_layouts = true, .tuning = &cache, .target = host});
  EXPECT_EQ(plan.totals.costed, 2);
  EXPECT_LE(plan.totals.chosen_us, plan.totals.all_direct_us);
}

}  // namespace
}  // namespace aotc
