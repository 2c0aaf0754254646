#include <gtest/gtest.h>

#include "ir/graph.h"

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

}  // namespace
}  // namespace aotc
