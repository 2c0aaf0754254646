// camera_classify: classifies garments in camera frames, a video or image files
// with the Fashion-MNIST model that aotc compiled into this binary.
//
// Per frame it prints the top-k labels with softmax scores and the latency (the
// model alone, and with preprocessing); at the end the overall frames per second.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/videoio.hpp>

#include "fashion_mnist_sample.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

const char kUsage[] =
    "usage: camera_classify (--camera DEVICE | --video FILE | --images PATH...) [options]\n"
    "\n"
    "Classifies each frame with the Fashion-MNIST model compiled in by aotc.\n"
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
  std::string camera, video;
  std::vector<std::string> images;
  int top_k = 3;
  long max_frames = 0;
  bool invert = false;
  int threads = 1;
};

[[noreturn]] void usage_error(const std::string& message) {
  std::fprintf(stderr, "camera_classify: %s\n(see camera_classify --help)\n", message.c_str());
  std::exit(1);
}

[[noreturn]] void source_error(const std::string& message) {
  std::fprintf(stderr, "camera_classify: %s\n", message.c_str());
  std::exit(2);
}

long parse_number(const char* option, const char* text, long min) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || value < min)
    usage_error(std::string(option) + " wants a whole number >= " + std::to_string(min) + ", got '" + text + "'");
  return value;
}

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) usage_error(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (arg == "--camera") {
      options.camera = value();
    } else if (arg == "--video") {
      options.video = value();
    } else if (arg == "--images") {
      while (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0) options.images.push_back(argv[++i]);
      if (options.images.empty()) usage_error("--images needs at least one file or folder");
    } else if (arg == "--top-k") {
      options.top_k = static_cast<int>(parse_number("--top-k", value(), 1));
    } else if (arg == "--frames") {
      options.max_frames = parse_number("--frames", value(), 1);
    } else if (arg == "--invert") {
      options.invert = true;
    } else if (arg == "--threads") {
      options.threads = static_cast<int>(parse_number("--threads", value(), 0));
    } else {
      usage_error("unknown argument '" + arg + "'");
    }
  }
  const int sources = !options.camera.empty() + !options.video.empty() + !options.images.empty();
  if (sources != 1) usage_error("give exactly one of --camera, --video, --images");
  return options;
}

bool is_image_file(const fs::path& path) {
  std::string ext = path.extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* known : {".png", ".jpg", ".jpeg", ".bmp", ".pgm", ".ppm", ".pbm", ".tif", ".tiff", ".webp"})
    if (ext == known) return true;
  return false;
}

// Every file named, and the image files of every folder named, in order; all are
// checked before the first frame so that a typo fails at once.
std::vector<std::string> list_images(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code error;
    if (fs::is_directory(path, error)) {
      std::vector<std::string> in_folder;
      fs::directory_iterator it(path, error), end;
      if (error) source_error("cannot read folder " + path + ": " + error.message());
      for (; it != end; it.increment(error))
        if (it->is_regular_file() && is_image_file(it->path())) in_folder.push_back(it->path().string());
      if (in_folder.empty()) source_error("folder " + path + " has no image files");
      std::sort(in_folder.begin(), in_folder.end());
      files.insert(files.end(), in_folder.begin(), in_folder.end());
    } else if (fs::exists(path, error)) {
      files.push_back(path);
    } else {
      source_error("no such file or folder: " + path);
    }
  }
  return files;
}

// Frames from a camera, a video or a list of images, one at a time.
class FrameSource {
 public:
  explicit FrameSource(const Options& options) {
    if (!options.images.empty()) {
      images_ = list_images(options.images);
      description_ = "the images";
      return;
    }
    const std::string& path = options.camera.empty() ? options.video : options.camera;
    description_ = (options.camera.empty() ? "video file " : "camera ") + path;
    if (!fs::exists(path)) source_error("no such " + description_);
    const bool opened = options.camera.empty() ? capture_.open(path) : capture_.open(path, cv::CAP_V4L2);
    if (!opened || !capture_.isOpened()) source_error("cannot open " + description_);
  }

  // "camera /dev/video0", "video file clip.mp4" or "the images", for messages.
  const std::string& description() const { return description_; }

  // The next frame and a name for it; false at the end of the source.
  bool next(cv::Mat& frame, std::string& name) {
    if (!capture_.isOpened()) {
      if (next_image_ == images_.size()) return false;
      name = images_[next_image_++];
      frame = cv::imread(name, cv::IMREAD_GRAYSCALE);
      if (frame.empty()) source_error("cannot read image " + name + " (not an image OpenCV can decode?)");
      return true;
    }
    name.clear();
    return capture_.read(frame) && !frame.empty();
  }

 private:
  cv::VideoCapture capture_;
  std::vector<std::string> images_;
  size_t next_image_ = 0;
  std::string description_;
};

double milliseconds(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// The model's working memory: static, so the app allocates nothing per frame.
alignas(fashion_mnist::kArenaAlignment) uint8_t arena[fashion_mnist::kArenaBytes];

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  FrameSource source(options);

  fashion_mnist::Model model(arena, sizeof(arena));
  aotc::Status status = model.status();
  if (status == aotc::Status::kOk) status = fashion_mnist::Model::set_num_threads(options.threads);
  if (status != aotc::Status::kOk) {
    std::fprintf(stderr, "camera_classify: cannot set up the model: %s\n", aotc::message(status));
    return 3;
  }

  float input[fashion_sample::kSide * fashion_sample::kSide];
  float logits[fashion_mnist_info::kNumLabels];
  cv::Mat frame;
  std::string name;
  long frames = 0;
  double model_ms_sum = 0, total_ms_sum = 0;
  const Clock::time_point started = Clock::now();
  while ((options.max_frames == 0 || frames < options.max_frames) && source.next(frame, name)) {
    const Clock::time_point t0 = Clock::now();
    fashion_sample::preprocess(frame, options.invert, input);
    const Clock::time_point t1 = Clock::now();
    status = model.run(input, logits);
    const Clock::time_point t2 = Clock::now();
    if (status != aotc::Status::kOk) {
      std::fprintf(stderr, "camera_classify: the model failed: %s %s\n", aotc::message(status), model.last_error());
      return 3;
    }
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
  if (frames == 0) source_error("no frame could be read from " + source.description());
  std::printf("%ld frame%s in %.3f s: %.1f FPS (reading included); mean per frame: model %.3f ms, total %.3f ms\n",
              frames, frames == 1 ? "" : "s", seconds, frames / seconds, model_ms_sum / frames, total_ms_sum / frames);
  return 0;
}
