/* Helpers shared by the library test programs (C11 and C++): reading the raw
 * float32 files the driver writes, and comparing against the reference
 * evaluator's output with the tests' one tolerance. */
#ifndef AOTC_TESTS_LIBRARY_TEST_SUPPORT_H_
#define AOTC_TESTS_LIBRARY_TEST_SUPPORT_H_

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int test_failures = 0;

#define EXPECT(condition)                                                 \
  do {                                                                    \
    if (!(condition)) {                                                   \
      fprintf(stderr, "%s:%d: FAILED: %s\n", __FILE__, __LINE__, #condition); \
      ++test_failures;                                                    \
    }                                                                     \
  } while (0)

/* Exactly `count` float32 values from `path` in a new malloc'd buffer; exits on any mismatch. */
static inline float* read_floats(const char* path, size_t count) {
  float* values = (float*)malloc(count * sizeof(float));
  FILE* file = fopen(path, "rb");
  if (values == NULL || file == NULL) {
    fprintf(stderr, "%s: cannot open\n", path);
    exit(2);
  }
  const size_t read = fread(values, sizeof(float), count, file);
  const int trailing = fgetc(file);
  fclose(file);
  if (read != count || trailing != EOF) {
    fprintf(stderr, "%s: expected exactly %zu float32 values\n", path, count);
    exit(2);
  }
  return values;
}

/* max|got - ref| <= 1e-4 * max(1, max|ref|): float32 kernels against the
 * reference evaluator's double accumulation. Pure (safe on any thread); stores
 * the measured error and the tolerance. */
static inline int within_tolerance(const float* got, const float* ref, size_t count, double* max_diff,
                                   double* tolerance) {
  double max_ref = 1.0;
  *max_diff = 0.0;
  for (size_t i = 0; i < count; ++i) {
    if (fabs(ref[i]) > max_ref) max_ref = fabs(ref[i]);
    const double diff = fabs((double)got[i] - (double)ref[i]);
    if (!(diff <= *max_diff)) *max_diff = isnan(diff) ? INFINITY : diff;
  }
  *tolerance = 1e-4 * max_ref;
  return *max_diff <= *tolerance;
}

/* within_tolerance, printed and counted as a failure if not (main thread only). */
static inline int close_to_reference(const char* what, const float* got, const float* ref, size_t count) {
  double max_diff, tolerance;
  const int ok = within_tolerance(got, ref, count, &max_diff, &tolerance);
  printf("%s: %zu values, max|diff| %.3g, tolerance %.3g: %s\n", what, count, max_diff, tolerance,
         ok ? "ok" : "FAILED");
  if (!ok) ++test_failures;
  return ok;
}

/* Fills with a value no kernel produces here, to check that a refused run wrote nothing. */
#define UNTOUCHED_SENTINEL (-12345.0f)

static inline void fill_sentinel(float* values, size_t count) {
  for (size_t i = 0; i < count; ++i) values[i] = UNTOUCHED_SENTINEL;
}

static inline int all_sentinel(const float* values, size_t count) {
  for (size_t i = 0; i < count; ++i)
    if (values[i] != UNTOUCHED_SENTINEL) return 0;
  return 1;
}

/* The exit status of a test program. */
static inline int test_result(void) {
  if (test_failures == 0) {
    printf("PASSED\n");
    return 0;
  }
  fprintf(stderr, "%d check(s) FAILED\n", test_failures);
  return 1;
}

#endif /* AOTC_TESTS_LIBRARY_TEST_SUPPORT_H_ */
