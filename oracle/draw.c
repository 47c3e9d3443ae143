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

/* probs[i], or exp(probs[i]) when the row holds logprobs. */
static double prob(const double *row, size_t i, int logs) { return logs ? exp(row[i]) : row[i]; }

static int total_mass(const double *row, size_t vocab, int logs, double *total) {
  *total = 0.0;
  for (size_t i = 0; i < vocab; i++) {
    double p = prob(row, i, logs);
    if (!(p >= 0.0) || isinf(p))
      return SIEVE_EPROBS;
    *total += p;
  }
  if (isinf(*total))
    return SIEVE_EPROBS;
  return *total > 0.0 ? 0 : SIEVE_EZEROMASS;
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
  if (rc != 0)
    return rc;
  const double target = u * total;
  double cdf = 0.0;
  for (size_t i = 0; i < vocab; i++) {
    double below = cdf;
    cdf += prob(row, i, logs);
    if (cdf > target) {
      *token = (int64_t)i;
      if (margin)
        *margin = fmin(target - below, cdf - target);
      return 0;
    }
  }
  /* Unreachable: cdf[V-1] == total > target. */
  return SIEVE_EZEROMASS;
}

int sieve_draw(const double *probs, size_t vocab, double u, int64_t *token, double *margin) {
  return draw_row(probs, vocab, 0, u, token, margin);
}

int sieve__draw_logprobs(const double *logprobs, size_t vocab, double u, int64_t *token,
                         double *margin) {
  return draw_row(logprobs, vocab, 1, u, token, margin);
}
