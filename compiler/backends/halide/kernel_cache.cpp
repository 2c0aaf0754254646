// The kernel cache (kernel_cache.h): keys, lookups and atomic stores.
#include "backends/halide/kernel_cache.h"

#include <sys/stat.h>
#include <unistd.h>

#include <Halide.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <memory>
#include <set>
#include <sstream>
#include <unordered_map>

#include "support/digest.h"
#include "support/error.h"

namespace aotc {
namespace {

namespace fs = std::filesystem;

// Bump when what goes into a key changes.
constexpr const char* kKeyFormat = "aotc kernel cache 3";

// The Halide and LLVM shared libraries this process runs, by path, size and
// modification time: a rebuilt or upgraded code generator gives other keys.
std::string code_generator_identity() {
  std::ifstream maps("/proc/self/maps");
  std::set<std::string> libraries;
  for (std::string line; std::getline(maps, line);) {
    const size_t slash = line.find('/');
    if (slash == std::string::npos) continue;
    const std::string path = line.substr(slash);
    if (path.find("libHalide") != std::string::npos || path.find("libLLVM") != std::string::npos)
      libraries.insert(path);
  }
  std::ostringstream os;
  for (const std::string& path : libraries) {
    struct stat st {};
    if (stat(path.c_str(), &st) == 0) os << path << " " << st.st_size << " " << st.st_mtim.tv_sec << "\n";
  }
  if (const char* llvm_args = std::getenv("HL_LLVM_ARGS")) os << "HL_LLVM_ARGS " << llvm_args << "\n";
  return os.str();
}

void print_argument(std::ostream& os, const Halide::Internal::LoweredArgument& a) {
  os << "arg " << a.name << " kind " << int(a.kind) << " dims " << int(a.dimensions) << " type " << a.type
     << " align " << a.alignment.modulus << "," << a.alignment.remainder << " estimates";
  const auto print = [&os](const Halide::Expr& x) {
    os << " ";
    if (x.defined()) os << x;
    else os << "-";
  };
  const Halide::ArgumentEstimates& e = a.argument_estimates;
  for (const Halide::Expr& x : {e.scalar_def, e.scalar_min, e.scalar_max, e.scalar_estimate}) print(x);
  for (const Halide::Range& r : e.buffer_estimates) {
    print(r.min);
    print(r.extent);
  }
  os << "\n";
}

// Halide writes the names its counters made ("conv$3") into GPU kernel names
// and device code as "conv__3": back to "$", for canonical_names.
std::string unmangle_counters(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "__") == 0 && i + 2 < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 2]))) {
      out += '$';
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

void print_buffer(std::ostream& os, const Halide::Buffer<void>& b) {
  os << "buffer " << b.name() << " type " << b.type() << " dims";
  for (int d = 0; d < b.dimensions(); ++d)
    os << " " << b.dim(d).min() << ":" << b.dim(d).extent() << ":" << b.dim(d).stride();
  const std::string bytes(static_cast<const char*>(b.data()), b.size_in_bytes());
  // A GPU module's device code (Halide's "<api>_gpu_source_kernels": PTX text)
  // holds the same per-process names as the host code: keyed as text.
  if (b.name().ends_with("gpu_source_kernels")) os << " text\n" << bytes << "\n";
  else os << " bytes " << sha256_hex(bytes) << "\n";
}

void print_module(std::ostream& os, const Halide::Module& m) {
  os << "module " << m.name() << " target " << m.target().to_string() << " strict_float " << m.any_strict_float()
     << "\n";
  AOTC_CHECK(m.external_code().empty(), "module ", m.name(), " has external code, which the kernel cache cannot key");
  for (const auto& [from, to] : m.get_metadata_name_map()) os << "metadata name " << from << " " << to << "\n";
  for (const Halide::Buffer<void>& b : m.buffers()) print_buffer(os, b);
  for (const Halide::Internal::LoweredFunc& f : m.functions()) {
    os << "function " << f.name << " linkage " << int(f.linkage) << " mangling " << int(f.name_mangling) << "\n";
    for (const Halide::Internal::LoweredArgument& a : f.args) print_argument(os, a);
    os << f.body << "\n";
  }
  for (const Halide::Module& sub : m.submodules()) print_module(os, sub);
}

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }

// The same kernel prints with other names in another process, or after other
// kernels: Halide makes names up from per-process counters, unique_name('t')
// as "t123" and unique_name("f") as "f", then "f$1", "f$2"... So every name
// part is renamed by its family (the letter of "t123", the base of "f$2") and
// its order of first appearance in that family. The same part is always
// renamed alike and distinct parts stay distinct, so texts equal after renaming
// are the same program. ('\x01' never appears in the printer's text: it
// escapes unprintable characters.)
std::string canonical_names(const std::string& text) {
  std::unordered_map<std::string, std::string> renamed;
  std::unordered_map<std::string, int> family_size;
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (!is_name_char(text[i])) {
      out += text[i++];
      continue;
    }
    size_t end = i;
    while (end < text.size() && is_name_char(text[end])) ++end;
    const std::string part = text.substr(i, end - i);
    i = end;
    if (std::isdigit(static_cast<unsigned char>(part[0]))) {  // a number, e.g. 16 or the 5f of 1.5f
      out += part;
      continue;
    }
    auto it = renamed.find(part);
    if (it == renamed.end()) {
      const bool letter_counter = part.size() > 1 && std::all_of(part.begin() + 1, part.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) != 0;
      });
      const std::string family = letter_counter ? part.substr(0, 1) + "\x01" : part.substr(0, part.find('$')) + "$";
      it = renamed.emplace(part, family + "\x01" + std::to_string(family_size[family]++)).first;
    }
    out += it->second;
  }
  return out;
}

std::string entry_path(const std::string& dir, const std::string& key) { return dir + "/" + key + ".o"; }

// Copies the entry for `key` to `object`; false when there is none.
bool fetch(const std::string& dir, const std::string& key, const std::string& object) {
  std::error_code error;
  fs::copy_file(entry_path(dir, key), object, fs::copy_options::overwrite_existing, error);
  return !error;
}

// Stores `object` as the entry for `key`: a copy under a name of this process,
// renamed into place, so a reader sees the whole object or none.
void store(const std::string& dir, const std::string& key, const std::string& object) {
  const std::string entry = entry_path(dir, key);
  const std::string partial = entry + ".partial." + std::to_string(getpid());
  fs::copy_file(object, partial, fs::copy_options::overwrite_existing);
  fs::rename(partial, entry);
}

// Runs `compile`, which writes `object`, unless the cache holds the object of
// the key `key_text()` makes; then stores it. Returns true for a hit.
bool cached_compile(const std::string& cache_dir, const std::function<std::string()>& key_text,
                    const std::string& object, const std::function<void()>& compile) {
  if (cache_dir.empty()) {
    compile();
    return false;
  }
  const std::string key = sha256_hex(key_text());
  if (fetch(cache_dir, key, object)) return true;
  compile();
  store(cache_dir, key, object);
  return false;
}

// The cache key of `module` (64 hex digits).
std::string kernel_cache_key(const Halide::Module& module) {
  std::ostringstream os;
  // IRPrinter prints floats in fixed notation; 80 digits after the point tell
  // every two floats apart (the smallest float is about 1.4e-45).
  os << std::setprecision(80);
  os << kKeyFormat << "\n" << code_generator_identity();
  print_module(os, module);
  return sha256_hex(canonical_names(unmangle_counters(os.str())));
}

}  // namespace


bool compile_kernel_object(const Halide::Module& module, const std::string& object, const std::string& cache_dir) {
  return cached_compile(
      cache_dir, [&] { return kernel_cache_key(module); }, object,
      [&] { module.compile({{Halide::OutputFileType::object, object}}); });
}

bool compile_runtime_object(const Halide::Target& target, const std::string& object, const std::string& cache_dir) {
  return cached_compile(
      cache_dir,
      [&] { return std::string(kKeyFormat) + "\n" + code_generator_identity() + "runtime " + target.to_string(); },
      object, [&] { Halide::compile_standalone_runtime(object, target); });
}

void prepare_kernel_cache(const std::string& dir) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) fail(ExitCode::kIo, "kernel cache '", dir, "': cannot create the directory: ", error.message());
  if (access(dir.c_str(), W_OK | X_OK) != 0)
    fail(ExitCode::kIo, "kernel cache '", dir, "': cannot write in the directory");
}

}  // namespace aotc
