// The compile report: machine-readable (<name>.report.json) and a human summary.
#pragma once

#include <string>

#include "backends/halide/halide_backend.h"
#include "backends/lowered_model.h"

namespace aotc {

struct ReportTotals {
  std::string producer;
  std::string target;
  int64_t library_bytes = 0;
  double compile_seconds = 0;
};

std::string report_json(const LoweredModel& model, const CompiledObjects& objects, const ReportTotals& totals);
std::string report_summary(const LoweredModel& model, const CompiledObjects& objects, const ReportTotals& totals);

}  // namespace aotc
