// The weights file of --weights=external, <name>.weights: the header
// aotc_weights_header (sdk/include/aotc/aotc.h) followed by the packed weights.
// The runner of such a library checks a file against the same identity.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/lowered_model.h"

namespace aotc {

// What identifies the model a weights file belongs to.
struct WeightsIdentity {
  uint64_t fingerprint = 0;  // FNV-1a 64 of the name and every weight tensor's offset and shape
  std::string header_name;   // the name as the header stores it (cut to fit, NUL-padded)
  uint64_t payload_bytes = 0;
};

// A weight tensor as the library reads it: its offset in the payload and shape.
struct WeightSlot {
  int64_t offset = 0;
  Shape shape;
};

// The identity of model `name` whose code reads `slots` from a payload of `payload_bytes`.
WeightsIdentity weights_identity(const std::string& name, const std::vector<WeightSlot>& slots,
                                 uint64_t payload_bytes);
// A CPU library's: the weights its kernel calls read, in call order.
WeightsIdentity weights_identity(const LoweredModel& model);

// What generated code passes aotc_rt1_check_weights* (sdk/runtime/aotc_weights.h)
// as the model: "name", fingerprint, payload size.
std::string weights_identity_arguments(const WeightsIdentity& id);
// The C entry points <fn>_weights_bytes and <fn>_check_weights of a library with
// external weights, as generated source.
std::string weights_entry_points(const std::string& fn, const WeightsIdentity& id);

// The whole file: header (with the payload's CRC-32) and payload.
std::string weights_file(const WeightsIdentity& id, const std::vector<uint8_t>& payload);

}  // namespace aotc
