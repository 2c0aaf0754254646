/* aotc_server: an aotc model library as a benchmark server, driven over stdin/stdout.
 *
 *   cc -O2 -DAOTC_MODEL=resnet18 aotc_server.c -I OUT OUT/libresnet18.a -lpthread -ldl -lm
 *   aotc_server INPUT.bin
 *
 * Commands, one per line; each answer is one line:
 *   threads N     aotc_<model>_set_num_threads(N)           -> {"ok": true}
 *   run K         one untimed run (warms caches after another system ran), then K timed
 *                 runs through the C entry point            -> {"ms": [...], "cpu_ms": total}
 *   layers K      K runs with the per-layer timing hook     -> {"layers": [names], "us": [[run0], ...]}
 *   output PATH   writes the outputs for INPUT.bin, concatenated, raw float32 -> {"ok": true}
 *   quit
 * The model is picked at compile time with -DAOTC_MODEL=<name> (as tests/models/run_library.c).
 * It has one input; its outputs are written one after the other. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define AOTC_STR2(x) #x
#define AOTC_STR(x) AOTC_STR2(x)
#define AOTC_CAT3(a, b, c) a##b##c
#define AOTC_FN(model, suffix) AOTC_CAT3(aotc_, model, suffix)

#include AOTC_STR(AOTC_MODEL.h)

#define INFO_IN AOTC_FN(AOTC_MODEL, _inputs)
#define INFO_OUT AOTC_FN(AOTC_MODEL, _outputs)
#define NUM_INPUTS (sizeof INFO_IN / sizeof INFO_IN[0])
#define NUM_OUTPUTS (sizeof INFO_OUT / sizeof INFO_OUT[0])
#define MAX_RUNS 100000
#define MAX_LAYERS 1024

static const float* inputs[NUM_INPUTS];
static float* outputs[NUM_OUTPUTS];
static void* arena;
static size_t arena_bytes;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

/* User plus system time of the whole process (all threads), for the cores-used check. */
static double cpu_ms(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-3;
}

static void die(const char* what) {
  fprintf(stderr, "aotc_server: %s\n", what);
  exit(1);
}

static void run_once(aotc_context* ctx) {
  const int status = AOTC_FN(AOTC_MODEL, _run_with_context)(ctx, arena, arena_bytes, inputs, outputs);
  if (status != AOTC_OK) die(aotc_status_message(status));
}

static void cmd_run(int k) {
  static double ms[MAX_RUNS];
  aotc_context ctx = {0};
  run_once(&ctx);
  const double cpu0 = cpu_ms();
  for (int i = 0; i < k; ++i) {
    const double t0 = now_ms();
    run_once(&ctx);
    ms[i] = now_ms() - t0;
  }
  const double cpu = cpu_ms() - cpu0;
  printf("{\"ms\": [");
  for (int i = 0; i < k; ++i) printf("%s%.6f", i ? ", " : "", ms[i]);
  printf("], \"cpu_ms\": %.3f}\n", cpu);
}

/* Per-layer times of the current run, filled by the timing hook. */
typedef struct {
  int count;
  const char* names[MAX_LAYERS];
  double us[MAX_LAYERS];
} layer_times;

static void on_layer(void* user, const char* layer, double microseconds) {
  layer_times* t = user;
  if (t->count == MAX_LAYERS) return;
  t->names[t->count] = layer;  /* string literals in the library: they stay valid */
  t->us[t->count++] = microseconds;
}

static void cmd_layers(int k) {
  layer_times t = {0};
  aotc_context ctx = {0};
  ctx.timing = on_layer;
  ctx.timing_user_data = &t;
  run_once(&ctx);  /* warm-up; also learns the layer names */
  printf("{\"layers\": [");
  for (int l = 0; l < t.count; ++l) printf("%s\"%s\"", l ? ", " : "", t.names[l]);
  printf("], \"us\": [");
  for (int i = 0; i < k; ++i) {
    t.count = 0;
    run_once(&ctx);
    printf("%s[", i ? ", " : "");
    for (int l = 0; l < t.count; ++l) printf("%s%.3f", l ? ", " : "", t.us[l]);
    printf("]");
  }
  printf("]}\n");
}

static void cmd_output(const char* path) {
  aotc_context ctx = {0};
  run_once(&ctx);
  FILE* f = fopen(path, "wb");
  if (f == NULL) die("cannot write the output file");
  for (size_t i = 0; i < NUM_OUTPUTS; ++i) fwrite(outputs[i], sizeof(float), (size_t)INFO_OUT[i].elements, f);
  if (fclose(f) != 0) die("cannot write the output file");
  printf("{\"ok\": true}\n");
}

static void load_input(const char* path) {
  if (NUM_INPUTS != 1) die("this server feeds models with one input");
  float* data = malloc((size_t)INFO_IN[0].elements * sizeof(float));
  FILE* f = fopen(path, "rb");
  if (f == NULL || data == NULL || fread(data, sizeof(float), (size_t)INFO_IN[0].elements, f) != (size_t)INFO_IN[0].elements)
    die("cannot read the input file");
  fclose(f);
  inputs[0] = data;
}

int main(int argc, char** argv) {
  if (argc != 2) die("usage: aotc_server INPUT.bin");
  load_input(argv[1]);
  for (size_t i = 0; i < NUM_OUTPUTS; ++i) outputs[i] = malloc((size_t)INFO_OUT[i].elements * sizeof(float));
  arena_bytes = AOTC_FN(AOTC_MODEL, _arena_bytes)();
  /* aligned_alloc wants a multiple of the alignment, and at least one block. */
  arena = aligned_alloc(AOTC_ARENA_ALIGNMENT, (arena_bytes / AOTC_ARENA_ALIGNMENT + 1) * AOTC_ARENA_ALIGNMENT);

  char line[4096];
  while (fgets(line, sizeof line, stdin) != NULL) {
    char path[4000];
    int n;
    if (sscanf(line, "threads %d", &n) == 1) {
      if (AOTC_FN(AOTC_MODEL, _set_num_threads)(n) != AOTC_OK) die("set_num_threads failed");
      printf("{\"ok\": true}\n");
    } else if (sscanf(line, "run %d", &n) == 1 && n > 0 && n <= MAX_RUNS) {
      cmd_run(n);
    } else if (sscanf(line, "layers %d", &n) == 1 && n > 0) {
      cmd_layers(n);
    } else if (sscanf(line, "output %3999s", path) == 1) {
      cmd_output(path);
    } else if (strncmp(line, "quit", 4) == 0) {
      break;
    } else {
      die("unknown command");
    }
    fflush(stdout);
  }
  return 0;
}
