/* See alloc_counter.h. */
#include "alloc_counter.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

/* glibc's own allocator entry points, which the replacements forward to. */
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* pointer, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
void __libc_free(void* pointer);

static atomic_bool counting;
static atomic_long allocations;

static void count_allocation(void) {
  if (atomic_load_explicit(&counting, memory_order_relaxed))
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
}

void alloc_counter_start(void) {
  atomic_store(&allocations, 0);
  atomic_store(&counting, 1);
}

long alloc_counter_stop(void) {
  atomic_store(&counting, 0);
  return atomic_load(&allocations);
}

void* malloc(size_t size) {
  count_allocation();
  return __libc_malloc(size);
}

void* calloc(size_t count, size_t size) {
  count_allocation();
  return __libc_calloc(count, size);
}

void* realloc(void* pointer, size_t size) {
  count_allocation();
  return __libc_realloc(pointer, size);
}

void* aligned_alloc(size_t alignment, size_t size) {
  count_allocation();
  return __libc_memalign(alignment, size);
}

void* memalign(size_t alignment, size_t size) {
  count_allocation();
  return __libc_memalign(alignment, size);
}

int posix_memalign(void** pointer, size_t alignment, size_t size) {
  count_allocation();
  void* allocated = __libc_memalign(alignment, size);
  if (allocated == NULL) return ENOMEM;
  *pointer = allocated;
  return 0;
}

void free(void* pointer) { __libc_free(pointer); }
