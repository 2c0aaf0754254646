/* peak: this machine's FP32 FMA peak and memory bandwidth, on 1..N threads.
 *
 *   cc -O2 -march=native -pthread peak.c -o peak
 *   peak 1 2        -> one JSON line per thread count:
 *   {"threads": 1, "gflops": ..., "isa": "avx512", "int8_gops": ..., "copy_gbs": ...,
 *    "triad_gbs": ..., "copy_l2_gbs": ..., "copy_l3_gbs": ..., "l2_bytes": L2 per core, "l3_bytes": L3}
 *
 * FMA: independent vector accumulators (more than FMA latency x FMA pipes, so the pipes
 * never wait on a result), all in registers: 16 of AVX-512's 32, 12 of AVX2's 16 (16 there
 * left no register for the two operands, and the spilled chains halved the figure);
 * FLOPs = iterations x accumulators x lanes x 2. Int8: the same loop of AVX512-VNNI vpdpbusd
 * (64 uint8 x int8 multiply-adds into 16 int32 lanes per instruction), ops = iterations x
 * accumulators x 64 x 2; null without AVX512-VNNI (the int8 kernels' dot product). The ISA is
 * picked at compile time by -march=native: AVX-512 if the CPU has it, else AVX2+FMA.
 * Bandwidth: copy (a = b, 8 bytes per element) and triad (a = b + s*c, 12 bytes per element,
 * STREAM's counting, without the write-allocate read) over arrays far larger than the caches.
 * In-cache copy: the same copy, with vector loads and stores, over a footprint (bytes read plus
 * written) that stays in L2 (half of one core's L2 per thread) or in L3 (a quarter of L3 in
 * all), repeated until about 2 GiB have moved: the ceiling for kernels whose data stay in cache.
 * Each figure is the best of several repetitions: a peak is what the machine can do, and
 * noise only ever makes a run slower. */
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__AVX512F__)
typedef __m512 vec;
#define LANES 16
#define ISA "avx512"
#define ACCUMULATORS 16
#define VSET1(x) _mm512_set1_ps(x)
#define VFMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define VADD(a, b) _mm512_add_ps(a, b)
#define VSUM(a) _mm512_reduce_add_ps(a)
#define VLOAD(p) _mm512_loadu_ps(p)
#define VSTORE(p, v) _mm512_storeu_ps(p, v)
#elif defined(__FMA__) && defined(__AVX2__)
typedef __m256 vec;
#define LANES 8
#define ISA "avx2"
#define ACCUMULATORS 12
#define VSET1(x) _mm256_set1_ps(x)
#define VFMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define VADD(a, b) _mm256_add_ps(a, b)
#define VLOAD(p) _mm256_loadu_ps(p)
#define VSTORE(p, v) _mm256_storeu_ps(p, v)
static float VSUM(__m256 a) {
  float f[8];
  _mm256_storeu_ps(f, a);
  return f[0] + f[1] + f[2] + f[3] + f[4] + f[5] + f[6] + f[7];
}
#else
#error "peak.c needs AVX-512 or AVX2+FMA (compile with -march=native on x86-64)"
#endif

#define FMA_ITERATIONS 20000000L  /* per thread: ~0.2 s on one core at 100+ GFLOP/s */
#define BW_ELEMENTS (48L << 20)   /* 48 Mi floats = 192 MiB per array, far beyond L3 */
#define MAX_THREADS 64
#define REPEATS 5
#define CACHE_COPY_MOVED (2L << 30) /* bytes moved per in-cache copy measurement */

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* ---- FMA ---- */

/* Four independent chains acc[i..i+3] = op(acc, a, b), written out so that the compiler keeps
 * them in registers. */
#define FOUR_CHAINS(op, i)              \
  acc[i] = op(acc[i], a, b);             \
  acc[i + 1] = op(acc[i + 1], a, b);     \
  acc[i + 2] = op(acc[i + 2], a, b);     \
  acc[i + 3] = op(acc[i + 3], a, b);

static void* fma_worker(void* sink) {
  vec acc[ACCUMULATORS];
  for (int j = 0; j < ACCUMULATORS; ++j) acc[j] = VSET1(1.0f + j * 1e-3f);
  const vec a = VSET1(0.999999f), b = VSET1(1e-7f);
  for (long i = 0; i < FMA_ITERATIONS; ++i) {
    FOUR_CHAINS(VFMA, 0) FOUR_CHAINS(VFMA, 4) FOUR_CHAINS(VFMA, 8)
#if ACCUMULATORS == 16
    FOUR_CHAINS(VFMA, 12)
#endif
  }
  vec total = acc[0];
  for (int j = 1; j < ACCUMULATORS; ++j) total = VADD(total, acc[j]);
  *(float*)sink = VSUM(total);  /* the result is used: the loop cannot be dropped */
  return NULL;
}

#if defined(__AVX512VNNI__)
#define INT8_PEAK 1
static void* vnni_worker(void* sink) {
  __m512i acc[16];
  for (int j = 0; j < 16; ++j) acc[j] = _mm512_set1_epi32(j);
  const __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
  for (long i = 0; i < FMA_ITERATIONS; ++i) {
    FOUR_CHAINS(_mm512_dpbusd_epi32, 0) FOUR_CHAINS(_mm512_dpbusd_epi32, 4)
    FOUR_CHAINS(_mm512_dpbusd_epi32, 8) FOUR_CHAINS(_mm512_dpbusd_epi32, 12)
  }
  __m512i total = acc[0];
  for (int j = 1; j < 16; ++j) total = _mm512_add_epi32(total, acc[j]);
  *(float*)sink = (float)_mm512_reduce_add_epi32(total);
  return NULL;
}
#endif

/* Runs fn(arg[t]) on `threads` threads and returns the wall time of the slowest. */
static double run_threads(int threads, void* (*fn)(void*), void** args) {
  pthread_t ids[MAX_THREADS];
  const double t0 = now_s();
  for (int t = 0; t < threads; ++t) pthread_create(&ids[t], NULL, fn, args[t]);
  for (int t = 0; t < threads; ++t) pthread_join(ids[t], NULL);
  return now_s() - t0;
}

/* The best of REPEATS runs of `worker` on `threads` threads (each writing its result to its
 * own sink, 4 bytes), doing `ops_per_thread` operations each: billions per second. */
static double best_rate(int threads, void* (*worker)(void*), double ops_per_thread) {
  float sinks[MAX_THREADS];
  void* args[MAX_THREADS];
  for (int t = 0; t < threads; ++t) args[t] = &sinks[t];
  double best = 0;
  for (int r = 0; r < REPEATS; ++r) {
    const double rate = threads * ops_per_thread / run_threads(threads, worker, args);
    if (rate > best) best = rate;
  }
  return best * 1e-9;
}

static double fma_gflops(int threads) {
  return best_rate(threads, fma_worker, (double)FMA_ITERATIONS * ACCUMULATORS * LANES * 2);
}

/* Int8 dot-product operations per second (2 per multiply-add), billions; < 0 without VNNI. */
static double int8_gops(int threads) {
#if defined(INT8_PEAK)
  return best_rate(threads, vnni_worker, (double)FMA_ITERATIONS * 16 * 64 * 2);
#else
  (void)threads;
  return -1;
#endif
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

/* ---- in-cache copy ---- */

typedef struct {
  float *a, *b;
  long elements;  /* a multiple of LANES */
  long repeat;
} cache_slice;

static void* cache_copy_worker(void* arg) {
  const cache_slice* s = arg;
  for (long r = 0; r < s->repeat; ++r) {
    for (long i = 0; i < s->elements; i += LANES) VSTORE(s->a + i, VLOAD(s->b + i));
    __asm__ volatile("" ::: "memory"); /* every repetition really copies */
  }
  return NULL;
}

static void* cache_touch(void* arg) {  /* each thread faults in (and caches) its own arrays */
  cache_slice s = *(const cache_slice*)arg;
  s.repeat = 1;
  for (long i = 0; i < s.elements; ++i) s.b[i] = 1.0f;
  return cache_copy_worker(&s);
}

/* Copy bandwidth over `footprint` bytes in all (read plus written), split over the threads. */
static double cache_copy_gbs(int threads, long footprint) {
  long elements = footprint / threads / (2 * (long)sizeof(float));
  elements -= elements % (LANES * 4);
  if (elements < LANES) elements = LANES;
  float* memory = aligned_alloc(64, (size_t)threads * 2 * elements * sizeof(float));
  if (memory == NULL) return 0;
  cache_slice slices[MAX_THREADS];
  void* args[MAX_THREADS];
  const long repeat = CACHE_COPY_MOVED / threads / (elements * 2 * (long)sizeof(float)) + 1;
  for (int t = 0; t < threads; ++t) {
    slices[t] = (cache_slice){memory + 2 * elements * t, memory + 2 * elements * t + elements, elements, repeat};
    args[t] = &slices[t];
  }
  run_threads(threads, cache_touch, args);
  double best = 0;
  for (int r = 0; r < REPEATS; ++r) {
    const double seconds = run_threads(threads, cache_copy_worker, args);
    const double bytes = (double)threads * repeat * elements * 2 * sizeof(float);
    if (bytes / seconds > best) best = bytes / seconds;
  }
  free(memory);
  return best * 1e-9;
}

/* Size of this CPU's unified cache of `level`, from sysfs (glibc's sysconf figure can be wrong
 * in a VM: 320 MiB of L3 on a 32 MiB machine), else sysconf, else `fallback`. */
static long cache_bytes(int level, int name, long fallback) {
  for (int index = 0; index < 10; ++index) {
    char path[96], type[32];
    long size = 0, found_level = 0;
    char unit = 0;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", index);
    FILE* f = fopen(path, "r");
    if (f == NULL) break;
    const int ok = fscanf(f, "%ld", &found_level) == 1;
    fclose(f);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", index);
    if (!ok || found_level != level || (f = fopen(path, "r")) == NULL) continue;
    const int typed = fscanf(f, "%31s", type) == 1;
    fclose(f);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
    if (!typed || strcmp(type, "Instruction") == 0 || (f = fopen(path, "r")) == NULL) continue;
    const int sized = fscanf(f, "%ld%c", &size, &unit) >= 1;
    fclose(f);
    if (sized && size > 0) return size << (unit == 'K' ? 10 : unit == 'M' ? 20 : 0);
  }
  const long bytes = sysconf(name);
  return bytes > 0 ? bytes : fallback;
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
    const double gflops = fma_gflops(threads), int8 = int8_gops(threads);
    const double copy = bandwidth_gbs(threads, a, b, c, 0);
    const double triad = bandwidth_gbs(threads, a, b, c, 1);
    const long l2 = cache_bytes(2, _SC_LEVEL2_CACHE_SIZE, 512L << 10);  /* per core */
    const long l3 = cache_bytes(3, _SC_LEVEL3_CACHE_SIZE, 8L << 20);
    const double copy_l2 = cache_copy_gbs(threads, threads * l2 / 2), copy_l3 = cache_copy_gbs(threads, l3 / 4);
    char int8_text[32] = "null";
    if (int8 > 0) snprintf(int8_text, sizeof int8_text, "%.2f", int8);
    printf("{\"threads\": %d, \"isa\": \"%s\", \"gflops\": %.2f, \"int8_gops\": %s, \"copy_gbs\": %.2f, "
           "\"triad_gbs\": %.2f, \"copy_l2_gbs\": %.2f, \"copy_l3_gbs\": %.2f, \"l2_bytes\": %ld, \"l3_bytes\": %ld}\n",
           threads, ISA, gflops, int8_text, copy, triad, copy_l2, copy_l3, l2, l3);
    fflush(stdout);
  }
  free(a);
  free(b);
  free(c);
  return 0;
}
