#include "passes/pass.h"

namespace aotc {

void PassCounters::add(const std::string& name, int64_t n) {
  for (auto& [key, value] : counters_) {
    if (key == name) {
      value += n;
      return;
    }
  }
  counters_.emplace_back(name, n);
}

int64_t PassCounters::get(const std::string& name) const {
  for (const auto& [key, value] : counters_)
    if (key == name) return value;
  return 0;
}

const PassInfo* find_pass(const std::string& name) {
  for (const PassInfo& p : pass_registry())
    if (name == p.name) return &p;
  return nullptr;
}

}  // namespace aotc
