/*
 * top_logprobs (seed 000:74; sampler.py:636-648).
 *
 * Rule: the n best entries of the processed row (the same row the filter
 * returns), best first. Tie-break (ours): equal logprobs keep token order,
 * which also orders the -inf entries of removed tokens, so when n exceeds the
 * kept count the rest are -inf entries of the lowest removed ids.
 * Invariant: n = 0 writes nothing; n > V is an error.
 */
#include <stdlib.h>

#include "internal.h"

int sieve_top_logprobs(const double *logprobs, size_t vocab, size_t n, sieve_top_entry *out) {
  if (!logprobs || (n > 0 && !out))
    return SIEVE_EARG;
  if (vocab == 0 || vocab > SIEVE_VOCAB_MAX)
    return SIEVE_EVOCAB;
  if (n > vocab)
    return SIEVE_ETOPLOGPROBS;
  if (n == 0)
    return 0;
  sieve__ranked *order = malloc(vocab * sizeof *order);
  if (!order)
    return SIEVE_ENOMEM;
  for (size_t i = 0; i < vocab; i++)
    order[i] = (sieve__ranked){logprobs[i], (uint32_t)i};
  sieve__rank(order, vocab);
  for (size_t r = 0; r < n; r++)
    out[r] = (sieve_top_entry){(int64_t)order[r].id, order[r].key};
  free(order);
  return 0;
}
