#include "tune/tune.h"

#include <Halide.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>

#include "backends/halide/conv_candidates.h"
#include "backends/halide/group_plan.h"
#include "generators/depthwise_conv_blocked.h"
#include "generators/layout.h"
#include "reference/evaluator.h"
#include "support/error.h"

namespace aotc {
namespace {

// Timed runs of a candidate: enough for ~kTimedSeconds, within these bounds.
constexpr double kTimedSeconds = 0.2;
constexpr int kMinRuns = 5, kMaxRuns = 200;
// A candidate's output may differ from the reference evaluator's by this much
// of the output's largest magnitude (Winograd's measured error is ~1e-5).
constexpr double kTolerance = 1e-3;

// Storage for `count` floats: Halide allocates it aligned (128 bytes), as the
// arena and the weights blob are.
Halide::Buffer<float> floats(int64_t count) { return Halide::Buffer<float>(static_cast<int>(count)); }

// A dense buffer of `shape` (outermost first) over `data`.
Halide::Buffer<float> view(float* data, const Shape& shape) {
  std::vector<int> sizes(shape.rbegin(), shape.rend());
  return Halide::Buffer<float>(data, sizes);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A node's tensors, each in the layouts a candidate takes it in.
using TensorBuffers = std::map<std::pair<TensorId, Layout>, Halide::Buffer<float>>;

// A node's tensors and one candidate's kernels over them, JIT-compiled.
class CandidateRun {
 public:
  CandidateRun(const Candidate& c, TensorBuffers& tensors, const Halide::Target& target)
      : target_(target), scratch_(floats(c.scratch_bytes / 4 + 1)) {
    for (const auto& pack : c.packed) {
      gen::PackedWeights w = pack();
      packed_.push_back(floats(num_elements(w.shape)));
      std::copy(w.data.begin(), w.data.end(), packed_.back().data());
      packed_shapes_.push_back(w.shape);
    }
    for (const KernelStep& s : c.steps) {
      Step step{s.build(target), {}};
      for (size_t i = 0; i < s.args.size(); ++i) {
        const StepArg& a = s.args[i];
        Halide::Buffer<float> b;
        switch (a.kind) {
          case StepArg::Kind::kTensor: b = view(tensors.at({a.tensor, a.layout}).data(), a.shape); break;
          case StepArg::Kind::kPacked:
            b = view(packed_[static_cast<size_t>(a.packed)].data(), packed_shapes_[static_cast<size_t>(a.packed)]);
            break;
          case StepArg::Kind::kScratch: b = view(scratch_.data() + a.offset / 4, a.shape); break;
        }
        if (i + 1 < s.args.size()) step.kernel.inputs[i].set(b);
        else step.output = b;
      }
      step.kernel.output.compile_jit(gen::kernel_target(target, step.kernel));
      steps_.push_back(std::move(step));
    }
  }

  // Runs every kernel once; returns the time taken, µs.
  double run() {
    const auto start = std::chrono::steady_clock::now();
    for (Step& s : steps_) s.kernel.output.realize(s.output, target_);
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  }

 private:
  struct Step {
    gen::Kernel kernel;
    Halide::Buffer<float> output;
  };
  Halide::Target target_;
  Halide::Buffer<float> scratch_;
  std::vector<Halide::Buffer<float>> packed_;
  std::vector<Shape> packed_shapes_;
  std::vector<Step> steps_;
};

// The largest difference between `out` and `reference`, relative to the
// reference's largest magnitude.
double relative_error(const float* out, const Value& reference) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < reference.data.size(); ++i) {
    err = std::max(err, std::abs(static_cast<double>(out[i]) - reference.data[i]));
    if (!std::isfinite(out[i])) err = INFINITY;
    scale = std::max(scale, std::abs(static_cast<double>(reference.data[i])));
  }
  return err / std::max(scale, 1e-30);
}

// The median time of one run of `run`, µs, over enough runs for ~kTimedSeconds
// after a first one that took `first`.
double median_time(CandidateRun& run, double first) {
  const int runs = std::clamp(static_cast<int>(kTimedSeconds * 1e6 / std::max(first, 1.0)), kMinRuns, kMaxRuns);
  std::vector<double> times;
  for (int r = 0; r < runs; ++r) times.push_back(run.run());
  return median(times);
}

// The tensors `c` reads or writes in NCHWc, with their layouts.
std::map<TensorId, Layout> blocked_tensors(const Candidate& c) {
  std::map<TensorId, Layout> blocked;
  for (const KernelStep& s : c.steps)
    for (const StepArg& a : s.args)
      if (a.kind == StepArg::Kind::kTensor && a.layout != Layout::kNCHW) blocked[a.tensor] = a.layout;
  return blocked;
}

gen::LayoutSpec conversion(const Graph& g, TensorId t, gen::LayoutSpec::Conversion direction, int block) {
  return {direction, g.tensor(t).shape, block};
}

// Times converting each tensor some candidate reads or writes in NCHWc, both
// ways, into `cache` (group_plan.h: conversion_description).
void tune_conversions(const Graph& g, const std::vector<Candidate>& candidates, const Halide::Target& target,
                      int block, TuningCache& cache, std::ostream& log) {
  std::map<TensorId, Layout> tensors;
  for (const Candidate& c : candidates) tensors.merge(blocked_tensors(c));
  for (const auto& [t, layout] : tensors)
    for (const auto& [from, to] : {std::pair{Layout::kNCHW, layout}, std::pair{layout, Layout::kNCHW}}) {
      const Shape& shape = g.tensor(t).shape;
      const std::string key = conversion_description(shape, from, to, block);
      if (cache.time(key, kConversionCandidate) != nullptr) continue;
      const int64_t bytes = num_elements(shape) * 4;
      Candidate c;
      c.scratch_bytes = 2 * bytes;
      c.steps = {conversion_step(shape, from, to, block, {StepArg::Kind::kScratch, -1, 0, 0, {}, from},
                                 {StepArg::Kind::kScratch, -1, 0, bytes, {}, to})};
      TensorBuffers none;
      CandidateRun run(c, none, target);
      const double us = median_time(run, run.run());
      cache.times_us[key][kConversionCandidate] = us;
      char line[160];
      std::snprintf(line, sizeof line, "aotc: tune %s: %.1f us\n", key.c_str(), us);
      log << line;
    }
}

// Times every candidate of `node`, whose description is `key`, into `cache`.
void tune_node(const Graph& g, const Node& node, const std::string& key, const std::vector<Candidate>& candidates,
               const Halide::Target& target, int block, TuningCache& cache, std::ostream& log) {
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  std::map<TensorId, Halide::Buffer<float>> tensors;
  std::vector<Value> values;
  for (TensorId id : node.inputs) {
    const Tensor& t = g.tensor(id);
    const int64_t n = num_elements(t.shape);
    auto [it, fresh] = tensors.try_emplace(id, floats(n));
    if (fresh) {
      if (t.is_constant()) std::copy(t.data->begin(), t.data->end(), it->second.data());
      else std::generate(it->second.data(), it->second.data() + n, [&] { return normal(rng); });
    }
    values.push_back({t.shape, std::vector<float>(it->second.data(), it->second.data() + n)});
  }
  const TensorId out = node.outputs[0];
  const int64_t out_count = num_elements(g.tensor(out).shape);
  tensors.try_emplace(out, floats(out_count));
  std::vector<const Value*> inputs;
  for (const Value& v : values) inputs.push_back(&v);
  const Value reference = evaluate_node(g, node, inputs).at(0);

  log << "aotc: tune " << g.tensor(out).name << ":";
  for (const Candidate& c : candidates) {
    // Tensors the candidate takes in NCHWc are converted on the host, and its output back.
    TensorBuffers own;
    for (const auto& [t, nchw] : tensors) own[{t, Layout::kNCHW}] = nchw;
    const std::map<TensorId, Layout> blocked = blocked_tensors(c);
    for (const auto& [t, layout] : blocked) {
      const Halide::Buffer<float>& nchw = tensors.at(t);
      const std::vector<float> data = gen::convert_layout_on_host(
          conversion(g, t, gen::LayoutSpec::Conversion::kNchwToBlocked, block),
          std::vector<float>(nchw.data(), nchw.data() + nchw.number_of_elements()));
      Halide::Buffer<float>& b = own[{t, layout}] = floats(static_cast<int64_t>(data.size()));
      std::copy(data.begin(), data.end(), b.data());
    }
    const Layout out_layout = blocked.count(out) != 0 ? blocked.at(out) : Layout::kNCHW;
    Halide::Buffer<float>& result_buffer = own.at({out, out_layout});
    CandidateRun run(c, own, target);
    std::fill(result_buffer.data(), result_buffer.data() + out_count, NAN);
    const double first = run.run();
    std::vector<float> result(result_buffer.data(), result_buffer.data() + out_count);
    if (out_layout != Layout::kNCHW)
      result = gen::convert_layout_on_host(conversion(g, out, gen::LayoutSpec::Conversion::kBlockedToNchw, block), result);
    const double error = relative_error(result.data(), reference);
    if (!(error <= kTolerance))
      throw InternalError("tuning: candidate " + c.name + " of " + key + " differs from the reference evaluator by " +
                          std::to_string(error) + " of the output's scale");
    const double us = median_time(run, first);
    cache.times_us[key][c.name] = us;
    char line[96];
    std::snprintf(line, sizeof line, " %s %.1f us", c.name.c_str(), us);
    log << line;
  }
  log << "\n";
}

}  // namespace

void tune(const Graph& g, const HalideLoweringOptions& options, const std::string& target, TuningCache& cache,
          std::ostream& log) {
  // The JIT runtime's thread pool reads this when it starts: the cache holds one-thread times.
  setenv("HL_NUM_THREADS", "1", 1);
  const Halide::Target jit_target(target);
  const int block = gen::channel_block(jit_target);
  for (const Node& node : g.nodes) {
    if (node.op != OpKind::Conv2d) continue;
    const std::string key = node_description(g, node);
    const std::vector<Candidate> candidates = conv_candidates(g, node, options);
    if (candidates.size() < 2) continue;  // nothing to choose
    const bool timed = std::all_of(candidates.begin(), candidates.end(),
                                   [&](const Candidate& c) { return cache.time(key, c.name) != nullptr; });
    if (!timed) tune_node(g, node, key, candidates, jit_target, block, cache, log);
    tune_conversions(g, candidates, jit_target, block, cache, log);
  }
}

}  // namespace aotc
