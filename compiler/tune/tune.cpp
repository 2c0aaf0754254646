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

// A node's tensors and one candidate's kernels over them, JIT-compiled.
class CandidateRun {
 public:
  CandidateRun(const Candidate& c, std::map<TensorId, Halide::Buffer<float>>& tensors, const Halide::Target& target)
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
          case StepArg::Kind::kTensor: b = view(tensors.at(a.tensor).data(), a.shape); break;
          case StepArg::Kind::kPacked:
            b = view(packed_[static_cast<size_t>(a.packed)].data(), packed_shapes_[static_cast<size_t>(a.packed)]);
            break;
          case StepArg::Kind::kScratch: b = view(scratch_.data() + a.offset / 4, a.shape); break;
        }
        if (i + 1 < s.args.size()) step.kernel.inputs[i].set(b);
        else step.output = b;
      }
      step.kernel.output.compile_jit(target);
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

// Times every candidate of `node`, whose description is `key`, into `cache`.
void tune_node(const Graph& g, const Node& node, const std::string& key, std::vector<Candidate> candidates,
               const Halide::Target& target, TuningCache& cache, std::ostream& log) {
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
  tensors.try_emplace(out, floats(num_elements(g.tensor(out).shape)));
  std::vector<const Value*> inputs;
  for (const Value& v : values) inputs.push_back(&v);
  const Value reference = evaluate_node(g, node, inputs).at(0);

  log << "aotc: tune " << g.tensor(out).name << ":";
  for (const Candidate& c : candidates) {
    CandidateRun run(c, tensors, target);
    std::fill(tensors.at(out).data(), tensors.at(out).data() + reference.data.size(), NAN);
    const double first = run.run();
    const double error = relative_error(tensors.at(out).data(), reference);
    if (!(error <= kTolerance))
      throw InternalError("tuning: candidate " + c.name + " of " + key + " differs from the reference evaluator by " +
                          std::to_string(error) + " of the output's scale");
    const int runs = std::clamp(static_cast<int>(kTimedSeconds * 1e6 / std::max(first, 1.0)), kMinRuns, kMaxRuns);
    std::vector<double> times;
    for (int r = 0; r < runs; ++r) times.push_back(run.run());
    const double us = median(times);
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
  for (const Node& node : g.nodes) {
    if (node.op != OpKind::Conv2d) continue;
    const std::string key = node_description(g, node);
    std::vector<Candidate> candidates = conv_candidates(g, node, options);
    if (candidates.size() < 2) continue;  // nothing to choose
    const bool timed = std::all_of(candidates.begin(), candidates.end(),
                                   [&](const Candidate& c) { return cache.time(key, c.name) != nullptr; });
    if (!timed) tune_node(g, node, key, std::move(candidates), jit_target, cache, log);
  }
}

}  // namespace aotc
