// The weights file of --weights=external, <name>.weights: the header
// aotc_weights_header (sdk/include/aotc/aotc.h) followed by the packed weights.
// The runner of such a library checks a file against the same identity.
#pragma once

#include <cstdint>
#include <string>

#include "backends/lowered_model.h"

namespace aotc {

// What identifies the model a weights file belongs to.
struct WeightsIdentity {
  uint64_t fingerprint = 0;  // FNV-1a 64 of the name and every weight tensor's offset and shape
  std::string header_name;   // the name as the header stores it (cut to fit, NUL-padded)
  uint64_t payload_bytes = 0;
};

WeightsIdentity weights_identity(const LoweredModel& model);

// The whole file: header (with the payload's CRC-32) and payload.
std::string weights_file(const LoweredModel& model);

}  // namespace aotc
