/*
 * The filter's fast path (oracle/PERFORMANCE.md): the results of filter.c, the
 * spec path, without ranking the whole row.
 *
 * Rule: as filter.c, for DeepInfer's rule without force_topk. The scaled
 * logits, exps and totals come from the same functions as in the spec path
 * (softmax.c), so every p is the same double. Instead of sorting every token,
 * a histogram of the probabilities' float64 bit patterns (monotone for
 * non-negative doubles; equal p fall in one bucket) finds the shortest prefix
 * of the rank order that the top-p and top-k decisions need, with at least
 * one token past the cut. Its tokens are placed bucket by bucket, in token
 * order within a bucket; a bucket whose p are not all equal is then sorted in
 * the spec's order. Its running masses (summed in rank order) and margins are
 * the spec path's. The kept set is then every finite token ranked at or
 * before the last kept one: p greater, or p equal and id not greater.
 * Invariant: same kept set, margins, kept mass and logprobs bit for bit.
 * With top_p = 1 and no top-k cut, nothing is ranked. No copy of the row is
 * made unless the blacklist changes it.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define SMALL_ROW 4096 /* rows up to this size are ranked whole */
#define BUCKET_SHIFT 48
#define N_BUCKETS (1 << 14) /* p <= 1 has bits <= 0x3FF0 << 48 */

typedef struct fast_work {
  const float *row;      /* the logits, or a copy after the blacklist */
  float mul;             /* step 1: scaled_i = sieve__scaled(row[i], mul) */
  double *expd;          /* e_i = exp(scaled_i - max), so p_i = e_i / total */
  double total, max;
  size_t n_finite;       /* tokens that take a rank */
  sieve__ranked *prefix; /* the first n_prefix ranks */
  size_t n_prefix;
  uint32_t *counts;      /* a histogram of the e: finite tokens per bucket */
  uint32_t *ends;        /* where each bucket of p ends in the prefix */
} fast_work;

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

static void histogram(fast_work *w, size_t vocab) {
  memset(w->counts, 0, N_BUCKETS * sizeof *w->counts);
  for (size_t i = 0; i < vocab; i++)
    w->counts[bucket_of(w->expd[i])]++;
  w->counts[0] -= (uint32_t)(vocab - w->n_finite); /* -inf logits have e = 0 */
}

/* The highest bucket such that the buckets from it up surely hold more than `mass` and at
 * least `count` tokens, and then one more non-empty bucket below it. */
static unsigned lowest_needed(const fast_work *w, double mass, size_t count) {
  double at_least = 0.0;
  size_t n = 0;
  unsigned b = N_BUCKETS - 1;
  for (;; b--) {
    at_least += w->counts[b] * bucket_floor(b);
    n += w->counts[b];
    if ((n >= count && at_least / w->total > mass + 1e-9) || b == 0)
      break;
  }
  while (b > 0 && w->counts[--b] == 0)
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

/* The finite tokens whose p is at least that of the smallest e of bucket `low`, in the
 * spec's rank order: every token ranked before the last of them is one of them. They are
 * placed bucket by bucket of p (in token order within a bucket), then each bucket is sorted. */
static int collect(fast_work *w, size_t vocab, unsigned low) {
  const double e_low = low ? e_at_least(bucket_floor(low) / w->total, w->total) : 0.0;
  memset(w->ends, 0, N_BUCKETS * sizeof *w->ends);
  for (size_t i = 0; i < vocab; i++)
    if (w->expd[i] >= e_low && !isinf(w->row[i]))
      w->ends[bucket_of(w->expd[i] / w->total)]++;
  uint32_t n = 0;
  for (unsigned b = N_BUCKETS; b-- > 0;) {
    uint32_t count = w->ends[b];
    w->ends[b] = n; /* where the bucket starts, until it is filled */
    n += count;
  }
  free(w->prefix);
  w->prefix = malloc((n ? n : 1) * sizeof *w->prefix);
  if (!w->prefix)
    return SIEVE_ENOMEM;
  for (size_t i = 0; i < vocab; i++)
    if (w->expd[i] >= e_low && !isinf(w->row[i])) {
      const double p = w->expd[i] / w->total;
      w->prefix[w->ends[bucket_of(p)]++] = (sieve__ranked){p, (uint32_t)i};
    }
  for (unsigned b = N_BUCKETS, start = 0; b-- > 0; start = w->ends[b])
    rank_bucket(w->prefix + start, w->ends[b] - start);
  w->n_prefix = n;
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
  for (size_t r = 1; r < w->n_prefix; r++) {
    const double distance = fabs(mass_before - top_p);
    *margin = distance < *margin ? distance : *margin;
    if (mass_before > top_p)
      return r;
    mass_before += w->prefix[r].key;
  }
  *complete = w->n_prefix == w->n_finite;
  return w->n_finite;
}

/* Ranks the prefix the decisions need: the kept count and the top-p margin. */
static int decide(fast_work *w, size_t vocab, const sieve_params *p, size_t *kept,
                  double *margin) {
  size_t need = p->top_k == -1 || (uint64_t)p->top_k >= w->n_finite ? 0 : (size_t)p->top_k + 1;
  double mass = p->top_p < 1.0 ? p->top_p : -1.0;
  histogram(w, vocab);
  unsigned low = vocab > SMALL_ROW ? lowest_needed(w, mass, need) : 0;
  for (;;) {
    if (collect(w, vocab, low) != 0)
      return SIEVE_ENOMEM;
    int complete;
    *kept = top_p_prefix(w, p->top_p, margin, &complete);
    if (p->top_k != -1 && (uint64_t)p->top_k < *kept)
      *kept = (size_t)p->top_k;
    if (complete && (*kept < w->n_prefix || w->n_prefix == w->n_finite))
      return 0;
    while (low > 0 && w->counts[--low] == 0) /* rare: take one more bucket */
      ;
  }
}

/* Marks the kept tokens in marks[] (1 kept, 0 removed): the finite tokens ranked at or before
 * the last kept one, whose p is greater (e >= e_greater) or equal (e >= e_equal) and id not
 * greater. */
SIEVE__ROW_LOOP
static void mark_kept(const float *restrict row, const double *restrict expd, size_t vocab,
                      double e_greater, double e_equal, size_t id_last,
                      double *restrict marks) {
  for (size_t i = 0; i < vocab; i++) {
    const int finite = !isinf(row[i]);
    const int before = (expd[i] >= e_greater) | ((expd[i] >= e_equal) & (i <= id_last));
    marks[i] = (finite & before) ? 1.0 : 0.0;
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

static int output_cut(fast_work *w, size_t vocab, size_t kept, double *logprobs,
                      sieve_filter_info *info) {
  const sieve__ranked last = w->prefix[kept - 1];
  mark_kept(w->row, w->expd, vocab, e_at_least(nextafter(last.key, INFINITY), w->total),
            e_at_least(last.key, w->total), last.id, logprobs);
  if (info) {
    info->cut_gap = kept < w->n_finite ? last.key - w->prefix[kept].key : INFINITY;
    info->kept_mass = sieve__sum_marked(w->expd, logprobs, w->total, vocab);
  }
  const double log_total = log(sieve__sum_marked(w->expd, logprobs, 1.0, vocab));
  sieve__log_softmax_marked(w->row, w->mul, w->max, log_total, vocab, logprobs);
  return 0;
}

static int fast_row(fast_work *w, size_t vocab, const sieve_params *p, double *logprobs,
                    sieve_filter_info *info) {
  int rc = sieve__scaled_max(w->row, vocab, w->mul, &w->max, &w->n_finite);
  if (rc != 0)
    return rc;
  int cut = p->top_p < 1.0 || (p->top_k != -1 && (uint64_t)p->top_k < w->n_finite);
  w->total = sieve__exp_sum(w->row, vocab, w->mul, w->max, cut || info ? w->expd : NULL);
  double margin = INFINITY;
  size_t kept = w->n_finite;
  if (cut && (rc = decide(w, vocab, p, &kept, &margin)) != 0)
    return rc;
  if (info)
    *info = (sieve_filter_info){kept, 0.0, margin, INFINITY};
  if (cut)
    return output_cut(w, vocab, kept, logprobs, info);
  if (info) /* every finite token is kept; the others have e = 0 */
    info->kept_mass = sieve__sum_marked(w->expd, NULL, w->total, vocab);
  output_all(w->row, w->mul, w->max, log(w->total), vocab, logprobs);
  return 0;
}

/* The row the filter reads: the logits themselves, or a copy with the blacklist applied. */
static int engine_row(fast_work *w, const float *logits, size_t vocab,
                      const sieve_engine *engine, float **copy) {
  w->row = logits;
  w->mul = 1.0f;
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
                       const sieve_engine *engine, double *logprobs, sieve_filter_info *info) {
  fast_work w = {0};
  float *copy = NULL;
  int rc = engine_row(&w, logits, vocab, engine, &copy);
  if (rc != 0)
    goto fail;
  w.mul = (float)(1.0 / p->temperature);
  w.expd = malloc(vocab * sizeof *w.expd);
  w.counts = malloc(2 * N_BUCKETS * sizeof *w.counts);
  rc = SIEVE_ENOMEM;
  if (!w.expd || !w.counts)
    goto fail;
  w.ends = w.counts + N_BUCKETS;
  rc = fast_row(&w, vocab, p, logprobs, info);
fail:
  free(copy);
  free(w.expd);
  free(w.prefix);
  free(w.counts);
  return rc;
}
