// Reads the Fashion-MNIST test set for the samples' tests: the IDX files of Debian's
// dataset-fashion-mnist, unpacked from their .gz by unpack_fashion_mnist.py (a test
// fixture), so that the tests need no zlib for the targets they run on.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

// The payload of an IDX file after its header (16 bytes for images, 8 for labels);
// exits with a message if the file cannot be read.
inline std::vector<uint8_t> read_idx(const std::string& path, size_t header_bytes) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    std::fprintf(stderr, "cannot open %s (the samples.fashion_mnist_data fixture unpacks it)\n", path.c_str());
    std::exit(2);
  }
  std::vector<uint8_t> bytes;
  uint8_t chunk[1 << 16];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof(chunk), file)) > 0) bytes.insert(bytes.end(), chunk, chunk + n);
  const bool failed = std::ferror(file) != 0;
  std::fclose(file);
  if (failed || bytes.size() < header_bytes) {
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
  FashionMnistTestSet set{read_idx(dir + "/t10k-images-idx3-ubyte", 16), read_idx(dir + "/t10k-labels-idx1-ubyte", 8)};
  if (set.pixels.size() != set.size() * 28 * 28) {
    std::fprintf(stderr, "%s: %zu images but %zu labels\n", dir.c_str(), set.pixels.size() / 784, set.size());
    std::exit(2);
  }
  return set;
}
