/*
 * The verdict on one filter row's answer (README.md, "Judging"): the oracle's answer under the
 * rule, at the implementation's precision, where every decision the arithmetic of that
 * precision could flip admits each outcome it could give.
 */
#ifndef SIEVE_FUZZ_JUDGE_H
#define SIEVE_FUZZ_JUDGE_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "sieve.h"

/* One X-macro list of what a row's answer can be; the failures come after FUZZ_REACH. */
#define FUZZ_VERDICTS(X)                                                                           \
  X(PASS, "pass", "the rule's answer")                                                             \
  X(REACH, "within reach", "another outcome of a decision the precision could flip")               \
  X(KEPT, "kept set", "other tokens kept than any outcome the rule allows")                        \
  X(VALUE, "value", "the kept set allowed, a logprob outside its derived bound")                   \
  X(ERROR, "error", "an error where the rule answers, the reverse, or another error")              \
  X(MALFORMED, "malformed", "not a row of V numbers, nor an error")                                \
  X(BATCH, "batch", "another answer in another batch shape or on repetition")                      \
  X(CRASH, "crash", "no answer: a crash, a hang or something that is not protocol")

typedef enum fuzz_verdict {
#define FUZZ__VERDICT_ENUM(id, name, what) FUZZ_##id,
  FUZZ_VERDICTS(FUZZ__VERDICT_ENUM)
#undef FUZZ__VERDICT_ENUM
      FUZZ_VERDICT_COUNT
} fuzz_verdict;

const char *fuzz_verdict_name(int verdict);
const char *fuzz_verdict_what(int verdict);

/* The rule rows are judged by. */
typedef struct fuzz_judge {
  const sieve_rule *rule; /* NULL: DeepInfer's */
  const char *name;       /* the rule's name */
  int precision;          /* sieve_precision (run/check.h) */
} fuzz_judge;

/* A verdict with a one-line reason (empty for a pass). */
typedef struct fuzz_judgement {
  fuzz_verdict verdict;
  char why[400];
} fuzz_judgement;

/* Judges `got`, an implementation's answer to `row` (a filter row) in a request with `engine`
 * (may be NULL). -1 when out of memory, else 0 with the verdict in *out. */
int fuzz_judge_row(const fuzz_judge *j, const cJSON *row, const cJSON *engine, const cJSON *got,
                   fuzz_judgement *out);

/* The oracle's answer to one row under the judge's rule, as a row object (malloc'd cJSON), or
 * NULL when out of memory. */
cJSON *fuzz_oracle_row(const fuzz_judge *j, const cJSON *row, const cJSON *engine);

/* The largest float32 logprob bound over the tokens an oracle answer keeps: the f32_abs of a
 * fixture expectation (fixtures/README.md, "Precision"). */
double fuzz_f32_bound(const cJSON *row, const cJSON *answer);

#endif /* SIEVE_FUZZ_JUDGE_H */
