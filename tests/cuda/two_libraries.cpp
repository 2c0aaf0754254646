// Two GPU model libraries in one app (each archive carries the static CUDA runtime
// and aotc's CUDA runtime, whose members the linker takes from the first archive
// that has them): it links, and without a GPU both models say kDeviceUnavailable
// with a message. Built by tests/cuda/CMakeLists.txt.
#include <cstdio>

#include "mobilenet_v2.h"
#include "resnet18.h"

int main() {
  const resnet18::GpuModel first;
  const mobilenet_v2::GpuModel second;
  std::printf("resnet18: %s\nmobilenet_v2: %s\n", first.last_error(), second.last_error());
  if (first.status() == aotc::Status::kOk && second.status() == aotc::Status::kOk) {
    std::printf("SKIPPED: a GPU is here; tests/cuda's numerics run the models\n");
    return 77;
  }
  return first.status() == aotc::Status::kDeviceUnavailable && second.status() == aotc::Status::kDeviceUnavailable &&
                 first.last_error()[0] != '\0' && second.last_error()[0] != '\0'
             ? 0
             : 1;
}
