// libFuzzer target for the ONNX reader: protobuf parsing, ONNX's checker and shape
// inference, the op census and the lowering onto the IR (constants decoded, shape
// arithmetic folded). Whatever the bytes, reading them must either succeed or throw
// UserError. A crash, a sanitizer report, a hang or an escaping InternalError (a
// broken invariant of aotc) is a bug. External data is looked up beside fuzz.onnx
// in the working directory, where there is none.
#include <cstddef>
#include <cstdint>

#include "frontends/onnx/onnx_reader.h"
#include "support/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    aotc::read_onnx_model(data, size, "fuzz.onnx", {});
  } catch (const aotc::UserError&) {
    // The input's fault, reported cleanly: what the reader must do with bad bytes.
  }
  return 0;
}
