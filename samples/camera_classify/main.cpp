// camera_classify: classifies garments in camera frames, a video or image files
// with the Fashion-MNIST model that aotc compiled into this binary.
//
// Per frame it prints the top-k labels with softmax scores and the latency (the
// model alone, and with preprocessing); at the end the overall frames per second.
//
// camera_classify_int8 is this source built with FASHION_MNIST_INT8: the int8 model
// (samples/models/fashion_mnist_int8.fb), whose uint8 input's quantization is the
// normalisation, so the frame's 28x28 grey bytes go in as they are (no float frame).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "fashion_mnist_sample.h"
#include "frame_source.h"
#include "sample_cli.h"

#ifdef FASHION_MNIST_INT8
#include "fashion_mnist_int8.h"
namespace model_api = fashion_mnist_int8;
using ModelInput = uint8_t;  // the grey bytes
constexpr char kProgram[] = "camera_classify_int8";
constexpr char kModel[] = "the int8 Fashion-MNIST model (28x28 grey bytes in)";
#else
#include "fashion_mnist.h"
namespace model_api = fashion_mnist;
using ModelInput = float;  // normalised as in training
constexpr char kProgram[] = "camera_classify";
constexpr char kModel[] = "the Fashion-MNIST model";
#endif

using sample::milliseconds;
using Clock = std::chrono::steady_clock;

namespace {

// --help: what follows "usage: <program> ..." and the line naming the model (parse_options).
const char kUsageOptions[] =
    "\n"
    "sources (exactly one):\n"
    "  --camera DEVICE   a V4L2 camera, e.g. /dev/video0 (runs until --frames or Ctrl-C)\n"
    "  --video FILE      a video file\n"
    "  --images PATH...  image files and folders (a folder's images in name order)\n"
    "options:\n"
    "  --top-k N         labels printed per frame (default 3)\n"
    "  --frames N        stop after N frames (default: all; a camera never ends)\n"
    "  --invert          invert grey levels first: the model was trained on white\n"
    "                    garments on black, ordinary photos are dark on light\n"
    "  --threads N       model worker threads (default 1; 0 = one per core)\n"
    "  --help            this text\n"
    "\n"
    "Exit status: 0 ok, 1 bad arguments, 2 a source that cannot be opened or read.\n";

struct Options {
  sample::CommonOptions common;
  int top_k = 3;
  bool invert = false;
};

Options parse_options(int argc, char** argv) {
  Options options;
  const sample::ExtraOption own_option = [&](const std::string& arg, const sample::NextValue& value) {
    if (arg == "--top-k") {
      options.top_k = static_cast<int>(sample::parse_number("--top-k", value(), 1));
    } else if (arg == "--invert") {
      options.invert = true;
    } else {
      return false;
    }
    return true;
  };
  const std::string usage = std::string("usage: ") + kProgram +
                            " (--camera DEVICE | --video FILE | --images PATH...) [options]\n\n"
                            "Classifies each frame with " + kModel + " compiled in by aotc.\n" + kUsageOptions;
  options.common = sample::parse_options(argc, argv, usage.c_str(), own_option);
  return options;
}

// The model's working memory: static, so the app allocates nothing per frame.
alignas(model_api::kArenaAlignment) uint8_t arena[model_api::kArenaBytes];

}  // namespace

int main(int argc, char** argv) {
  sample::set_program_name(kProgram);
  const Options options = parse_options(argc, argv);
  // Images are read grey, as the model wants; preprocess() greys camera and video frames.
  sample::FrameSource source(options.common, cv::IMREAD_GRAYSCALE);

  model_api::Model model(arena, sizeof(arena));
  aotc::Status status = model.status();
  if (status == aotc::Status::kOk) status = model_api::Model::set_num_threads(options.common.threads);
  if (status != aotc::Status::kOk) sample::fail(3, std::string("cannot set up the model: ") + aotc::message(status));

  ModelInput input[fashion_sample::kSide * fashion_sample::kSide];
  float logits[fashion_mnist_info::kNumLabels];
  cv::Mat frame;
  std::string name;
  long frames = 0;
  double model_ms_sum = 0, total_ms_sum = 0;
  const Clock::time_point started = Clock::now();
  while ((options.common.max_frames == 0 || frames < options.common.max_frames) && source.next(frame, name)) {
    const Clock::time_point t0 = Clock::now();
    fashion_sample::preprocess(frame, options.invert, input);
    const Clock::time_point t1 = Clock::now();
    status = model.run(input, logits);
    const Clock::time_point t2 = Clock::now();
    if (status != aotc::Status::kOk)
      sample::fail(3, std::string("the model failed: ") + aotc::message(status) + " " + model.last_error());
    const double model_ms = milliseconds(t2 - t1), total_ms = milliseconds(t2 - t0);
    model_ms_sum += model_ms;
    total_ms_sum += total_ms;

    std::printf("[%ld]%s%s:", frames, name.empty() ? "" : " ", name.c_str());
    for (const fashion_sample::Score& s : fashion_sample::top_k(logits, options.top_k))
      std::printf(" %s %.3f |", fashion_mnist_info::kLabels[s.label], s.probability);
    std::printf(" model %.3f ms, total %.3f ms\n", model_ms, total_ms);
    ++frames;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
  if (frames == 0) sample::source_error("no frame could be read from " + source.description());
  std::printf("%ld frame%s in %.3f s: %.1f FPS (reading included); mean per frame: model %.3f ms, total %.3f ms\n",
              frames, frames == 1 ? "" : "s", seconds, frames / seconds, model_ms_sum / frames, total_ms_sum / frames);
  return 0;
}
