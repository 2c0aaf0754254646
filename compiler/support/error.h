// Errors in the compiler, in two kinds (after Halide's user_error / internal_assert):
//
//  - UserError: the model, the command line or a file is at fault. It carries an
//    exit code and a one-line message that names the file, the node and what is
//    wrong. Thrown by frontends, passes and the driver; caught once in main().
//  - internal errors (AOTC_CHECK): a broken invariant of aotc itself. These are
//    bugs, never the user's fault; they throw InternalError with file:line.
//
// Nothing here aborts: the driver turns both into a message and an exit code.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace aotc {

// Process exit codes of the aotc command (documented in README and --help).
enum class ExitCode : int {
  kOk = 0,
  kUsage = 1,        // bad command line
  kInvalidModel = 2, // malformed or inconsistent model file
  kUnsupported = 3,  // well-formed model using something aotc does not support
  kIo = 4,           // a file could not be read or written
  kInternal = 70,    // a bug in aotc (EX_SOFTWARE)
};

class UserError : public std::runtime_error {
 public:
  UserError(ExitCode code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

namespace detail {
// Concatenates any streamable values into one string.
template <typename... Args>
std::string concat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
}  // namespace detail

// Throws a UserError with the given exit code; the message is built from args.
template <typename... Args>
[[noreturn]] void fail(ExitCode code, const Args&... args) {
  throw UserError(code, detail::concat(args...));
}

[[noreturn]] void internal_failure(const char* file, int line, const std::string& what);

}  // namespace aotc

// An invariant of aotc itself (never of the user's input).
#define AOTC_CHECK(cond, ...)                                                          \
  do {                                                                                 \
    if (!(cond))                                                                       \
      ::aotc::internal_failure(__FILE__, __LINE__,                                     \
                               ::aotc::detail::concat("check failed: " #cond " " __VA_OPT__(, ) __VA_ARGS__)); \
  } while (0)
