// Fuzz target of the external-weights checks every model library carries
// (sdk/runtime/aotc_weights.h): arbitrary bytes as a weights image, checked
// against a fixed model identity and against the identity its own header claims,
// so that inputs get past the model check to the size checks and the CRC-32.
// Neither may read outside the buffer (it is allocated at its exact size: ASan
// sees any overread), and an image that passes must hold its header and payload.
#include <cstdlib>
#include <cstring>

#include "aotc_weights.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  void* image = nullptr;
  if (posix_memalign(&image, AOTC_ARENA_ALIGNMENT, size == 0 ? 1 : size) != 0) return 0;
  std::memcpy(image, data, size);
  aotc_rt1_check_weights(image, size, "convnet", 0x123456789abcdefull, 3540);
  if (size >= sizeof(aotc_weights_header)) {
    aotc_weights_header claimed;
    std::memcpy(&claimed, data, sizeof claimed);
    char name[sizeof claimed.model_name + 1] = {};
    std::memcpy(name, claimed.model_name, sizeof claimed.model_name);
    const int status = aotc_rt1_check_weights(image, size, name, claimed.fingerprint, claimed.payload_bytes);
    if (status == AOTC_OK && size - sizeof claimed < claimed.payload_bytes) std::abort();
  }
  std::free(image);
  return 0;
}
