#include "package/weights_file.h"

#include <zlib.h>

#include <cstring>

#define AOTC_SDK_C_ONLY  // aotc::TensorInfo is the compiler's own
#include "aotc/aotc.h"

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

WeightsIdentity weights_identity(const LoweredModel& model) {
  WeightsIdentity id;
  Fnv1a64 fnv;
  fnv.add(model.name.data(), model.name.size());
  for (const KernelCall& call : model.calls)
    for (const BufferRef& ref : call.args) {
      if (ref.source != BufferRef::Source::kWeights) continue;
      fnv.add(ref.offset);
      for (int64_t d : ref.shape) fnv.add(d);
    }
  fnv.add(static_cast<int64_t>(model.weights.size()));
  id.fingerprint = fnv.hash;
  id.header_name = model.name.substr(0, sizeof(aotc_weights_header::model_name) - 1);
  id.payload_bytes = model.weights.size();
  return id;
}

std::string weights_file(const LoweredModel& model) {
  const WeightsIdentity id = weights_identity(model);
  aotc_weights_header header{};
  std::memcpy(header.magic, AOTC_WEIGHTS_MAGIC, sizeof header.magic);
  header.version = AOTC_WEIGHTS_VERSION;
  header.header_bytes = sizeof header;
  header.payload_bytes = id.payload_bytes;
  header.fingerprint = id.fingerprint;
  // zlib's crc32 takes at most 4 GiB per call.
  uLong crc = crc32(0L, Z_NULL, 0);
  for (size_t at = 0; at < model.weights.size(); at += 1u << 30) {
    const size_t n = std::min<size_t>(1u << 30, model.weights.size() - at);
    crc = crc32(crc, model.weights.data() + at, static_cast<uInt>(n));
  }
  header.payload_crc32 = static_cast<uint32_t>(crc);
  std::memcpy(header.model_name, id.header_name.data(), id.header_name.size());
  static_assert(sizeof header % AOTC_ARENA_ALIGNMENT == 0, "the payload must start 64-byte aligned");
  std::string file(reinterpret_cast<const char*>(&header), sizeof header);
  file.append(model.weights.begin(), model.weights.end());
  return file;
}

}  // namespace aotc
