/*
 * Ranking. Every order in the spec is "largest first, ties keep token order"
 * (seed 000:16): the order of steps 2-4, force_topk and top_logprobs. Keys
 * are never NaN here, so the comparison is a total order and any sort gives
 * the one stable result.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int compare_ranked(const void *a, const void *b) {
  const sieve__ranked *x = a, *y = b;
  if (x->key != y->key)
    return x->key > y->key ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

void sieve__rank(sieve__ranked *items, size_t n) {
  if (n > 1)
    qsort(items, n, sizeof *items, compare_ranked);
}

static int compare_ranked_ties_desc(const void *a, const void *b) {
  const sieve__ranked *x = a, *y = b;
  if (x->key != y->key)
    return x->key > y->key ? -1 : 1;
  return (x->id < y->id) - (x->id > y->id);
}

void sieve__rank_ties_desc(sieve__ranked *items, size_t n) {
  if (n > 1)
    qsort(items, n, sizeof *items, compare_ranked_ties_desc);
}

static int compare_ids(const void *a, const void *b) {
  const sieve__ranked *x = a, *y = b;
  return (x->id > y->id) - (x->id < y->id);
}

int sieve__kept_mass(const sieve__ranked *kept, size_t n, double *mass) {
  sieve__ranked *by_id = malloc((n ? n : 1) * sizeof *by_id);
  if (!by_id)
    return SIEVE_ENOMEM;
  memcpy(by_id, kept, n * sizeof *by_id);
  qsort(by_id, n, sizeof *by_id, compare_ids);
  *mass = 0.0;
  for (size_t i = 0; i < n; i++)
    *mass += by_id[i].key;
  free(by_id);
  return 0;
}
