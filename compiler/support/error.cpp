#include "support/error.h"

namespace aotc {

void internal_failure(const char* file, int line, const std::string& what) {
  throw InternalError(detail::concat("internal error at ", file, ":", line, ": ", what));
}

}  // namespace aotc
