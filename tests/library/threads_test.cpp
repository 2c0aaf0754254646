// The worker pool behind the kernels' parallel loops (sdk/runtime/aotc_runtime.cpp),
// observed through the process's own threads rather than through timing:
//  - set_num_threads(3) starts two workers, and runs with them match the reference;
//  - the workers do work: their CPU time grows over runs of parallel kernels;
//  - after set_num_threads(1) they take no part: their CPU time stays exactly
//    the same over more runs (lowering the thread count used to leave Halide's
//    workers busy), and the results still match;
//  - raising it again brings them back.
//
// usage: threads_test INPUT.bin REFERENCE.bin   (bigconv)
#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bigconv.h"
#include "test_support.h"

namespace {

// CPU clock ticks (user + system) of every thread of this process but the calling one.
long other_threads_ticks() {
  const std::string self = std::to_string(gettid());
  long ticks = 0;
  DIR* dir = opendir("/proc/self/task");
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.' || self == entry->d_name) continue;
    FILE* stat = std::fopen(("/proc/self/task/" + std::string(entry->d_name) + "/stat").c_str(), "r");
    if (stat == nullptr) continue;
    char line[1024] = {};
    std::fgets(line, sizeof line, stat);
    std::fclose(stat);
    // Fields after the ")" that closes the name: state is field 3, utime 14, stime 15.
    const char* rest = std::strrchr(line, ')');
    long utime = 0, stime = 0;
    if (rest && std::sscanf(rest + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %ld %ld", &utime, &stime) == 2)
      ticks += utime + stime;
  }
  closedir(dir);
  return ticks;
}

int thread_count() {
  int n = 0;
  DIR* dir = opendir("/proc/self/task");
  while (dirent* entry = readdir(dir)) n += entry->d_name[0] != '.';
  closedir(dir);
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s INPUT.bin REFERENCE.bin\n", argv[0]);
    return 2;
  }
  const size_t out_elements = bigconv::kOutputs[0].elements;
  const float* input = read_floats(argv[1], bigconv::kInputs[0].elements);
  const float* reference = read_floats(argv[2], out_elements);
  std::vector<float> output(out_elements);
  void* arena = std::aligned_alloc(AOTC_ARENA_ALIGNMENT, (bigconv::kArenaBytes / 64 + 1) * 64);
  bigconv::Model model(arena, bigconv::kArenaBytes);
  auto runs = [&](int count, const char* what) {
    for (int i = 0; i < count; ++i) EXPECT(model.run(input, output.data()) == aotc::Status::kOk);
    close_to_reference(what, output.data(), reference, out_elements);
  };

  const int before = thread_count();
  EXPECT(bigconv::Model::set_num_threads(3) == aotc::Status::kOk);
  std::printf("threads: %d before, %d after set_num_threads(3)\n", before, thread_count());
  EXPECT(thread_count() >= before + 2);

  long start = other_threads_ticks();
  runs(300, "3 threads");
  const long with_workers = other_threads_ticks() - start;
  std::printf("workers' CPU ticks over 300 runs with 3 threads: %ld\n", with_workers);
  EXPECT(with_workers > 0);

  EXPECT(bigconv::Model::set_num_threads(1) == aotc::Status::kOk);
  usleep(100 * 1000);  // the workers finish spinning and sleep
  start = other_threads_ticks();
  runs(300, "1 thread");
  const long without_workers = other_threads_ticks() - start;
  std::printf("workers' CPU ticks over 300 runs with 1 thread: %ld\n", without_workers);
  EXPECT(without_workers == 0);

  EXPECT(bigconv::Model::set_num_threads(2) == aotc::Status::kOk);
  start = other_threads_ticks();
  runs(300, "2 threads again");
  const long again = other_threads_ticks() - start;
  std::printf("workers' CPU ticks over 300 runs with 2 threads: %ld\n", again);
  EXPECT(again > 0);
  std::free(arena);
  std::free(const_cast<float*>(input));
  std::free(const_cast<float*>(reference));
  return test_result();
}
