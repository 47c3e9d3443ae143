/*
 * Engine-wide options (seed 000:65-68; sampler.py:168-169, sampler_utils.py:166-167).
 *
 * Rule: before every other step, blacklisted token ids get -inf; then, when
 * force_topk N is on (N > 0) and N < V, only the N largest logits stay and
 * the rest get -inf, so the softmax of step 1 is over those N.
 * Tie-break: equal logits keep token order (the lower id stays).
 * Ours: the seed does not say which of the two runs first; we apply the
 * blacklist first, so force_topk keeps N tokens that can be drawn.
 * Invariant: a token that was -inf stays -inf.
 */
#include <math.h>
#include <stdlib.h>

#include "internal.h"

static int apply_blacklist(const sieve_engine *engine, float *row, size_t vocab) {
  for (size_t i = 0; i < engine->blacklist_len; i++) {
    int64_t id = engine->blacklist[i];
    if (id < 0 || (uint64_t)id >= vocab)
      return SIEVE_EBLACKLIST;
    row[id] = -INFINITY;
  }
  return 0;
}

static int apply_force_topk(int64_t n_keep, float *row, size_t vocab) {
  if (n_keep == 0 || (uint64_t)n_keep >= vocab)
    return 0;
  sieve__ranked *order = malloc(vocab * sizeof *order);
  if (!order)
    return SIEVE_ENOMEM;
  for (size_t i = 0; i < vocab; i++)
    order[i] = (sieve__ranked){row[i], (uint32_t)i};
  sieve__rank(order, vocab);
  for (size_t r = (size_t)n_keep; r < vocab; r++)
    row[order[r].id] = -INFINITY;
  free(order);
  return 0;
}

int sieve__apply_engine(const sieve_engine *engine, float *row, size_t vocab) {
  if (!engine)
    return 0;
  if (engine->force_topk < 0)
    return SIEVE_EFORCETOPK;
  if (engine->blacklist_len > 0 && !engine->blacklist)
    return SIEVE_EARG;
  int rc = apply_blacklist(engine, row, vocab);
  if (rc == 0)
    rc = apply_force_topk(engine->force_topk, row, vocab);
  return rc;
}
