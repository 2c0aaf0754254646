// The packager: turns a LoweredModel and its compiled kernel objects into what
// an app links: lib<name>.a, <name>.h (with aotc/aotc.h beside it) and
// <name>.report.json. The runner (the code that calls the kernels in order over
// the arena) is generated C++ compiled with the target's C++ compiler; the
// pre-packed weights are embedded with an assembler .incbin, or written to
// <name>.weights (--weights=external), which the app passes to each run.
#pragma once

#include <string>
#include <vector>

#include "backends/halide/halide_backend.h"
#include "backends/lowered_model.h"

namespace aotc {

// The generated public header <name>.h.
std::string model_header(const LoweredModel& model, const std::string& producer, bool external_weights);
// The generated runner source: the C entry points over the kernel calls. With
// external weights, the runs take a weights file image (weights_file.h) instead
// of the embedded blob.
std::string runner_source(const LoweredModel& model, bool external_weights);

struct PackageOptions {
  std::string out_dir;
  std::string target;      // canonical Halide target string
  std::string cxx;         // C++ compiler for the runner and the weights object
  ObjectFormat format;     // every archive member must be of this format
  bool external_weights = false;  // <name>.weights beside the library instead of embedded
  std::string work_dir;    // intermediate files
  std::string sdk_header;  // path of sdk/include/aotc/aotc.h to copy beside the header
  std::string producer;    // "aotc 0.1.0 from resnet18.fb"
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
PackageResult write_library(const LoweredModel& model, const CompiledObjects& objects, const PackageOptions& options);

}  // namespace aotc
