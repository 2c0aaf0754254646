// Model bytes as the FlatBuffers readers need them. FlatBuffers reads scalars in
// place and its Verifier checks their alignment relative to the buffer's start,
// so the buffer itself must be 8-byte aligned: an unaligned one is copied.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

namespace aotc {

class AlignedBytes {
 public:
  AlignedBytes(const uint8_t* data, size_t size) : data_(data) {
    if (reinterpret_cast<uintptr_t>(data) % alignof(uint64_t) != 0) {
      copy_.resize((size + sizeof(uint64_t) - 1) / sizeof(uint64_t));
      std::memcpy(copy_.data(), data, size);
      data_ = reinterpret_cast<const uint8_t*>(copy_.data());
    }
  }
  const uint8_t* data() const { return data_; }

 private:
  std::vector<uint64_t> copy_;
  const uint8_t* data_;
};

}  // namespace aotc
