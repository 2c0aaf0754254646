/* The model library a program is built for with -DAOTC_MODEL=<name>: its generated
 * header, its entry points by suffix (AOTC_FN(AOTC_MODEL, _run) is aotc_<name>_run)
 * and its input and output counts. Shared by run_library.c, measure_stack.c and the
 * library tests that run any model. */
#ifndef AOTC_TOOLS_AOTC_MODEL_H_
#define AOTC_TOOLS_AOTC_MODEL_H_

#define AOTC_STR2(x) #x
#define AOTC_STR(x) AOTC_STR2(x)
#define AOTC_CAT3(a, b, c) a##b##c
#define AOTC_FN(model, suffix) AOTC_CAT3(aotc_, model, suffix)

#include AOTC_STR(AOTC_MODEL.h)

#define NUM_INPUTS (sizeof AOTC_FN(AOTC_MODEL, _inputs) / sizeof AOTC_FN(AOTC_MODEL, _inputs)[0])
#define NUM_OUTPUTS (sizeof AOTC_FN(AOTC_MODEL, _outputs) / sizeof AOTC_FN(AOTC_MODEL, _outputs)[0])

#endif /* AOTC_TOOLS_AOTC_MODEL_H_ */
