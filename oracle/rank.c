/*
 * Ranking. Every order in the spec is "largest first, ties keep token order"
 * (seed 000:16): the order of steps 2-4, force_topk and top_logprobs. Keys
 * are never NaN here, so the comparison is a total order and any sort gives
 * the one stable result. Long arrays given in token order take a stable LSD
 * radix sort on the keys' bits, which gives that same order faster.
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

/* The key as an unsigned integer that sorts ascending as the key sorts descending. -0 takes the
 * bits of +0, the key it equals. */
static uint64_t descending_bits(double key) {
  uint64_t bits;
  key += 0.0;
  memcpy(&bits, &key, sizeof bits);
  bits = (bits >> 63) ? ~bits : bits | (UINT64_C(1) << 63); /* ascending order of doubles */
  return ~bits;
}

/* One stable counting pass on a 16-bit digit; returns 0 if the digit is the same everywhere. */
static int radix_pass(const sieve__ranked *from, sieve__ranked *to, const uint64_t *keys,
                      uint64_t *keys_to, size_t n, int shift, size_t *count) {
  memset(count, 0, (1 << 16) * sizeof *count);
  for (size_t i = 0; i < n; i++)
    count[(keys[i] >> shift) & 0xFFFF]++;
  if (count[(keys[0] >> shift) & 0xFFFF] == n)
    return 0;
  size_t at = 0;
  for (size_t d = 0; d < (1 << 16); d++) {
    size_t c = count[d];
    count[d] = at;
    at += c;
  }
  for (size_t i = 0; i < n; i++) {
    size_t slot = count[(keys[i] >> shift) & 0xFFFF]++;
    to[slot] = from[i];
    keys_to[slot] = keys[i];
  }
  return 1;
}

/* LSD radix sort by key descending; stable, so items given in token order come out in the
 * same order as compare_ranked gives. Returns -1 when out of memory. */
static int radix_rank(sieve__ranked *items, size_t n) {
  sieve__ranked *tmp = malloc(n * sizeof *tmp);
  uint64_t *keys = malloc(2 * n * sizeof *keys);
  size_t *count = malloc((1 << 16) * sizeof *count);
  int ok = tmp && keys && count;
  for (size_t i = 0; ok && i < n; i++)
    keys[i] = descending_bits(items[i].key);
  sieve__ranked *from = items, *to = tmp;
  uint64_t *kfrom = keys, *kto = keys + n;
  for (int shift = 0; ok && shift < 64; shift += 16)
    if (radix_pass(from, to, kfrom, kto, n, shift, count)) {
      sieve__ranked *t = from;
      from = to;
      to = t;
      uint64_t *k = kfrom;
      kfrom = kto;
      kto = k;
    }
  if (from != items) /* never after a failed allocation, which leaves them unsorted */
    memcpy(items, from, n * sizeof *items);
  free(tmp);
  free(keys);
  free(count);
  return ok ? 0 : -1;
}

static int in_token_order(const sieve__ranked *items, size_t n) {
  for (size_t i = 1; i < n; i++)
    if (items[i].id < items[i - 1].id)
      return 0;
  return 1;
}

void sieve__rank(sieve__ranked *items, size_t n) {
  if (n > 4096 && in_token_order(items, n) && radix_rank(items, n) == 0)
    return;
  if (n > 1)
    qsort(items, n, sizeof *items, compare_ranked);
}

static int compare_ids_desc(const void *a, const void *b) {
  const sieve__ranked *x = a, *y = b;
  return (x->id < y->id) - (x->id > y->id);
}

static int compare_scrambled_ids(const void *a, const void *b) {
  const uint64_t x = sieve_mix64(((const sieve__ranked *)a)->id);
  const uint64_t y = sieve_mix64(((const sieve__ranked *)b)->id);
  return (x > y) - (x < y);
}

/* A run of ties at a cut: the last token kept and at least one after it, so n >= 2. */
void sieve__order_tie_run(sieve__ranked *run, size_t n, int scrambled) {
  qsort(run, n, sizeof *run, scrambled ? compare_scrambled_ids : compare_ids_desc);
}
