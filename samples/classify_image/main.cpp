// classify_image: the smallest complete use of an aotc-compiled model. Loads one
// image, runs the Fashion-MNIST model, prints the five most probable labels.
//
// usage: classify_image IMAGE [--invert]
#include <cstdint>
#include <cstdio>
#include <cstring>

#include <opencv2/imgcodecs.hpp>

#include "fashion_mnist.h"
#include "fashion_mnist_sample.h"

int main(int argc, char** argv) {
  const bool invert = argc == 3 && std::strcmp(argv[2], "--invert") == 0;
  if (argc < 2 || argc > 3 || (argc == 3 && !invert)) {
    std::fprintf(stderr, "usage: %s IMAGE [--invert]\n  --invert  for dark garments on a light background\n", argv[0]);
    return 1;
  }
  const cv::Mat image = cv::imread(argv[1], cv::IMREAD_GRAYSCALE);
  if (image.empty()) {
    std::fprintf(stderr, "classify_image: cannot read image %s\n", argv[1]);
    return 2;
  }

  // The caller owns the model's memory: one aligned block, no allocation in run().
  alignas(fashion_mnist::kArenaAlignment) static uint8_t arena[fashion_mnist::kArenaBytes];
  fashion_mnist::Model model(arena, sizeof(arena));

  float input[fashion_sample::kSide * fashion_sample::kSide];
  float logits[fashion_mnist_info::kNumLabels];
  fashion_sample::preprocess(image, invert, input);
  const aotc::Status status = model.run(input, logits);
  if (status != aotc::Status::kOk) {
    std::fprintf(stderr, "classify_image: %s %s\n", aotc::message(status), model.last_error());
    return 3;
  }
  for (const fashion_sample::Score& s : fashion_sample::top_k(logits, 5))
    std::printf("%-12s %.3f\n", fashion_mnist_info::kLabels[s.label], s.probability);
  return 0;
}
