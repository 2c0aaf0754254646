// Reader for aotc's own model format (schemas/aotc_model.fbs, file identifier
// "AOTC"). This is the only code that sees the generated FlatBuffers types; what
// comes out is a Graph that keeps every promise listed in frontends/frontend.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "ir/graph.h"

namespace aotc {

// FlatBuffers' own limit: offsets are 32-bit signed, so a buffer is < 2 GiB.
constexpr size_t kMaxFlatBufferBytes = (size_t{1} << 31) - 2;

// Verifies and reads the model held in `data` (any alignment; nothing outside
// [data, data + size) is read). `path` names the file in messages. Any fault of
// the bytes throws UserError: kInvalidModel for a malformed or inconsistent file,
// kUnsupported for a well-formed one using what aotc does not support (a newer
// format version or op code, a dtype other than float32).
Graph read_aotc_model(const uint8_t* data, size_t size, const std::string& path);

}  // namespace aotc
