#include "fashion_mnist_sample.h"

#include <opencv2/imgproc.hpp>

namespace fashion_sample {
namespace {

// `image` as kSide x kSide continuous grey bytes.
cv::Mat resized_grey(const cv::Mat& image) {
  CV_Assert(image.depth() == CV_8U);
  cv::Mat grey = image;
  if (image.channels() == 3) cv::cvtColor(image, grey, cv::COLOR_BGR2GRAY);
  if (image.channels() == 4) cv::cvtColor(image, grey, cv::COLOR_BGRA2GRAY);
  cv::Mat small = grey;
  if (grey.rows != kSide || grey.cols != kSide) cv::resize(grey, small, cv::Size(kSide, kSide), 0, 0, cv::INTER_AREA);
  if (!small.isContinuous()) small = small.clone();
  return small;
}

}  // namespace

void preprocess(const cv::Mat& image, bool invert, float* input) {
  normalize(resized_grey(image).ptr<uint8_t>(0), invert, input);
}

void preprocess(const cv::Mat& image, bool invert, uint8_t* pixels) {
  const cv::Mat grey = resized_grey(image);
  const uint8_t* p = grey.ptr<uint8_t>(0);
  for (int i = 0; i < kSide * kSide; ++i) pixels[i] = invert ? static_cast<uint8_t>(255 - p[i]) : p[i];
}

}  // namespace fashion_sample
