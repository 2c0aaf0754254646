// libFuzzer target for the AOTC model reader: whatever the bytes, reading them must
// either succeed or throw UserError. A crash, a sanitizer report, a hang or an
// InternalError (a broken invariant of aotc, deliberately not caught here, so that
// it escapes and the fuzzer reports it) is a bug.
#include <cstddef>
#include <cstdint>

#include "frontends/aotc_fb/aotc_fb_reader.h"
#include "support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    aotc::read_aotc_model(data, size, "fuzz.fb");
  } catch (const aotc::UserError&) {
    // The input's fault, reported cleanly: what the reader must do with bad bytes.
  }
  return 0;
}
