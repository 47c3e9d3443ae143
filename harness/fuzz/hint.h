/*
 * What a failure's answers match (README.md, "Shrinking"): the axis values, alone or two
 * together, under which the rule gives the answer of the minimal case and of every failing row
 * kept of its verdict. A match, not a cause: `sieve run`'s fit weighs every case.
 */
#ifndef SIEVE_FUZZ_HINT_H
#define SIEVE_FUZZ_HINT_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "judge.h"
#include "shrink.h"

/* A failing row kept beside the minimal case: its request with it alone, and its answer. */
typedef struct fuzz_sample {
  cJSON *request, *answer;
} fuzz_sample;

/* The axis values that give every answer: "a=v, b=w" when one value alone does (*pairs 0),
 * else "a=v with b=w; ..." when two together do (*pairs 1), else "". `base` is the rule judged
 * by. */
void fuzz_hint(const fuzz_judge *j, const sieve_rule *base, const fuzz_failure *f,
               const fuzz_sample *samples, size_t n, char *out, size_t len, int *pairs);

#endif /* SIEVE_FUZZ_HINT_H */
