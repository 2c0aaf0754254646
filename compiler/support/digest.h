// Content digests for cache keys and content-derived names.
#pragma once

#include <string>

namespace aotc {

// The SHA-256 digest of `bytes`, as 64 lower-case hex digits.
std::string sha256_hex(const std::string& bytes);

}  // namespace aotc
