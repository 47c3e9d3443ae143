/*
 * The verdict on one answer (README.md, "Judging"): a filter or sample row's, or a uniform,
 * position or speculate request's. The oracle answers under the rule, at the implementation's
 * precision, and every decision the arithmetic of that precision could flip admits each outcome it
 * could give.
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
  X(TOKEN, "token", "another token drawn than any outcome the rule allows")                        \
  X(VALUE, "value", "the kept set or token allowed, a logprob outside its derived bound")          \
  X(KEY, "key", "another uniform or position than the rule's hash and position give")              \
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

/* Judges `got`: in a filter or sample request, the answer to its row `row`; in a uniform,
 * position or speculate request, the whole answer (judge_draws.c). -1 when out of memory,
 * else 0. */
int fuzz_judge_answer(const fuzz_judge *j, const cJSON *request, size_t row, const cJSON *got,
                      fuzz_judgement *out);

/* The oracle's answer to `request` under the judge's rule: to its row `row` alone, as a row
 * object, when it has rows, else the whole answer (malloc'd cJSON); NULL when out of memory. */
cJSON *fuzz_oracle_answer(const fuzz_judge *j, const cJSON *request, size_t row);

/* A filter row of references to `logits` and `params` (may be NULL): what a sample row or a
 * chain's row asks of the filter. Free it with cJSON_Delete; NULL when out of memory. */
cJSON *fuzz_filter_row(const cJSON *logits, const cJSON *params);

/* The oracle's answer to one filter row, as fuzz_oracle_answer gives it. */
cJSON *fuzz_oracle_row(const fuzz_judge *j, const cJSON *row, const cJSON *engine);

/* Whether the kept set of a filter row is a decision the precision could flip (another kept
 * count within reach, or a cut between tokens it cannot order): -1 when out of memory, else 0
 * with the answer in *close. */
int fuzz_filter_close(const fuzz_judge *j, const cJSON *row, const cJSON *engine, int *close);

/* Whether `token` has a probability above 0 in the row's full distribution (no top-p, no top-k;
 * temperature and engine options applied): -1 when out of memory, else 0 with *possible. */
int fuzz_token_possible(const fuzz_judge *j, const cJSON *row, const cJSON *engine, size_t token,
                        int *possible);

/* The verdict on an error in either answer: none (out untouched) when both are the same error
 * (kind and field), else FUZZ_ERROR with its reason. */
void fuzz_judge_errors(const cJSON *want, const cJSON *got, fuzz_judgement *out);

/* The largest float32 logprob bound over the tokens an oracle answer keeps: the f32_abs of a
 * fixture expectation (fixtures/README.md, "Precision"). */
double fuzz_f32_bound(const cJSON *row, const cJSON *answer);

#endif /* SIEVE_FUZZ_JUDGE_H */
