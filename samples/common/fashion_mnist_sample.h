// What every Fashion-MNIST app does around the compiled model: turn an OpenCV
// image into the model's input exactly as training did, and read the scores.
#pragma once

#include <opencv2/core.hpp>
#include <vector>

#include "fashion_mnist.h"
#include "fashion_mnist_info.h"

namespace fashion_sample {

// The model's input is 1x1xkSide x kSide; its output has one logit per label
// (fashion_mnist::kInputs / kOutputs; the accuracy test would fail on any other).
inline constexpr int kSide = 28;

// Any 8-bit grey, BGR or BGRA image -> kSide*kSide floats: grey, resized to 28x28
// (area interpolation), /255, inverted if asked (Fashion-MNIST is a white garment on
// black; ordinary photos are the opposite), then (x - mean) / std as in training.
void preprocess(const cv::Mat& image, bool invert, float* input);

struct Score {
  int label;
  float probability;
};

// The k most probable labels, by softmax of the logits, best first.
std::vector<Score> top_k(const float* logits, int k);

}  // namespace fashion_sample
