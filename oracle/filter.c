/*
 * The filter: steps 1-5 of seed 000:13-19 (fused_sample.py:121-150, :209).
 *
 * Rule, for one row of float32 logits and normalized parameters:
 *  0. Engine options first (engine.c); a finite logit is checked for NaN/+inf.
 *     Then the penalties (penalties.c), step 1 of seed 004's pipeline.
 *  1. scaled_i = logits_i * (float)(1/T) in float32 (seed 000:11: the
 *     reference multiplies by 1/T); p = softmax(scaled) over the whole row in
 *     float64, with the oracle's exp and sums in eight token lanes (softmax.c).
 *  2. Rank by p descending; ties keep token order (seed 000:16).
 *  3. Top-p: remove a token when the float64 mass of all better tokens,
 *     summed in rank order, is > top_p (seed 000:17). top_p = 1 removes
 *     nothing. The first token always stays.
 *  4. Top-k: of the tokens left, remove rank >= k; k = -1 is off and
 *     k > V keeps all (seed 000:18, 000:32).
 *     Ours: min-p, on the same order, removes a token whose p is below
 *     min_p times the largest p (float64 product); ties go together.
 *  5. Kept tokens get log_softmax over the kept set, in float64:
 *     (scaled_i - max) - log(sum over kept of exp(scaled_j - max));
 *     removed tokens get -inf (seed 000:19).
 * Ours: a token whose logit is -inf (given, blacklisted or cut by
 * force_topk) has p = 0, takes no rank and is never kept; a finite logit
 * whose scaled value overflows float32 is an error, never an inf or a NaN.
 * Invariants: the kept set is a prefix of the rank order; kept processed
 * probabilities sum to 1; the result depends on this row alone.
 * Other engines' rules (sieve_rule, ENGINES.md) change steps 1-4 only where
 * their axes say: the rank key, the order of the cuts, top-p left out, the boundary, which
 * tied tokens a cut keeps, top_p = 1 as a float32 comparison, and temperature
 * after the filters, division by T, and min-p's probabilities (at T = 1), place (first, top-p
 * then measuring the mass it keeps) and boundary (p = min_p * the largest removed).
 * With SIEVE_RULE_DEEPINFER every branch takes the spec's way.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef struct filter_work {
  float *scaled;          /* step 1, float32 */
  double *expd;           /* exp(scaled - max), float64 */
  sieve__ranked *ranked;  /* step 2: key = p */
  size_t n_ranked;        /* tokens with a finite scaled logit */
  double max;             /* the largest scaled logit */
  const sieve_rule *rule; /* DeepInfer's, or another engine's (ENGINES.md) */
  int by_logit;           /* ranked by the scaled logit (rank_key logit) */
  double *unscaled;       /* p at T = 1 by token, where min-p compares it (min_p_scale); or NULL */
} filter_work;

SIEVE__ROW_LOOP
int sieve__check_logits(const float *logits, size_t vocab) {
  if (vocab == 0 || vocab > SIEVE_VOCAB_MAX)
    return SIEVE_EVOCAB;
  int nan = 0, pos_inf = 0;
  for (size_t i = 0; i < vocab; i++) {
    nan |= isnan(logits[i]);
    pos_inf |= logits[i] == INFINITY;
  }
  return nan ? SIEVE_ENAN : pos_inf ? SIEVE_EPOSINF : 0;
}

/* Other engines divide instead: by the float32 T (`divide`), or by the float64 T
 * (`divide_float64`: transformers.js 4.3.2, src/generation/logits_process.js,
 * TemperatureLogitsWarper._call, `batch_logits_data[i] /= this.temperature` on a Float32Array).
 * The quotient is rounded once, so two logits that the rounded 1/T ties can stay apart; in
 * double, then to float32, the quotient by a float32 divisor is the float32 quotient. A finite
 * logit whose quotient is not finite is still the overflow error. */
static int divide_row(float *row, size_t vocab, double divisor, double *max) {
  int overflow = 0;
  for (size_t i = 0; i < vocab; i++) {
    if (row[i] == -INFINITY)
      continue;
    row[i] = (float)sieve__to_float32((double)row[i] / divisor);
    overflow |= !isfinite(row[i]);
  }
  return overflow ? SIEVE_EOVERFLOW : sieve__scaled_max(row, vocab, 1.0f, max, NULL);
}

/* Another engine subtracts the row's largest logit first and multiplies the difference by the
 * float32 1/T (exllamav2 b9c025b, exllamav2_ext/cpp/sampling.cpp softmax_cpu_nonavx2:
 * expf((logits[i] - maxl) * itemp)): the difference rounds where the largest is far from a
 * token, and can tie two tokens the product keeps apart. A finite logit whose scaled difference
 * is not finite is still the overflow error. */
static float largest_of(const float *row, size_t vocab) {
  float largest = -INFINITY;
  for (size_t i = 0; i < vocab; i++)
    largest = row[i] > largest ? row[i] : largest;
  return largest;
}

static int shift_row(float *row, size_t vocab, double temperature, double *max) {
  const float inv_t = (float)sieve__to_float32(1.0 / temperature), largest = largest_of(row, vocab);
  int overflow = 0;
  for (size_t i = 0; i < vocab; i++) {
    if (row[i] == -INFINITY)
      continue;
    row[i] = (row[i] - largest) * inv_t;
    overflow |= !isfinite(row[i]);
  }
  return overflow ? SIEVE_EOVERFLOW : sieve__scaled_max(row, vocab, 1.0f, max, NULL);
}

static int exact_in_float(double x) { return isfinite(x) && sieve__to_float32(x) == x; }

int sieve__scaling_matters(const float *row, size_t vocab, double temperature) {
  if (!sieve__reciprocal_is_exact(temperature))
    return 1;
  const double inv_t = sieve__to_float32(1.0 / temperature), largest = largest_of(row, vocab);
  for (size_t i = 0; i < vocab; i++) {
    const double x = row[i], d = x - largest;
    if (x != -INFINITY &&
        !(exact_in_float(d) && exact_in_float(x * inv_t) && exact_in_float(d * inv_t)))
      return 1;
  }
  return 0;
}

/* Step 1 in place: logits times (float)(1/T), divided by (float)T or by T, or shifted by the
 * largest first, as the rule scales; the largest result in *max. */
static int scale(const sieve_rule *rule, float *row, size_t vocab, double temperature,
                 double *max) {
  const int op = sieve__scaling_matters(row, vocab, temperature)
                     ? SIEVE__AXIS(rule, TEMPERATURE_OP, temperature_op)
                     : SIEVE_TEMPERATURE_OP_RECIPROCAL;
  if (op == SIEVE_TEMPERATURE_OP_SHIFTED)
    return shift_row(row, vocab, temperature, max);
  if (op == SIEVE_TEMPERATURE_OP_DIVIDE && !sieve__reciprocal_is_exact(temperature))
    return divide_row(row, vocab, sieve__to_float32(temperature), max);
  if (op == SIEVE_TEMPERATURE_OP_DIVIDE_FLOAT64 && !sieve__reciprocal_is_exact(temperature))
    return divide_row(row, vocab, temperature, max);
  const float inv_t = (float)sieve__to_float32(1.0 / temperature);
  int rc = sieve__scaled_max(row, vocab, inv_t, max, NULL);
  for (size_t i = 0; rc == 0 && i < vocab; i++)
    row[i] = sieve__scaled(row[i], inv_t);
  return rc;
}

/* Whether two tokens of equal probability have different scaled logits (both underflow, say):
 * only then can ranking by logit give another order or other ties. */
static int probability_hides_logits(const filter_work *w) {
  for (size_t r = 1; r < w->n_ranked; r++)
    if (w->ranked[r].key == w->ranked[r - 1].key &&
        w->scaled[w->ranked[r].id] != w->scaled[w->ranked[r - 1].id])
      return 1;
  return 0;
}

/* Step 2. Another engine may rank by the scaled logit: the same order, except that tokens of
 * equal probability with different logits (both underflow, say) keep their logit order instead
 * of token order. The order matters only where a cut keeps some ranks and not others: greedy,
 * top-p, or a top-k below the ranks. */
static void softmax_and_rank(filter_work *w, size_t vocab, const sieve_params *p, int greedy) {
  const double total = sieve__exp_sum(w->scaled, vocab, 1.0f, w->max, w->expd);
  w->n_ranked = 0;
  for (size_t i = 0; i < vocab; i++)
    if (!isinf(w->scaled[i]))
      w->ranked[w->n_ranked++] = (sieve__ranked){w->expd[i] / total, (uint32_t)i};
  sieve__rank(w->ranked, w->n_ranked);
  const int cut = greedy || p->top_p < 1.0 || (p->top_k != -1 && (uint64_t)p->top_k < w->n_ranked);
  w->by_logit = cut && probability_hides_logits(w) &&
                SIEVE__AXIS(w->rule, RANK_KEY, rank_key) == SIEVE_RANK_KEY_LOGIT;
  if (!w->by_logit)
    return;
  for (size_t r = 0; r < w->n_ranked; r++)
    w->ranked[r].key = w->scaled[w->ranked[r].id];
  sieve__rank(w->ranked, w->n_ranked);
  for (size_t r = 0; r < w->n_ranked; r++)
    w->ranked[r].key = w->expd[w->ranked[r].id] / total;
}

/* Whether ranks i and j are tied: equal probabilities, or equal logits when the rule ranks by
 * logit. */
static int tied(const filter_work *w, size_t i, size_t j) {
  if (w->by_logit)
    return w->scaled[w->ranked[i].id] == w->scaled[w->ranked[j].id];
  return w->ranked[i].key == w->ranked[j].key;
}

/* The tie choices of the two cuts share their numbering: keep the order, reverse it, keep all
 * the tied tokens, or scramble them. */
_Static_assert((int)SIEVE_TOPP_TIES_HIGHEST == (int)SIEVE_TOPK_TIES_BY_ID_DESC &&
                   (int)SIEVE_TOPP_TIES_ALL == (int)SIEVE_TOPK_TIES_KEEP_ALL &&
                   (int)SIEVE_TOPP_TIES_UNSPECIFIED == (int)SIEVE_TOPK_TIES_UNSPECIFIED,
               "topp_ties and topk_ties number their choices alike");

/* A cut that keeps the first `keep` of `n` ranks, when the tokens tied with the last one kept
 * run past it: DeepInfer keeps the lowest ids (the rank order); another rule reverses or
 * scrambles the run, or keeps all of it, as its axis (topp_ties or topk_ties) says. Returns how
 * many ranks stay. */
static size_t cut_ties(filter_work *w, size_t keep, size_t n, int axis) {
  if (keep == 0 || keep >= n || !tied(w, keep, keep - 1))
    return keep;
  const int choice = axis == SIEVE_AXIS_TOPP_TIES ? SIEVE__AXIS(w->rule, TOPP_TIES, topp_ties)
                                                  : SIEVE__AXIS(w->rule, TOPK_TIES, topk_ties);
  size_t first = keep - 1, end = keep + 1;
  while (first > 0 && tied(w, first - 1, keep))
    first--;
  while (end < n && tied(w, end, keep))
    end++;
  if (choice == SIEVE_TOPK_TIES_KEEP_ALL)
    return end;
  if (choice != SIEVE_TOPK_TIES_BY_ID) {
    sieve__order_tie_run(w->ranked + first, end - first, choice == SIEVE_TOPK_TIES_UNSPECIFIED);
    /* The survivors go on in token order: the next cut makes its own tie choice. */
    sieve__rank(w->ranked + first, keep - first);
  }
  return keep;
}

/* Step 3: how many of the first n ranks top-p keeps, measuring mass as a share of `total`
 * (1 on the full distribution), and the margin of its closest decision. */
static size_t top_p_keep(const filter_work *w, size_t n, double top_p, double total,
                         double *margin) {
  double mass_before = w->ranked[0].key;
  for (size_t r = 1; r < n; r++) {
    double share = mass_before / total;
    *margin = fmin(*margin, fabs(share - top_p));
    if (share > top_p ||
        (share == top_p && SIEVE__AXIS(w->rule, BOUNDARY, boundary) == SIEVE_BOUNDARY_GE))
      return r;
    mass_before += w->ranked[r].key;
  }
  return n;
}

static int by_id(const void *a, const void *b) {
  const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return (x > y) - (x < y);
}

/* The float32 softmax total over the first n ranks' tokens, each exp(s - max) in float64 and
 * rounded, added in token order in eight lanes (as a float32 sum vectorized eight wide, torch's
 * on AVX2, adds them) and the lanes combined pairwise. NaN when out of memory. */
static float lane_total(const filter_work *w, size_t n) {
  uint32_t *ids = malloc(n * sizeof *ids);
  float lane[8] = {0};
  for (size_t r = 0; ids && r < n; r++)
    ids[r] = w->ranked[r].id;
  if (!ids)
    return NAN;
  qsort(ids, n, sizeof *ids, by_id);
  for (size_t i = 0; i < n; i++)
    lane[i % 8] += (float)exp(w->scaled[ids[i]] - (float)w->max);
  free(ids);
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

/* How many of the first n ranks a float32 top-p at top_p = 1 keeps: a rank goes once the
 * cumulative sum (float64, rounded to float32 at each rank) minus its own probability is > 1 in
 * float32. Where the tail's terms are below the total's last bit the total loses some of them,
 * every probability comes out a little large, and the sum passes 1 before the end; how many
 * tokens go depends on the order the total was added in (oracle/SPEC.md, "top_p = 1"). */
static size_t float32_tail_keep(const filter_work *w, size_t n) {
  const float total = lane_total(w, n);
  double running = 0.0;
  for (size_t r = 0; !isnan(total) && r < n; r++) {
    const float p = (float)exp(w->scaled[w->ranked[r].id] - (float)w->max) / total;
    running += p;
    if (r > 0 && (float)running - p > 1.0f)
      return r;
  }
  return n;
}

static size_t top_p_cut(filter_work *w, size_t n, const sieve_params *p, double total,
                        double *margin) {
  *margin = INFINITY;
  if (SIEVE__AXIS(w->rule, TOPP_SCOPE, topp_scope) == SIEVE_TOPP_SCOPE_IGNORED)
    return n;
  if (p->top_p >= 1.0) /* the float32 tail may fall in a run of ties too (zero logits) */
    return SIEVE__AXIS(w->rule, TOPP_ONE, topp_one) == SIEVE_TOPP_ONE_FLOAT32_TAIL
               ? cut_ties(w, float32_tail_keep(w, n), n, SIEVE_AXIS_TOPP_TIES)
               : n;
  return cut_ties(w, top_p_keep(w, n, p->top_p, total, margin), n, SIEVE_AXIS_TOPP_TIES);
}

/* Step 4: top-k on the first `kept` ranks. */
static size_t top_k_keep(filter_work *w, size_t kept, int64_t top_k) {
  if (top_k == -1 || (uint64_t)top_k >= kept)
    return kept;
  return cut_ties(w, (size_t)top_k, kept, SIEVE_AXIS_TOPK_TIES);
}

/* The mass of the first n ranks, summed in rank order. */
static double mass_of(const filter_work *w, size_t n) {
  double mass = 0.0;
  for (size_t r = 0; r < n; r++)
    mass += w->ranked[r].key;
  return mass;
}

/* Steps 3 and 4 in the rule's order on the first n ranks, top-p measuring mass as a share of
 * `total`: DeepInfer cuts one order on the full distribution (n all ranks, total 1). With
 * top_p = 1 and top-k off no rule removes a token (the float32 tail needs a top-k). */
static size_t cuts_keep(filter_work *w, const sieve_params *p, size_t n, double total,
                        double *margin) {
  *margin = INFINITY;
  if (p->top_p >= 1.0 && p->top_k == -1)
    return n;
  if (SIEVE__AXIS(w->rule, TOPP_SCOPE, topp_scope) != SIEVE_TOPP_SCOPE_AFTER_TOPK)
    return top_k_keep(w, top_p_cut(w, n, p, total, margin), p->top_k);
  size_t k = top_k_keep(w, n, p->top_k);
  return top_p_cut(w, k, p, mass_of(w, k), margin);
}

/* The p min-p compares at rank r: the filters' own, or under min_p_scale = unscaled the p at
 * T = 1. */
static double min_p_key(const filter_work *w, size_t r) {
  return w->unscaled ? w->unscaled[w->ranked[r].id] : w->ranked[r].key;
}

/* Whether min-p removes a p against its bar; p = bar stays (ours) unless the rule removes it. */
static int min_p_removes(const filter_work *w, double key, double bar) {
  if (key != bar)
    return key < bar;
  return SIEVE__AXIS(w->rule, MIN_P_BOUNDARY, min_p_boundary) == SIEVE_MIN_P_BOUNDARY_REMOVE_EQUAL;
}

/* Min-p on the first n ranks: the ranks down to the first whose p is below min_p times the
 * largest, and the margin of the closest decision as a share of the largest p. The first rank
 * always stays, and so do its equals (min_p <= 1); a run of ties stays or goes whole. Cut last,
 * it gives the same set on the kept ranks renormalized: the ratios to the largest are the same. */
static size_t min_p_keep(const filter_work *w, size_t n, double min_p, double *margin) {
  *margin = INFINITY;
  if (min_p == 0.0)
    return n;
  double largest = 0.0; /* the first rank's p, or the largest at T = 1 */
  for (size_t r = 0; r < w->n_ranked; r++)
    largest = fmax(largest, min_p_key(w, r));
  const double bar = min_p * largest;
  size_t kept = 1;
  while (kept < n && !min_p_removes(w, min_p_key(w, kept), bar))
    kept++;
  *margin = fabs(min_p_key(w, kept - 1) - bar) / largest;
  if (kept < n)
    *margin = fmin(*margin, fabs(min_p_key(w, kept) - bar) / largest);
  return kept;
}

/* Steps 3 and 4 and min-p: the smallest of their sets (ours), or under min_p_order = first
 * min-p on every rank, then the cuts on what it keeps, top-p measuring the mass renormalized
 * over it. margins[0] is top-p's, margins[1] min-p's. */
static size_t filters_keep(filter_work *w, const sieve_params *p, double margins[2]) {
  if (p->min_p > 0.0 && p->top_p < 1.0) {
    const size_t m = min_p_keep(w, w->n_ranked, p->min_p, &margins[1]);
    if (m < w->n_ranked &&
        SIEVE__AXIS(w->rule, MIN_P_ORDER, min_p_order) == SIEVE_MIN_P_ORDER_FIRST)
      return cuts_keep(w, p, m, mass_of(w, m), &margins[0]);
  }
  return min_p_keep(w, cuts_keep(w, p, w->n_ranked, 1.0, &margins[0]), p->min_p, &margins[1]);
}

/* Under min_p_scale = unscaled, where temperature scales the filters' row: the p of each token
 * at T = 1, from the row before scaling (the softmax's exps and lane sums, as step 1's). */
static int keep_unscaled(filter_work *w, size_t vocab, const sieve_params *p, int after) {
  if (p->min_p == 0.0 || after || p->temperature == 1.0 ||
      SIEVE__AXIS(w->rule, MIN_P_SCALE, min_p_scale) != SIEVE_MIN_P_SCALE_UNSCALED)
    return 0;
  double max;
  int rc = sieve__scaled_max(w->scaled, vocab, 1.0f, &max, NULL);
  if (rc == 0 && !(w->unscaled = malloc(vocab * sizeof *w->unscaled)))
    rc = SIEVE_ENOMEM;
  if (rc != 0)
    return rc;
  const double total = sieve__exp_sum(w->scaled, vocab, 1.0f, max, w->unscaled);
  for (size_t i = 0; i < vocab; i++)
    w->unscaled[i] /= total;
  return 0;
}

/* Step 5: log_softmax over the kept set, the first `kept` ranks. Shared with the fast path. */
SIEVE__ROW_LOOP
void sieve__log_softmax_marked(const float *restrict row, float mul, double max, double log_total,
                               size_t vocab, double *restrict logprobs) {
  for (size_t i = 0; i < vocab; i++) {
    const double kept = ((double)sieve__scaled(row[i], mul) - max) - log_total;
    logprobs[i] = logprobs[i] != 0.0 ? kept : -INFINITY;
  }
}

static void log_softmax_kept(const filter_work *w, size_t kept, size_t vocab, double *logprobs) {
  for (size_t i = 0; i < vocab; i++)
    logprobs[i] = 0.0;
  for (size_t r = 0; r < kept; r++)
    logprobs[w->ranked[r].id] = 1.0;
  const double log_total = log(sieve__sum_marked(w->expd, logprobs, 1.0, vocab));
  sieve__log_softmax_marked(w->scaled, 1.0f, w->max, log_total, vocab, logprobs);
}

/* The kept tokens' probabilities as ranked, summed in token lanes; expd is free by now. */
static void describe(filter_work *w, size_t kept, size_t vocab, const double margins[2],
                     sieve_filter_info *info) {
  info->kept = kept;
  info->topp_margin = margins[0];
  info->minp_margin = margins[1];
  info->cut_gap = kept < w->n_ranked ? w->ranked[kept - 1].key - w->ranked[kept].key : INFINITY;
  for (size_t i = 0; i < vocab; i++)
    w->expd[i] = 0.0;
  for (size_t r = 0; r < kept; r++)
    w->expd[w->ranked[r].id] = w->ranked[r].key;
  info->kept_mass = sieve__sum(w->expd, vocab);
}

/* Another engine may rank at T = 1 (temperature after the filters, or greedy); the kept set
 * is then scaled by T here, before its log-softmax. */
static int rescale(filter_work *w, size_t vocab, double temperature) {
  int rc = scale(w->rule, w->scaled, vocab, temperature, &w->max);
  if (rc == 0)
    sieve__exp_sum(w->scaled, vocab, 1.0f, w->max, w->expd);
  return rc;
}

static int filter_row(filter_work *w, const float *logits, size_t vocab, const sieve_params *p,
                      const sieve_engine *engine, double *logprobs, sieve_filter_info *info) {
  int greedy = p->temperature == 0.0; /* only under SIEVE_T0_ARGMAX */
  /* At T = 1 scaling changes nothing, so where it happens cannot matter. */
  int after = greedy ||
              (p->temperature != 1.0 &&
               SIEVE__AXIS(w->rule, TEMPERATURE_AT, temperature_at) == SIEVE_TEMPERATURE_AT_AFTER);
  memcpy(w->scaled, logits, vocab * sizeof *logits);
  int rc = sieve__apply_engine(engine, w->scaled, vocab);
  if (rc == 0)
    rc = sieve__apply_penalties(w->rule, p->penalties, w->scaled, vocab);
  if (rc == 0)
    rc = keep_unscaled(w, vocab, p, after);
  if (rc == 0)
    rc = scale(w->rule, w->scaled, vocab, after ? 1.0 : p->temperature, &w->max);
  if (rc != 0)
    return rc;
  softmax_and_rank(w, vocab, p, greedy);
  double margins[2] = {INFINITY, INFINITY}; /* top-p's, min-p's */
  size_t kept = 1;
  if (!greedy)
    kept = filters_keep(w, p, margins);
  if (after && !greedy && (rc = rescale(w, vocab, p->temperature)) != 0)
    return rc;
  log_softmax_kept(w, kept, vocab, logprobs);
  if (info)
    describe(w, kept, vocab, margins, info);
  return 0;
}

int sieve_filter(const float *logits, size_t vocab, const sieve_params *params,
                 const sieve_engine *engine, double *logprobs, sieve_filter_info *info) {
  return sieve_filter_rule(NULL, logits, vocab, params, engine, logprobs, info);
}

/* DeepInfer's rule, whose fast path reads no axis: under a traced rule it records the axes the
 * spec path would have read (filter_fast.c). */
static int is_deepinfer(const sieve_rule *r) {
  for (int a = 0; r && a < SIEVE_AXIS_COUNT; a++)
    if (sieve_rule_get(r, a) != 0)
      return 0;
  return 1;
}

/* The spec path: the steps above, with a full stable sort. */
static int filter_spec(const sieve_rule *rule, const float *logits, size_t vocab,
                       const sieve_params *p, const sieve_engine *engine, double *logprobs,
                       sieve_filter_info *info) {
  static const sieve_rule deepinfer = SIEVE_RULE_DEEPINFER;
  int rc;
  filter_work w = {.rule = rule ? rule : &deepinfer};
  w.scaled = malloc(vocab * sizeof *w.scaled);
  w.expd = malloc(vocab * sizeof *w.expd);
  w.ranked = malloc(vocab * sizeof *w.ranked);
  rc = SIEVE_ENOMEM;
  if (!w.scaled || !w.expd || !w.ranked)
    goto fail;
  rc = filter_row(&w, logits, vocab, p, engine, logprobs, info);
fail:
  free(w.scaled);
  free(w.expd);
  free(w.ranked);
  free(w.unscaled);
  return rc;
}

/* Checks, then the fast path (filter_fast.c) for DeepInfer's rule without force_topk, penalties
 * or min-p, which gives the spec path's results without sorting the row; the spec path
 * otherwise. */
static int filter_checked(const sieve_rule *rule, int spec, const float *logits, size_t vocab,
                          const sieve_params *params, const sieve_engine *engine, double *logprobs,
                          sieve_filter_info *info) {
  if (!logits || !params || !logprobs)
    return SIEVE_EARG;
  sieve_params p;
  int rc = sieve_params_check_rule(rule, params, &p);
  if (rc == 0)
    rc = sieve__check_logits(logits, vocab);
  if (rc == 0)
    rc = sieve__check_top_k_vocab(rule, &p, vocab);
  if (rc != 0)
    return rc;
  if (!spec && is_deepinfer(rule) && (!engine || engine->force_topk == 0) && !p.penalties &&
      p.min_p == 0.0)
    return sieve__filter_fast(logits, vocab, &p, engine, logprobs, info,
                              rule ? rule->consulted : NULL, SIEVE__FAST_SLACK);
  return filter_spec(rule, logits, vocab, &p, engine, logprobs, info);
}

int sieve_filter_rule(const sieve_rule *rule, const float *logits, size_t vocab,
                      const sieve_params *params, const sieve_engine *engine, double *logprobs,
                      sieve_filter_info *info) {
  return filter_checked(rule, 0, logits, vocab, params, engine, logprobs, info);
}

int sieve_filter_spec(const float *logits, size_t vocab, const sieve_params *params,
                      const sieve_engine *engine, double *logprobs, sieve_filter_info *info) {
  return filter_checked(NULL, 1, logits, vocab, params, engine, logprobs, info);
}
