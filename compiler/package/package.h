// The packager: turns what a backend built (LibraryParts: its compiled objects,
// the generated header, the weights, the report) into what an app links:
// lib<name>.a, <name>.h (with aotc/aotc.h beside it) and <name>.report.json.
// It knows no backend: every backend (Halide CPU, the CUDA stubs with their
// Halide CUDA kernels; backends/backend.h) hands it the same parts. It embeds
// the weights with an assembler .incbin, checks every object is of the target's
// format, archives, measures the footprint, and moves the files into place only
// when all of them are complete.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "backends/lowered_model.h"

namespace aotc {

// What the footprint counts an object's code and read-only data as; the
// embedded weights' object is counted as its blob instead (kWeights).
enum class ObjectRole { kKernel, kRunner, kRuntime, kWeights };

struct LibraryObject {
  std::string path;  // an object file the backend compiled into the work directory
  ObjectRole role = ObjectRole::kKernel;
};

// What only packaging knows, for the backend's report.
struct PackageFacts {
  int64_t library_bytes = 0;
  double compile_seconds = 0;  // the whole compilation, from the driver's start
  // Bytes the library's objects take in a program image (text and read-only
  // data), by role; the embedded weights are not counted here.
  int64_t kernel_code_bytes = 0, runner_code_bytes = 0, runtime_code_bytes = 0;
};

// A generated source the packager writes into the work directory, beside the
// header it includes, and compiles into one of the library's objects.
struct GeneratedSource {
  std::string file;  // its name in the work directory: runner.cpp, <name>_stubs.cpp
  std::string text;
  // The compiler and its flags; the packager appends -I <work> -c <file> -o <object>.
  std::vector<std::string> compile;
  std::string what;  // for errors: "compiling the generated runner"
  ObjectRole role = ObjectRole::kRunner;
  bool shipped = false;  // also copied beside the library, for the reader
};

// Everything a backend hands the packager.
struct LibraryParts {
  std::string name;
  std::string header;                     // <name>.h
  std::vector<LibraryObject> objects;     // compiled by the backend, archived first, in this order
  std::vector<GeneratedSource> sources;   // compiled by the packager, archived after them
  // Files the sources include beside the header (the runtime headers): name, text.
  std::vector<std::pair<std::string, std::string>> includes;
  std::vector<std::string> archives;      // static libraries merged whole (the static CUDA runtime)
  std::vector<uint8_t> weights;           // the blob embedded as aotc_<id>_weights (64-byte aligned)
  std::string weights_file;               // with external weights: <name>.weights, shipped instead
  std::function<std::string(const PackageFacts&)> report;   // <name>.report.json
  std::function<std::string(const PackageFacts&)> summary;  // what aotc prints
};

struct PackageOptions {
  std::string out_dir;
  std::string work_dir;    // where the backend's objects are, and the packager's intermediate files
  std::string assembler;   // the target's C++ compiler, which assembles the weights object
  ObjectFormat format;     // every object must be of this format
  std::string sdk_header;  // path of sdk/include/aotc/aotc.h to copy beside the header
  // A command the generated sources' compile commands run under (aotc
  // --compiler-launcher, e.g. ccache), as CMake's CMAKE_<LANG>_COMPILER_LAUNCHER.
  std::vector<std::string> compiler_launcher;
  double compile_seconds_so_far = 0;
};

struct PackageResult {
  std::string library, header, report;
  std::string weights;  // the weights file, with external weights
  int64_t library_bytes = 0;
  std::string summary;  // the human-readable report
};

// Writes everything into options.out_dir. Files appear only when complete: a
// failure leaves no library, header or report behind.
PackageResult write_library(const LibraryParts& parts, const PackageOptions& options);

}  // namespace aotc
