#include "passes/pipeline.h"

#include <chrono>

#include "ir/printer.h"
#include "passes/eliminate_dead_code.h"
#include "support/error.h"

namespace aotc {
namespace {

void check_known(const std::string& name, const char* option) {
  if (!find_pass(name)) fail(ExitCode::kUsage, option, ": unknown pass '", name, "' (see aotc --help)");
}

}  // namespace

Graph run_pipeline(Graph g, const PipelineOptions& options, std::vector<PassRecord>* records) {
  for (const std::string& p : options.passes) check_known(p, "--passes");
  for (const std::string& p : options.disabled) check_known(p, "--disable-pass");
  for (const std::string& p : options.print_after) check_known(p, "--print-after");

  std::vector<const PassInfo*> schedule;
  if (options.explicit_passes) {
    for (const std::string& p : options.passes) schedule.push_back(find_pass(p));
  } else {
    for (const PassInfo& p : pass_registry())
      if (!options.disabled.count(p.name)) schedule.push_back(&p);
  }
  // dce cleans up after every other pass, unless it was disabled.
  const bool dce_after_each = !options.disabled.count("dce");

  for (const PassInfo* pass : schedule) {
    PassRecord record{pass->name, {}, 0};
    auto start = std::chrono::steady_clock::now();
    g = pass->run(std::move(g), record.counters);
    if (dce_after_each && pass->run != eliminate_dead_code) {
      PassCounters dce;
      g = eliminate_dead_code(std::move(g), dce);
      for (const auto& [name, n] : dce.all()) record.counters.add("dce." + name, n);
    }
    record.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (options.print_after_all || options.print_after.count(pass->name)) {
      AOTC_CHECK(options.dump_stream != nullptr);
      *options.dump_stream << "// ----- graph after " << pass->name << "\n";
      print_graph(*options.dump_stream, g);
    }
    if (records) records->push_back(std::move(record));
  }
  return g;
}

}  // namespace aotc
