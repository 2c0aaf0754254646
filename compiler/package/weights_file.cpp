#include "package/weights_file.h"

#include <zlib.h>

#include <cstring>

#define AOTC_SDK_C_ONLY  // aotc::TensorInfo is the compiler's own
#include "aotc/aotc.h"
#include "support/names.h"

namespace aotc {
namespace {

struct Fnv1a64 {
  uint64_t hash = 14695981039346656037ull;
  void add(const void* data, size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < bytes; ++i) hash = (hash ^ p[i]) * 1099511628211ull;
  }
  void add(int64_t v) { add(&v, sizeof v); }
};

}  // namespace

WeightsIdentity weights_identity(const std::string& name, const std::vector<WeightSlot>& slots,
                                 uint64_t payload_bytes) {
  WeightsIdentity id;
  Fnv1a64 fnv;
  fnv.add(name.data(), name.size());
  for (const WeightSlot& slot : slots) {
    fnv.add(slot.offset);
    for (int64_t d : slot.shape) fnv.add(d);
  }
  fnv.add(static_cast<int64_t>(payload_bytes));
  id.fingerprint = fnv.hash;
  id.header_name = name.substr(0, sizeof(aotc_weights_header::model_name) - 1);
  id.payload_bytes = payload_bytes;
  return id;
}

WeightsIdentity weights_identity(const LoweredModel& model) {
  std::vector<WeightSlot> slots;
  for (const KernelCall& call : model.calls)
    for (const BufferRef& ref : call.args)
      if (ref.source == BufferRef::Source::kWeights) slots.push_back({ref.offset, ref.shape});
  return weights_identity(model.name, slots, model.weights.size());
}

std::string weights_identity_arguments(const WeightsIdentity& id) {
  return c_string_literal(id.header_name) + ", " + std::to_string(id.fingerprint) + "ull, " +
         std::to_string(id.payload_bytes) + "ull";
}

std::string weights_entry_points(const std::string& fn, const WeightsIdentity& id) {
  return "size_t " + fn + "_weights_bytes(void) { return " + std::to_string(sizeof(aotc_weights_header) + id.payload_bytes) +
         "; }\n\n"
         "int " + fn + "_check_weights(const void* weights, size_t weights_bytes) {\n"
         "  return aotc_rt1_check_weights(weights, weights_bytes, " + weights_identity_arguments(id) + ");\n"
         "}\n\n";
}

std::string weights_file(const WeightsIdentity& id, const std::vector<uint8_t>& payload) {
  aotc_weights_header header{};
  std::memcpy(header.magic, AOTC_WEIGHTS_MAGIC, sizeof header.magic);
  header.version = AOTC_WEIGHTS_VERSION;
  header.header_bytes = sizeof header;
  header.payload_bytes = id.payload_bytes;
  header.fingerprint = id.fingerprint;
  // zlib's crc32 takes at most 4 GiB per call.
  uLong crc = crc32(0L, Z_NULL, 0);
  for (size_t at = 0; at < payload.size(); at += 1u << 30) {
    const size_t n = std::min<size_t>(1u << 30, payload.size() - at);
    crc = crc32(crc, payload.data() + at, static_cast<uInt>(n));
  }
  header.payload_crc32 = static_cast<uint32_t>(crc);
  std::memcpy(header.model_name, id.header_name.data(), id.header_name.size());
  static_assert(sizeof header % AOTC_ARENA_ALIGNMENT == 0, "the payload must start 64-byte aligned");
  std::string file(reinterpret_cast<const char*>(&header), sizeof header);
  file.append(payload.begin(), payload.end());
  return file;
}

}  // namespace aotc
