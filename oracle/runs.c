/*
 * A row of few distinct logits as runs of equal probability, for the filter's fast path
 * (filter_fast.c, oracle/PERFORMANCE.md): a flat row, where top-p needs most of the row.
 *
 * Rule: the finite tokens in the spec's rank order (filter.c, step 2) are runs of equal p,
 * each run in token order; a run is given by its p and its length. Step 3's running mass is
 * the spec's float64 sum in rank order, one addition per rank, with the same margin and kept
 * count; only where additions of the same p provably add the same amount is a stretch of them
 * taken at once.
 * Why a stretch is exact: let s be a running mass in [2^e, 2^(e+1)), a multiple of its ulp u,
 * and p <= s the next rank's p. While s + p stays below 2^(e+1), s + p rounds to s plus p
 * rounded to a multiple of u, d = (s + p) - s (exact by Sterbenz), unless p is halfway
 * between two multiples of u, where ties to even depend on s. So j such additions give
 * s + j d, exact, and while every mass before an addition is <= top_p no decision ends the
 * stretch, and the closest of their margins is that of the last.
 * Invariant: the kept count and the margin are those of the rank-by-rank sum, bit for bit.
 */
#include <float.h>
#include <string.h>

#include "internal.h"

#define SLOT_BITS 7
#define SLOTS (1u << SLOT_BITS)    /* at most half of them used */
#define EMPTY UINT32_C(0xFFFFFFFF) /* a NaN's bits, which no checked logit has */
_Static_assert(SLOTS >= 2 * SIEVE__RUNS_MAX, "the table of levels stays at most half full");

/* The distinct logits of a row (their float32 bits) and how many tokens have each. */
typedef struct level_table {
  uint32_t key[SLOTS];
  size_t count[SLOTS];
  size_t used;
} level_table;

typedef struct level {
  double e; /* exp(scaled - max), as softmax.c computes it */
  size_t count;
} level;

static unsigned slot_of(uint32_t bits) { return (bits * UINT32_C(0x9E3779B1)) >> (32 - SLOT_BITS); }

/* The slot of a logit's bits not at its hash's slot: further on, or a new one; SLOTS when the
 * row has too many distinct logits. */
static unsigned probe(level_table *t, uint32_t bits, unsigned s) {
  while (t->key[s] != bits && t->key[s] != EMPTY)
    s = (s + 1) & (SLOTS - 1);
  if (t->key[s] == EMPTY && t->used++ == SIEVE__RUNS_MAX)
    return SLOTS;
  t->key[s] = bits;
  return s;
}

/* Counts the tokens of each distinct logit; 0 when the row has more than SIEVE__RUNS_MAX. */
static int count_levels(const float *row, size_t vocab, level_table *t) {
  memset(t->key, 0xFF, sizeof t->key);
  memset(t->count, 0, sizeof t->count);
  t->used = 0;
  for (size_t i = 0; i < vocab; i++) {
    uint32_t bits;
    memcpy(&bits, &row[i], sizeof bits);
    unsigned s = slot_of(bits);
    if (t->key[s] != bits && (s = probe(t, bits, s)) == SLOTS)
      return 0;
    t->count[s]++;
  }
  return 1;
}

/* The finite levels with their e, largest e first (insertion sort: there are few). */
static size_t sorted_levels(const level_table *t, float mul, double max, level *out) {
  size_t n = 0;
  for (unsigned s = 0; s < SLOTS; s++) {
    float x;
    memcpy(&x, &t->key[s], sizeof x);
    if (t->key[s] == EMPTY || isinf(x))
      continue;
    const level l = {sieve__exp((double)sieve__scaled(x, mul) - max), t->count[s]};
    size_t at = n++;
    for (; at > 0 && out[at - 1].e < l.e; at--)
      out[at] = out[at - 1];
    out[at] = l;
  }
  return n;
}

size_t sieve__runs(const float *row, size_t vocab, float mul, double max, double total,
                   sieve__run *runs) {
  level_table t;
  level levels[SIEVE__RUNS_MAX];
  if (!count_levels(row, vocab, &t))
    return 0;
  const size_t n_levels = sorted_levels(&t, mul, max, levels);
  size_t n = 0;
  for (size_t l = 0; l < n_levels; l++) {
    const double p = levels[l].e / total; /* levels of equal p, next to each other, merge */
    if (n > 0 && runs[n - 1].p == p)
      runs[n - 1].count += levels[l].count;
    else
      runs[n++] = (sieve__run){p, levels[l].count};
  }
  return n;
}

/* The largest j < n with s + j d <= top_p (given s <= top_p), plus one; every s + j d with
 * j < n is exact. The walk goes down only: for the answer j, j d is exact and s + j d <= top_p,
 * so (top_p - s) / d rounds to j or above. */
static size_t steps_to(double s, double d, double top_p, size_t n) {
  const double guess = (top_p - s) / d;
  size_t j = guess < (double)(n - 1) ? (size_t)guess : n - 1;
  while (j > 0 && s + (double)j * d > top_p)
    j--;
  return j + 1;
}

/* How many of the next `left` ranks, all of probability p, can be taken at once from the mass
 * s: each adds exactly *d, and the mass before each is <= top_p. 0 or 1: take one rank. */
static size_t stretch(double s, double p, double top_p, size_t left, double *d) {
  if (!(s <= top_p) || s < DBL_MIN || left < 2)
    return 0;
  int exponent;
  frexp(s, &exponent); /* s in [2^(exponent - 1), 2^exponent) */
  const double u = ldexp(1.0, exponent - 53);
  *d = (s + p) - s;
  if (fabs(p - *d) == u / 2) /* a tie of the rounding: s's last bit decides */
    return 0;
  /* In ulps of s (integers below 2^53): n steps of d, and then p, stay below 2^exponent. */
  const uint64_t room = (uint64_t)((ldexp(1.0, exponent) - s) / u) - 1, step = (uint64_t)(*d / u);
  size_t n = step > 0 && room / step < left ? (size_t)(room / step) : left;
  if (n > 0 && s + (double)(n - 1) * *d > top_p)
    n = steps_to(s, *d, top_p, n);
  return n;
}

/* One rank of step 3 (as top_p_keep in filter.c): the margin of the mass before it, and 1
 * when that mass is > top_p, so that top-p keeps the ranks before it. */
static int decides(double mass_before, double top_p, double *margin) {
  const double distance = fabs(mass_before - top_p);
  *margin = distance < *margin ? distance : *margin;
  return mass_before > top_p;
}

size_t sieve__top_p_runs(const sieve__run *runs, size_t n_runs, double top_p, double *margin) {
  size_t r = 1, n = 0;
  for (size_t k = 0; k < n_runs; k++)
    n += runs[k].count;
  *margin = INFINITY;
  if (top_p >= 1.0)
    return n;
  double mass = runs[0].p, d;
  for (size_t k = 0; k < n_runs; k++)
    for (size_t left = runs[k].count - (k == 0); left > 0;) {
      const size_t j = stretch(mass, runs[k].p, top_p, left, &d);
      if (j >= 2) { /* the masses before these ranks rise to mass + (j - 1) d <= top_p */
        decides(mass + (double)(j - 1) * d, top_p, margin);
        mass += (double)j * d;
        r += j;
        left -= j;
        continue;
      }
      if (decides(mass, top_p, margin))
        return r;
      mass += runs[k].p;
      r++;
      left--;
    }
  return n;
}
