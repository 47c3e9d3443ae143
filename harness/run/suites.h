/*
 * The suites of `sieve run`: which suite each fixture case belongs to, and
 * the one-line detail of a failure: what differs, and its likely cause.
 */
#ifndef SIEVE_SUITES_H
#define SIEVE_SUITES_H

#include <cjson/cJSON.h>
#include <stddef.h>

#define SUITES_MAX 16
#define SMOKE_PER_SUITE 2

/* The suite of a fixture case, as the fixture names it. */
const char *suite_of_case(const cJSON *c);

/* The position of a suite in sieve_suites (runner.h), or SUITES_MAX - 1 if unknown. */
int suite_index(const char *suite);

/* Whether `suite` is one of sieve_suites. */
int suite_known(const char *suite);

/* The cause a failure at float64 gets when its answer is within the float32 bounds. */
#define SIEVE_CAUSE_FLOAT32 "float32-arithmetic"

/*
 * The detail of a failed case at a precision: what differs in the kept set or the drawn token,
 * the readings of the case whose answer this is, those of its own axis first (else, at float64,
 * "float32 arithmetic" when the answer is within the float32 bounds, else "no known
 * misreading gives this answer"), then `why`, the matcher's reason. For example "kept {0}
 * expected {0,1}: same answer as [topk-first-renormalized]: top-k applied first and ...;
 * rows[0].logprobs: ...". `causes` gets the readings' names, comma-separated ("" for none).
 * `excluded` (",a,b,", or NULL for none) leaves out the readings it names and every axis
 * value's: after the fit (fit.h) those are what the run's evidence speaks against.
 */
void sieve_case_detail(const cJSON *c, const cJSON *answer, int precision, const char *why,
                       const char *excluded, char *out, size_t len, char *causes,
                       size_t causes_len);

/* The same with `found` in place of the readings: what the fit says of the failure. */
void sieve_case_detail_found(const cJSON *c, const cJSON *answer, const char *found,
                             const char *why, char *out, size_t len);

/* The names of the readings a case separates at a precision, comma-separated: a case that
 * passes rules each of them out. */
void sieve_case_separations(const cJSON *c, int precision, char *names, size_t len);

#endif /* SIEVE_SUITES_H */
