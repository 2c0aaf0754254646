// Runs the Fashion-MNIST test images (all 10,000, or the first IMAGES) through the
// compiled library, with the samples' own normalisation (no OpenCV: the images are
// 28x28 grey already, and the test also runs on ARM), and compares with PyTorch
// (tools/train-fashion-mnist, whose top-1 predictions are in PYTORCH_PREDICTIONS.bin):
//   - accuracy within 0.1 percentage point of PyTorch's on the same images (on all of
//     them, PyTorch's own is the accuracy it recorded);
//   - top-1 label equal to PyTorch's on >= 99.9% of the images.
// The ARM trees run the first 2,000 (10,000 runs under qemu take minutes).
//
// Built with FASHION_MNIST_INT8, the same for the int8 model camera_classify_int8 runs
// (samples/models/fashion_mnist_int8.fb), fed the images' bytes as they are: against
// PyTorch's float model, within 0.5 points (the INT8 issue's bar) and the same top-1 on
// >= 99% (measured 2026-11-29: 91.07% against 91.02%, the same top-1 on 99.46%; the ARM
// trees run its first 500: 92.60% against 92.40%, 99.80%, on aarch64 and armhf alike).
//
// usage: accuracy_test DATASET_DIR PYTORCH_PREDICTIONS.bin PYTORCH_ACCURACY_PERCENT [IMAGES]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "fashion_mnist_core.h"
#include "fashion_mnist_idx.h"

#ifdef FASHION_MNIST_INT8
#include "fashion_mnist_int8.h"
namespace model_api = fashion_mnist_int8;
constexpr double kMaxAccuracyDifference = 0.5, kMinAgreement = 99.0;

// The image's bytes are the model's input.
static const uint8_t* model_input(const uint8_t* grey) { return grey; }
#else
#include "fashion_mnist.h"
namespace model_api = fashion_mnist;
constexpr double kMaxAccuracyDifference = 0.1, kMinAgreement = 99.9;

// The image normalised as in training.
static const float* model_input(const uint8_t* grey) {
  static float input[fashion_sample::kSide * fashion_sample::kSide];
  fashion_sample::normalize(grey, /*invert=*/false, input);
  return input;
}
#endif

int main(int argc, char** argv) {
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: %s DATASET_DIR PYTORCH_PREDICTIONS.bin PYTORCH_ACCURACY_PERCENT [IMAGES]\n", argv[0]);
    return 2;
  }
  const FashionMnistTestSet test_set = read_test_set(argv[1]);
  std::ifstream predictions_file(argv[2], std::ios::binary);
  const std::vector<uint8_t> pytorch(std::istreambuf_iterator<char>(predictions_file), {});
  const double recorded_accuracy = std::atof(argv[3]);
  if (pytorch.size() != test_set.size()) {
    std::fprintf(stderr, "%s has %zu labels, the test set %zu images\n", argv[2], pytorch.size(), test_set.size());
    return 2;
  }
  const size_t images = argc == 5 ? std::min<size_t>(std::strtoul(argv[4], nullptr, 10), test_set.size()) : test_set.size();
  if (images == 0) return 2;
  size_t pytorch_correct = 0;
  for (size_t i = 0; i < images; ++i) pytorch_correct += pytorch[i] == test_set.labels[i];
  const double pytorch_accuracy = 100.0 * pytorch_correct / images;
  if (images == test_set.size() && std::fabs(pytorch_accuracy - recorded_accuracy) > 0.005) {
    std::fprintf(stderr, "PyTorch's predictions give %.2f%%, not the %.2f%% recorded\n", pytorch_accuracy, recorded_accuracy);
    return 2;
  }

  alignas(model_api::kArenaAlignment) static uint8_t arena[model_api::kArenaBytes];
  model_api::Model model(arena, sizeof(arena));
  float logits[fashion_mnist_info::kNumLabels];
  size_t correct = 0, agree = 0;
  for (size_t i = 0; i < images; ++i) {
    const aotc::Status status = model.run(model_input(test_set.image(i)), logits);
    if (status != aotc::Status::kOk) {
      std::fprintf(stderr, "image %zu: %s %s\n", i, aotc::message(status), model.last_error());
      return 1;
    }
    const int label = fashion_sample::top_k(logits, 1)[0].label;
    correct += label == test_set.labels[i];
    agree += label == pytorch[i];
  }

  const double n = static_cast<double>(images);
  const double accuracy = 100.0 * correct / n, agreement = 100.0 * agree / n;
  std::printf("%zu images: accuracy %.2f%% (PyTorch %.2f%%), top-1 equal to PyTorch's on %.2f%% (%zu differ)\n",
              images, accuracy, pytorch_accuracy, agreement, images - agree);
  bool ok = true;
  if (std::fabs(accuracy - pytorch_accuracy) > kMaxAccuracyDifference) {
    std::printf("FAIL: accuracy differs from PyTorch's by more than %.1f percentage point\n", kMaxAccuracyDifference);
    ok = false;
  }
  if (agreement < kMinAgreement) {
    std::printf("FAIL: top-1 agrees with PyTorch on fewer than %.1f%% of the images\n", kMinAgreement);
    ok = false;
  }
  return ok ? 0 : 1;
}
