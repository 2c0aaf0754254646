// The Halide CPU backend's library (backends/backend.h): plans the groups and
// the memory, lowers every node onto a Halide kernel, compiles the kernels and
// the generated runner (a table of kernel calls over the arena, which the
// runtime walks), and
// writes the header and report of a CPU library.
#pragma once

#include <string>

#include "backends/backend.h"
#include "backends/lowered_model.h"

namespace aotc {

LibraryParts build_halide_library(const Graph& g, const BackendOptions& options);
// What build_halide_library compiles: `g` with its groups and memory planned, lowered.
LoweredModel lower_halide_library(const Graph& g, const BackendOptions& options);

// The generated public header <name>.h.
std::string model_header(const LoweredModel& model, const std::string& producer, bool external_weights);
// The generated runner source: the C entry points over the kernel calls. With
// external weights, the runs take a weights file image (package/weights_file.h)
// instead of the embedded blob.
std::string runner_source(const LoweredModel& model, bool external_weights);

// <name>.report.json and the summary aotc prints: per layer the fused ops,
// kernel, schedule, FLOPs and bytes; totals for weights, arena, library, time.
// `model`'s weights may have been moved into the parts: the report reads their
// size from `about`.
struct ReportContext {
  std::string producer, target;
  int64_t weights_bytes = 0;
  bool external_weights = false;
};
std::string halide_report_json(const LoweredModel& model, const CompiledObjects& objects, const ReportContext& about,
                               const PackageFacts& facts);
std::string halide_report_summary(const LoweredModel& model, const CompiledObjects& objects,
                                  const ReportContext& about, const PackageFacts& facts);

}  // namespace aotc
