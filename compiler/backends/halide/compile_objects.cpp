// Ahead-of-time compilation of a LoweredModel's kernels in worker processes.
// Halide compiles one pipeline at a time per process, so both cores are used by
// forking: worker w compiles kernels w, w+jobs, ... (through the kernel cache,
// kernel_cache.h) and reports back through a small file per kernel (seconds,
// whether it came from the cache, schedule). Forking happens before this
// process has used Halide or started any thread.
#include <sys/wait.h>
#include <unistd.h>


#include <Halide.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "backends/halide/halide_backend.h"
#include "backends/halide/kernel_cache.h"
#include "support/error.h"

namespace aotc {
namespace {

std::string object_path(const std::string& dir, const std::string& function) { return dir + "/" + function + ".o"; }
std::string meta_path(const std::string& dir, const std::string& function) { return dir + "/" + function + ".meta"; }

// The body of one worker process; returns its exit status.
int compile_share(const std::vector<KernelSource>& kernels, const std::string& target, const std::string& dir,
                  const std::string& cache_dir, int worker, int jobs, bool runtime, std::ostream* progress) {
  try {
    for (size_t k = static_cast<size_t>(worker); k < kernels.size(); k += static_cast<size_t>(jobs)) {
      const KernelSource& kernel = kernels[k];
      auto start = std::chrono::steady_clock::now();
      const KernelSource::Compiled compiled = kernel.compile(target, object_path(dir, kernel.function), cache_dir);
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::ofstream(meta_path(dir, kernel.function)) << seconds << " " << compiled.from_cache << "\n"
                                                     << compiled.schedule << "\n";
      if (progress) {
        char line[512];
        std::snprintf(line, sizeof line, "  [%zu/%zu] %-28s %6.2fs%s  %s\n", k + 1, kernels.size(),
                      kernel.function.c_str(), seconds, compiled.from_cache ? " (cached)" : "",
                      kernel.description.c_str());
        *progress << line << std::flush;
      }
    }
    if (runtime) {
      // avx512_sapphirerapids only where a kernel asks for it (gen::kernel_target).
      const Halide::Target t = Halide::Target(target)
                                   .without_feature(Halide::Target::AVX512_SapphireRapids)
                                   .with_feature(Halide::Target::UserContext);
      compile_runtime_object(t, dir + "/halide_runtime.o", cache_dir);
    }
    return 0;
  } catch (const Halide::Error& e) {
    std::cerr << "aotc: internal error: Halide: " << e.what() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "aotc: internal error: " << e.what() << "\n";
  }
  return 1;
}

}  // namespace

CompiledObjects compile_halide_objects(const std::vector<KernelSource>& kernels, const std::string& target,
                                       const std::string& work_dir, int jobs, const std::string& cache_dir,
                                       std::ostream* progress) {
  // Symbols are digests of descriptions (kernel_symbol): one symbol, one kernel.
  std::set<std::string> functions;
  for (const KernelSource& kernel : kernels)
    AOTC_CHECK(functions.insert(kernel.function).second, "two kernels of a library are both named ", kernel.function);
  jobs = std::max(1, std::min<int>(jobs, static_cast<int>(kernels.size())));
  std::cout << std::flush;
  std::cerr << std::flush;
  if (progress) *progress << std::flush;
  std::vector<pid_t> workers;
  for (int w = 0; w < jobs; ++w) {
    pid_t pid = fork();
    if (pid < 0) fail(ExitCode::kInternal, "cannot start a compile worker process");
    if (pid == 0) _exit(compile_share(kernels, target, work_dir, cache_dir, w, jobs, /*runtime=*/w == 0, progress));
    workers.push_back(pid);
  }
  bool ok = true;
  int signal = 0;
  for (pid_t pid : workers) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (WIFSIGNALED(status)) signal = WTERMSIG(status);
  }
  AOTC_CHECK(signal == 0, "a kernel compile worker died of signal ", signal);
  AOTC_CHECK(ok, "a kernel failed to compile (see the message above)");

  CompiledObjects out;
  for (const KernelSource& kernel : kernels) {
    std::ifstream meta(meta_path(work_dir, kernel.function));
    double seconds = 0;
    bool from_cache = false;
    std::string schedule;
    meta >> seconds >> from_cache;
    std::getline(meta >> std::ws, schedule);
    out.objects.push_back(object_path(work_dir, kernel.function));
    out.schedules.push_back(schedule);
    out.kernel_seconds.push_back(seconds);
    out.kernels_from_cache += from_cache ? 1 : 0;
  }
  out.objects.push_back(work_dir + "/halide_runtime.o");
  out.cache_used = !cache_dir.empty();
  return out;
}

// Halide 14 takes AMD Zen 4 (AVX512-VNNI and -BF16) for a Sapphire Rapids, whose feature
// set includes AVX-VNNI (VEX-encoded), which Zen 4 lacks: LLVM then may emit vpdpwssd for
// index arithmetic and the library dies with SIGILL (found by aotc-fuzz on a
// depth_to_space). The host target keeps the feature, which tells the int8 kernels that
// AVX512-VNNI is there, but kernels compile without it unless they ask for it
// (gen::kernel_target), and tests/kernels/vnni_encoding_test.py checks those that do.
namespace {

Halide::Target host_target() { return Halide::get_host_target(); }

}  // namespace

std::string halide_target_string(const std::string& requested) {
  if (requested.empty() || requested == "host") return host_target().to_string();
  if (!Halide::Target::validate_target_string(requested))
    fail(ExitCode::kUsage, "--target: '", requested, "' is not a Halide target string (e.g. host, x86-64-linux-avx2, arm-64-linux)");
  const Halide::Target target(requested);
  // The GPU runs through the CUDA stubs, which nvcc builds for this host only.
  const Halide::Target host = host_target();
  if (target.has_gpu_feature() &&
      (!target.has_feature(Halide::Target::CUDA) || target.arch != host.arch || target.bits != host.bits ||
       target.os != host.os))
    fail(ExitCode::kUnsupported, "--target: '", requested,
         "' asks for a GPU aotc does not build for; GPU libraries are CUDA for this host (e.g. "
         "host-cuda-cuda_capability_80)");
  if (target.has_feature(Halide::Target::CUDA) && target.get_cuda_capability_lower_bound() > 20 &&
      target.get_cuda_capability_lower_bound() < 75)
    fail(ExitCode::kUnsupported, "--target: '", requested,
         "': nvcc 13 builds for compute capability 7.5 and newer (cuda_capability_75 or higher)");
  return target.to_string();
}

int cuda_capability(const std::string& target) {
  const Halide::Target t(target);
  if (!t.has_feature(Halide::Target::CUDA)) return 0;
  return std::max(75, t.get_cuda_capability_lower_bound());
}

namespace {

// The targets aotc can package: the C++ compiler for the runner on another host,
// and what `file` calls the objects it makes (an ELF class and machine).
struct PackagedArch {
  Halide::Target::Arch arch;
  int bits;
  const char* name;
  const char* cross_compiler;
  ObjectFormat format;
};

const PackagedArch kPackagedArchs[] = {
    {Halide::Target::X86, 64, "x86-64-linux", "x86_64-linux-gnu-g++", {64, 62, "x86-64"}},
    {Halide::Target::ARM, 64, "arm-64-linux", "aarch64-linux-gnu-g++", {64, 183, "AArch64"}},
    {Halide::Target::ARM, 32, "arm-32-linux", "arm-linux-gnueabihf-g++", {32, 40, "32-bit ARM"}},
};

const PackagedArch& packaged_arch(const std::string& target_string) {
  const Halide::Target target(target_string);
  if (target.os == Halide::Target::Linux)
    for (const PackagedArch& a : kPackagedArchs)
      if (a.arch == target.arch && a.bits == target.bits) return a;
  std::string known;
  for (const PackagedArch& a : kPackagedArchs) known += std::string(known.empty() ? "" : ", ") + a.name;
  fail(ExitCode::kUnsupported, "--target: '", target_string,
       "': aotc packages libraries for Linux on ", known,
       " only; it knows no C++ compiler for this target's runner, and the host's would give a library that mixes "
       "architectures");
}

}  // namespace

std::string default_runner_compiler(const std::string& target) {
  const PackagedArch& arch = packaged_arch(target);
  const Halide::Target host = host_target();
  const bool native = host.os == Halide::Target::Linux && host.arch == arch.arch && host.bits == arch.bits;
  return native ? "c++" : arch.cross_compiler;
}

ObjectFormat target_object_format(const std::string& target) { return packaged_arch(target).format; }

}  // namespace aotc
