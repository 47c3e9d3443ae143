/*
 * The filter's fast path (oracle/PERFORMANCE.md): the results of filter.c, the
 * spec path, without ranking the whole row.
 *
 * Rule: as filter.c, for DeepInfer's rule without force_topk. Steps 1 and 2
 * are the spec path's own passes (scale and max; exp and the token-order
 * total), so every p is the same double. Instead of sorting every token, a
 * histogram of the probabilities' float64 bit patterns (monotone for
 * non-negative doubles; equal p fall in one bucket) finds the shortest prefix
 * of the rank order that the top-p and top-k decisions need, with at least
 * one token past the cut; only that prefix is sorted, with the spec's order.
 * Its ranks, running masses (summed in rank order) and margins are the spec
 * path's, and the kept set's log-softmax is summed in token order as there.
 * Invariant: same kept set, margins, kept mass and logprobs bit for bit.
 * With top_p = 1 and no top-k cut, nothing is sorted. The cost of top-p on a
 * very flat row is the sort of the long prefix its cut needs.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define SMALL_ROW 4096 /* rows up to this size are ranked whole */
#define BUCKET_SHIFT 48
#define N_BUCKETS (1 << 15) /* p <= 1 has bits <= 0x3FF0... */

typedef struct fast_work {
  float *scaled;
  double *expd;
  double total, max;
  size_t n_ranked;        /* finite tokens */
  sieve__ranked *prefix;  /* the first n_prefix ranks */
  size_t n_prefix;
  uint32_t *counts;       /* the histogram: tokens per bucket */
  double *masses;         /* and their probability */
} fast_work;

static unsigned bucket_of(double p) {
  uint64_t bits;
  memcpy(&bits, &p, sizeof bits);
  return (unsigned)(bits >> BUCKET_SHIFT);
}

static void exp_pass(fast_work *w, size_t vocab) {
  w->total = 0.0;
  w->n_ranked = 0;
  for (size_t i = 0; i < vocab; i++) {
    w->expd[i] = exp((double)w->scaled[i] - w->max);
    w->total += w->expd[i];
    w->n_ranked += !isinf(w->scaled[i]);
  }
}

/* Tokens of bucket >= low (all finite tokens when low is 0), sorted in the spec's order. */
static int collect(fast_work *w, size_t vocab, unsigned low) {
  size_t need = w->n_ranked;
  if (low > 0) {
    need = 0;
    for (unsigned b = low; b < N_BUCKETS; b++)
      need += w->counts[b];
  }
  free(w->prefix);
  w->prefix = malloc((need ? need : 1) * sizeof *w->prefix);
  if (!w->prefix)
    return SIEVE_ENOMEM;
  w->n_prefix = 0;
  for (size_t i = 0; i < vocab; i++) {
    if (isinf(w->scaled[i]))
      continue;
    double p = w->expd[i] / w->total;
    if (low == 0 || bucket_of(p) >= low)
      w->prefix[w->n_prefix++] = (sieve__ranked){p, (uint32_t)i};
  }
  sieve__rank(w->prefix, w->n_prefix);
  return 0;
}

static void histogram(fast_work *w, size_t vocab) {
  memset(w->counts, 0, N_BUCKETS * sizeof *w->counts);
  memset(w->masses, 0, N_BUCKETS * sizeof *w->masses);
  for (size_t i = 0; i < vocab; i++) {
    if (isinf(w->scaled[i]))
      continue;
    double p = w->expd[i] / w->total;
    unsigned b = bucket_of(p);
    w->counts[b]++;
    w->masses[b] += p;
  }
}

/* The highest bucket such that the buckets from it up hold more than `mass` (with a margin for
 * rounding) and at least `count` tokens, and then one more non-empty bucket below it. */
static unsigned lowest_needed(const fast_work *w, double mass, size_t count) {
  double acc = 0.0;
  size_t n = 0;
  unsigned b = N_BUCKETS - 1;
  for (;; b--) {
    acc += w->masses[b];
    n += w->counts[b];
    if ((n >= count && acc > mass + 1e-9) || b == 0)
      break;
  }
  while (b > 0 && w->counts[--b] == 0)
    ;
  return b;
}

/* Step 3 on the prefix: as top_p_keep in filter.c; `complete` is cleared when the prefix ended
 * before the decision did. */
static size_t top_p_prefix(const fast_work *w, double top_p, double *margin, int *complete) {
  *margin = INFINITY;
  *complete = 1;
  if (top_p >= 1.0)
    return w->n_ranked;
  double mass_before = w->prefix[0].key;
  for (size_t r = 1; r < w->n_prefix; r++) {
    *margin = fmin(*margin, fabs(mass_before - top_p));
    if (mass_before > top_p)
      return r;
    mass_before += w->prefix[r].key;
  }
  *complete = w->n_prefix == w->n_ranked;
  return w->n_ranked;
}

/* Ranks the prefix the decisions need: the kept count and the top-p margin. */
static int decide(fast_work *w, size_t vocab, const sieve_params *p, size_t *kept,
                  double *margin) {
  size_t need = p->top_k == -1 || (uint64_t)p->top_k >= w->n_ranked ? 0 : (size_t)p->top_k + 1;
  double mass = p->top_p < 1.0 ? p->top_p : -1.0;
  unsigned low = 0;
  if (vocab > SMALL_ROW) {
    histogram(w, vocab);
    low = lowest_needed(w, mass, need);
  }
  for (;;) {
    if (collect(w, vocab, low) != 0)
      return SIEVE_ENOMEM;
    int complete;
    *kept = top_p_prefix(w, p->top_p, margin, &complete);
    if (p->top_k != -1 && (uint64_t)p->top_k < *kept)
      *kept = (size_t)p->top_k;
    if (complete && (*kept < w->n_prefix || w->n_prefix == w->n_ranked))
      return 0;
    while (low > 0 && w->counts[--low] == 0) /* rare: take one more bucket */
      ;
  }
}

/* With nothing cut: every finite token keeps its log-softmax over the row, no sort. */
static void output_all(const fast_work *w, size_t vocab, double *logprobs,
                       sieve_filter_info *info) {
  const double log_total = log(w->total);
  double mass = 0.0;
  for (size_t i = 0; i < vocab; i++) {
    int finite = !isinf(w->scaled[i]);
    logprobs[i] = finite ? ((double)w->scaled[i] - w->max) - log_total : -INFINITY;
    mass += finite ? w->expd[i] / w->total : 0.0;
  }
  if (info)
    *info = (sieve_filter_info){w->n_ranked, mass, INFINITY, INFINITY};
}

static int fast_row(fast_work *w, const float *logits, size_t vocab, const sieve_params *p,
                    const sieve_engine *engine, double *logprobs, sieve_filter_info *info) {
  memcpy(w->scaled, logits, vocab * sizeof *logits);
  int rc = sieve__apply_engine(engine, w->scaled, vocab);
  if (rc == 0)
    rc = sieve__scale(w->scaled, vocab, p->temperature, &w->max);
  if (rc != 0)
    return rc;
  exp_pass(w, vocab);
  if (p->top_p >= 1.0 && (p->top_k == -1 || (uint64_t)p->top_k >= w->n_ranked)) {
    output_all(w, vocab, logprobs, info);
    return 0;
  }
  double margin;
  size_t kept;
  rc = decide(w, vocab, p, &kept, &margin);
  if (rc == 0)
    sieve__log_softmax_kept(w->prefix, kept, w->scaled, w->expd, w->max, vocab, logprobs);
  if (rc == 0 && info) {
    info->kept = kept;
    info->topp_margin = margin;
    info->cut_gap = kept < w->n_ranked ? w->prefix[kept - 1].key - w->prefix[kept].key : INFINITY;
    rc = sieve__kept_mass(w->prefix, kept, &info->kept_mass);
  }
  return rc;
}

int sieve__filter_fast(const float *logits, size_t vocab, const sieve_params *p,
                       const sieve_engine *engine, double *logprobs, sieve_filter_info *info) {
  fast_work w = {0};
  int big = vocab > SMALL_ROW, rc = SIEVE_ENOMEM;
  w.scaled = malloc(vocab * sizeof *w.scaled);
  w.expd = malloc(vocab * sizeof *w.expd);
  w.counts = big ? malloc(N_BUCKETS * sizeof *w.counts) : NULL;
  w.masses = big ? malloc(N_BUCKETS * sizeof *w.masses) : NULL;
  if (w.scaled && w.expd && (!big || (w.counts && w.masses)))
    rc = fast_row(&w, logits, vocab, p, engine, logprobs, info);
  free(w.scaled);
  free(w.expd);
  free(w.prefix);
  free(w.counts);
  free(w.masses);
  return rc;
}
