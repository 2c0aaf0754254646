/* Counts heap allocations: alloc_counter.c replaces malloc, calloc, realloc,
 * aligned_alloc, posix_memalign and memalign for the whole program (the
 * executable's definitions interpose on glibc's, for every library too) and
 * forwards to glibc's __libc_* implementations. */
#ifndef AOTC_TESTS_LIBRARY_ALLOC_COUNTER_H_
#define AOTC_TESTS_LIBRARY_ALLOC_COUNTER_H_

#ifdef __cplusplus
extern "C" {
#endif

/* Starts counting from zero, on every thread. */
void alloc_counter_start(void);
/* Stops counting; returns the allocations since alloc_counter_start(). */
long alloc_counter_stop(void);

#ifdef __cplusplus
}
#endif

#endif /* AOTC_TESTS_LIBRARY_ALLOC_COUNTER_H_ */
