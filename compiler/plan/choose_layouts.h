// The plan over the whole chain: one implementation per fused group (node),
// chosen to minimise the sum of the groups' costs plus the cost of the layout
// conversions between neighbours. A layout that speeds one group up forces
// conversions on its neighbours unless they take it too, so choosing group by
// group is not enough. Independent of what the implementations are: a backend
// states per node its options (cost, the layout each computed tensor is read
// in, the layout the output is written in) and what a conversion costs.
//
// A dynamic program over the nodes in execution order (the DAG's branches and
// joins included): its state is the layout of every tensor that is alive
// between two steps and could be stored in a layout other than NCHW ("free":
// produced by a node with options, read only by nodes with options, not a
// graph output). A node reading a tensor in a layout other than the one it is
// stored in converts it; a node writing a non-free tensor in a layout other
// than NCHW converts its output back. Both conversions are the reading or
// writing node's, so nodes without options only ever see NCHW. When more than
// kMaxFreeLive free tensors would be alive at once, the longest-lived become
// fixed NCHW, which bounds the states to 2^kMaxFreeLive.
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace aotc {

constexpr size_t kMaxFreeLive = 8;

// One way to run a node.
struct LayoutOption {
  double cost_us = 0;
  std::vector<std::pair<TensorId, Layout>> reads;  // computed tensors it reads, each in the layout it needs
  Layout writes = Layout::kNCHW;                   // the layout it writes its output (outputs[0]) in
};

struct LayoutProblem {
  // Per node, in execution order; empty: the node reads and writes NCHW only.
  std::vector<std::vector<LayoutOption>> options;
  // The time of converting tensor `t` from one layout to another, µs.
  std::function<double(TensorId t, Layout from, Layout to)> conversion_us;
};

struct LayoutPlan {
  std::vector<size_t> chosen;  // per node: the option it runs (0 for nodes without options)
  std::vector<Layout> stored;  // per tensor: the layout it is stored in
  double total_us = 0;         // the chosen options' costs plus every conversion
};

LayoutPlan choose_layouts(const Graph& g, const LayoutProblem& problem);

// What running `option` at `node` costs with tensors stored as `stored`: its
// cost plus the conversions of what it reads and of its output, where they
// are stored in other layouts than it reads or writes.
double option_cost_us(const Node& node, const LayoutOption& option, const std::vector<Layout>& stored,
                      const LayoutProblem& problem);

}  // namespace aotc
