// The compile report: machine-readable (<name>.report.json) and a human summary.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "backends/halide/halide_backend.h"
#include "backends/lowered_model.h"

namespace aotc {

struct ReportTotals {
  std::string producer;
  std::string target;
  int64_t library_bytes = 0;
  double compile_seconds = 0;
  // The footprint: bytes the library's code takes in a program image (text and
  // read-only data), by part; where the weights are ("embedded" or "external").
  int64_t kernel_code_bytes = 0, runner_code_bytes = 0, runtime_code_bytes = 0;
  std::string weights = "embedded";
};

// A choice's candidates as the reports list them: each one's name under
// `name_key`, its measured and predicted µs (null where there is none).
nlohmann::ordered_json candidates_json(const ChoiceRecord& choice, const char* name_key);

std::string report_json(const LoweredModel& model, const CompiledObjects& objects, const ReportTotals& totals);
std::string report_summary(const LoweredModel& model, const CompiledObjects& objects, const ReportTotals& totals);

}  // namespace aotc
