/*
 * Internal helpers shared by the spec stages. Not installed; the suites may
 * include it as the test-only view of the internals.
 */
#ifndef SIEVE_INTERNAL_H
#define SIEVE_INTERNAL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "sieve.h"

/* A token with the key it is ranked by: key descending, then id ascending. */
typedef struct sieve__ranked {
  double key;
  uint32_t id;
} sieve__ranked;

/* A rule's value on an axis, recorded in rule->consulted (sieve.h). The oracle reads every axis
 * through SIEVE__AXIS, and only where the value could change the answer. */
static inline int sieve__axis_read(const sieve_rule *rule, int axis, int value) {
  if (rule->consulted)
    *rule->consulted |= (uint32_t)1 << axis;
  return value;
}
#define SIEVE__AXIS(rule, AXIS, field) sieve__axis_read((rule), SIEVE_AXIS_##AXIS, (rule)->field)

/* x rounded to float32, to nearest: from FLT_MAX and half its ulp on, an infinity (a cast of a
 * double beyond FLT_MAX would be undefined). */
double sieve__to_float32(double x);

/* Under top_k_vocab=error, a checked top_k of the vocabulary size or more is SIEVE_ETOPK (after
 * the parameter and logit checks, where the sampler meets the row); 0 otherwise. */
int sieve__check_top_k_vocab(const sieve_rule *rule, const sieve_params *checked, size_t vocab);

/* Step 1 of seed 004 in place (penalties.c) under `rule`: the penalties of the counted tokens, after
 * the engine options; 0 or an error code. Nothing is done when pen is NULL. */
int sieve__apply_penalties(const sieve_rule *rule, const sieve_penalties *pen, float *row,
                           size_t vocab);

/* Sorts by key descending, ties by token id ascending: a total order, so the sort is stable. */
void sieve__rank(sieve__ranked *items, size_t n);
/* Reorders a run of equal keys for another engine's tie choice (sieve_rule): by token id
 * descending, or, when `scrambled`, by a hash of the id (the order of an unstable sort). */
void sieve__order_tie_run(sieve__ranked *run, size_t n, int scrambled);

/* Row loops are also compiled for AVX-512 and AVX2 and picked when the library loads. Each
 * version does the same IEEE-754 operations (no contraction), so all give the same bits. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) &&                             \
    !defined(__SANITIZE_ADDRESS__)
#define SIEVE__ROW_LOOP __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SIEVE__ROW_LOOP
#endif

/* Step 1 for one logit: logit * mul in float32, where mul = (float)(1/T). A -inf logit stays
 * -inf, also when mul is 0 (T above about 3e45), where the product would be NaN. */
static inline float sieve__scaled(float logit, float mul) {
  return logit == -INFINITY ? logit : logit * mul;
}

/* exp of float64, the oracle's own (softmax.c). */
double sieve__exp(double x);
/* Step 1's exps, out[i] = sieve__exp((double)scaled_i - max) (out may be NULL), and
 * their total, sieve__sum(out, vocab). */
double sieve__exp_sum(const float *restrict row, size_t vocab, float mul, double max,
                      double *restrict out);
/* out[i] = sieve__exp(x[i]). */
void sieve__exp_each(const double *restrict x, size_t n, double *restrict out);
/* Sums over a row (softmax.c): token i adds to lane i % SIEVE__LANES, in token order, and the
 * lanes are added pairwise. Every such sum in the oracle ends with sieve__add_lanes. */
#define SIEVE__LANES 8
static inline double sieve__add_lanes(const double acc[SIEVE__LANES]) {
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

/* The sum of a row in eight token lanes (softmax.c). */
double sieve__sum(const double *x, size_t n);
/* The same sum of x[i] / div over the tokens whose mark is not 0 (every token when mark is
 * NULL); the others add +0.0. */
double sieve__sum_marked(const double *x, const double *mark, double div, size_t n);
/* Whether T scales every float32 logit to the same value times the float32 1/T and divided by
 * the float32 T: T = 1, or a power of two, whose reciprocal is exact (or rounds to 0 or inf
 * exactly where T does). Only otherwise can the axis temperature_op matter. */
static inline int sieve__reciprocal_is_exact(double temperature) {
  int exponent;
  return fabs(frexp(temperature, &exponent)) == 0.5;
}

/* Whether how a rule scales by temperature (temperature_op) can change a row's answer: unless
 * 1/T is a power of two and every finite logit, its difference from the row's largest and both
 * scaled are exact in float32, when every way gives the same row up to a shift the softmax
 * removes (filter.c). */
int sieve__scaling_matters(const float *row, size_t vocab, double temperature);

/* The largest scaled logit over the finite logits, and how many are finite; SIEVE_EOVERFLOW
 * when a finite logit scales to inf, SIEVE_ENOFINITE when none is finite. */
int sieve__scaled_max(const float *row, size_t vocab, float mul, double *max, size_t *n_finite);

/* Step 5 of the filter (filter.c). logprobs[] comes in as the kept marks (1 kept, 0 removed)
 * and leaves as the log-softmax over the kept tokens, -inf elsewhere; the scaled logits are
 * sieve__scaled(row[i], mul), and log_total is the log of the kept tokens' exps summed in token
 * lanes. */
void sieve__log_softmax_marked(const float *restrict row, float mul, double max, double log_total,
                               size_t vocab, double *restrict logprobs);

/* A run of equal probabilities in the rank order: `count` finite tokens of probability p. */
typedef struct sieve__run {
  double p;
  size_t count;
} sieve__run;
#define SIEVE__RUNS_MAX 64

/* The finite tokens of a row ranked as runs of equal p = exp(scaled - max) / total, largest
 * first (runs.c); at most SIEVE__RUNS_MAX runs, and 0 when the row has more distinct logits. */
size_t sieve__runs(const float *row, size_t vocab, float mul, double max, double total,
                   sieve__run *runs);
/* Step 3 on runs (n_runs > 0): how many ranks top-p keeps and the margin of its closest
 * decision, the doubles of the spec's rank-by-rank sum (filter.c). */
size_t sieve__top_p_runs(const sieve__run *runs, size_t n_runs, double top_p, double *margin);

/* The fast path of the filter (filter_fast.c): DeepInfer's rule on normalized parameters.
 * `consulted` (may be NULL) gets the axes the spec path would read, or a superset. `slack` is the
 * share of the total by which the estimated mass of the first prefix tried must pass top_p
 * (SIEVE__FAST_SLACK); the answer never depends on it. A test passes a negative one, so that
 * first prefixes fall short and the steps that widen them run. */
#define SIEVE__FAST_SLACK 1e-9
int sieve__filter_fast(const float *logits, size_t vocab, const sieve_params *p,
                       const sieve_engine *engine, double *logprobs, sieve_filter_info *info,
                       uint32_t *consulted, double slack);

/* sieve_draw on exp(logprobs), without a probability array (draw.c). */
int sieve__draw_logprobs(const double *logprobs, size_t vocab, double u, int64_t *token,
                         double *margin);

/* The uniform a rule draws with: the hash's (sieve_uniform), or under draw = own a generator
 * that is not the hash (hash.c). */
int sieve__rule_uniform(const sieve_rule *rule, const sieve_draw_key *key, double *u);

/* SIEVE_ERULE when an axis of the rule is out of range. */
int sieve__check_rule(const sieve_rule *rule);

/* SIEVE_EVOCAB, SIEVE_ENAN or SIEVE_EPOSINF for a row that cannot be filtered; 0 otherwise. */
int sieve__check_logits(const float *logits, size_t vocab);

/* Applies the blacklist, then force_topk, to a copy of the row (seed 000:65-68). */
int sieve__apply_engine(const sieve_engine *engine, float *row, size_t vocab);

#endif /* SIEVE_INTERNAL_H */
