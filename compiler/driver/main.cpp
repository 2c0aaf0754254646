// aotc: the command-line driver. Reads a model, runs the pass pipeline and emits
// what was asked for. Every failure becomes one line on stderr and an exit code
// (support/error.h); nothing half-written is left behind.
#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "backends/backend.h"
#include "backends/halide/group_plan.h"
#include "backends/halide/halide_backend.h"
#include "backends/halide/kernel_cache.h"
#include "frontends/frontend.h"
#include "ir/float_islands.h"
#include "ir/printer.h"
#include "package/package.h"
#include "passes/pipeline.h"
#include "plan/memory_plan.h"
#include "reference/evaluator.h"
#include "support/error.h"
#include "tune/tune.h"
#include "tune/tune_gpu.h"
#include "tune/tuning_cache.h"

namespace aotc {
namespace {

constexpr const char* kVersion = "0.1.0";

struct Options {
  std::vector<std::string> models;  // the command line's; several only with --emit=check
  std::string model;                // the one being compiled
  std::string emit = "graph";
  std::string output;
  std::string name;
  std::string target = "host";
  std::string cxx;
  int jobs = 0;
  std::string kernel_cache;
  std::string compiler_launcher;
  std::vector<std::string> inputs;
  std::vector<std::string> input_shapes;  // --input-shape NAME=D0,D1,...
  std::vector<std::string> constants;     // --constant NAME=FILE.pb
  bool stats = false;
  PipelineOptions pipeline;
  std::string passes_list;
  std::string conv_algorithm = "auto";
  std::string layouts = "auto";
  std::string weights = "embedded";
  std::string gpu_backends = "auto";
  bool tune = false;
  std::string tuning_cache_path;
  TuningCache tuning_cache;  // read from tuning_cache_path, or measured by --tune

  HalideLoweringOptions lowering() const {
    return {.winograd = conv_algorithm == "auto",
            .blocked_layouts = layouts == "auto",
            .tuning = tuning_cache_path.empty() && !tune ? nullptr : &tuning_cache,
            .target = target};
  }
  // The memory plan a CPU library of these options uses.
  MemoryPlan plan(const Graph& g) const { return plan_halide_memory(g, plan_groups(g, lowering())); }
};

// `s` left-aligned in a column of `width` characters (at least one space after).
std::string padded(const std::string& s, size_t width) {
  return s + std::string(s.size() < width ? width - s.size() : 1, ' ');
}

std::string exit_code_help() {
  return "Exit codes: 0 success, 1 bad command line, 2 invalid model, 3 unsupported model feature, "
         "4 file I/O error, 70 internal error (a bug in aotc).";
}

std::string pass_help() {
  std::ostringstream os;
  os << "Passes (default pipeline order; dce also runs after each):\n";
  for (const PassInfo& p : pass_registry()) {
    os << "  " << padded(p.name, 18) << p.summary << "\n";
  }
  return os.str();
}

// Writes `bytes` to `path` through a temporary file and a rename, so a failure
// never leaves a half-written file that looks like good output.
void write_file_atomically(const std::string& path, const std::string& bytes) {
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) {
      std::remove(temp.c_str());
      fail(ExitCode::kIo, path, ": cannot write the output file");
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    std::remove(temp.c_str());
    fail(ExitCode::kIo, path, ": cannot write the output file (", ec.message(), ")");
  }
}

Value read_input(const std::string& path, const Tensor& input) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(ExitCode::kIo, path, ": cannot open the input file");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const int64_t expected = num_elements(input.shape) * 4;
  if (static_cast<int64_t>(bytes.size()) != expected)
    fail(ExitCode::kUsage, path, ": has ", bytes.size(), " bytes but graph input '", input.name, "' f32",
         to_string(input.shape), " needs ", expected, " (raw little-endian float32)");
  Value v;
  v.shape = input.shape;
  v.data.resize(static_cast<size_t>(num_elements(input.shape)));
  std::memcpy(v.data.data(), bytes.data(), bytes.size());
  return v;
}

void emit_run(const Graph& g, const Options& opt) {
  if (opt.output.empty()) fail(ExitCode::kUsage, "--emit=run needs -o OUTPUT.bin");
  if (opt.inputs.size() != g.inputs.size())
    fail(ExitCode::kUsage, "--emit=run: the model has ", g.inputs.size(), " input(s) but ", opt.inputs.size(),
         " --input file(s) were given");
  std::vector<Value> inputs;
  for (size_t i = 0; i < g.inputs.size(); ++i) inputs.push_back(read_input(opt.inputs[i], g.tensor(g.inputs[i])));
  std::string bytes;
  for (const Value& out : evaluate(g, inputs))
    bytes.append(reinterpret_cast<const char*>(out.data.data()), out.data.size() * sizeof(float));
  write_file_atomically(opt.output, bytes);
}

void print_stats(std::ostream& os, const Graph& g, const std::vector<PassRecord>& records, const Options& opt) {
  os << "pass statistics:\n";
  for (const PassRecord& r : records) {
    char time[32];
    std::snprintf(time, sizeof time, "%8.3fs", r.seconds);
    os << "  " << padded(r.pass, 18) << time;
    for (const auto& [name, n] : r.counters.all()) os << "  " << name << "=" << n;
    os << "\n";
  }
  std::map<std::string, int> histogram;
  for (const Node& node : g.nodes) ++histogram[op_signature(node)];
  os << "final graph: " << g.nodes.size() << " nodes\n";
  for (const auto& [sig, n] : histogram) os << "  " << padded(sig, 28) << n << "\n";
  os << float_islands_text(float_islands(g));
  const MemoryPlan plan = opt.plan(g);
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.3f", plan.lower_bound_bytes ? double(plan.arena_bytes) / double(plan.lower_bound_bytes) : 1.0);
  os << "memory plan: arena " << plan.arena_bytes << " bytes, liveness lower bound " << plan.lower_bound_bytes
     << " bytes (arena/bound " << ratio << "), naive sum " << plan.naive_bytes << " bytes, "
     << plan.in_place_count << " in place, " << plan.alias_count << " aliased, " << plan.slice_count
     << " concat slices\n";
}

// The SDK header copied beside every generated header: from an installed tree
// (<prefix>/bin/aotc -> <prefix>/include/aotc/aotc.h) or else the source tree.
std::string sdk_header() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const std::filesystem::path installed = exe.parent_path().parent_path() / "include" / "aotc" / "aotc.h";
    if (std::filesystem::exists(installed)) return installed.string();
  }
  return AOTC_SOURCE_SDK_HEADER;
}

// Removes the work directory however the compilation ends.
struct WorkDirectory {
  std::filesystem::path path;
  ~WorkDirectory() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

// "aotc 0.1.0 from resnet18.fb": what the header and report say made them.
std::string producer(const Options& opt) {
  return std::string("aotc ") + kVersion + " from " + std::filesystem::path(opt.model).filename().string();
}

// "NAME=VALUE" of --input-shape and --constant.
std::pair<std::string, std::string> name_and_value(const std::string& arg, const char* option) {
  const size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size())
    fail(ExitCode::kUsage, option, " ", arg, ": expected NAME=VALUE");
  return {arg.substr(0, eq), arg.substr(eq + 1)};
}

ModelBindings model_bindings(const Options& opt) {
  ModelBindings bindings;
  for (const std::string& arg : opt.input_shapes) {
    const auto [name, dims] = name_and_value(arg, "--input-shape");
    Shape shape;
    std::stringstream list(dims);
    for (std::string d; std::getline(list, d, ',');) {
      size_t used = 0;
      long long v = 0;
      try {
        v = std::stoll(d, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != d.size() || v < 1)
        fail(ExitCode::kUsage, "--input-shape ", arg, ": '", d, "' is not a positive dimension");
      shape.push_back(v);
    }
    bindings.input_shapes[name] = shape;
  }
  for (const std::string& arg : opt.constants) {
    const auto [name, file] = name_and_value(arg, "--constant");
    bindings.constants[name] = file;
  }
  return bindings;
}

// Worker processes compiling kernels: --jobs, else one per core.
int jobs(const Options& opt) {
  return opt.jobs > 0 ? opt.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// --tuning-cache and --tune: reads the cache for the target if there is one;
// with --tune, times what it lacks on this machine and writes it back.
void prepare_tuning(const Graph& g, Options& opt) {
  if (opt.tune && opt.emit != "lib") fail(ExitCode::kUsage, "--tune needs --emit=lib");
  const std::string target = halide_target_string(opt.target);
  const bool gpu = cuda_capability(target) > 0;
  if (opt.tune && !gpu && target != halide_target_string("host"))
    fail(ExitCode::kUsage, "--tune measures on this machine: it needs --target host or a CUDA target, not ", target);
  if (opt.tune && opt.tuning_cache_path.empty()) {
    const std::filesystem::path out_dir = opt.output.empty() ? "." : opt.output;
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    if (ec) fail(ExitCode::kIo, out_dir.string(), ": cannot create the output directory (", ec.message(), ")");
    opt.tuning_cache_path = (out_dir / (g.name + ".tuning.json")).string();
  }
  if (opt.tuning_cache_path.empty()) return;
  opt.tuning_cache.target = target;
  if (!opt.tune || std::filesystem::exists(opt.tuning_cache_path))
    opt.tuning_cache = read_tuning_cache(opt.tuning_cache_path, target, std::cerr);
  if (!opt.tune) return;
  if (gpu) {
    const std::filesystem::path out_dir = opt.output.empty() ? "." : opt.output;
    WorkDirectory work{out_dir / (".aotc-tune-" + g.name + "-" + std::to_string(getpid()))};
    tune_gpu(g,
             {.target = target,
              .work_dir = work.path.string(),
              .jobs = jobs(opt),
              .sdk_header = sdk_header(),
              .producer = producer(opt),
              .log = &std::cout},
             opt.tuning_cache);
  } else {
    tune(g, opt.lowering(), target, opt.tuning_cache, std::cout);
  }
  write_file_atomically(opt.tuning_cache_path, tuning_cache_json(opt.tuning_cache));
  std::cout << "aotc: wrote " << opt.tuning_cache_path << "\n";
}

// The backend options that decide how `opt`'s graph is lowered.
BackendOptions lowering_options(const Options& opt) {
  BackendOptions backend;
  backend.target = halide_target_string(opt.target);
  backend.tuning = opt.tuning_cache_path.empty() ? nullptr : &opt.tuning_cache;
  backend.lowering = opt.lowering();
  backend.external_weights = opt.weights == "external";
  backend.gpu_backends = opt.gpu_backends;
  return backend;
}

void emit_lib(const Graph& g, const Options& opt, std::chrono::steady_clock::time_point start) {
  const std::string target = halide_target_string(opt.target);
  const ObjectFormat format = target_object_format(target);  // refuses targets aotc cannot package
  const std::filesystem::path out_dir = opt.output.empty() ? std::filesystem::path(".") : std::filesystem::path(opt.output);
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) fail(ExitCode::kIo, out_dir.string(), ": cannot create the output directory (", ec.message(), ")");
  WorkDirectory work{out_dir / (".aotc-work-" + g.name + "-" + std::to_string(getpid()))};
  std::filesystem::create_directories(work.path, ec);
  if (ec) fail(ExitCode::kIo, work.path.string(), ": cannot create a work directory (", ec.message(), ")");

  BackendOptions backend = lowering_options(opt);
  backend.work_dir = work.path.string();
  backend.jobs = jobs(opt);
  if (!opt.kernel_cache.empty()) {
    prepare_kernel_cache(opt.kernel_cache);
    backend.kernel_cache = std::filesystem::absolute(opt.kernel_cache).string();
  }
  backend.progress = &std::cout;
  backend.producer = producer(opt);
  backend.cxx = opt.cxx.empty() ? default_runner_compiler(target) : opt.cxx;
  const LibraryParts parts = build_library_parts(g, backend);

  PackageOptions options;
  options.out_dir = out_dir.string();
  options.work_dir = work.path.string();
  options.assembler = backend.cxx;
  options.format = format;
  options.sdk_header = sdk_header();
  if (!opt.compiler_launcher.empty()) options.compiler_launcher = {opt.compiler_launcher};
  options.compile_seconds_so_far = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const PackageResult result = write_library(parts, options);
  std::cout << result.summary << "wrote " << result.library << ", " << result.header << ", " << result.report
            << (result.weights.empty() ? "" : ", " + result.weights) << "\n";
}

// opt.model read, named and optimised; its tuning cache read (or measured with --tune).
Graph optimised_model(Options& opt) {
  Graph g = load_model(opt.model, model_bindings(opt));
  // The model file's stem names the model (model.fb -> libmodel.a), as users expect.
  g.name = opt.name.empty() ? std::filesystem::path(opt.model).stem().string() : opt.name;
  std::vector<PassRecord> records;
  g = run_pipeline(std::move(g), opt.pipeline, &records);
  prepare_tuning(g, opt);
  if (opt.stats) print_stats(std::cerr, g, records, opt);
  return g;
}

// The exit code and the message line (after "aotc: ") of the exception being handled.
std::pair<int, std::string> current_failure() {
  try {
    throw;
  } catch (const UserError& e) {
    return {static_cast<int>(e.code()), std::string("error: ") + e.what()};
  } catch (const InternalError& e) {
    return {static_cast<int>(ExitCode::kInternal), e.what()};
  } catch (const std::bad_alloc&) {
    return {static_cast<int>(ExitCode::kInternal), "error: out of memory"};
  } catch (const std::exception& e) {
    return {static_cast<int>(ExitCode::kInternal), std::string("internal error: ") + e.what()};
  } catch (...) {
    return {static_cast<int>(ExitCode::kInternal), "internal error: an unknown exception"};
  }
}

// --emit=check: each model read, optimised and lowered for the target as
// --emit=lib would, without code generation; a line per model on stdout
// ("MODEL: ok: ..." or "MODEL: exit N: error: ..."). Returns the highest exit
// code of them: 0 when aotc compiles every one.
int emit_check(const Options& opt) {
  target_object_format(halide_target_string(opt.target));  // refuses targets aotc cannot package
  int worst = 0;
  for (const std::string& path : opt.models) {
    Options one = opt;
    one.model = path;
    try {
      const Graph g = optimised_model(one);
      const LoweredCounts counts = count_lowered(g, lowering_options(one));
      std::cout << path << ": ok: " << g.nodes.size() << " nodes, " << counts.layers << " layers, " << counts.kernels
                << " distinct kernels\n";
    } catch (...) {
      const auto [code, message] = current_failure();
      std::cout << path << ": exit " << code << ": " << message << "\n";
      worst = std::max(worst, code);
    }
  }
  return worst;
}

int run(int argc, char** argv) {
  const auto start = std::chrono::steady_clock::now();
  Options opt;
  CLI::App app{"aotc " + std::string(kVersion) + ": ahead-of-time compiler from CNN models to static libraries.",
               "aotc"};
  app.footer("\n" + pass_help() + "\n" + exit_code_help());
  app.set_version_flag("--version", std::string("aotc ") + kVersion);
  app.add_option("model", opt.models,
                 "Model file, recognised by its content: .fb (aotc's FlatBuffers format), .tflite (TensorFlow "
                 "Lite), .onnx (ONNX, opsets 7 to 17) or .air (aotc's IR text); several with --emit=check")
      ->required();
  app.add_option("--emit", opt.emit,
                 "What to produce: lib (static library, header and report in the -o directory), graph "
                 "(the optimised IR text), run (evaluate with the reference evaluator), plan (the static "
                 "memory plan), check (whether aotc compiles each model given, for --target: read, optimised "
                 "and lowered as for lib, nothing compiled; a line per model, exit code the highest of theirs)")
      ->check(CLI::IsMember({"lib", "graph", "run", "plan", "check"}));
  app.add_option("-o,--output", opt.output,
                 "Output: a directory for lib (default: .), a file for run, graph and plan (default: stdout)");
  app.add_option("--name", opt.name, "Model name (default: the model file's stem)");
  app.add_option("--target", opt.target, "Halide target string for --emit=lib: host, x86-64-linux with CPU features (e.g. x86-64-linux-avx2), arm-64-linux or arm-32-linux (default: host); host-cuda[-cuda_capability_NN] builds a GPU library (Halide CUDA kernels and CUDA stubs over cuDNN, see --gpu-backends)");
  app.add_option("--jobs", opt.jobs, "Worker processes compiling kernels (default: one per core)");
  app.add_option("--kernel-cache", opt.kernel_cache,
                 "Directory of compiled kernels keyed by their lowered Halide code, target and Halide build: a "
                 "kernel found there is copied instead of compiled, one compiled is added (default: none; the "
                 "environment variable AOTC_KERNEL_CACHE sets it too)")
      ->envname("AOTC_KERNEL_CACHE");
  app.add_option("--compiler-launcher", opt.compiler_launcher,
                 "A program the generated runner's (and a GPU library's CUDA stubs') compile command runs under, "
                 "e.g. ccache (default: none; the environment variable AOTC_COMPILER_LAUNCHER sets it too)")
      ->envname("AOTC_COMPILER_LAUNCHER");
  app.add_option("--cxx", opt.cxx, "C++ compiler for the generated runner (default: c++ for the host's architecture, aarch64-linux-gnu-g++ for arm-64-linux, arm-linux-gnueabihf-g++ for arm-32-linux)");
  app.add_option("--conv-algorithm", opt.conv_algorithm,
                 "auto: Winograd F(4x4,3x3) for the 3x3 stride-1 convolutions where it was measured faster, direct "
                 "convolution elsewhere; direct: direct convolution everywhere (default: auto)")
      ->check(CLI::IsMember({"auto", "direct"}));
  app.add_option("--layouts", opt.layouts,
                 "auto: channel-blocked (NCHWc) depthwise and 1x1 convolutions are candidates too, chosen over the "
                 "whole chain by the tuning cache (--tune) or the cost model, layout conversions counted; nchw: every "
                 "convolution reads and writes NCHW (default: auto)")
      ->check(CLI::IsMember({"nchw", "auto"}));
  app.add_option("--weights", opt.weights,
                 "embedded: the weights are linked into the library; external: written to <name>.weights beside it "
                 "and passed to each run (aotc_<name>_run_with_weights), e.g. mmapped from another partition; for "
                 "a GPU library, passed to create (aotc_<name>_create_with_weights), which uploads them "
                 "(default: embedded)")
      ->check(CLI::IsMember({"embedded", "external"}));
  app.add_option("--gpu-backends", opt.gpu_backends,
                 "With a CUDA target: auto: each convolution and pooling group runs a Halide CUDA kernel or the "
                 "CUDA stubs' call (cuDNN), whichever the tuning cache (measured: --tune, or bench/gpu) or the cost "
                 "model says is faster; halide: every group that has a Halide CUDA kernel runs it; cudnn: none does "
                 "(default: auto)")
      ->check(CLI::IsMember({"auto", "halide", "cudnn"}));
  app.add_flag("--tune", opt.tune,
               "With --emit=lib: time every candidate implementation of each convolution on this machine (one "
               "thread, JIT, outputs checked against the reference evaluator), add the times to the tuning cache "
               "and choose by them; with a CUDA target, time each group's Halide CUDA kernel and cuDNN call on "
               "this machine's GPU (the all-Halide and all-cuDNN libraries' profile_layers)");
  app.add_option("--tuning-cache", opt.tuning_cache_path,
                 "With --emit=lib: the tuning cache to choose by (and, with --tune, to complete and rewrite; "
                 "default with --tune: <output>/<name>.tuning.json); one of another target or version is ignored");
  app.add_option("--input", opt.inputs, "With --emit=run: raw float32 file per graph input, in order");
  app.add_option("--input-shape", opt.input_shapes,
                 "ONNX: NAME=D0,D1,... fixes the shape of graph input NAME, e.g. one with a symbolic batch dim "
                 "(repeat for several inputs)");
  app.add_option("--constant", opt.constants,
                 "ONNX: NAME=FILE.pb makes graph input NAME the constant tensor of FILE.pb (a serialized ONNX "
                 "TensorProto), for graphs that take their weights as inputs (repeat for several inputs)");
  app.add_flag("--stats", opt.stats, "Print per-pass counters, the final op histogram and the memory plan to stderr");
  app.add_flag("--print-after-all", opt.pipeline.print_after_all, "Print the graph to stderr after every pass");
  app.add_option("--print-after", opt.pipeline.print_after, "Print the graph to stderr after this pass")
      ->delimiter(',');
  app.add_option("--disable-pass", opt.pipeline.disabled, "Skip this pass in the default pipeline")->delimiter(',');
  auto* passes = app.add_option("--passes", opt.passes_list,
                                "Run exactly these passes, comma-separated, in order (empty: none)");
  // CLI11 2.1 reads `--passes=` (an explicitly empty list) as `--passes` and
  // takes the next argument as its value; "," is the same empty list.
  std::vector<std::string> args(argv + 1, argv + argc);
  for (std::string& a : args)
    if (a == "--passes=") a = "--passes=,";
  std::reverse(args.begin(), args.end());  // CLI11 takes a reversed argument vector
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : static_cast<int>(ExitCode::kUsage);
  }
  if (passes->count() > 0) {
    opt.pipeline.explicit_passes = true;
    std::stringstream list(opt.passes_list);
    for (std::string p; std::getline(list, p, ',');)
      if (!p.empty()) opt.pipeline.passes.push_back(p);
  }
  opt.pipeline.dump_stream = &std::cerr;

  if (opt.emit == "check") return emit_check(opt);
  if (opt.models.size() != 1)
    fail(ExitCode::kUsage, opt.models.size(), " model files given: --emit=", opt.emit, " takes one");
  opt.model = opt.models[0];
  const Graph g = optimised_model(opt);
  if (opt.emit == "lib") {
    emit_lib(g, opt, start);
  } else if (opt.emit == "run") {
    emit_run(g, opt);
  } else {
    std::ostringstream text;
    if (opt.emit == "graph") print_graph(text, g);
    else print_memory_plan(text, g, opt.plan(g));
    if (opt.output.empty()) std::cout << text.str();
    else write_file_atomically(opt.output, text.str());
  }
  return 0;
}

}  // namespace
}  // namespace aotc

int main(int argc, char** argv) {
  try {
    return aotc::run(argc, argv);
  } catch (...) {
    const auto [code, message] = aotc::current_failure();
    std::cerr << "aotc: " << message << "\n";
    return code;
  }
}
