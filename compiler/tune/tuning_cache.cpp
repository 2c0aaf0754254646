#include "tune/tuning_cache.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

#include "support/error.h"

namespace aotc {
namespace {

constexpr const char* kFormat = "aotc tuning cache";

}  // namespace

const double* TuningCache::time(const std::string& description, const std::string& candidate) const {
  auto entry = times_us.find(description);
  if (entry == times_us.end()) return nullptr;
  auto t = entry->second.find(candidate);
  return t == entry->second.end() ? nullptr : &t->second;
}

TuningCache read_tuning_cache(const std::string& path, const std::string& target, std::ostream& messages) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(ExitCode::kIo, path, ": cannot read the tuning cache");
  std::stringstream text;
  text << in.rdbuf();
  TuningCache cache;
  cache.target = target;
  const nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  auto bad = [&](const std::string& what) { fail(ExitCode::kUsage, path, ": not an aotc tuning cache: ", what); };
  if (!j.is_object()) bad("not a JSON object");
  if (!j.contains("format") || j["format"] != kFormat) bad("no \"format\": \"" + std::string(kFormat) + "\"");
  if (!j.contains("version") || !j["version"].is_number_integer()) bad("no integer \"version\"");
  if (j["version"] != kTuningCacheVersion) {
    messages << "aotc: " << path << ": tuning cache version " << j["version"].dump() << ", not "
             << kTuningCacheVersion << ": ignored\n";
    return cache;
  }
  if (!j.contains("target") || !j["target"].is_string()) bad("no \"target\" string");
  if (!j.contains("entries") || !j["entries"].is_array()) bad("no \"entries\" array");
  for (size_t i = 0; i < j["entries"].size(); ++i) {
    const nlohmann::json& e = j["entries"][i];
    const std::string where = "entries[" + std::to_string(i) + "]";
    if (!e.is_object() || !e.contains("kernel") || !e["kernel"].is_string() || !e.contains("times_us") ||
        !e["times_us"].is_object())
      bad(where + " needs a \"kernel\" string and a \"times_us\" object");
    auto& times = cache.times_us[e["kernel"].get<std::string>()];
    for (const auto& [candidate, us] : e["times_us"].items()) {
      if (!us.is_number() || !std::isfinite(us.get<double>()) || us.get<double>() <= 0)
        bad(where + ".times_us." + candidate + " is not a positive number of microseconds");
      times[candidate] = us.get<double>();
    }
  }
  if (j["target"] != target) {
    messages << "aotc: " << path << ": tuning cache measured for target " << j["target"].get<std::string>()
             << ", not " << target << ": ignored\n";
    cache.times_us.clear();
  }
  return cache;
}

std::string tuning_cache_json(const TuningCache& cache) {
  nlohmann::ordered_json entries = nlohmann::ordered_json::array();
  for (const auto& [description, times] : cache.times_us) {
    nlohmann::ordered_json t = nlohmann::ordered_json::object();
    for (const auto& [candidate, us] : times) t[candidate] = us;
    entries.push_back({{"kernel", description}, {"times_us", t}});
  }
  const nlohmann::ordered_json j = {{"format", kFormat},
                                    {"version", kTuningCacheVersion},
                                    {"target", cache.target},
                                    {"threads", 1},
                                    {"entries", entries}};
  return j.dump(2) + "\n";
}

}  // namespace aotc
