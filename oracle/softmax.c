/*
 * The float64 arithmetic of the softmax (seed 000:5, 000:15; SPEC.md "Precision of every
 * step"): exp, and the sums over a row. Both paths of the filter and the draw use these, so
 * they agree bit for bit, and no result depends on the platform's libm `exp`.
 *
 * Rule, exp: k = round(x / ln 2), r = x - k ln 2 (ln 2 in two parts), exp(r) by its Taylor
 * polynomial of degree 13 in Horner form (|r| <= 0.347, truncation below 2^-57), then times
 * 2^(k/2) and 2^(k - k/2), so a subnormal result is rounded once. Within 1 ulp of glibc's
 * exp (suites/test_softmax.c); exp(-inf) = 0, x < -746 gives 0, x > 710 gives +inf.
 * Rule, sums: a row total is summed in eight lanes, lane j holding tokens j, j + 8, ... in
 * token order, and the lanes are added as ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)).
 * Invariant: every operation is IEEE-754 basic arithmetic with no contraction into fused
 * multiply-adds (-ffp-contract=off), so the vector versions of the loops below give the
 * scalar version's bits.
 */
#include <math.h>
#include <string.h>

#include "internal.h"

#define LANES SIEVE__LANES

static inline double exp_kernel(double x) {
  const double xc = x < -746.0 ? -746.0 : x > 710.0 ? 710.0 : x; /* NaN passes through */
  double kd = xc * 0x1.71547652b82fep0 + 0x1.8p52; /* x / ln 2, rounded to an integer */
  uint64_t kbits;
  memcpy(&kbits, &kd, sizeof kbits);
  kd -= 0x1.8p52;
  const double r = (xc - kd * 0x1.62e42fefa3800p-1) - kd * 0x1.ef35793c76730p-45;
  double p = 1.0 / 6227020800.0;
  p = p * r + 1.0 / 479001600.0;
  p = p * r + 1.0 / 39916800.0;
  p = p * r + 1.0 / 3628800.0;
  p = p * r + 1.0 / 362880.0;
  p = p * r + 1.0 / 40320.0;
  p = p * r + 1.0 / 5040.0;
  p = p * r + 1.0 / 720.0;
  p = p * r + 1.0 / 120.0;
  p = p * r + 1.0 / 24.0;
  p = p * r + 1.0 / 6.0;
  p = p * r + 0.5;
  p = p * r + 1.0;
  p = p * r + 1.0;
  /* The low mantissa bits of kd held 2^51 + k, with k in [-1077, 1025]. */
  const int64_t k = (int64_t)(kbits & ((UINT64_C(1) << 52) - 1)) - (INT64_C(1) << 51);
  const int64_t k1 = k / 2, k2 = k - k1;
  const uint64_t b1 = (uint64_t)(k1 + 1023) << 52, b2 = (uint64_t)(k2 + 1023) << 52;
  double s1, s2;
  memcpy(&s1, &b1, sizeof s1);
  memcpy(&s2, &b2, sizeof s2);
  return p * s1 * s2;
}

double sieve__exp(double x) { return exp_kernel(x); }

/* acc[j] += x[j], x[j + 8], ... for n values; n is a multiple of LANES except at the end.
 * Inlined, so that each version of its callers has its own. */
static inline __attribute__((always_inline)) void add_to_lanes(double *acc, const double *x,
                                                               size_t n) {
  size_t i = 0;
  for (; i + LANES <= n; i += LANES)
    for (size_t j = 0; j < LANES; j++)
      acc[j] += x[i + j];
  for (; i < n; i++)
    acc[i % LANES] += x[i];
}

#define CHUNK 512 /* a multiple of LANES */

SIEVE__ROW_LOOP
double sieve__exp_sum(const float *restrict row, size_t vocab, float mul, double max,
                      double *restrict out) {
  double acc[LANES] = {0}, buf[CHUNK];
  for (size_t at = 0; at < vocab; at += CHUNK) {
    const size_t n = vocab - at < CHUNK ? vocab - at : CHUNK;
    double *e = out ? out + at : buf;
    for (size_t i = 0; i < n; i++)
      e[i] = exp_kernel((double)sieve__scaled(row[at + i], mul) - max);
    add_to_lanes(acc, e, n);
  }
  return sieve__add_lanes(acc);
}

SIEVE__ROW_LOOP
void sieve__exp_each(const double *restrict x, size_t n, double *restrict out) {
  for (size_t i = 0; i < n; i++)
    out[i] = exp_kernel(x[i]);
}

SIEVE__ROW_LOOP
double sieve__sum(const double *x, size_t n) {
  double acc[LANES] = {0};
  add_to_lanes(acc, x, n);
  return sieve__add_lanes(acc);
}

SIEVE__ROW_LOOP
double sieve__sum_marked(const double *x, const double *mark, double div, size_t n) {
  double acc[LANES] = {0};
  size_t i = 0;
  if (!mark) /* x / div over every token */
    for (; i + LANES <= n; i += LANES)
      for (size_t j = 0; j < LANES; j++)
        acc[j] += x[i + j] / div;
  else if (div == 1.0) /* x / 1 is x: the same sum without the division */
    for (; i + LANES <= n; i += LANES)
      for (size_t j = 0; j < LANES; j++)
        acc[j] += mark[i + j] != 0.0 ? x[i + j] : 0.0;
  for (; i + LANES <= n; i += LANES)
    for (size_t j = 0; j < LANES; j++)
      acc[j] += mark[i + j] != 0.0 ? x[i + j] / div : 0.0;
  for (; i < n; i++)
    acc[i % LANES] += !mark || mark[i] != 0.0 ? x[i] / div : 0.0;
  return sieve__add_lanes(acc);
}

/* A float's bits as an integer that orders as the float does (-0.0 just below +0.0). */
static int32_t ordered_bits(float x) {
  int32_t bits;
  memcpy(&bits, &x, sizeof bits);
  return bits ^ ((bits >> 31) & INT32_MAX);
}

SIEVE__ROW_LOOP
int sieve__scaled_max(const float *row, size_t vocab, float mul, double *max,
                      size_t *n_finite) {
  int32_t best = INT32_MIN; /* below -inf, which never wins over a finite logit */
  size_t finite = 0;
  int overflow = 0;
  for (size_t i = 0; i < vocab; i++) {
    const int32_t bits = ordered_bits(sieve__scaled(row[i], mul));
    best = bits > best ? bits : best;
    finite += !isinf(row[i]);
    overflow |= isinf(sieve__scaled(row[i], mul)) & !isinf(row[i]);
  }
  best ^= (best >> 31) & INT32_MAX;
  float largest;
  memcpy(&largest, &best, sizeof largest);
  if (n_finite)
    *n_finite = finite;
  *max = (double)largest + 0.0; /* +0.0 for a zero of either sign */
  return overflow ? SIEVE_EOVERFLOW : finite ? 0 : SIEVE_ENOFINITE;
}
