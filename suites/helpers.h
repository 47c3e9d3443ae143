/*
 * Test helpers: tolerance-aware float checks (never a bare == on floats),
 * a wrapper that filters a row into a fixed-size result, and a seeded
 * generator of random rows for the property tests.
 */
#ifndef SIEVE_TEST_HELPERS_H
#define SIEVE_TEST_HELPERS_H

#include <criterion/criterion.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "../oracle/sieve.h"

#define MAX_V 64

/* Whether the suites run under AddressSanitizer (make test SAN=1), with GCC or clang. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

/* The rows a property over many random rows asks: all n in the plain build, which checks the
 * property; a quarter under the sanitizers, which look for reads and writes out of bounds, leaks
 * and undefined behaviour on the same kinds of rows, each row about four times slower. */
#define PROPERTY_ROWS(n) (SANITIZED ? (n) / 4 : (n))

/* |actual - expected| <= tol, with a message naming what was compared. */
#define expect_near(actual, expected, tol, what)                                          \
  do {                                                                                    \
    double a_ = (actual), e_ = (expected);                                                \
    cr_expect(fabs(a_ - e_) <= (tol), "%s: got %.17g, expected %.17g within %g", (what), \
              a_, e_, (double)(tol));                                                     \
  } while (0)

#define expect_minus_inf(actual, what)                                                   \
  do {                                                                                   \
    double a_ = (actual);                                                                \
    cr_expect(isinf(a_) && a_ < 0, "%s: got %.17g, expected -inf", (what), a_);          \
  } while (0)

/* Two doubles with the same bits (both -inf counts). */
int same_double(double a, double b);

typedef struct filtered {
  int rc;
  double lp[MAX_V];
  sieve_filter_info info;
} filtered;

/* Filters a row of up to MAX_V logits with the given params and no engine options. */
filtered run_filter(const float *logits, size_t v, double t, double top_p, int64_t top_k);
filtered run_filter_engine(const float *logits, size_t v, double t, double top_p, int64_t top_k,
                           const sieve_engine *engine);
/* The same with every parameter (min-p, the penalties) and the engine options (may be NULL). */
filtered run_filter_params(const float *logits, size_t v, const sieve_params *p,
                           const sieve_engine *engine);

/* Nonzero when token i is kept (finite processed logprob). */
int is_kept(const filtered *f, size_t i);

/* The full-softmax probabilities of a row at temperature 1, for building rows from probabilities. */
void logits_from_probs(const double *p, size_t v, float *logits);

/* `bytes` of writable memory that end where an inaccessible page begins, so that reading or
 * writing past them crashes the test (the pages stay mapped until the test's process ends). */
void *guarded(size_t bytes);

/* n probabilities of 1.0 in guarded memory. */
const double *guarded_row(size_t n);

/* From now on every allocation of at least `bytes` fails once `after` of them have succeeded,
 * until allocations_succeed(). Returns 0 (and changes nothing) where the test binary cannot
 * replace malloc: under AddressSanitizer, which owns it. */
int fail_allocations(size_t bytes, unsigned after);
void allocations_succeed(void);

/* The blocks allocated (malloc, calloc, realloc) and not yet freed, or -1 under
 * AddressSanitizer; a call that leaves it higher leaked. */
long live_allocations(void);

/* A small deterministic generator (SplitMix64 stream) for random rows. */
typedef struct rng {
  uint64_t state;
} rng;
uint64_t rng_next(rng *r);
double rng_unit(rng *r);

/* A random row of one of several shapes: normal, peaked, ties, -inf holes, flat. */
void random_row(rng *r, float *logits, size_t v);
/* Random valid params: T in [0.05, 3] (sometimes tiny), top_p in (0, 1], top_k -1 or 1..v+2. */
sieve_params random_params(rng *r, size_t v);

#endif /* SIEVE_TEST_HELPERS_H */
