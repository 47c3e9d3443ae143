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

/* The tokens of [at, at + n) that can carry probability, with it: every token of a row of
 * probabilities; for a row of processed logprobs only the kept ones (logprob not -inf; the
 * removed add 0 to the cdf), so the cdf's sums run over the kept set alone. */
typedef struct chunk {
  size_t n;
  uint32_t offset[CHUNK];
  double logprob[CHUNK], prob[CHUNK];
} chunk;

static void load(const double *row, size_t at, size_t n, int logs, chunk *c) {
  c->n = 0;
  for (size_t i = 0; i < n; i++)
    if (!logs || row[at + i] != -INFINITY) {
      c->offset[c->n] = (uint32_t)i;
      c->logprob[c->n] = c->prob[c->n] = row[at + i];
      c->n++;
    }
  if (logs)
    sieve__exp_each(c->logprob, c->n, c->prob);
}

static int total_mass(const double *row, size_t vocab, int logs, double *total) {
  chunk c;
  double sum = 0.0;
  for (size_t at = 0; at < vocab; at += CHUNK) {
    load(row, at, vocab - at < CHUNK ? vocab - at : CHUNK, logs, &c);
    for (size_t j = 0; j < c.n; j++) {
      if (!(c.prob[j] >= 0.0) || isinf(c.prob[j]))
        return SIEVE_EPROBS;
      if (c.prob[j] > 0.0) /* adding 0 changes nothing */
        sum += c.prob[j];
    }
  }
  *total = sum;
  if (isinf(sum))
    return SIEVE_EPROBS;
  return sum > 0.0 ? 0 : SIEVE_EZEROMASS;
}

/* The first token whose cdf is > target, and the margin of that decision. */
static int find_token(const double *row, size_t vocab, int logs, double target, int64_t *token,
                      double *margin) {
  chunk c;
  double cdf = 0.0;
  for (size_t at = 0; at < vocab; at += CHUNK) {
    load(row, at, vocab - at < CHUNK ? vocab - at : CHUNK, logs, &c);
    for (size_t j = 0; j < c.n; j++) {
      if (c.prob[j] == 0.0) /* a token of probability 0 is never the first past the target */
        continue;
      const double below = cdf;
      cdf += c.prob[j];
      if (cdf > target) {
        *token = (int64_t)(at + c.offset[j]);
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
