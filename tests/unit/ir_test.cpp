#include <gtest/gtest.h>

#include <algorithm>

#include "ir/graph.h"
#include "ir/parser.h"

namespace aotc {
namespace {

TEST(Graph, TopologicalSortKeepsSortedOrderAndRejectsCycles) {
  Graph g;
  TensorId x = g.add_tensor({.name = "x", .shape = {1, 2}});
  TensorId a = g.add_tensor({.name = "a", .shape = {1, 2}});
  TensorId b = g.add_tensor({.name = "b", .shape = {1, 2}});
  g.inputs = {x};
  g.nodes.push_back({.name = "n2", .op = OpKind::Relu, .inputs = {a}, .outputs = {b}});
  g.nodes.push_back({.name = "n1", .op = OpKind::Relu, .inputs = {x}, .outputs = {a}});
  g.outputs = {b};
  ASSERT_TRUE(topological_sort(g));
  EXPECT_EQ(g.nodes[0].name, "n1");
  EXPECT_EQ(g.nodes[1].name, "n2");

  g.nodes[0].inputs = {b};  // n1 now reads n2's output: a cycle
  EXPECT_FALSE(topological_sort(g));
  EXPECT_EQ(g.nodes.size(), 2u);
}

TEST(Parser, RandomConstantsTakeAnOptionalScale) {
  const Graph g = parse_graph(R"(graph g {
  input %x: f32[1,64]
  const %a: f32[64,64] = random(3)
  const %b: f32[64,64] = random(3, 0.125)
  %y = linear(%x, %a): f32[1,64]
  %z = linear(%y, %b): f32[1,64]
  output %z
}
)",
                              "random.air");
  const std::vector<float>& a = *g.tensor(g.nodes[0].inputs[1]).data;
  const std::vector<float>& b = *g.tensor(g.nodes[1].inputs[1]).data;
  auto largest = [](const std::vector<float>& v) {
    float m = 0;
    for (float x : v) m = std::max(m, std::abs(x));
    return m;
  };
  EXPECT_GT(largest(a), 0.9f);  // uniform in [-1, 1): 4096 draws reach past 0.9
  EXPECT_LE(largest(b), 0.125f);
  EXPECT_GT(largest(b), 0.1f);
  // The same seed draws the same sequence, scaled.
  for (size_t i = 0; i < a.size(); ++i) EXPECT_FLOAT_EQ(b[i], a[i] * 0.125f) << i;
}

}  // namespace
}  // namespace aotc
