/*
 * Sample, and the batch entry points (seed 000:34, 000:70-74).
 *
 * Rule: filter the row; probs = exp(processed logprobs); u from the key;
 * draw. The returned logprob is the processed logprob of the drawn token
 * (ln 0.378 = -0.973 for "floor" in seed 000:72, not the raw ln 0.264), and
 * top_logprobs come from the same processed row.
 * Invariant (batch invariance by construction): a batch entry point runs
 * each row on its own, so a row's result does not depend on the batch size
 * or on the other rows (seed 000:34, random_sampling.py:17-20).
 */
#include <math.h>
#include <stdlib.h>

#include "internal.h"

/* The logprobs a rule returns: processed (the spec), after the penalties and temperature only,
 * or raw. */
static int reported_logprobs(const sieve_rule *rule, const float *logits, size_t vocab,
                             const sieve_params *params, const sieve_engine *engine, double *out) {
  const int raw = SIEVE__AXIS(rule, LOGPROBS, logprobs) == SIEVE_LOGPROBS_RAW;
  const sieve_params p = {raw ? 1.0 : params->temperature, 1.0, -1, 0.0,
                          raw ? NULL : params->penalties};
  /* The parameters are the rule's, already checked: only T = 0 (greedy) takes a clamp again. */
  static const sieve_rule plain = {.t0_below = SIEVE_T0_BELOW_ZERO};
  return sieve_filter_rule(&plain, logits, vocab, &p, engine, out, NULL);
}

static int sample_row(const sieve_rule *rule, const double *logprobs, const double *reported,
                      size_t vocab, const sieve_draw_key *key, size_t n_top, sieve_top_entry *top,
                      sieve_sample_result *result) {
  int rc = sieve__rule_uniform(rule, key, &result->u);
  if (rc == 0)
    rc = sieve__draw_logprobs(logprobs, vocab, result->u, &result->token, &result->draw_margin);
  if (rc == 0)
    rc = sieve_top_logprobs(reported, vocab, n_top, top);
  if (rc == 0)
    result->logprob = reported[result->token];
  return rc;
}

int sieve_sample(const float *logits, size_t vocab, const sieve_params *params,
                 const sieve_engine *engine, const sieve_draw_key *key, size_t n_top,
                 sieve_top_entry *top, sieve_sample_result *result) {
  return sieve_sample_rule(NULL, logits, vocab, params, engine, key, n_top, top, result);
}

int sieve_sample_rule(const sieve_rule *rule, const float *logits, size_t vocab,
                      const sieve_params *params, const sieve_engine *engine,
                      const sieve_draw_key *key, size_t n_top, sieve_top_entry *top,
                      sieve_sample_result *result) {
  static const sieve_rule deepinfer = SIEVE_RULE_DEEPINFER;
  rule = rule ? rule : &deepinfer;
  if (!logits || !params || !key || !result || (n_top > 0 && !top))
    return SIEVE_EARG;
  sieve_params checked;
  int rc = sieve_params_check_rule(rule, params, &checked);
  if (rc == 0 && (vocab == 0 || vocab > SIEVE_VOCAB_MAX))
    rc = SIEVE_EVOCAB;
  if (rc != 0)
    return rc;
  sieve_sample_result r = {0};
  double *logprobs = malloc(vocab * sizeof *logprobs);
  double *reported = SIEVE__AXIS(rule, LOGPROBS, logprobs) == SIEVE_LOGPROBS_PROCESSED
                         ? logprobs
                         : malloc(vocab * sizeof *reported);
  rc = SIEVE_ENOMEM;
  if (!logprobs || !reported)
    goto fail;
  rc = sieve_filter_rule(rule, logits, vocab, params, engine, logprobs, &r.filter);
  if (rc == 0 && n_top > vocab)
    rc = SIEVE_ETOPLOGPROBS;
  if (rc == 0 && reported != logprobs)
    rc = reported_logprobs(rule, logits, vocab, &checked, engine, reported);
  if (rc == 0)
    rc = sample_row(rule, logprobs, reported, vocab, key, n_top, top, &r);
  if (rc == 0)
    *result = r;
fail:
  if (reported != logprobs)
    free(reported);
  free(logprobs);
  return rc;
}

int sieve_filter_batch(const sieve_filter_row *rows, size_t n, const sieve_engine *engine,
                       sieve_filter_info *infos, int *status) {
  if (n > 0 && (!rows || !status))
    return SIEVE_EARG;
  for (size_t i = 0; i < n; i++)
    status[i] = sieve_filter(rows[i].logits, rows[i].vocab, &rows[i].params, engine,
                             rows[i].logprobs, infos ? &infos[i] : NULL);
  return 0;
}

int sieve_sample_batch(const sieve_sample_row *rows, size_t n, const sieve_engine *engine,
                       sieve_sample_result *results, int *status) {
  if (n > 0 && (!rows || !results || !status))
    return SIEVE_EARG;
  for (size_t i = 0; i < n; i++)
    status[i] = sieve_sample(rows[i].logits, rows[i].vocab, &rows[i].params, engine, &rows[i].key,
                             rows[i].n_top, rows[i].top, &results[i]);
  return 0;
}
