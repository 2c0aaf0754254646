// The OpenCV-free part of every Fashion-MNIST app: turn a 28x28 grey image into
// the model's input exactly as training did, and read the scores. (The image-file
// and camera path, fashion_mnist_sample.h, adds OpenCV's decoding and resizing.)
// The model itself is the app's: fashion_mnist.h (float) or fashion_mnist_int8.h.
#pragma once

#include <cstdint>
#include <vector>

#include "fashion_mnist_info.h"

namespace fashion_sample {

// Both models' input is 1x1xkSide x kSide; their output has one logit per label
// (kInputs / kOutputs of the generated headers; the accuracy tests would fail on any other).
inline constexpr int kSide = 28;

// kSide*kSide grey pixels, row-major -> the model's input: /255, inverted if asked
// (Fashion-MNIST is a white garment on black; ordinary photos are the opposite),
// then (x - mean) / std as in training.
void normalize(const uint8_t* grey, bool invert, float* input);

struct Score {
  int label;
  float probability;
};

// The k most probable labels, by softmax of the logits, best first.
std::vector<Score> top_k(const float* logits, int k);

}  // namespace fashion_sample
