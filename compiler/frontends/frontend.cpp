#include "frontends/frontend.h"

#include "support/error.h"

namespace aotc {

Graph load_model(const std::string& path) { fail(ExitCode::kUnsupported, path, ": no frontend yet"); }

}  // namespace aotc
