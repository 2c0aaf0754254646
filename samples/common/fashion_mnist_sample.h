// What every Fashion-MNIST app does around the compiled model, from an OpenCV
// image: decode-independent preprocessing to the model's input exactly as training
// did, and the scores (fashion_mnist_core.h).
#pragma once

#include <opencv2/core.hpp>

#include "fashion_mnist_core.h"

namespace fashion_sample {

// Any 8-bit grey, BGR or BGRA image -> kSide*kSide floats, the float model's input:
// grey, resized to 28x28 (area interpolation), then normalize().
void preprocess(const cv::Mat& image, bool invert, float* input);

// The same up to the grey bytes, the int8 model's input as they are (its input's
// quantization is the normalisation): grey, resized, 255 - p if `invert`.
void preprocess(const cv::Mat& image, bool invert, uint8_t* pixels);

}  // namespace fashion_sample
