#include "plan/choose_layouts.h"

#include <algorithm>
#include <map>

#include "support/error.h"

namespace aotc {
namespace {

// The option's cost at `node` with each tensor it reads stored as `stored_of`
// says and its output stored as `output_stored`.
template <typename StoredOf>
double cost_with(const Node& node, const LayoutOption& option, const StoredOf& stored_of, Layout output_stored,
                 const LayoutProblem& problem) {
  double cost = option.cost_us;
  for (const auto& [tensor, layout] : option.reads)
    if (const Layout stored = stored_of(tensor); stored != layout) cost += problem.conversion_us(tensor, stored, layout);
  if (option.writes != output_stored) cost += problem.conversion_us(node.outputs[0], option.writes, output_stored);
  return cost;
}

// The tensors that may be stored in a layout other than NCHW.
std::vector<bool> free_tensors(const Graph& g, const LayoutProblem& problem, const std::vector<int>& producer,
                               const std::vector<int>& last_use) {
  std::vector<bool> free(g.tensors.size(), false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const auto& options = problem.options[i];
    const TensorId out = g.nodes[i].outputs[0];
    free[static_cast<size_t>(out)] =
        last_use[static_cast<size_t>(out)] > static_cast<int>(i) &&
        std::any_of(options.begin(), options.end(), [](const LayoutOption& o) { return o.writes != Layout::kNCHW; });
  }
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (problem.options[i].empty())
      for (TensorId in : g.nodes[i].inputs) free[static_cast<size_t>(in)] = false;
  for (TensorId out : g.outputs) free[static_cast<size_t>(out)] = false;
  // At most kMaxFreeLive alive at once: the longest-lived give way.
  for (size_t step = 0; step < g.nodes.size(); ++step) {
    std::vector<TensorId> live;
    for (size_t t = 0; t < free.size(); ++t)
      if (free[t] && producer[t] <= static_cast<int>(step) && last_use[t] > static_cast<int>(step))
        live.push_back(static_cast<TensorId>(t));
    std::sort(live.begin(), live.end(), [&](TensorId a, TensorId b) {
      return last_use[static_cast<size_t>(a)] - producer[static_cast<size_t>(a)] >
             last_use[static_cast<size_t>(b)] - producer[static_cast<size_t>(b)];
    });
    for (size_t k = 0; k + kMaxFreeLive < live.size(); ++k) free[static_cast<size_t>(live[k])] = false;
  }
  return free;
}

struct State {
  std::vector<Layout> layouts;  // of the free tensors alive after the step, in the step's order
  double cost = 0;
  size_t parent = 0;  // state of the previous step
  size_t option = 0;  // the option the step ran
};

}  // namespace

double option_cost_us(const Node& node, const LayoutOption& option, const std::vector<Layout>& stored,
                      const LayoutProblem& problem) {
  return cost_with(node, option, [&](TensorId t) { return stored[static_cast<size_t>(t)]; },
                   stored[static_cast<size_t>(node.outputs[0])], problem);
}

LayoutPlan choose_layouts(const Graph& g, const LayoutProblem& problem) {
  const size_t n = g.nodes.size();
  AOTC_CHECK(problem.options.size() == n, "choose_layouts: options for ", problem.options.size(), " of ", n, " nodes");
  std::vector<int> producer(g.tensors.size(), -1), last_use(g.tensors.size(), -1);
  for (size_t i = 0; i < n; ++i) {
    for (TensorId out : g.nodes[i].outputs) producer[static_cast<size_t>(out)] = static_cast<int>(i);
    for (TensorId in : g.nodes[i].inputs) last_use[static_cast<size_t>(in)] = static_cast<int>(i);
  }
  const std::vector<bool> free = free_tensors(g, problem, producer, last_use);
  const std::vector<LayoutOption> nchw_only(1);  // what a node without options does

  // steps[i]: the states after node i.
  std::vector<std::vector<State>> steps;
  const std::vector<State> start = {State{}};
  std::vector<TensorId> previous_live;
  for (size_t i = 0; i < n; ++i) {
    const std::vector<State>& previous = i == 0 ? start : steps[i - 1];
    const Node& node = g.nodes[i];
    const TensorId out = node.outputs[0];
    const bool out_free = free[static_cast<size_t>(out)];
    std::vector<TensorId> now;
    for (TensorId t : previous_live)
      if (last_use[static_cast<size_t>(t)] > static_cast<int>(i)) now.push_back(t);
    if (out_free) now.push_back(out);
    const std::vector<LayoutOption>& options = problem.options[i].empty() ? nchw_only : problem.options[i];

    std::map<std::vector<Layout>, size_t> index;
    std::vector<State> next;
    for (size_t s = 0; s < previous.size(); ++s) {
      const State& state = previous[s];
      auto stored_of = [&](TensorId t) {
        const auto it = std::find(previous_live.begin(), previous_live.end(), t);
        return it == previous_live.end() ? Layout::kNCHW : state.layouts[static_cast<size_t>(it - previous_live.begin())];
      };
      for (size_t o = 0; o < options.size(); ++o) {
        const Layout out_stored = out_free ? options[o].writes : Layout::kNCHW;
        State candidate{{}, state.cost + cost_with(node, options[o], stored_of, out_stored, problem), s, o};
        for (TensorId t : now) candidate.layouts.push_back(t == out ? options[o].writes : stored_of(t));
        auto [it, fresh] = index.try_emplace(candidate.layouts, next.size());
        if (fresh) next.push_back(std::move(candidate));
        else if (candidate.cost < next[it->second].cost) next[it->second] = std::move(candidate);
      }
    }
    steps.push_back(std::move(next));
    previous_live = std::move(now);
  }

  LayoutPlan plan;
  plan.chosen.assign(n, 0);
  plan.stored.assign(g.tensors.size(), Layout::kNCHW);
  if (n == 0) return plan;
  size_t best = 0;
  for (size_t s = 1; s < steps.back().size(); ++s)
    if (steps.back()[s].cost < steps.back()[best].cost) best = s;
  plan.total_us = steps.back()[best].cost;
  for (size_t i = n; i-- > 0;) {
    const State& state = steps[i][best];
    plan.chosen[i] = state.option;
    best = state.parent;
  }
  for (size_t i = 0; i < n; ++i) {
    const TensorId out = g.nodes[i].outputs[0];
    if (free[static_cast<size_t>(out)]) plan.stored[static_cast<size_t>(out)] = problem.options[i][plan.chosen[i]].writes;
  }
  return plan;
}

}  // namespace aotc
