// The worker pool's loop splitting (sdk/runtime/aotc_runtime.cpp), driven directly
// through the runtime a model library carries:
//  - every iteration of a loop runs exactly once, for loop sizes 2..150 on 2, 3
//    and 4 threads, including loops smaller than the thread count;
//  - a task's failure code comes back from the loop;
//  - affinity: on 2 threads, a loop of 8 iterations is split into 0-3 (the
//    caller's) and 4-7 (the worker's), and each thread claims from its own range
//    first: the first iteration the worker runs is 4. Iteration 0 waits until
//    the worker has begun, so that the caller cannot finish its range and take
//    the worker's before the worker starts; this holds however the threads are
//    scheduled. The old pool, claiming iterations in turn, failed it (the
//    worker's first was 1).
// The model's own run against the reference checks that kernels still compute
// the right thing on the new pool.
//
// usage: pool_ranges_test INPUT.bin REFERENCE.bin   (bigconv)
#include <HalideRuntime.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bigconv.h"
#include "test_support.h"

extern "C" {
int aotc_rt1_do_par_for(void* user_context, halide_task_t task, int min, int size, uint8_t* closure);
void aotc_rt1_set_num_threads(int threads);
}

namespace {

struct Counts {
  std::atomic<int> runs[200];
};

int count_iteration(void*, int i, uint8_t* closure) {
  reinterpret_cast<Counts*>(closure)->runs[i].fetch_add(1);
  return 0;
}

int fail_at_five(void*, int i, uint8_t*) { return i == 5 ? -7 : 0; }

// Which thread ran each iteration of a loop, and in which order they were claimed.
struct Trace {
  pid_t caller;
  std::atomic<int> order{0};
  std::atomic<bool> worker_began{false};
  pid_t tid[8];
  int claimed[8];
};

int traced_iteration(void*, int i, uint8_t* closure) {
  Trace& trace = *reinterpret_cast<Trace*>(closure);
  trace.claimed[i] = trace.order.fetch_add(1);
  trace.tid[i] = gettid();
  if (trace.tid[i] != trace.caller) trace.worker_began.store(true);
  if (i == 0) {
    // Give the worker up to 2 s to begin (a loaded machine may not run it sooner).
    for (int k = 0; k < 20000 && !trace.worker_began.load(); ++k) {
      const timespec pause{0, 100 * 1000};
      nanosleep(&pause, nullptr);
    }
  }
  return 0;
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

  for (int threads : {2, 3, 4}) {
    aotc_rt1_set_num_threads(threads);
    for (int size = 2; size <= 150; ++size) {
      Counts counts{};
      EXPECT(aotc_rt1_do_par_for(nullptr, count_iteration, 0, size, reinterpret_cast<uint8_t*>(&counts)) == 0);
      int wrong = 0;
      for (int i = 0; i < 200; ++i) wrong += counts.runs[i].load() != (i < size ? 1 : 0);
      if (wrong != 0) std::fprintf(stderr, "%d threads, loop of %d: %d iterations ran not exactly once\n", threads, size, wrong);
      EXPECT(wrong == 0);
    }
    EXPECT(aotc_rt1_do_par_for(nullptr, fail_at_five, 0, 9, nullptr) == -7);
    EXPECT(bigconv::Model::set_num_threads(threads) == aotc::Status::kOk);
    EXPECT(model.run(input, output.data()) == aotc::Status::kOk);
    close_to_reference("bigconv", output.data(), reference, out_elements);
  }

  aotc_rt1_set_num_threads(2);
  const int loops = 20;
  int worker_took_part = 0;
  for (int loop = 0; loop < loops; ++loop) {
    Trace trace{};
    trace.caller = gettid();
    EXPECT(aotc_rt1_do_par_for(nullptr, traced_iteration, 0, 8, reinterpret_cast<uint8_t*>(&trace)) == 0);
    int first = -1;
    for (int i = 0; i < 8; ++i)
      if (trace.tid[i] != trace.caller && (first < 0 || trace.claimed[i] < trace.claimed[first])) first = i;
    if (first < 0) continue;  // the worker never began: nothing to check
    ++worker_took_part;
    if (first != 4) std::fprintf(stderr, "loop %d: the worker's first iteration was %d, not 4\n", loop, first);
    EXPECT(first == 4);
  }
  std::printf("loops of 8 on 2 threads in which the worker took part: %d of %d\n",
              worker_took_part, loops);
  EXPECT(worker_took_part > 0);

  std::free(arena);
  std::free(const_cast<float*>(input));
  std::free(const_cast<float*>(reference));
  return test_result();
}
