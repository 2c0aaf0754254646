#include "package/report.h"

#include <cmath>

namespace aotc {

nlohmann::ordered_json tensors_json(const std::vector<TensorInfo>& tensors) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const TensorInfo& t : tensors) list.push_back({{"name", t.name}, {"shape", t.shape}});
  return list;
}

nlohmann::ordered_json candidates_json(const ChoiceRecord& choice, const char* name_key) {
  auto us = [](double t) { return std::isfinite(t) ? nlohmann::ordered_json(t) : nlohmann::ordered_json(nullptr); };
  nlohmann::ordered_json candidates = nlohmann::ordered_json::array();
  for (const ChoiceRecord::Option& o : choice.candidates)
    candidates.push_back({{name_key, o.name}, {"measured_us", us(o.measured_us)}, {"predicted_us", us(o.predicted_us)}});
  return candidates;
}

}  // namespace aotc
