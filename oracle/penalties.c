/*
 * Penalties: step 1 of seed 004's standard pipeline (004:255-287: penalties, temperature,
 * top-k, top-p, softmax, the draw), after the engine options, which come before every other
 * step (000:67).
 *
 * Rule (ours: seed 004 says only that frequency_penalty and presence_penalty add to or
 * subtract from the logits directly, 004:199 and 004:264): a token counted c > 0 times among
 * the last last_n output tokens (all of them when last_n is -1, none when it is 0) gets
 *   l' = (float)(l - (c * frequency + presence)), in float64 and rounded to float32 once;
 *   then (float)(l' / repetition) when l' >= 0, (float)(l' * repetition) when l' < 0.
 * SGLang's order, additive penalties then the scaling one (sampling_batch_info.py,
 * _apply_pre_grammar_logits_transforms; penaltylib/repetition_penalty.py,
 * apply_scaling_penalties; at 15a4398). A token not counted keeps its logit; -inf stays -inf.
 * The prompt's tokens are not counted. An output id outside [0, V) is SIEVE_EOUTPUTTOKEN, then
 * a prompt id outside it SIEVE_EPROMPTTOKEN, counted or not; a finite logit whose penalized value
 * is not finite in float32 is SIEVE_EOVERFLOW.
 * Other engines' rules (ENGINES.md): the repetition penalty first, then the additive ones, each
 * step rounded to float32 (penalty_order); the prompt's tokens counted by the repetition penalty
 * or by every penalty, the window then being the last last_n of the prompt and the output
 * (penalty_tokens); a penalized logit below float32's range left -inf, its token removed, as
 * float32 arithmetic leaves it (penalty_overflow).
 */
#include <math.h>
#include <stdlib.h>

#include "internal.h"

static int by_token(const void *a, const void *b) {
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static int any_outside(const int64_t *ids, size_t n, size_t vocab) {
  for (size_t i = 0; i < n; i++)
    if (ids[i] < 0 || (uint64_t)ids[i] >= vocab)
      return 1;
  return 0;
}

/* How many of the last of `total` tokens the window counts. */
static size_t window(const sieve_penalties *pen, size_t total) {
  if (pen->last_n < 0 || (uint64_t)pen->last_n > total)
    return total;
  return (size_t)pen->last_n;
}

/* The ids a penalty counts, sorted: the window's share of the output, after the prompt's when
 * `with_prompt`. *ids is NULL when there are none. */
static int gather(const sieve_penalties *pen, int with_prompt, int64_t **ids, size_t *n) {
  const size_t prompt = with_prompt ? pen->n_prompt : 0;
  *n = window(pen, prompt + pen->n_output);
  *ids = NULL;
  if (*n == 0)
    return 0;
  if (!(*ids = malloc(*n * sizeof **ids)))
    return SIEVE_ENOMEM;
  const size_t from_output = *n < pen->n_output ? *n : pen->n_output;
  const size_t from_prompt = *n - from_output;
  for (size_t i = 0; i < from_prompt; i++) /* pen->prompt may be NULL when none is counted */
    (*ids)[i] = pen->prompt[prompt - from_prompt + i];
  for (size_t i = 0; i < from_output; i++)
    (*ids)[from_prompt + i] = pen->output[pen->n_output - from_output + i];
  qsort(*ids, *n, sizeof **ids, by_token);
  return 0;
}

/* How many times `id` starts ids[*at..n), which moves past them. */
static size_t take(const int64_t *ids, size_t n, size_t *at, int64_t id) {
  const size_t from = *at;
  while (*at < n && ids[*at] == id)
    (*at)++;
  return *at - from;
}

static double repeated(const sieve_penalties *pen, double logit) {
  return sieve__to_float32(logit < 0.0 ? logit * pen->repetition : logit / pen->repetition);
}

/* One token's logit, counted `count` times by the additive penalties and `repeats` by the
 * repetition penalty. */
static int penalize(const sieve_rule *rule, const sieve_penalties *pen, float *row, int64_t id,
                    size_t count, size_t repeats) {
  if (row[id] == -INFINITY)
    return 0;
  const double additive = count ? (double)count * pen->frequency + pen->presence : 0.0;
  const int scales = repeats && pen->repetition != 1.0;
  double logit = row[id];
  if (scales && additive != 0.0 &&
      SIEVE__AXIS(rule, PENALTY_ORDER, penalty_order) == SIEVE_PENALTY_ORDER_REPETITION_FIRST)
    logit = sieve__to_float32(repeated(pen, logit) - additive);
  else {
    logit = sieve__to_float32(logit - additive);
    logit = scales ? repeated(pen, logit) : logit;
  }
  row[id] = (float)logit;
  if (isfinite(row[id]))
    return 0;
  return row[id] == -INFINITY && SIEVE__AXIS(rule, PENALTY_OVERFLOW, penalty_overflow) ==
                                     SIEVE_PENALTY_OVERFLOW_MINUS_INF
             ? 0
             : SIEVE_EOVERFLOW;
}

/* The penalties of the tokens in a (counted by the additive penalties) or r (by the repetition
 * one), both sorted, in token order. */
static int penalize_all(const sieve_rule *rule, const sieve_penalties *pen, float *row,
                        const int64_t *a, size_t na, const int64_t *r, size_t nr) {
  int rc = 0;
  for (size_t i = 0, j = 0; rc == 0 && (i < na || j < nr);) {
    const int64_t id = j == nr || (i < na && a[i] <= r[j]) ? a[i] : r[j];
    const size_t count = take(a, na, &i, id);
    rc = penalize(rule, pen, row, id, count, take(r, nr, &j, id));
  }
  return rc;
}

int sieve__apply_penalties(const sieve_rule *rule, const sieve_penalties *pen, float *row,
                           size_t vocab) {
  if (!pen)
    return 0;
  int rc = any_outside(pen->output, pen->n_output, vocab) ? SIEVE_EOUTPUTTOKEN : 0;
  if (rc == 0 && any_outside(pen->prompt, pen->n_prompt, vocab))
    rc = SIEVE_EPROMPTTOKEN;
  if (rc != 0)
    return rc;
  const int tokens = pen->n_prompt ? SIEVE__AXIS(rule, PENALTY_TOKENS, penalty_tokens)
                                   : SIEVE_PENALTY_TOKENS_OUTPUT;
  int64_t *a = NULL, *r = NULL;
  size_t na, nr;
  rc = gather(pen, tokens == SIEVE_PENALTY_TOKENS_PROMPT, &a, &na);
  if (rc == 0 && tokens == SIEVE_PENALTY_TOKENS_REPETITION_PROMPT)
    rc = gather(pen, 1, &r, &nr);
  if (rc == 0)
    rc = penalize_all(rule, pen, row, a, na, r ? r : a, r ? nr : na);
  free(a);
  free(r);
  return rc;
}
