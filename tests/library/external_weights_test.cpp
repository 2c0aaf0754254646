// --weights=external: convnet compiled twice, with embedded weights (convnet) and with
// its weights in convnet_ext.weights, plus mlp_ext.weights of another model.
//  - the file, mmapped read-only (a write would fault), passes check_weights, and a
//    run on it gives outputs bit for bit equal to the embedded library's, within
//    the tolerance of the reference; so does the C++ Model;
//  - every damaged weights buffer gets its own status from check_weights, run and
//    the Model, and a run that refuses writes no output: null, misaligned,
//    truncated (in the header and in the payload), another model's file, another
//    format version, a damaged magic; a flipped payload byte fails the checksum in
//    check_weights, while run (header and size only, as documented) accepts it.
//
// usage: external_weights_test CONVNET_EXT.weights MLP_EXT.weights INPUT.bin REFERENCE.bin   (convnet)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "convnet.h"
#include "convnet_ext.h"
#include "test_support.h"

namespace {

struct Mapped {
  const void* data = nullptr;
  size_t bytes = 0;
};

Mapped map_read_only(const char* path) {
  const int fd = open(path, O_RDONLY);
  struct stat st {};
  if (fd < 0 || fstat(fd, &st) != 0) {
    std::fprintf(stderr, "%s: cannot open\n", path);
    std::exit(2);
  }
  void* data = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (data == MAP_FAILED) {
    std::fprintf(stderr, "%s: cannot mmap\n", path);
    std::exit(2);
  }
  return {data, static_cast<size_t>(st.st_size)};
}

// An aligned, writable copy of the weights with `offset` bytes before them.
struct Copy {
  unsigned char* block;
  unsigned char* data;
  Copy(const Mapped& m, size_t offset)
      : block(static_cast<unsigned char*>(std::aligned_alloc(64, (m.bytes + offset) / 64 * 64 + 64))),
        data(block + offset) {
    std::memcpy(data, m.data, m.bytes);
  }
  ~Copy() { std::free(block); }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s CONVNET_EXT.weights MLP_EXT.weights INPUT.bin REFERENCE.bin\n", argv[0]);
    return 2;
  }
  const Mapped weights = map_read_only(argv[1]);
  const Mapped other_model = map_read_only(argv[2]);
  const float* input = read_floats(argv[3], convnet::kInputs[0].elements);
  const size_t n0 = convnet::kOutputs[0].elements, n1 = convnet::kOutputs[1].elements;
  const float* reference = read_floats(argv[4], n0 + n1);
  void* arena = std::aligned_alloc(AOTC_ARENA_ALIGNMENT, (convnet::kArenaBytes / 64 + 1) * 64);
  const float* inputs[] = {input};

  EXPECT(aotc_convnet_ext_weights_bytes() == weights.bytes);
  EXPECT(reinterpret_cast<uintptr_t>(weights.data) % 64 == 0);

  // The embedded library's outputs, then the external one's on the mmapped file.
  std::vector<float> embedded(n0 + n1), external(n0 + n1);
  float* embedded_outputs[] = {embedded.data(), embedded.data() + n0};
  EXPECT(aotc_convnet_run(arena, convnet::kArenaBytes, inputs, embedded_outputs) == AOTC_OK);
  EXPECT(aotc_convnet_ext_check_weights(weights.data, weights.bytes) == AOTC_OK);
  fill_sentinel(external.data(), external.size());
  float* external_outputs[] = {external.data(), external.data() + n0};
  EXPECT(aotc_convnet_ext_run_with_weights(weights.data, weights.bytes, arena, convnet::kArenaBytes, inputs,
                                           external_outputs) == AOTC_OK);
  EXPECT(std::memcmp(embedded.data(), external.data(), external.size() * sizeof(float)) == 0);
  close_to_reference("external weights", external.data(), reference, n0 + n1);

  // The C++ class: verifies at construction, then runs.
  {
    convnet_ext::Model model(weights.data, weights.bytes, arena, convnet::kArenaBytes);
    EXPECT(model.status() == aotc::Status::kOk);
    fill_sentinel(external.data(), external.size());
    EXPECT(model.run(inputs, external_outputs) == aotc::Status::kOk);
    EXPECT(std::memcmp(embedded.data(), external.data(), external.size() * sizeof(float)) == 0);
  }

  // Damaged weights: check_weights, run_with_weights and the Model all refuse them,
  // each with its own status, and the refused run writes nothing.
  auto expect_refused = [&](const char* what, const void* data, size_t bytes, int status) {
    const int checked = aotc_convnet_ext_check_weights(data, bytes);
    fill_sentinel(external.data(), external.size());
    const int ran = aotc_convnet_ext_run_with_weights(data, bytes, arena, convnet::kArenaBytes, inputs, external_outputs);
    const convnet_ext::Model model(data, bytes, arena, convnet::kArenaBytes);
    std::printf("%-28s check %d, run %d, Model %d (expected %d: %s)\n", what, checked, ran,
                static_cast<int>(model.status()), status, aotc_status_message(status));
    EXPECT(checked == status && ran == status && static_cast<int>(model.status()) == status);
    EXPECT(all_sentinel(external.data(), external.size()));
  };
  expect_refused("null", nullptr, weights.bytes, AOTC_ERROR_NULL_WEIGHTS);
  {
    Copy shifted(weights, 16);
    expect_refused("misaligned by 16 bytes", shifted.data, weights.bytes, AOTC_ERROR_MISALIGNED_WEIGHTS);
  }
  expect_refused("truncated in the header", weights.data, 100, AOTC_ERROR_WEIGHTS_TRUNCATED);
  expect_refused("truncated by one byte", weights.data, weights.bytes - 1, AOTC_ERROR_WEIGHTS_TRUNCATED);
  expect_refused("another model's file", other_model.data, other_model.bytes, AOTC_ERROR_WEIGHTS_WRONG_MODEL);
  {
    Copy copy(weights, 0);
    reinterpret_cast<aotc_weights_header*>(copy.data)->version = AOTC_WEIGHTS_VERSION + 1;
    expect_refused("format version 2", copy.data, weights.bytes, AOTC_ERROR_WEIGHTS_WRONG_VERSION);
  }
  {
    Copy copy(weights, 0);
    copy.data[2] ^= 0x20;
    expect_refused("damaged magic", copy.data, weights.bytes, AOTC_ERROR_WEIGHTS_CORRUPTED);
  }
  {
    Copy copy(weights, 0);
    reinterpret_cast<aotc_weights_header*>(copy.data)->model_name[0] ^= 1;
    expect_refused("another model's name", copy.data, weights.bytes, AOTC_ERROR_WEIGHTS_WRONG_MODEL);
  }
  {
    // A flipped payload bit: only the checksum sees it.
    Copy copy(weights, 0);
    copy.data[weights.bytes - 5] ^= 0x01;
    EXPECT(aotc_convnet_ext_check_weights(copy.data, weights.bytes) == AOTC_ERROR_WEIGHTS_CORRUPTED);
    const convnet_ext::Model model(copy.data, weights.bytes, arena, convnet::kArenaBytes);
    EXPECT(model.status() == aotc::Status::kWeightsCorrupted);
    EXPECT(aotc_convnet_ext_run_with_weights(copy.data, weights.bytes, arena, convnet::kArenaBytes, inputs,
                                             external_outputs) == AOTC_OK);
  }

  std::free(arena);
  std::free(const_cast<float*>(input));
  std::free(const_cast<float*>(reference));
  return test_result();
}
