#include "support/digest.h"

#include <openssl/evp.h>

#include <iomanip>
#include <sstream>

#include "support/error.h"

namespace aotc {

std::string sha256_hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  AOTC_CHECK(EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr) == 1, "SHA-256 failed");
  std::ostringstream hex;
  for (unsigned int i = 0; i < length; ++i) hex << std::hex << std::setw(2) << std::setfill('0') << int{digest[i]};
  return hex.str();
}

}  // namespace aotc
