#include "fashion_mnist_core.h"

#include <algorithm>
#include <cmath>

namespace fashion_sample {

void normalize(const uint8_t* grey, bool invert, float* input) {
  for (int i = 0; i < kSide * kSide; ++i) {
    float value = grey[i] / 255.0f;
    if (invert) value = 1.0f - value;
    input[i] = (value - fashion_mnist_info::kMean) / fashion_mnist_info::kStd;
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
