/*
 * Matching an answer against a fixture's expectation (fixtures/README.md,
 * "Matchers"): the expectation is shaped like the response, and objects
 * with a "$" key say how a value is compared.
 */
#ifndef SIEVE_CHECK_H
#define SIEVE_CHECK_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

/* The arithmetic an implementation declares (fixtures/README.md, "Precision"): at float32 a
 * matcher's f32_abs bound is added to its tolerance. One list; every table derives from it. */
#define SIEVE_PRECISIONS(X)                                                                        \
  X(FLOAT32, "float32")                                                                            \
  X(FLOAT64, "float64")

typedef enum sieve_precision {
#define SIEVE__PRECISION_ENUM(id, name) SIEVE_PRECISION_##id,
  SIEVE_PRECISIONS(SIEVE__PRECISION_ENUM)
#undef SIEVE__PRECISION_ENUM
      SIEVE_PRECISION_COUNT
} sieve_precision;

/* The precision's name; its value for a name, or -1. */
const char *sieve_precision_name(int precision);
int sieve_precision_parse(const char *name);

/* 1 when `got` matches `expect` at float64; otherwise 0, with a one-line reason naming the path
 * in `why`. */
int sieve_check(const cJSON *expect, const cJSON *got, char *why, size_t why_len);

/* The same at a precision; *error_mismatch (may be NULL) is set when an error stood where an
 * answer was due, or the reverse. */
int sieve_check_at(const cJSON *expect, const cJSON *got, int precision, char *why, size_t why_len,
                   int *error_mismatch);

/* Whether a logprob or value of an answer is NaN (the protocol's string "nan"). */
int sieve_answer_is_nan(const cJSON *x);

/* The decisions of an answer as 16 hex digits: which entries are -inf, the tokens, ids and
 * counts, the strings (error kinds and fields) and the shape, not the values arithmetic may move
 * within their bounds (nor error messages). Two failures with one digest keep the same tokens,
 * draw the same ones and make the same errors: the expectation file records it (harness/CI.md). */
void sieve_answer_digest(const cJSON *answer, char out[17]);

#endif /* SIEVE_CHECK_H */
