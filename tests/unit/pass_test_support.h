// Helpers for pass unit tests: parse a graph from .air text, run one pass the
// way the pipeline does (followed by dce), and check numerically, with the
// reference evaluator, that a rewrite kept the graph's meaning.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "ir/parser.h"
#include "ir/printer.h"
#include "passes/eliminate_dead_code.h"
#include "passes/pass.h"
#include "reference/evaluator.h"

namespace aotc::testing {

inline Graph parse(const std::string& text) { return parse_graph(text, "test.air"); }

// Runs `pass`, then dce (as the pipeline does).
inline Graph run_pass(Graph g, PassFn pass, PassCounters& counters) {
  g = pass(std::move(g), counters);
  PassCounters dce;
  return eliminate_dead_code(std::move(g), dce);
}

inline int count_ops(const Graph& g, OpKind op) {
  return static_cast<int>(std::count_if(g.nodes.begin(), g.nodes.end(), [&](const Node& n) { return n.op == op; }));
}

// The node defining the tensor called `name`; fails the test if there is none.
inline const Node& producer_of(const Graph& g, const std::string& name) {
  for (const Node& node : g.nodes)
    for (TensorId out : node.outputs)
      if (g.tensor(out).name == name) return node;
  ADD_FAILURE() << "no node defines %" << name << " in\n" << print_graph(g);
  static const Node kNone;
  return kNone;
}

// Uniform random values in [-2, 2) for every graph input.
inline std::vector<Value> random_inputs(const Graph& g, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  std::vector<Value> inputs;
  for (TensorId id : g.inputs) {
    Value v{g.tensor(id).shape, {}};
    v.data.resize(static_cast<size_t>(num_elements(v.shape)));
    for (float& x : v.data) x = uniform(rng);
    inputs.push_back(std::move(v));
  }
  return inputs;
}

// The reference evaluator gives the same outputs for both graphs on random
// inputs: max|diff| <= tolerance * max(1, max|before|), per output (equal
// infinities, e.g. max pooling over -inf padding, count as equal; NaN never does).
inline void expect_same_results(const Graph& before, const Graph& after, double tolerance = 1e-5,
                                unsigned seed = 7) {
  ASSERT_EQ(before.inputs.size(), after.inputs.size());
  const std::vector<Value> inputs = random_inputs(before, seed);
  const std::vector<Value> expected = evaluate(before, inputs);
  const std::vector<Value> actual = evaluate(after, inputs);
  ASSERT_EQ(expected.size(), actual.size());
  for (size_t o = 0; o < expected.size(); ++o) {
    ASSERT_EQ(expected[o].shape, actual[o].shape) << "output " << o;
    double max_ref = 1, max_diff = 0;
    for (size_t i = 0; i < expected[o].data.size(); ++i) {
      const double e = expected[o].data[i], a = actual[o].data[i];
      const double diff = e == a ? 0 : std::fabs(e - a);  // equal infinities match
      if (std::isfinite(e)) max_ref = std::max(max_ref, std::fabs(e));
      if (std::isnan(diff) || diff > max_diff) max_diff = diff;  // a NaN sticks
    }
    EXPECT_LE(max_diff, tolerance * max_ref) << "output " << o << " of\n" << print_graph(after);
  }
}

}  // namespace aotc::testing
