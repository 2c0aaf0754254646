// The runtime every model library carries, compiled as its own object from this
// file (aotc embeds it and writes it beside the generated runner). It serves the
// Halide kernels three things that Halide's own runtime does in a way a model
// library cannot use as is:
//
//  - The run. A generated runner is a table of kernel calls (aotc_runtime.h);
//    aotc_rt1_run_calls binds each call's buffers into the arena, the weights
//    blob or the caller's tensors, calls the kernel's argv entry point, times it
//    for the context's timing hook and names the layer of a failure.
//  - Kernel errors. Halide reports a kernel's failure through one error
//    handler per process (its default prints and exits). aotc chains its
//    handler once in front of whatever was installed: a message whose
//    user_context is the aotc_context of a run in progress goes into that
//    context; any other goes on to the previous handler unchanged (the app's
//    own Halide code keeps its handler).
//  - Parallel loops. Halide's thread pool puts its workers to sleep as soon as
//    a loop ends and wakes them for the next one, and claims each task under a
//    mutex: a network of many short kernels pays a wake-up per kernel. aotc
//    installs its own halide_do_par_for once, whose workers spin briefly
//    between loops (so a run keeps them warm) and claim tasks with an atomic;
//    they sleep when no loop comes for kSpinMicroseconds. One loop runs on the
//    pool at a time; a loop started meanwhile by another thread, or from inside
//    a task, runs serially on its caller. If the app installed a custom
//    do_par_for of its own, aotc leaves it in place.
//
// External weights (aotc --weights=external) are checked by aotc_weights.h,
// which GPU libraries include too.
//
// One source for every model and target: the same compile command gives the
// same object, which a compiler cache (aotc --compiler-launcher) then keeps; the
// model's own runner, which changes with every model, stays small.
//
// Everything is `extern "C"` and weak, with a versioned prefix: the model
// libraries linked into one app share one copy (one pool, one handler, one
// table of runs), as they share Halide's weak runtime. Nothing here allocates
// except pthread_create, which runs in set_num_threads (or the first run).
// No exceptions, RTTI or libstdc++ symbols: C apps link the libraries.
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>

#include "aotc_runtime.h"
#include "aotc_weights.h"

#define AOTC_RT_WEAK __attribute__((weak))

extern "C" {

// ---- Kernel errors ---------------------------------------------------------------

// Runs in progress register their context here (fixed size: no allocation). A
// run that finds the table full still runs; a failure's message then only
// names the layer.
#define AOTC_RT_MAX_RUNS 64
AOTC_RT_WEAK std::atomic<aotc_context*> aotc_rt1_active_runs[AOTC_RT_MAX_RUNS];
AOTC_RT_WEAK std::atomic<int> aotc_rt1_handler_state{0};  // 0 none, 1 installing, 2 installed
AOTC_RT_WEAK halide_error_handler_t aotc_rt1_previous_handler = nullptr;

// A run's first failure names it: later messages do not replace it.
AOTC_RT_WEAK void aotc_rt1_keep_first_error(aotc_context* context, const char* message) {
  if (context->error[0] != '\0') return;
  std::strncpy(context->error, message, sizeof context->error - 1);
  context->error[sizeof context->error - 1] = '\0';
}

AOTC_RT_WEAK void aotc_rt1_on_halide_error(void* user_context, const char* message) {
  for (std::atomic<aotc_context*>& run : aotc_rt1_active_runs) {
    aotc_context* context = run.load(std::memory_order_acquire);
    if (context == nullptr || context != user_context) continue;
    aotc_rt1_keep_first_error(context, message);
    return;
  }
  if (aotc_rt1_previous_handler != nullptr) aotc_rt1_previous_handler(user_context, message);
}

AOTC_RT_WEAK void aotc_rt1_install_error_handler(void) {
  int expected = 0;
  if (aotc_rt1_handler_state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
    aotc_rt1_previous_handler = halide_set_error_handler(aotc_rt1_on_halide_error);
    aotc_rt1_handler_state.store(2, std::memory_order_release);
  } else {
    while (aotc_rt1_handler_state.load(std::memory_order_acquire) != 2) {
    }
  }
}

// The slot `context` took in the table, or -1.
AOTC_RT_WEAK int aotc_rt1_register_run(aotc_context* context) {
  for (int i = 0; i < AOTC_RT_MAX_RUNS; ++i) {
    aotc_context* empty = nullptr;
    if (aotc_rt1_active_runs[i].compare_exchange_strong(empty, context, std::memory_order_acq_rel)) return i;
  }
  return -1;
}

AOTC_RT_WEAK void aotc_rt1_unregister_run(int slot) {
  if (slot >= 0) aotc_rt1_active_runs[slot].store(nullptr, std::memory_order_release);
}

// ---- Parallel loops ----------------------------------------------------------------

#define AOTC_RT_MAX_THREADS 64
// How long an idle worker spins for the next loop before it sleeps.
#define AOTC_RT_SPIN_MICROSECONDS 300

// The loop on the pool. Its iterations are split into one contiguous range
// per thread: the caller takes the first, worker w the range w + 1, and a
// thread that finishes its own takes what is left of the others. The same
// thread thus works on the same part of every loop: a conv parallel over
// output channels writes the channels that the next depthwise conv or
// elementwise op, split the same way, reads from that core's own cache
// (dynamic claiming moved half of each tensor between the cores' caches).
// A range's claim word holds the loop's generation, its next iteration and
// its end: a thread claims an iteration by a compare-exchange on that word
// and only then reads the slot (loops alternate between two), which the pool
// cannot refill before that iteration is done.
struct aotc_rt1_loop {
  std::atomic<halide_task_t> task;
  std::atomic<void*> user_context;
  std::atomic<uint8_t*> closure;
  std::atomic<int> min, done, result;
};

struct aotc_rt1_pool_state {
  aotc_rt1_loop loops[2];
  std::atomic<uint64_t> claims[AOTC_RT_MAX_THREADS];  // per range: generation:16 | next:24 | end:24
  std::atomic<uint32_t> generation;     // of the loop on the pool
  std::atomic<int> ranges;              // of that loop
  std::atomic<int> busy;                // a loop is on the pool
  std::atomic<int> workers_wanted;      // threads - 1
  std::atomic<int> sleeping;
  std::atomic<int> install_state;       // 0 not yet, 1 installing, 2 ours, 3 the app's
  int workers_started;                  // under mutex
  pthread_mutex_t mutex;
  pthread_cond_t wake;
};

AOTC_RT_WEAK aotc_rt1_pool_state aotc_rt1_pool = {
    {}, {}, {0}, {0}, {0}, {0}, {0}, {0}, 0, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER};
AOTC_RT_WEAK thread_local int aotc_rt1_inside_task = 0;

// Loops of more iterations than a claim word holds run serially.
#define AOTC_RT_MAX_ITERATIONS (1 << 24)

static inline uint64_t aotc_rt1_claim(uint32_t generation, int next, int end) {
  return (static_cast<uint64_t>(generation & 0xffffu) << 48) | (static_cast<uint64_t>(next) << 24) |
         static_cast<uint64_t>(end);
}

static inline void aotc_rt1_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
  __asm__ __volatile__("yield");
#endif
}

static inline double aotc_rt1_now_microseconds(void) {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) * 1e-3;
}

// Runs iterations of loop `generation`: range `own` first, then the others,
// until none is left to claim.
AOTC_RT_WEAK void aotc_rt1_work(uint32_t generation, int own) {
  aotc_rt1_pool_state& pool = aotc_rt1_pool;
  const int ranges = pool.ranges.load(std::memory_order_acquire);
  for (int r = 0; r < ranges; ++r) {
    std::atomic<uint64_t>& word = pool.claims[(own + r) % ranges];
    uint64_t claim = word.load(std::memory_order_acquire);
    for (;;) {
      const int next = static_cast<int>((claim >> 24) & 0xffffffu), end = static_cast<int>(claim & 0xffffffu);
      if (static_cast<uint32_t>(claim >> 48) != (generation & 0xffffu) || next >= end) break;
      if (!word.compare_exchange_weak(claim, claim + (uint64_t{1} << 24), std::memory_order_acq_rel)) continue;
      aotc_rt1_loop& loop = pool.loops[generation & 1];
      aotc_rt1_inside_task = 1;
      const int result = loop.task.load(std::memory_order_relaxed)(
          loop.user_context.load(std::memory_order_relaxed), loop.min.load(std::memory_order_relaxed) + next,
          loop.closure.load(std::memory_order_relaxed));
      aotc_rt1_inside_task = 0;
      if (result != 0) {
        int ok = 0;
        loop.result.compare_exchange_strong(ok, result);
      }
      loop.done.fetch_add(1, std::memory_order_release);
      claim = word.load(std::memory_order_acquire);
    }
  }
}

AOTC_RT_WEAK void* aotc_rt1_worker(void* arg) {
  aotc_rt1_pool_state& pool = aotc_rt1_pool;
  const int index = static_cast<int>(reinterpret_cast<intptr_t>(arg));
  uint32_t seen = pool.generation.load(std::memory_order_acquire);
  for (;;) {
    // Spin for the next loop, then sleep until one comes.
    const double deadline = aotc_rt1_now_microseconds() + AOTC_RT_SPIN_MICROSECONDS;
    while (pool.generation.load(std::memory_order_acquire) == seen) {
      for (int k = 0; k < 64; ++k) aotc_rt1_pause();
      if (aotc_rt1_now_microseconds() > deadline) {
        pthread_mutex_lock(&pool.mutex);
        pool.sleeping.fetch_add(1);
        while (pool.generation.load() == seen) pthread_cond_wait(&pool.wake, &pool.mutex);
        pool.sleeping.fetch_sub(1);
        pthread_mutex_unlock(&pool.mutex);
      }
    }
    seen = pool.generation.load(std::memory_order_acquire);
    if (index < pool.workers_wanted.load(std::memory_order_relaxed)) aotc_rt1_work(seen, index + 1);
  }
  return nullptr;
}

// halide_do_par_for on the pool: publish the loop, take part, wait for the rest.
AOTC_RT_WEAK int aotc_rt1_do_par_for(void* user_context, halide_task_t task, int min, int size, uint8_t* closure) {
  aotc_rt1_pool_state& pool = aotc_rt1_pool;
  const int workers = pool.workers_wanted.load(std::memory_order_relaxed);
  int idle = 0;
  if (size <= 1 || size >= AOTC_RT_MAX_ITERATIONS || aotc_rt1_inside_task || workers == 0 ||
      !pool.busy.compare_exchange_strong(idle, 1, std::memory_order_acquire)) {
    for (int i = 0; i < size; ++i)
      if (const int result = task(user_context, min + i, closure); result != 0) return result;
    return 0;
  }
  const uint32_t generation = pool.generation.load(std::memory_order_relaxed) + 1;
  aotc_rt1_loop& loop = pool.loops[generation & 1];
  loop.task.store(task, std::memory_order_relaxed);
  loop.user_context.store(user_context, std::memory_order_relaxed);
  loop.closure.store(closure, std::memory_order_relaxed);
  loop.min.store(min, std::memory_order_relaxed);
  loop.done.store(0, std::memory_order_relaxed);
  loop.result.store(0, std::memory_order_relaxed);
  const int ranges = workers + 1 < size ? workers + 1 : size;
  for (int r = 0; r < ranges; ++r)
    pool.claims[r].store(aotc_rt1_claim(generation, static_cast<int>(int64_t{size} * r / ranges),
                                        static_cast<int>(int64_t{size} * (r + 1) / ranges)),
                         std::memory_order_relaxed);
  pool.ranges.store(ranges, std::memory_order_relaxed);
  pool.generation.store(generation);  // seq_cst: publishes the above; pairs with `sleeping`
  if (pool.sleeping.load() > 0) {
    pthread_mutex_lock(&pool.mutex);
    pthread_cond_broadcast(&pool.wake);
    pthread_mutex_unlock(&pool.mutex);
  }
  aotc_rt1_work(generation, 0);
  while (loop.done.load(std::memory_order_acquire) < size) aotc_rt1_pause();
  const int result = loop.result.load(std::memory_order_relaxed);
  pool.busy.store(0, std::memory_order_release);
  return result;
}

// The pool takes over halide_do_par_for, once, unless the app installed its own.
AOTC_RT_WEAK void aotc_rt1_install_pool(void) {
  aotc_rt1_pool_state& pool = aotc_rt1_pool;
  int expected = 0;
  if (pool.install_state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) {
    const halide_do_par_for_t previous = halide_set_custom_do_par_for(aotc_rt1_do_par_for);
    const bool app_owns_it = previous != halide_default_do_par_for;
    if (app_owns_it) halide_set_custom_do_par_for(previous);
    pool.install_state.store(app_owns_it ? 3 : 2, std::memory_order_release);
  } else {
    while (pool.install_state.load(std::memory_order_acquire) == 1) {
    }
  }
}

// Threads taking part in parallel loops, the caller included (0: one per core).
// Starts the workers now, so that runs allocate nothing.
AOTC_RT_WEAK void aotc_rt1_set_num_threads(int threads) {
  aotc_rt1_pool_state& pool = aotc_rt1_pool;
  if (threads == 0) threads = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  if (threads < 1) threads = 1;
  if (threads > AOTC_RT_MAX_THREADS) threads = AOTC_RT_MAX_THREADS;
  aotc_rt1_install_pool();
  halide_set_num_threads(threads);  // for loops that run on Halide's pool instead
  pthread_mutex_lock(&pool.mutex);
  while (pool.workers_started < threads - 1) {
    pthread_t thread;
    if (pthread_create(&thread, nullptr, aotc_rt1_worker, reinterpret_cast<void*>(intptr_t{pool.workers_started})) != 0)
      break;
    pthread_detach(thread);
    ++pool.workers_started;
  }
  pool.workers_wanted.store(threads - 1 < pool.workers_started ? threads - 1 : pool.workers_started);
  pthread_mutex_unlock(&pool.mutex);
}

// Before a run: the handler and the pool, with one thread per core unless
// set_num_threads chose otherwise.
AOTC_RT_WEAK void aotc_rt1_prepare_run(void) {
  aotc_rt1_install_error_handler();
  if (aotc_rt1_pool.install_state.load(std::memory_order_acquire) == 0) aotc_rt1_set_num_threads(0);
}

// ---- The run -------------------------------------------------------------------------

AOTC_RT_WEAK int aotc_rt1_run_calls(aotc_context* context, const aotc_rt1_call* calls, int num_calls,
                                    const aotc_rt1_buffer* buffers, uint8_t* arena, const uint8_t* weights,
                                    const void* const* inputs, void* const* outputs, halide_buffer_t* bound,
                                    halide_dimension_t* dims, void** args) {
  aotc_rt1_prepare_run();
  const int slot = aotc_rt1_register_run(context);
  void* user_context = context;
  args[0] = &user_context;  // an argv entry point takes a pointer to each scalar argument
  int status = AOTC_OK;
  for (int c = 0; c < num_calls && status == AOTC_OK; ++c) {
    const aotc_rt1_call& call = calls[c];
    halide_dimension_t* next_dim = dims;
    for (int a = 0; a < call.count; ++a) {
      const aotc_rt1_buffer& ref = buffers[call.first + a];
      uint8_t* host = nullptr;
      switch (ref.source) {
        case AOTC_RT1_ARENA: host = arena + ref.offset; break;
        case AOTC_RT1_WEIGHTS: host = const_cast<uint8_t*>(weights) + ref.offset; break;
        case AOTC_RT1_INPUT: host = static_cast<uint8_t*>(const_cast<void*>(inputs[ref.offset])); break;
        case AOTC_RT1_OUTPUT: host = static_cast<uint8_t*>(outputs[ref.offset]); break;
      }
      halide_buffer_t& b = bound[a];
      b = halide_buffer_t();
      b.host = host;
      b.type.code = static_cast<halide_type_code_t>(ref.type / 256);
      b.type.bits = static_cast<uint8_t>(ref.type % 256);
      b.type.lanes = 1;
      b.dimensions = ref.rank;
      b.dim = next_dim;
      for (int d = 0; d < ref.rank; ++d) *next_dim++ = halide_dimension_t(0, ref.dims[2 * d], ref.dims[2 * d + 1]);
      args[a + 1] = &b;
    }
    const bool timed = context->timing != nullptr;
    const double start = timed ? aotc_rt1_now_microseconds() : 0;
    if (call.kernel(args) != 0) {
      aotc_rt1_keep_first_error(context, call.layer);
      status = AOTC_ERROR_KERNEL_FAILED;
    } else if (timed) {
      context->timing(context->timing_user_data, call.layer, aotc_rt1_now_microseconds() - start);
    }
  }
  aotc_rt1_unregister_run(slot);
  return status;
}

}  // extern "C"
