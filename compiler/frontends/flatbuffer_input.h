// How both FlatBuffers readers admit a model's bytes before reading them.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <cstring>
#include <vector>

namespace aotc {

// The most dims a tensor of a model file may have: no op of the IR needs more than 4 and real
// models have at most 5; far larger ranks only come from garbage.
inline constexpr size_t kMaxRank = 8;

// FlatBuffers reads scalars in place and its Verifier checks their alignment
// relative to the buffer's start, so the buffer itself must be 8-byte aligned:
// an unaligned one is copied.
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

// Runs a generated Verify<Root>Buffer over `size` aligned bytes with limits on
// nesting depth and table count. The table count bounds the Verifier's time on
// offsets that alias one table many times; real models have a few thousand.
template <typename VerifyBuffer>
bool verify_flatbuffer(const uint8_t* aligned_data, size_t size, flatbuffers::uoffset_t max_depth,
                       VerifyBuffer verify_buffer) {
  flatbuffers::Verifier::Options limits;
  limits.max_depth = max_depth;
  limits.max_tables = 1'000'000;
  flatbuffers::Verifier verifier(aligned_data, size, limits);
  return verify_buffer(verifier);
}

}  // namespace aotc
