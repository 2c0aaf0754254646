#include "fashion_mnist_sample.h"

#include <opencv2/imgproc.hpp>

namespace fashion_sample {

void preprocess(const cv::Mat& image, bool invert, float* input) {
  CV_Assert(image.depth() == CV_8U);
  cv::Mat grey = image;
  if (image.channels() == 3) cv::cvtColor(image, grey, cv::COLOR_BGR2GRAY);
  if (image.channels() == 4) cv::cvtColor(image, grey, cv::COLOR_BGRA2GRAY);
  cv::Mat small = grey;
  if (grey.rows != kSide || grey.cols != kSide) cv::resize(grey, small, cv::Size(kSide, kSide), 0, 0, cv::INTER_AREA);
  if (!small.isContinuous()) small = small.clone();
  normalize(small.ptr<uint8_t>(0), invert, input);
}

}  // namespace fashion_sample
