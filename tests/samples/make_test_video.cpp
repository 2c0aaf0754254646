// Writes the first N Fashion-MNIST test images as a video (MJPEG in AVI, through
// OpenCV's own encoder, so no codec library is needed), each frame scaled up 4x to
// 112x112 as a camera would deliver more pixels than the model takes.
//
// usage: make_test_video DATASET_DIR N OUT.avi
#include <cstdio>
#include <cstdlib>

#include <opencv2/imgproc.hpp>
#include <opencv2/videoio.hpp>

#include "fashion_mnist_idx.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s DATASET_DIR N OUT.avi\n", argv[0]);
    return 2;
  }
  const FashionMnistTestSet test_set = read_test_set(argv[1]);
  const size_t frames = std::strtoul(argv[2], nullptr, 10);
  if (frames == 0 || frames > test_set.size()) {
    std::fprintf(stderr, "N must be 1..%zu\n", test_set.size());
    return 2;
  }
  const int side = 4 * 28;
  cv::VideoWriter writer(argv[3], cv::VideoWriter::fourcc('M', 'J', 'P', 'G'), 25.0, cv::Size(side, side), true);
  if (!writer.isOpened()) {
    std::fprintf(stderr, "cannot write %s\n", argv[3]);
    return 2;
  }
  cv::Mat big, colour;
  for (size_t i = 0; i < frames; ++i) {
    const cv::Mat image(28, 28, CV_8UC1, const_cast<uint8_t*>(test_set.image(i)));
    cv::resize(image, big, cv::Size(side, side), 0, 0, cv::INTER_NEAREST);
    cv::cvtColor(big, colour, cv::COLOR_GRAY2BGR);
    writer.write(colour);
  }
  return 0;
}
