// What every backend's report (<name>.report.json) shares: the inputs and
// outputs, and a choice's candidates.
#pragma once

#include <nlohmann/json.hpp>

#include <vector>

#include "backends/lowered_model.h"

namespace aotc {

// [{"name": ..., "shape": [...]}, ...]
nlohmann::ordered_json tensors_json(const std::vector<TensorInfo>& tensors);

// A choice's candidates as the reports list them: each one's name under
// `name_key`, its measured and predicted µs (null where there is none).
nlohmann::ordered_json candidates_json(const ChoiceRecord& choice, const char* name_key);

}  // namespace aotc
