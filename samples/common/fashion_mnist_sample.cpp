#include "fashion_mnist_sample.h"

#include <algorithm>
#include <cmath>
#include <opencv2/imgproc.hpp>

namespace fashion_sample {

void preprocess(const cv::Mat& image, bool invert, float* input) {
  CV_Assert(image.depth() == CV_8U);
  cv::Mat grey = image;
  if (image.channels() == 3) cv::cvtColor(image, grey, cv::COLOR_BGR2GRAY);
  if (image.channels() == 4) cv::cvtColor(image, grey, cv::COLOR_BGRA2GRAY);
  cv::Mat small = grey;
  if (grey.rows != kSide || grey.cols != kSide) cv::resize(grey, small, cv::Size(kSide, kSide), 0, 0, cv::INTER_AREA);
  for (int y = 0; y < kSide; ++y) {
    const uint8_t* row = small.ptr<uint8_t>(y);
    for (int x = 0; x < kSide; ++x) {
      float value = row[x] / 255.0f;
      if (invert) value = 1.0f - value;
      input[y * kSide + x] = (value - fashion_mnist_info::kMean) / fashion_mnist_info::kStd;
    }
  }
}

std::vector<Score> top_k(const float* logits, int k) {
  const int n = fashion_mnist_info::kNumLabels;
  const float max_logit = *std::max_element(logits, logits + n);
  std::vector<Score> scores(n);
  float sum = 0;
  for (int i = 0; i < n; ++i) {
    scores[i] = {i, std::exp(logits[i] - max_logit)};
    sum += scores[i].probability;
  }
  for (Score& s : scores) s.probability /= sum;
  k = std::clamp(k, 1, n);
  std::partial_sort(scores.begin(), scores.begin() + k, scores.end(),
                    [](const Score& a, const Score& b) { return a.probability > b.probability; });
  scores.resize(k);
  return scores;
}

}  // namespace fashion_sample
