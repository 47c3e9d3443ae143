/*
 * The filter's fast path (oracle/PERFORMANCE.md): the results of filter.c, the
 * spec path, without ranking the whole row.
 *
 * Rule: as filter.c, for DeepInfer's rule without force_topk. The scaled
 * logits, exps and sums come from the same functions and lanes as in the spec
 * path (softmax.c), so every p and every total is the same double. Instead of
 * ranking every token, only those with e = exp(scaled - max) at or above a
 * threshold are: 2^-4 when those tokens surely hold more than top_p of the
 * mass and more than top_k tokens and are few (a peaked row), else the floor
 * of the buckets a histogram of e says are needed, lowered if they were not
 * enough. The threshold is first moved down to the smallest e with the same p,
 * so the tokens above it are exactly the first ranks, ties included. A long
 * prefix is placed by bucket of p (in token order within a bucket), each
 * bucket sorted unless its p are all equal. Their running masses (summed in
 * rank order) and margins are the spec path's. A row of at most
 * SIEVE__RUNS_MAX distinct logits (a flat row) is not placed at all: its rank
 * order is runs of equal p, each in token order, and the running masses are
 * summed over runs in exact jumps (runs.c). The kept set is then every finite
 * token ranked at or before the last kept one, found by comparing e with two
 * thresholds, without dividing; a kept set of a few ranks of the prefix is
 * summed and written by id instead.
 * Invariant: same kept set, margins, kept mass and logprobs bit for bit.
 * With top_p = 1 and no top-k cut, nothing is ranked and no e is stored. No
 * copy of the row is made unless the blacklist changes it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define LANES SIEVE__LANES /* as in softmax.c: sums over a row add token i to lane i % 8 */
#define SMALL_PREFIX 4096  /* prefixes up to this size are sorted directly */
#define SCAN_BLOCK 256     /* tokens counted at a time when looking for one in a run */
#define FEW_KEPT 512       /* kept sets up to 1 / FEW_KEPT of the row are summed by id */
#define BUCKET_SHIFT 48
#define N_BUCKETS (1 << 14) /* p <= 1 has bits <= 0x3FF0 << 48 */

typedef struct fast_work {
  const float *row; /* the logits, or a copy after the blacklist */
  float mul;        /* step 1: scaled_i = sieve__scaled(row[i], mul) */
  double *expd;     /* e_i = exp(scaled_i - max), so p_i = e_i / total */
  double total, max;
  size_t n_finite;       /* tokens that take a rank */
  sieve__ranked *prefix; /* the first n_prefix ranks: the finite tokens with e >= floor */
  size_t n_prefix;
  double floor;
  size_t topp_kept;                 /* how many ranks top-p keeps, before top-k */
  double slack;                     /* SIEVE__FAST_SLACK, or a test's */
  sieve__run runs[SIEVE__RUNS_MAX]; /* or the whole rank order as runs of equal p (runs.c) */
  size_t n_runs;                    /* 0 when ranked by the prefix */
} fast_work;

/* The kept set as a test on e: finite, and p greater than the last kept token's (e at or
 * above e_greater), or equal to it (e at or above e_equal) with an id not greater. */
typedef struct kept_test {
  double e_greater, e_equal;
  size_t id_last;
} kept_test;

static inline int is_kept_by_e(const kept_test *k, const double *expd, size_t i) {
  return (expd[i] >= k->e_greater) | ((expd[i] >= k->e_equal) & (i <= k->id_last));
}

static inline int is_kept(const kept_test *k, const float *row, const double *expd, size_t i) {
  return is_kept_by_e(k, expd, i) & !isinf(row[i]);
}

/* The smallest e >= 0 with e / total >= p0. Division by total > 0 is monotone, so the tokens
 * with p >= p0 are exactly those with e at or above it: p is compared without dividing. */
static double e_at_least(double p0, double total) {
  double e = p0 * total;
  while (e / total < p0)
    e = nextafter(e, INFINITY);
  while (e > 0.0 && nextafter(e, 0.0) / total >= p0)
    e = nextafter(e, 0.0);
  return e;
}

/* How many tokens have e >= floor > 0, and their e summed (in lanes; an estimate). */
SIEVE__ROW_LOOP
static size_t count_above(const double *restrict expd, size_t vocab, double floor, double *mass) {
  size_t n[LANES] = {0}, i = 0;
  double sum[LANES] = {0};
  for (; i + LANES <= vocab; i += LANES)
    for (size_t j = 0; j < LANES; j++) {
      n[j] += expd[i + j] >= floor;
      sum[j] += expd[i + j] >= floor ? expd[i + j] : 0.0;
    }
  for (; i < vocab; i++) {
    n[0] += expd[i] >= floor;
    sum[0] += expd[i] >= floor ? expd[i] : 0.0;
  }
  *mass = 0.0;
  for (size_t j = 1; j < LANES; j++) {
    n[0] += n[j];
    *mass += sum[j];
  }
  *mass += sum[0];
  return n[0];
}

/* A threshold on e moved down to the smallest e whose p equals that of the threshold, so that
 * no token tied with one at or above it is left below it. */
static double tie_floor(const fast_work *w, double threshold) {
  return threshold > 0.0 ? e_at_least(threshold / w->total, w->total) : 0.0;
}

static unsigned bucket_of(double x) {
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  return (unsigned)(bits >> BUCKET_SHIFT);
}

/* The smallest value a bucket holds. */
static double bucket_floor(unsigned b) {
  uint64_t bits = (uint64_t)b << BUCKET_SHIFT;
  double x;
  memcpy(&x, &bits, sizeof x);
  return x;
}

/* counts[b]: the finite tokens whose e falls in bucket b. counts has 2 N_BUCKETS zeroed
 * entries: even and odd tokens are counted apart, so that a run of tokens in one bucket makes
 * two chains of increments, not one, and the halves are then added. */
static void histogram(const fast_work *w, size_t vocab, uint32_t *counts) {
  uint32_t *odd = counts + N_BUCKETS;
  size_t i = 0;
  for (; i + 2 <= vocab; i += 2) {
    counts[bucket_of(w->expd[i])]++;
    odd[bucket_of(w->expd[i + 1])]++;
  }
  for (; i < vocab; i++)
    counts[bucket_of(w->expd[i])]++;
  for (unsigned b = 0; b < N_BUCKETS; b++)
    counts[b] += odd[b];
  counts[0] -= (uint32_t)(vocab - w->n_finite); /* -inf logits have e = 0 */
}

/* The highest bucket such that the buckets from it up surely hold more than `mass` and at
 * least `count` tokens, and then one more non-empty bucket below it. */
static unsigned lowest_needed(const fast_work *w, const uint32_t *counts, double mass,
                              size_t count) {
  double at_least = 0.0;
  size_t n = 0;
  unsigned b = N_BUCKETS - 1;
  for (;; b--) {
    at_least += counts[b] * bucket_floor(b);
    n += counts[b];
    if ((n >= count && at_least / w->total > mass + w->slack) || b == 0)
      break;
  }
  while (b > 0 && counts[--b] == 0)
    ;
  return b;
}

/* Sorts the tokens of one bucket (given in token order) unless their p are all equal. */
static void rank_bucket(sieve__ranked *items, size_t n) {
  for (size_t i = 1; i < n; i++)
    if (items[i].key != items[0].key) {
      sieve__rank(items, n);
      return;
    }
}

/* Whether token i is in the prefix of the tokens with e >= floor: e >= floor > 0 implies a
 * finite logit; with floor 0 every finite token is. */
static int in_prefix(const fast_work *w, size_t i, double floor) {
  return w->expd[i] >= floor && (floor > 0.0 || !isinf(w->row[i]));
}

/* Places the n tokens with e >= floor (and finite) by bucket of p, in token order within a
 * bucket (the bit patterns of non-negative doubles order as the values do; equal p share a
 * bucket), then sorts each bucket: the spec's rank order. */
static int place_by_buckets(fast_work *w, size_t vocab, double floor, size_t n) {
  uint32_t *ends = calloc(N_BUCKETS, sizeof *ends);
  if (!ends)
    return SIEVE_ENOMEM;
  for (size_t i = 0; i < vocab; i++)
    if (in_prefix(w, i, floor))
      ends[bucket_of(w->expd[i] / w->total)]++;
  uint32_t at = 0;
  for (unsigned b = N_BUCKETS; b-- > 0;) {
    uint32_t count = ends[b];
    ends[b] = at; /* where the bucket starts, until it is filled */
    at += count;
  }
  for (size_t i = 0; i < vocab; i++)
    if (in_prefix(w, i, floor)) {
      const double p = w->expd[i] / w->total;
      w->prefix[ends[bucket_of(p)]++] = (sieve__ranked){p, (uint32_t)i};
    }
  for (unsigned b = N_BUCKETS, start = 0; b-- > 0; start = ends[b])
    rank_bucket(w->prefix + start, ends[b] - start);
  w->n_prefix = n;
  free(ends);
  return 0;
}

/* The n finite tokens with e >= floor (a tie floor), in the spec's rank order. */
static int collect(fast_work *w, size_t vocab, double floor, size_t n) {
  w->floor = floor;
  free(w->prefix);
  w->prefix = malloc((n ? n : 1) * sizeof *w->prefix);
  if (!w->prefix)
    return SIEVE_ENOMEM;
  if (n > SMALL_PREFIX)
    return place_by_buckets(w, vocab, floor, n);
  w->n_prefix = 0;
  for (size_t i = 0; i < vocab; i++)
    if (in_prefix(w, i, floor))
      w->prefix[w->n_prefix++] = (sieve__ranked){w->expd[i] / w->total, (uint32_t)i};
  sieve__rank(w->prefix, n);
  return 0;
}

/* Step 3 on the prefix: as top_p_keep in filter.c; `complete` is cleared when the prefix ended
 * before the decision did. */
static size_t top_p_prefix(const fast_work *w, double top_p, double *margin, int *complete) {
  *margin = INFINITY;
  *complete = 1;
  if (top_p >= 1.0)
    return w->n_finite;
  double mass_before = w->prefix[0].key;
  for (size_t r = 1; r < w->n_finite; r++) {
    const double distance = fabs(mass_before - top_p);
    *margin = distance < *margin ? distance : *margin;
    if (mass_before > top_p)
      return r;
    if (r == w->n_prefix) { /* the next step needs the p of a token past the prefix */
      *complete = 0;
      return w->n_finite;
    }
    mass_before += w->prefix[r].key;
  }
  return w->n_finite;
}

/* Ranks the n tokens at or above `floor` and decides on them; 1 when they were enough. */
static int decide_on(fast_work *w, size_t vocab, const sieve_params *p, double floor, size_t n,
                     size_t *kept, double *margin) {
  if (collect(w, vocab, floor, n) != 0)
    return SIEVE_ENOMEM;
  int complete;
  *kept = w->topp_kept = top_p_prefix(w, p->top_p, margin, &complete);
  if (p->top_k != -1 && (uint64_t)p->top_k < *kept)
    *kept = (size_t)p->top_k;
  return complete && *kept <= w->n_prefix;
}

/* A row of at most SIEVE__RUNS_MAX distinct logits (a flat row): every rank is known as a run
 * of equal p, and top-p sums the runs in jumps (runs.c). 0 when the row has more. */
static int decide_by_runs(fast_work *w, size_t vocab, const sieve_params *p, size_t *kept,
                          double *margin) {
  w->n_runs = sieve__runs(w->row, vocab, w->mul, w->max, w->total, w->runs);
  if (w->n_runs == 0)
    return 0;
  *kept = w->topp_kept = sieve__top_p_runs(w->runs, w->n_runs, p->top_p, margin);
  if (p->top_k != -1 && (uint64_t)p->top_k < *kept)
    *kept = (size_t)p->top_k;
  return 1;
}

/* The prefix down to the buckets of e a histogram says are needed, lowered until it holds the
 * decision. */
static int decide_by_histogram(fast_work *w, size_t vocab, const sieve_params *p, size_t need,
                               double mass, size_t *kept, double *margin) {
  double sum;
  int rc = 0;
  if (vocab <= SMALL_PREFIX) { /* a short row is ranked whole: there is no floor to choose */
    rc = decide_on(w, vocab, p, 0.0, w->n_finite, kept, margin);
    return rc < 0 ? rc : 0;
  }
  uint32_t *counts = calloc(2 * N_BUCKETS, sizeof *counts);
  if (!counts)
    return SIEVE_ENOMEM;
  histogram(w, vocab, counts);
  unsigned low = lowest_needed(w, counts, mass, need);
  for (;;) {
    const double floor = tie_floor(w, bucket_floor(low));
    const size_t n = floor > 0.0 ? count_above(w->expd, vocab, floor, &sum) : w->n_finite;
    if ((rc = decide_on(w, vocab, p, floor, n, kept, margin)) != 0)
      break;
    while (low > 0 && counts[--low] == 0) /* rare: take one more bucket */
      ;
  }
  free(counts);
  return rc < 0 ? rc : 0;
}

/* The kept count and the top-p margin. A long row of few distinct logits as runs (the count of
 * its levels gives up at the 65th, early on a row of random logits); else the tokens with
 * e >= 2^-4 (of the largest e), which on a peaked row usually suffice; else the histogram. */
static int decide(fast_work *w, size_t vocab, const sieve_params *p, size_t *kept, double *margin) {
  size_t need = p->top_k == -1 || (uint64_t)p->top_k >= w->n_finite ? 0 : (size_t)p->top_k + 1;
  double mass = p->top_p < 1.0 ? p->top_p : -1.0, sum;
  if (vocab > SMALL_PREFIX && decide_by_runs(w, vocab, p, kept, margin))
    return 0;
  const double quick = tie_floor(w, 0x1p-4);
  const size_t n_quick = count_above(w->expd, vocab, quick, &sum);
  int rc = 0;
  if (n_quick >= need && sum / w->total > mass + w->slack)
    rc = decide_on(w, vocab, p, quick, n_quick, kept, margin);
  if (rc != 0)
    return rc < 0 ? rc : 0;
  return decide_by_histogram(w, vocab, p, need, mass, kept, margin);
}

/* The kept tokens' e (div 1) or p (div total), summed in token lanes as sieve__sum_marked
 * sums them in the spec path. */
SIEVE__ROW_LOOP
static double kept_sum(const kept_test *k, const float *restrict row, const double *restrict expd,
                       double div, size_t vocab) {
  double acc[LANES] = {0};
  size_t i = 0;
  if (k->e_equal > 0.0) /* e >= e_equal > 0 is finite: the same sum without reading the row */
    for (; i + LANES <= vocab; i += LANES)
      for (size_t j = 0; j < LANES; j++)
        acc[j] += is_kept_by_e(k, expd, i + j) ? expd[i + j] / div : 0.0;
  for (; i + LANES <= vocab; i += LANES)
    for (size_t j = 0; j < LANES; j++)
      acc[j] += is_kept(k, row, expd, i + j) ? expd[i + j] / div : 0.0;
  for (; i < vocab; i++)
    acc[i % LANES] += is_kept(k, row, expd, i) ? expd[i] / div : 0.0;
  return sieve__add_lanes(acc);
}

/* Step 5 over the kept set, as sieve__log_softmax_marked. */
SIEVE__ROW_LOOP
static void output_kept(const kept_test *k, const float *restrict row, float mul,
                        const double *restrict expd, double max, double log_total, size_t vocab,
                        double *restrict logprobs) {
  for (size_t i = 0; i < vocab; i++) {
    const double kept = ((double)sieve__scaled(row[i], mul) - max) - log_total;
    logprobs[i] = is_kept(k, row, expd, i) ? kept : -INFINITY;
  }
}

/* With nothing cut, every finite token keeps its log-softmax over the row. */
SIEVE__ROW_LOOP
static void output_all(const float *restrict row, float mul, double max, double log_total,
                       size_t vocab, double *restrict logprobs) {
  for (size_t i = 0; i < vocab; i++) {
    const double kept = ((double)sieve__scaled(row[i], mul) - max) - log_total;
    logprobs[i] = !isinf(row[i]) ? kept : -INFINITY;
  }
}

/* The largest e of a finite token below `floor` (0 if none): that of the first rank past a
 * prefix, whose p is then that e / total, division being monotone. */
SIEVE__ROW_LOOP
static double largest_below(const float *restrict row, const double *restrict expd, size_t vocab,
                            double floor) {
  uint64_t best = 0; /* the bits of non-negative doubles order as their values */
  for (size_t i = 0; i < vocab; i++) {
    uint64_t bits;
    memcpy(&bits, &expd[i], sizeof bits);
    const int below = (expd[i] < floor) & !isinf(row[i]);
    bits = below ? bits : 0;
    best = bits > best ? bits : best;
  }
  double e;
  memcpy(&e, &best, sizeof e);
  return e;
}

/* How many of the first ranks are known: the prefix, or with runs every finite token. */
static size_t ranks_known(const fast_work *w) { return w->n_runs ? w->n_finite : w->n_prefix; }

/* The run that holds rank *r (a known rank, with runs), and *r made the offset within it. */
static size_t run_of(const fast_work *w, size_t *r) {
  size_t k = 0;
  for (; *r >= w->runs[k].count; k++)
    *r -= w->runs[k].count;
  return k;
}

/* The p of a known rank. */
static double key_at(const fast_work *w, size_t r) {
  return w->n_runs ? w->runs[run_of(w, &r)].p : w->prefix[r].key;
}

/* Whether token i has the p of a run: e at or above e_equal and below e_greater (kept_test's
 * thresholds for that p), and a finite logit (implied when e_equal > 0). */
static inline int in_run(const kept_test *k, const float *row, const double *expd, size_t i) {
  return (expd[i] >= k->e_equal) & (expd[i] < k->e_greater) & !isinf(row[i]);
}

static inline int in_run_by_e(const kept_test *k, const double *expd, size_t i) {
  return (expd[i] >= k->e_equal) & (expd[i] < k->e_greater);
}

/* How many of the tokens from..to-1 have the p of a run. */
SIEVE__ROW_LOOP
static size_t count_in_run(const kept_test *k, const float *restrict row,
                           const double *restrict expd, size_t from, size_t to) {
  size_t n = 0;
  if (k->e_equal > 0.0) /* without reading the row */
    for (size_t i = from; i < to; i++)
      n += (size_t)in_run_by_e(k, expd, i);
  else
    for (size_t i = from; i < to; i++)
      n += (size_t)in_run(k, row, expd, i);
  return n;
}

/* The token at `offset` of the run of probability p: the run's tokens rank in token order.
 * Counted a block at a time, then walked within the block that holds it. */
static uint32_t nth_of_run(const fast_work *w, size_t vocab, double p, size_t offset) {
  const kept_test k = {e_at_least(nextafter(p, INFINITY), w->total), e_at_least(p, w->total), 0};
  size_t at = 0, n;
  for (; at + SCAN_BLOCK < vocab; at += SCAN_BLOCK, offset -= n)
    if ((n = count_in_run(&k, w->row, w->expd, at, at + SCAN_BLOCK)) > offset)
      break;
  for (;; at++)
    if (in_run(&k, w->row, w->expd, at) && offset-- == 0)
      return (uint32_t)at;
}

/* The token and p of a known rank. */
static sieve__ranked ranked_at(const fast_work *w, size_t vocab, size_t r) {
  if (w->n_runs == 0)
    return w->prefix[r];
  const double p = w->runs[run_of(w, &r)].p;
  return (sieve__ranked){p, nth_of_run(w, vocab, p, r)};
}

/* The p of the first rank past the kept ones (kept < n_finite). */
static double next_p(const fast_work *w, size_t vocab, size_t kept) {
  if (kept < ranks_known(w))
    return key_at(w, kept);
  return largest_below(w->row, w->expd, vocab, w->floor) / w->total;
}

static int by_id(const void *a, const void *b) {
  const uint32_t x = ((const sieve__ranked *)a)->id, y = ((const sieve__ranked *)b)->id;
  return (x > y) - (x < y);
}

/* Step 5 when the few kept tokens are the first ranks of the prefix: their e (and p) summed in
 * token lanes, in token order, as kept_sum sums them (a removed token adds +0.0 there, which
 * changes no sum of non-negative terms), then their logprobs; -inf elsewhere. The prefix is
 * put in token order, and not read again. */
static void output_few(fast_work *w, size_t vocab, size_t kept, double *logprobs,
                       sieve_filter_info *info) {
  double e[LANES] = {0}, p[LANES] = {0};
  qsort(w->prefix, kept, sizeof *w->prefix, by_id);
  for (size_t r = 0; r < kept; r++) {
    const uint32_t i = w->prefix[r].id;
    e[i % LANES] += w->expd[i];
    p[i % LANES] += w->expd[i] / w->total;
  }
  if (info)
    info->kept_mass = sieve__add_lanes(p);
  const double log_total = log(sieve__add_lanes(e));
  for (size_t i = 0; i < vocab; i++)
    logprobs[i] = -INFINITY;
  for (size_t r = 0; r < kept; r++) {
    const uint32_t i = w->prefix[r].id;
    logprobs[i] = ((double)sieve__scaled(w->row[i], w->mul) - w->max) - log_total;
  }
}

static void output_cut(fast_work *w, size_t vocab, size_t kept, double *logprobs,
                       sieve_filter_info *info) {
  const sieve__ranked last = ranked_at(w, vocab, kept - 1);
  const kept_test k = {e_at_least(nextafter(last.key, INFINITY), w->total),
                       e_at_least(last.key, w->total), last.id};
  if (info)
    info->cut_gap = kept < w->n_finite ? last.key - next_p(w, vocab, kept) : INFINITY;
  if (w->n_runs == 0 && kept <= vocab / FEW_KEPT) {
    output_few(w, vocab, kept, logprobs, info);
    return;
  }
  if (info)
    info->kept_mass = kept_sum(&k, w->row, w->expd, w->total, vocab);
  const double log_total = log(kept_sum(&k, w->row, w->expd, 1.0, vocab));
  output_kept(&k, w->row, w->mul, w->expd, w->max, log_total, vocab, logprobs);
}

/* Whether the cut after the first r ranks falls inside a run of equal probabilities; 1 when
 * the prefix does not reach it (a superset is safe). */
static int tie_at(const fast_work *w, size_t r) {
  return r >= ranks_known(w) || key_at(w, r) == key_at(w, r - 1);
}

/* Whether d = s - max, in double, is exact: its rounding error (Knuth's TwoSum) is 0. */
static int exact_difference(double s, double max) {
  const double d = s - max, s_part = d + max, max_part = d - s_part;
  return (s - s_part) - (max_part + max) == 0.0;
}

/* Whether two finite tokens could have equal probabilities but different scaled logits s (as
 * filter.c's probability_hides_logits asks), or more. Equal e = exp(s - max) from different s
 * needs one of: e near the subnormals; s - max rounded to a double another s also gives; or two
 * exact differences within a few units of e's precision (2^-52) of each other: two different
 * float32 values that close are both below 2^-25 in magnitude (the spacing of floats near s is
 * at least 2^-24 |s|), so a second distinct s below 2^-20 is looked for. */
static int probability_may_hide_logits(const fast_work *w, size_t vocab) {
  float small = NAN; /* the first s of magnitude below 2^-20 */
  for (size_t i = 0; i < vocab; i++) {
    const float s = sieve__scaled(w->row[i], w->mul);
    if (isinf(s))
      continue;
    if (w->expd[i] < 0x1p-960 * w->total || !exact_difference(s, w->max))
      return 1;
    if (fabsf(s) < 0x1p-20f && !isnan(small) && s != small)
      return 1;
    small = fabsf(s) < 0x1p-20f ? s : small;
  }
  return 0;
}

/* The axes the spec path (filter.c) would read for this row under DeepInfer's rule, or more:
 * the fast path reads none, and a traced rule (sieve_rule.consulted) needs them. Where a cut
 * is in effect the scope; where temperature applies where T is not 1, and how it scales where
 * it can change the row (scale_reads); the boundary where a mass equalled
 * top_p (the margin is 0); the tie choice of a cut that falls in a tie; the rank key where
 * probabilities are small enough to tie; top_p = 1 with a top-k. */
static uint32_t scale_reads(const fast_work *w, size_t vocab, double temperature) {
  return (uint32_t)(temperature != 1.0) << SIEVE_AXIS_TEMPERATURE_AT |
         (uint32_t)sieve__scaling_matters(w->row, vocab, temperature) << SIEVE_AXIS_TEMPERATURE_OP;
}

static uint32_t spec_reads(const fast_work *w, size_t vocab, const sieve_params *p, int cut,
                           size_t kept, double margin) {
  const int topk_on = p->top_k != -1, topp_on = p->top_p < 1.0;
  uint32_t r = scale_reads(w, vocab, p->temperature);
  r |= (uint32_t)(topp_on || topk_on) << SIEVE_AXIS_TOPP_SCOPE;
  r |= (uint32_t)(!topp_on && topk_on) << SIEVE_AXIS_TOPP_ONE;
  r |= (uint32_t)(topp_on && margin == 0.0) << SIEVE_AXIS_BOUNDARY;
  r |= (uint32_t)(cut && topp_on && w->topp_kept < w->n_finite && tie_at(w, w->topp_kept))
       << SIEVE_AXIS_TOPP_TIES;
  r |= (uint32_t)(cut && topk_on && kept < w->topp_kept && tie_at(w, kept)) << SIEVE_AXIS_TOPK_TIES;
  r |= (uint32_t)(cut && probability_may_hide_logits(w, vocab)) << SIEVE_AXIS_RANK_KEY;
  return r;
}

static int fast_row(fast_work *w, size_t vocab, const sieve_params *p, double *logprobs,
                    sieve_filter_info *info, uint32_t *consulted) {
  int rc = sieve__scaled_max(w->row, vocab, w->mul, &w->max, &w->n_finite);
  if (rc != 0 && consulted) /* an overflow under one way of scaling may not be under another */
    *consulted |= scale_reads(w, vocab, p->temperature);
  if (rc != 0)
    return rc;
  int cut = p->top_p < 1.0 || (p->top_k != -1 && (uint64_t)p->top_k < w->n_finite);
  w->total = sieve__exp_sum(w->row, vocab, w->mul, w->max, cut || info ? w->expd : NULL);
  double margin = INFINITY;
  size_t kept = w->n_finite;
  if (cut && (rc = decide(w, vocab, p, &kept, &margin)) != 0)
    return rc;
  if (consulted)
    *consulted |= spec_reads(w, vocab, p, cut, kept, margin);
  if (info)
    *info = (sieve_filter_info){kept, 0.0, margin, INFINITY, INFINITY};
  if (cut) {
    output_cut(w, vocab, kept, logprobs, info);
    return 0;
  }
  if (info) /* every finite token is kept; the others have e = 0 */
    info->kept_mass = sieve__sum_marked(w->expd, NULL, w->total, vocab);
  output_all(w->row, w->mul, w->max, log(w->total), vocab, logprobs);
  return 0;
}

/* The row the filter reads: the logits themselves, or a copy with the blacklist applied. */
static int engine_row(fast_work *w, const float *logits, size_t vocab, const sieve_engine *engine,
                      float **copy) {
  w->row = logits;
  if (!engine || engine->blacklist_len == 0) /* sieve__apply_engine then only checks */
    return sieve__apply_engine(engine, NULL, vocab);
  *copy = malloc(vocab * sizeof **copy);
  if (!*copy)
    return SIEVE_ENOMEM;
  memcpy(*copy, logits, vocab * sizeof **copy);
  w->row = *copy;
  return sieve__apply_engine(engine, *copy, vocab);
}

int sieve__filter_fast(const float *logits, size_t vocab, const sieve_params *p,
                       const sieve_engine *engine, double *logprobs, sieve_filter_info *info,
                       uint32_t *consulted, double slack) {
  fast_work w = {0};
  w.slack = slack;
  float *copy = NULL;
  int rc = engine_row(&w, logits, vocab, engine, &copy);
  if (rc != 0)
    goto fail;
  w.mul = (float)sieve__to_float32(1.0 / p->temperature);
  w.expd = malloc(vocab * sizeof *w.expd);
  rc = SIEVE_ENOMEM;
  if (w.expd)
    rc = fast_row(&w, vocab, p, logprobs, info, consulted);
fail:
  free(copy);
  free(w.expd);
  free(w.prefix);
  return rc;
}
