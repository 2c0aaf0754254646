// A run allocates nothing: with every allocation function of the process
// counted (alloc_counter.c; operator new and delete below go through them),
// no run may allocate, the first included, once set_num_threads has started
// Halide's worker threads.
//
// usage: alloc_test INPUT.bin REFERENCE.bin   (bigconv: parallel conv kernels)
#include <cstdio>
#include <cstdlib>
#include <new>

#include "alloc_counter.h"
#include "bigconv.h"
#include "test_support.h"

// Every operator new and delete, forwarding to the counted malloc and free.
void* operator new(std::size_t size) {
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return std::malloc(size == 0 ? 1 : size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return std::malloc(size == 0 ? 1 : size); }
void* operator new(std::size_t size, std::align_val_t alignment) {
  const auto a = static_cast<std::size_t>(alignment);
  if (void* p = std::aligned_alloc(a, (size + a - 1) / a * a)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size, std::align_val_t alignment) { return operator new(size, alignment); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s INPUT.bin REFERENCE.bin\n", argv[0]);
    return 2;
  }
  const size_t input_elements = bigconv::kInputs[0].elements;
  const size_t output_elements = bigconv::kOutputs[0].elements;
  float* input = read_floats(argv[1], input_elements);
  float* reference = read_floats(argv[2], output_elements);
  float* output = static_cast<float*>(std::malloc(output_elements * sizeof(float)));
  void* arena = std::aligned_alloc(AOTC_ARENA_ALIGNMENT, (bigconv::kArenaBytes / AOTC_ARENA_ALIGNMENT + 1) *
                                                             AOTC_ARENA_ALIGNMENT);

  // The counter sees allocations at all (else a zero below would prove nothing).
  alloc_counter_start();
  void* volatile probe_block = std::malloc(16);  // volatile: the compiler may not elide the pair
  std::free(probe_block);
  int* volatile probe_int = new int(1);
  delete probe_int;
  const long probe = alloc_counter_stop();
  std::printf("allocations counted by the probe: %ld (expected 2)\n", probe);
  EXPECT(probe == 2);

  // More workers than this machine may have cores, so that the kernels' parallel loops really fan out.
  alloc_counter_start();
  EXPECT(bigconv::Model::set_num_threads(4) == aotc::Status::kOk);
  std::printf("allocations starting 4 workers: %ld\n", alloc_counter_stop());

  alloc_counter_start();
  bigconv::Model model(arena, bigconv::kArenaBytes);
  const long at_construction = alloc_counter_stop();
  std::printf("allocations constructing the model: %ld\n", at_construction);
  EXPECT(at_construction == 0);
  EXPECT(model.status() == aotc::Status::kOk);

  alloc_counter_start();
  for (int i = 0; i < 4; ++i) EXPECT(model.run(input, output) == aotc::Status::kOk);
  const long in_runs = alloc_counter_stop();
  std::printf("allocations during 4 runs, the first included: %ld\n", in_runs);
  EXPECT(in_runs == 0);
  close_to_reference("bigconv output", output, reference, output_elements);

  std::free(arena);
  std::free(output);
  std::free(reference);
  std::free(input);
  return test_result();
}
