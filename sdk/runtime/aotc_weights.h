// The checks of an external weights file (aotc --weights=external) against the
// library's model: its header (aotc_weights_header in aotc/aotc.h: magic,
// version, model name, fingerprint, payload size) and the CRC-32 of its
// payload. aotc embeds this file in every library with external weights: the
// CPU runtime includes it (aotc_runtime.cpp), a GPU library's CUDA source
// directly. Weak and `extern "C"` with a versioned prefix, like the runtime:
// libraries linked into one app share one copy. No allocation, no libstdc++.
#ifndef AOTC_WEIGHTS_H_
#define AOTC_WEIGHTS_H_

#include <cstdint>
#include <cstring>

#include "aotc/aotc.h"

#ifndef AOTC_RT_WEAK
#define AOTC_RT_WEAK __attribute__((weak))
#endif

extern "C" {

// CRC-32 (IEEE 802.3, reflected, as zlib's crc32), one table lookup per byte.
struct aotc_rt1_crc32_table {
  uint32_t entry[256];
  constexpr aotc_rt1_crc32_table() : entry() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
      entry[i] = c;
    }
  }
};
static constexpr aotc_rt1_crc32_table aotc_rt1_crc32_entries{};

AOTC_RT_WEAK uint32_t aotc_rt1_crc32(const uint8_t* data, uint64_t bytes) {
  uint32_t c = 0xffffffffu;
  for (uint64_t i = 0; i < bytes; ++i) c = aotc_rt1_crc32_entries.entry[(c ^ data[i]) & 0xffu] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

// A weights file's header against the model the library was compiled from (its
// name as the header stores it, fingerprint and payload size), and its size. Reads
// the header only.
AOTC_RT_WEAK int aotc_rt1_check_weights_header(const void* weights, size_t weights_bytes, const char* model_name,
                                               uint64_t fingerprint, uint64_t payload_bytes) {
  if (weights == nullptr) return AOTC_ERROR_NULL_WEIGHTS;
  if (reinterpret_cast<uintptr_t>(weights) % AOTC_ARENA_ALIGNMENT != 0) return AOTC_ERROR_MISALIGNED_WEIGHTS;
  aotc_weights_header header;
  if (weights_bytes < sizeof header) return AOTC_ERROR_WEIGHTS_TRUNCATED;
  std::memcpy(&header, weights, sizeof header);
  if (std::memcmp(header.magic, AOTC_WEIGHTS_MAGIC, sizeof header.magic) != 0) return AOTC_ERROR_WEIGHTS_CORRUPTED;
  if (header.version != AOTC_WEIGHTS_VERSION) return AOTC_ERROR_WEIGHTS_WRONG_VERSION;
  if (header.header_bytes != sizeof header) return AOTC_ERROR_WEIGHTS_CORRUPTED;
  if (header.fingerprint != fingerprint || header.payload_bytes != payload_bytes ||
      std::strncmp(header.model_name, model_name, sizeof header.model_name) != 0)
    return AOTC_ERROR_WEIGHTS_WRONG_MODEL;
  if (weights_bytes - sizeof header < payload_bytes) return AOTC_ERROR_WEIGHTS_TRUNCATED;
  return AOTC_OK;
}

// The header checks, then the payload's CRC-32: once, when an app loads weights.
AOTC_RT_WEAK int aotc_rt1_check_weights(const void* weights, size_t weights_bytes, const char* model_name,
                                        uint64_t fingerprint, uint64_t payload_bytes) {
  const int status = aotc_rt1_check_weights_header(weights, weights_bytes, model_name, fingerprint, payload_bytes);
  if (status != AOTC_OK) return status;
  aotc_weights_header header;
  std::memcpy(&header, weights, sizeof header);
  const uint32_t crc = aotc_rt1_crc32(static_cast<const uint8_t*>(weights) + sizeof header, payload_bytes);
  return crc == header.payload_crc32 ? AOTC_OK : AOTC_ERROR_WEIGHTS_CORRUPTED;
}

}  // extern "C"

#endif  // AOTC_WEIGHTS_H_
