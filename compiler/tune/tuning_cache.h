// The tuning cache: per kernel description (backends/halide/candidates.h,
// node_description), the measured time of each candidate implementation, for
// one target. `aotc --tune` writes it; later compiles read it and choose by it
// without measuring. The file is JSON:
//
//   {"format": "aotc tuning cache", "version": 1, "target": "<Halide target>",
//    "threads": 1,
//    "entries": [{"kernel": "<description>", "times_us": {"direct": 812.4, ...}}, ...]}
//
// A cache of another version or target is never trusted: it is ignored, with a message.
#pragma once

#include <map>
#include <ostream>
#include <string>

namespace aotc {

constexpr int kTuningCacheVersion = 1;

struct TuningCache {
  std::string target;
  // description -> candidate name -> median time of one run on one thread, µs
  std::map<std::string, std::map<std::string, double>> times_us;

  // The time of `candidate` for `description`, or null.
  const double* time(const std::string& description, const std::string& candidate) const;
};

// Reads the cache at `path` for `target`. A well-formed one of another target,
// or one of another version, yields an empty cache for `target` and a line on
// `messages` saying why.
// Throws UserError: kIo when the file cannot be read, kUsage when it is not a
// tuning cache (the message names the file and what is wrong).
TuningCache read_tuning_cache(const std::string& path, const std::string& target, std::ostream& messages);

std::string tuning_cache_json(const TuningCache& cache);

}  // namespace aotc
