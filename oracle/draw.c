/*
 * The draw: inverse CDF (seed 000:48-50, 000:55; random_sampling_ref lines 82-84).
 *
 * Rule: cdf = the float64 running sum of probs in token-id order; target =
 * u * cdf[V-1]; the answer is the first token whose cdf is > target.
 * Tie-break: none needed; a token of probability 0 never raises the cdf, so
 * it is never the first to exceed the target.
 * Invariants: with u in [0, 1), target < total, so an answer always exists;
 * probs must be finite and >= 0 with a positive, finite total.
 * Margin: the distance of target from the nearer of the two cdf steps that
 * bracket the answer (the cdf before it and its own cdf).
 */
#include <math.h>

#include "internal.h"

#define CHUNK 512

/* The probabilities of tokens [at, at + n): the row itself, or exp of it in buf. */
static const double *probs_of(const double *row, size_t at, size_t n, int logs, double *buf) {
  if (!logs)
    return row + at;
  sieve__exp_each(row + at, n, buf);
  return buf;
}

static int total_mass(const double *row, size_t vocab, int logs, double *total) {
  double buf[CHUNK];
  *total = 0.0;
  for (size_t at = 0; at < vocab; at += CHUNK) {
    const size_t n = vocab - at < CHUNK ? vocab - at : CHUNK;
    const double *p = probs_of(row, at, n, logs, buf);
    for (size_t i = 0; i < n; i++) {
      if (!(p[i] >= 0.0) || isinf(p[i]))
        return SIEVE_EPROBS;
      if (p[i] > 0.0) /* adding 0 changes nothing; removed tokens are skipped */
        *total += p[i];
    }
  }
  if (isinf(*total))
    return SIEVE_EPROBS;
  return *total > 0.0 ? 0 : SIEVE_EZEROMASS;
}

/* The first token whose cdf is > target, and the margin of that decision. */
static int find_token(const double *row, size_t vocab, int logs, double target, int64_t *token,
                      double *margin) {
  double buf[CHUNK], cdf = 0.0;
  for (size_t at = 0; at < vocab; at += CHUNK) {
    const size_t n = vocab - at < CHUNK ? vocab - at : CHUNK;
    const double *p = probs_of(row, at, n, logs, buf);
    for (size_t i = 0; i < n; i++) {
      if (p[i] == 0.0) /* a token of probability 0 is never the first past the target */
        continue;
      const double below = cdf;
      cdf += p[i];
      if (cdf > target) {
        *token = (int64_t)(at + i);
        if (margin)
          *margin = fmin(target - below, cdf - target);
        return 0;
      }
    }
  }
  /* Unreachable: cdf[V-1] == total > target. */
  return SIEVE_EZEROMASS;
}

static int draw_row(const double *row, size_t vocab, int logs, double u, int64_t *token,
                    double *margin) {
  if (!row || !token)
    return SIEVE_EARG;
  if (vocab == 0 || vocab > SIEVE_VOCAB_MAX)
    return SIEVE_EVOCAB;
  if (!(u >= 0.0 && u < 1.0))
    return SIEVE_EUNIFORM;
  double total;
  int rc = total_mass(row, vocab, logs, &total);
  if (rc == 0)
    rc = find_token(row, vocab, logs, u * total, token, margin);
  return rc;
}

int sieve_draw(const double *probs, size_t vocab, double u, int64_t *token, double *margin) {
  return draw_row(probs, vocab, 0, u, token, margin);
}

int sieve__draw_logprobs(const double *logprobs, size_t vocab, double u, int64_t *token,
                         double *margin) {
  return draw_row(logprobs, vocab, 1, u, token, margin);
}
