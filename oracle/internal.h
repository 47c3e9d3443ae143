/*
 * Internal helpers shared by the spec stages. Not installed; the suites may
 * include it as the test-only view of the internals.
 */
#ifndef SIEVE_INTERNAL_H
#define SIEVE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "sieve.h"

/* A token with the key it is ranked by: key descending, then id ascending. */
typedef struct sieve__ranked {
  double key;
  uint32_t id;
} sieve__ranked;

/* Sorts by key descending, ties by token id ascending: a total order, so the sort is stable. */
void sieve__rank(sieve__ranked *items, size_t n);
/* The same with ties by token id descending (an axis of other engines). */
void sieve__rank_ties_desc(sieve__ranked *items, size_t n);

/* Step 1 in place: logits times (float)(1/T); the largest result in *max (filter.c). */
int sieve__scale(float *row, size_t vocab, double temperature, double *max);

/* Step 5 of the filter: log-softmax over the first `kept` ranks, -inf elsewhere (filter.c). */
void sieve__log_softmax_kept(const sieve__ranked *ranked, size_t kept, const float *scaled,
                             const double *expd, double max, size_t vocab, double *logprobs);

/* The full-softmax mass of the kept tokens (the first n of a rank order), summed in token
 * order, so that both paths of the filter get the same value. */
int sieve__kept_mass(const sieve__ranked *kept, size_t n, double *mass);

/* The fast path of the filter (filter_fast.c): DeepInfer's rule on normalized parameters. */
int sieve__filter_fast(const float *logits, size_t vocab, const sieve_params *p,
                       const sieve_engine *engine, double *logprobs, sieve_filter_info *info);

/* sieve_draw on exp(logprobs), without a probability array (draw.c). */
int sieve__draw_logprobs(const double *logprobs, size_t vocab, double u, int64_t *token,
                         double *margin);

/* SIEVE_ERULE when an axis of the rule is out of range. */
int sieve__check_rule(const sieve_rule *rule);

/* SIEVE_EVOCAB, SIEVE_ENAN or SIEVE_EPOSINF for a row that cannot be filtered; 0 otherwise. */
int sieve__check_logits(const float *logits, size_t vocab);

/* Applies the blacklist, then force_topk, to a copy of the row (seed 000:65-68). */
int sieve__apply_engine(const sieve_engine *engine, float *row, size_t vocab);

#endif /* SIEVE_INTERNAL_H */
