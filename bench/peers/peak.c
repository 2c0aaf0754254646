/* peak: this machine's FP32 FMA peak and memory bandwidth, on 1..N threads.
 *
 *   cc -O2 -march=native -pthread peak.c -o peak
 *   peak 1 2        -> one JSON line per thread count:
 *   {"threads": 1, "gflops": ..., "isa": "avx512", "copy_gbs": ..., "triad_gbs": ...}
 *
 * FMA: 16 independent vector accumulators (more than FMA latency x FMA pipes, so the pipes
 * never wait on a result), all in registers; FLOPs = iterations x 16 x lanes x 2. The ISA is
 * picked at compile time by -march=native: AVX-512 if the CPU has it, else AVX2+FMA.
 * Bandwidth: copy (a = b, 8 bytes per element) and triad (a = b + s*c, 12 bytes per element,
 * STREAM's counting, without the write-allocate read) over arrays far larger than the caches.
 * Each figure is the best of several repetitions: a peak is what the machine can do, and
 * noise only ever makes a run slower. */
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__AVX512F__)
typedef __m512 vec;
#define LANES 16
#define ISA "avx512"
#define VSET1(x) _mm512_set1_ps(x)
#define VFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define VADD(a, b) _mm512_add_ps(a, b)
#define VSUM(a) _mm512_reduce_add_ps(a)
#elif defined(__FMA__) && defined(__AVX2__)
typedef __m256 vec;
#define LANES 8
#define ISA "avx2"
#define VSET1(x) _mm256_set1_ps(x)
#define VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define VADD(a, b) _mm256_add_ps(a, b)
static float VSUM(__m256 a) {
  float f[8];
  _mm256_storeu_ps(f, a);
  return f[0] + f[1] + f[2] + f[3] + f[4] + f[5] + f[6] + f[7];
}
#else
#error "peak.c needs AVX-512 or AVX2+FMA (compile with -march=native on x86-64)"
#endif

#define ACCUMULATORS 16
#define FMA_ITERATIONS 20000000L  /* per thread: ~0.2 s on one core at 100+ GFLOP/s */
#define BW_ELEMENTS (48L << 20)   /* 48 Mi floats = 192 MiB per array, far beyond L3 */
#define MAX_THREADS 64
#define REPEATS 5

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* ---- FMA ---- */

static void* fma_worker(void* sink) {
  vec acc[ACCUMULATORS];
  for (int j = 0; j < ACCUMULATORS; ++j) acc[j] = VSET1(1.0f + j * 1e-3f);
  const vec a = VSET1(0.999999f), b = VSET1(1e-7f);
  for (long i = 0; i < FMA_ITERATIONS; ++i) {
    /* Written out, so the compiler keeps 16 independent chains in 16 registers. */
    acc[0] = VFMA(acc[0], a, b); acc[1] = VFMA(acc[1], a, b);
    acc[2] = VFMA(acc[2], a, b); acc[3] = VFMA(acc[3], a, b);
    acc[4] = VFMA(acc[4], a, b); acc[5] = VFMA(acc[5], a, b);
    acc[6] = VFMA(acc[6], a, b); acc[7] = VFMA(acc[7], a, b);
    acc[8] = VFMA(acc[8], a, b); acc[9] = VFMA(acc[9], a, b);
    acc[10] = VFMA(acc[10], a, b); acc[11] = VFMA(acc[11], a, b);
    acc[12] = VFMA(acc[12], a, b); acc[13] = VFMA(acc[13], a, b);
    acc[14] = VFMA(acc[14], a, b); acc[15] = VFMA(acc[15], a, b);
  }
  vec total = acc[0];
  for (int j = 1; j < ACCUMULATORS; ++j) total = VADD(total, acc[j]);
  *(float*)sink = VSUM(total);  /* the result is used: the loop cannot be dropped */
  return NULL;
}

/* Runs fn(arg[t]) on `threads` threads and returns the wall time of the slowest. */
static double run_threads(int threads, void* (*fn)(void*), void** args) {
  pthread_t ids[MAX_THREADS];
  const double t0 = now_s();
  for (int t = 0; t < threads; ++t) pthread_create(&ids[t], NULL, fn, args[t]);
  for (int t = 0; t < threads; ++t) pthread_join(ids[t], NULL);
  return now_s() - t0;
}

static double fma_gflops(int threads) {
  float sinks[MAX_THREADS];
  void* args[MAX_THREADS];
  for (int t = 0; t < threads; ++t) args[t] = &sinks[t];
  double best = 0;
  for (int r = 0; r < REPEATS; ++r) {
    const double seconds = run_threads(threads, fma_worker, args);
    const double flops = (double)threads * FMA_ITERATIONS * ACCUMULATORS * LANES * 2;
    if (flops / seconds > best) best = flops / seconds;
  }
  return best * 1e-9;
}

/* ---- bandwidth ---- */

typedef struct {
  float *a, *b, *c;
  long begin, end;
  int triad;
} bw_slice;

static void* bw_worker(void* arg) {
  const bw_slice* s = arg;
  float* restrict a = s->a;
  const float* restrict b = s->b;
  const float* restrict c = s->c;
  if (s->triad) {
    for (long i = s->begin; i < s->end; ++i) a[i] = b[i] + 3.0f * c[i];
  } else {
    for (long i = s->begin; i < s->end; ++i) a[i] = b[i];
  }
  return NULL;
}

static void* first_touch(void* arg) {  /* each thread faults in its own slice */
  const bw_slice* s = arg;
  for (long i = s->begin; i < s->end; ++i) s->a[i] = s->b[i] = s->c[i] = 1.0f;
  return NULL;
}

static double bandwidth_gbs(int threads, float* a, float* b, float* c, int triad) {
  bw_slice slices[MAX_THREADS];
  void* args[MAX_THREADS];
  for (int t = 0; t < threads; ++t) {
    slices[t] = (bw_slice){a, b, c, BW_ELEMENTS * t / threads, BW_ELEMENTS * (t + 1) / threads, triad};
    args[t] = &slices[t];
  }
  run_threads(threads, first_touch, args);
  double best = 0;
  for (int r = 0; r < REPEATS; ++r) {
    const double seconds = run_threads(threads, bw_worker, args);
    const double bytes = (double)BW_ELEMENTS * sizeof(float) * (triad ? 3 : 2);
    if (bytes / seconds > best) best = bytes / seconds;
  }
  return best * 1e-9;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: peak THREADS...\n");
    return 1;
  }
  float* a = aligned_alloc(64, BW_ELEMENTS * sizeof(float));
  float* b = aligned_alloc(64, BW_ELEMENTS * sizeof(float));
  float* c = aligned_alloc(64, BW_ELEMENTS * sizeof(float));
  if (a == NULL || b == NULL || c == NULL) {
    fprintf(stderr, "peak: out of memory\n");
    return 1;
  }
  for (int i = 1; i < argc; ++i) {
    const int threads = atoi(argv[i]);
    if (threads < 1 || threads > MAX_THREADS) {
      fprintf(stderr, "peak: thread count %s out of range\n", argv[i]);
      return 1;
    }
    const double gflops = fma_gflops(threads);
    const double copy = bandwidth_gbs(threads, a, b, c, 0);
    const double triad = bandwidth_gbs(threads, a, b, c, 1);
    printf("{\"threads\": %d, \"isa\": \"%s\", \"gflops\": %.2f, \"copy_gbs\": %.2f, \"triad_gbs\": %.2f}\n",
           threads, ISA, gflops, copy, triad);
    fflush(stdout);
  }
  free(a);
  free(b);
  free(c);
  return 0;
}
