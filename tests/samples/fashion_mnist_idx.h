// Reads the gzipped IDX files of Debian's dataset-fashion-mnist
// (/usr/share/datasets/fashion-mnist) for the samples' tests.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

// The payload of an IDX file after its header (16 bytes for images, 8 for labels);
// exits with a message if the file cannot be read.
inline std::vector<uint8_t> read_idx_gz(const std::string& path, size_t header_bytes) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) {
    std::fprintf(stderr, "cannot open %s (apt-get install dataset-fashion-mnist)\n", path.c_str());
    std::exit(2);
  }
  std::vector<uint8_t> bytes;
  uint8_t chunk[1 << 16];
  int n;
  while ((n = gzread(file, chunk, sizeof(chunk))) > 0) bytes.insert(bytes.end(), chunk, chunk + n);
  gzclose(file);
  if (n < 0 || bytes.size() < header_bytes) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    std::exit(2);
  }
  return std::vector<uint8_t>(bytes.begin() + header_bytes, bytes.end());
}

struct FashionMnistTestSet {
  std::vector<uint8_t> pixels;  // 28*28 per image, row-major, white garment on black
  std::vector<uint8_t> labels;
  size_t size() const { return labels.size(); }
  const uint8_t* image(size_t i) const { return pixels.data() + i * 28 * 28; }
};

inline FashionMnistTestSet read_test_set(const std::string& dir) {
  FashionMnistTestSet set{read_idx_gz(dir + "/t10k-images-idx3-ubyte.gz", 16),
                          read_idx_gz(dir + "/t10k-labels-idx1-ubyte.gz", 8)};
  if (set.pixels.size() != set.size() * 28 * 28) {
    std::fprintf(stderr, "%s: %zu images but %zu labels\n", dir.c_str(), set.pixels.size() / 784, set.size());
    std::exit(2);
  }
  return set;
}
