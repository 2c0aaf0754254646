#include "backends/halide/group_plan.h"

#include <cmath>

#include "backends/halide/conv_candidates.h"
#include "backends/halide/node_kernel.h"
#include "generators/depthwise_conv_blocked.h"
#include "generators/layout.h"
#include "plan/choose_layouts.h"
#include "tune/tuning_cache.h"

namespace aotc {
namespace {

constexpr int64_t kScratchAlignment = 64;
// A conversion reads and writes every byte once: bench of the transposes on
// this machine (layout.h's kernels, 0.45-4.8 MB tensors, one thread): 55-58
// GB/s of bytes read plus written.
constexpr double kConversionBytesPerUs = 55e3;

int64_t scratch_aligned(int64_t bytes) { return (bytes + kScratchAlignment - 1) / kScratchAlignment * kScratchAlignment; }

std::string layout_name(Layout layout, int block) {
  return layout == Layout::kNCHW ? "nchw" : "nchw" + std::to_string(block) + "c";
}

// The computed tensors `c` reads, each in the layout it reads it in, and the
// layout it writes the node's output in.
LayoutOption layout_option(const Graph& g, const Node& node, const Candidate& c, double cost_us) {
  LayoutOption option;
  option.cost_us = cost_us;
  for (const KernelStep& step : c.steps)
    for (const StepArg& a : step.args) {
      if (a.kind != StepArg::Kind::kTensor || g.tensor(a.tensor).is_constant()) continue;
      if (a.tensor == node.outputs[0]) option.writes = a.layout;
      else option.reads.emplace_back(a.tensor, a.layout);
    }
  return option;
}

// `c` with the conversions it owes when tensors are stored as `stored`: each
// tensor it reads in another layout is converted into its scratch first; an
// output it writes in another layout is written to its scratch, then converted.
Candidate with_conversions(const Graph& g, const Node& node, Candidate c, const std::vector<Layout>& stored, int block,
                           std::vector<std::string>& conversions) {
  const TensorId out = node.outputs[0];
  int64_t offset = scratch_aligned(c.scratch_bytes);
  std::vector<KernelStep> before, after;
  std::map<std::pair<TensorId, Layout>, int64_t> converted;  // -> scratch offset
  for (KernelStep& step : c.steps)
    for (StepArg& a : step.args) {
      if (a.kind != StepArg::Kind::kTensor) continue;
      const Layout have = stored[static_cast<size_t>(a.tensor)];
      if (a.layout == have) continue;
      auto [it, fresh] = converted.try_emplace({a.tensor, a.layout}, offset);
      if (fresh) {
        const Shape& shape = g.tensor(a.tensor).shape;
        offset += scratch_aligned(num_elements(shape) * 4);
        const StepArg scratch{StepArg::Kind::kScratch, -1, 0, it->second, {}, a.layout};
        const StepArg tensor{StepArg::Kind::kTensor, a.tensor, 0, 0, {}, have};
        if (a.tensor == out) after.push_back(conversion_step(shape, a.layout, have, block, scratch, tensor));
        else before.push_back(conversion_step(shape, have, a.layout, block, tensor, scratch));
        conversions.push_back((a.tensor == out ? "output " : "input " + g.tensor(a.tensor).name + " ") +
                              layout_name(a.tensor == out ? a.layout : have, block) + " -> " +
                              layout_name(a.tensor == out ? have : a.layout, block));
      }
      a = StepArg{StepArg::Kind::kScratch, -1, 0, it->second, a.shape, a.layout};
    }
  if (converted.empty()) return c;
  before.insert(before.end(), c.steps.begin(), c.steps.end());
  before.insert(before.end(), after.begin(), after.end());
  c.steps = std::move(before);
  c.scratch_bytes = offset;
  return c;
}

// Each candidate's time by the source `choice.by` names (the tuning cache or
// the cost model; NaN for a candidate the cost model does not predict); empty
// when the rules chose.
std::vector<double> candidate_costs(const Choice& choice) {
  std::vector<double> costs;
  if (choice.by == "tuning cache") return choice.measured_us;
  if (choice.by == "cost model")
    for (const Candidate& c : choice.candidates) costs.push_back(c.predicted_us);
  return costs;
}

}  // namespace

std::string conversion_description(const Shape& shape, Layout from, Layout to, int block) {
  return "layout " + layout_name(from, block) + " -> " + layout_name(to, block) + " " + shape_text(shape);
}

KernelStep conversion_step(const Shape& shape, Layout from, Layout to, int block, StepArg in, StepArg out) {
  const gen::LayoutSpec spec{from == Layout::kNCHW ? gen::LayoutSpec::Conversion::kNchwToBlocked
                                                   : gen::LayoutSpec::Conversion::kBlockedToNchw,
                             shape, block};
  KernelStep step;
  step.key = conversion_description(shape, from, to, block);
  step.suffix = "layout";
  step.ops = "layout " + layout_name(from, block) + " -> " + layout_name(to, block);
  step.build = [spec](const Halide::Target& t) { return gen::convert_layout(spec, t); };
  in.shape = gen::layout_input_view(spec);
  out.shape = gen::layout_output_view(spec);
  step.args = {std::move(in), std::move(out)};
  return step;
}

double predicted_conversion_us(const Shape& shape) {
  return 2.0 * static_cast<double>(num_elements(shape) * 4) / kConversionBytesPerUs;
}

GroupPlan plan_groups(const Graph& g, const HalideLoweringOptions& options) {
  const int block = gen::channel_block(Halide::Target(halide_target_string(options.target)));
  GroupPlan plan;
  LayoutProblem problem;
  problem.options.resize(g.nodes.size());
  std::map<size_t, std::vector<size_t>> option_candidate;  // per planned step: option -> candidate index
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& node = g.nodes[i];
    // A qconv2d with VNNI dot products: its one candidate (two steps and scratch), NCHW.
    if (std::optional<Candidate> vnni = qconv2d_vnni_candidate(g, node, halide_target_string(options.target))) {
      PlannedGroup group;
      group.run = *vnni;
      group.choice.candidates = {std::move(*vnni)};
      group.choice.measured_us = {std::nan("")};
      group.choice.by = "only candidate";
      plan.groups.emplace(i, std::move(group));
      continue;
    }
    if (node.op != OpKind::Conv2d) continue;
    PlannedGroup group;
    group.choice = conv_choice(g, node, options);
    group.fastest_alone = group.choice.chosen;
    const std::vector<double> costs = candidate_costs(group.choice);
    ++plan.totals.groups;
    // Options: the candidates with a time, else the rules' choice alone.
    std::vector<size_t>& candidate = option_candidate[i];
    for (size_t k = 0; k < costs.size(); ++k)
      if (std::isfinite(costs[k])) candidate.push_back(k);
    if (candidate.empty()) {
      candidate = {group.choice.chosen};
    } else {
      ++plan.totals.costed;
      plan.totals.fastest_alone_us += costs[group.fastest_alone];
      for (size_t k = 0; k < costs.size(); ++k)
        if (group.choice.candidates[k].name == "direct") plan.totals.all_direct_us += costs[k];
    }
    for (size_t k : candidate)
      problem.options[i].push_back(layout_option(g, node, group.choice.candidates[k], costs.empty() ? 0 : costs[k]));
    plan.groups.emplace(i, std::move(group));
  }
  problem.conversion_us = [&](TensorId t, Layout from, Layout to) {
    const Shape& shape = g.tensor(t).shape;
    if (options.tuning != nullptr)
      if (const double* us = options.tuning->time(conversion_description(shape, from, to, block), kConversionCandidate))
        return *us;
    return predicted_conversion_us(shape);
  };
  const LayoutPlan layouts = choose_layouts(g, problem);

  plan.totals.chosen_us = layouts.total_us;
  for (auto& [i, group] : plan.groups) {
    if (g.nodes[i].op != OpKind::Conv2d) continue;
    group.choice.chosen = option_candidate[i][layouts.chosen[i]];
    group.run = with_conversions(g, g.nodes[i], group.choice.candidates[group.choice.chosen], layouts.stored, block,
                                 group.conversions);
  }
  return plan;
}

}  // namespace aotc
