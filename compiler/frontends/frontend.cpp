#include "frontends/frontend.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "frontends/aotc_fb/aotc_fb_reader.h"
#include "frontends/onnx/onnx_reader.h"
#include "frontends/tflite/tflite_reader.h"
#include "ir/parser.h"
#include "support/error.h"

namespace aotc {
namespace {

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

[[noreturn]] void fail_too_large(const std::string& path) {
  fail(ExitCode::kInvalidModel, path, ": the file is larger than 2 GiB, the most a model file may be");
}

// The whole file; it may be a pipe, so the size is only a hint.
std::vector<uint8_t> read_file(const std::string& path) {
  const FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) fail(ExitCode::kIo, path, ": cannot open: ", std::strerror(errno));
  struct stat info {};
  if (::fstat(fd.get(), &info) == 0 && S_ISREG(info.st_mode) &&
      static_cast<uint64_t>(info.st_size) > kMaxFlatBufferBytes)
    fail_too_large(path);
  std::vector<uint8_t> bytes;
  size_t size = 0;
  for (;;) {
    if (bytes.size() == size) bytes.resize(std::max<size_t>(size * 2, 1 << 16));
    const ssize_t n = ::read(fd.get(), bytes.data() + size, bytes.size() - size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(ExitCode::kIo, path, ": cannot read: ", std::strerror(errno));
    if (n == 0) break;
    size += static_cast<size_t>(n);
    if (size > kMaxFlatBufferBytes) fail_too_large(path);
  }
  bytes.resize(size);
  return bytes;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// FlatBuffers keep a four-byte file identifier after the root offset.
bool has_file_identifier(const std::vector<uint8_t>& bytes, const char (&identifier)[5]) {
  return bytes.size() >= 8 && std::memcmp(bytes.data() + 4, identifier, 4) == 0;
}

// A .onnx file, or one of another name that starts as exporters write an ONNX
// ModelProto: field 1 (ir_version, a varint), the byte 0x08, and no FlatBuffers
// identifier at bytes 4-7. A .fb file is always read as an aotc model.
bool looks_like_onnx(const std::string& path, const std::vector<uint8_t>& bytes) {
  if (ends_with(path, ".onnx")) return true;
  if (ends_with(path, ".fb") || ends_with(path, ".air")) return false;
  return !bytes.empty() && bytes[0] == 0x08 && !has_file_identifier(bytes, "AOTC") &&
         !has_file_identifier(bytes, "TFL3");
}

}  // namespace

Graph load_model(const std::string& path, const ModelBindings& bindings) {
  const std::vector<uint8_t> bytes = read_file(path);
  if (looks_like_onnx(path, bytes)) return read_onnx_model(bytes.data(), bytes.size(), path, bindings);
  if (!bindings.empty())
    fail(ExitCode::kUsage, path, ": --input-shape and --constant apply to ONNX models only (this one has fixed "
         "shapes and weights)");
  if (ends_with(path, ".air")) return parse_graph(std::string(bytes.begin(), bytes.end()), path);
  if (has_file_identifier(bytes, "TFL3")) return read_tflite_model(bytes.data(), bytes.size(), path);
  // Anything else must be an aotc model; the reader says why if it is not.
  return read_aotc_model(bytes.data(), bytes.size(), path);
}

}  // namespace aotc
