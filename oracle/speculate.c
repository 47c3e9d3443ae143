/*
 * Speculative verification: the accept test of a draft token (case 2) and the new sample after
 * a rejection (case 1) (seed 000:52; fused_sample.py:239, 245), with the draft's own tokens
 * drawn under the tag mtp (seed 000:59; dflash.py:329).
 *
 * Rule: p_j and q_j are the processed distributions (exp of the filter's logprobs) of the
 * target's and the draft's row j. Draft token x_j, at position t + j, takes
 * u_j = uniform(seed, t + j, case 2, tag main) and is accepted when u_j * q_j(x_j) < p_j(x_j):
 * the test u < min(1, p/q) of Leviathan et al. and Chen et al. (2023), without the division,
 * so q = 0 accepts every token the target can produce and p = 0 always rejects. At the first
 * rejection the replacement is drawn from the residual r = max(p_j - q_j, 0) (float64, token by
 * token) by the inverse CDF of draw.c with uniform(seed, t + j, case 1, main), and the chain
 * stops. When every draft passes, the bonus token is the normal sample of target row n_draft:
 * case 0, tag main, at t + n_draft. A greedy draft (no draft row) has q_j one-hot at x_j. The
 * seed names the cases and the tag, not which step takes which or the comparison: these are
 * our reading (SPEC.md, "Speculative decoding").
 * Variants (the rule's spec_* axes, ENGINES.md): an inclusive test, q = 0 rejected, q read
 * without the draft's filters, an empty residual drawn as token 0 or the last token; under
 * draw = own every uniform of the chain is the own generator's.
 * Tie-break: u * q == p rejects (the test is strict).
 * Invariants: at most n_draft + 1 tokens are committed; a rejected token is never its own
 * replacement (p(x) <= u q(x) < q(x) gives r(x) = 0); a residual whose total is 0 (p <= q on
 * every token, equal up to rounding) is drawn as p_j itself. Every row is filtered and checked
 * before the chain runs, so an error does not depend on where the chain stops.
 */
#include <math.h>
#include <stdlib.h>

#include "internal.h"

typedef struct chain {
  const sieve_rule *rule;
  const sieve_speculation *spec;
  const sieve_engine *engine;
  double *p, *q; /* [vocab]: the processed probabilities at the current position */
} chain;

static const float *target_row(const sieve_speculation *s, size_t j) {
  return s->target_logits + j * s->vocab;
}

static const float *draft_row(const sieve_speculation *s, size_t j) {
  return s->draft_logits + j * s->vocab;
}

/* probs = exp of the row's processed logprobs (0 for a removed token). */
static int processed(const chain *c, const float *row, const sieve_params *params, double *probs) {
  int rc = sieve_filter_rule(c->rule, row, c->spec->vocab, params, c->engine, probs, NULL);
  for (size_t i = 0; rc == 0 && i < c->spec->vocab; i++)
    probs[i] = probs[i] == -INFINITY ? 0.0 : sieve__exp(probs[i]);
  return rc;
}

/* The chain's length, then the parameters (the target's, then the draft's), then the size. */
static int check_shape(const chain *c) {
  const sieve_speculation *s = c->spec;
  sieve_params checked;
  if (s->n_draft == 0 || s->n_draft > SIEVE_DRAFT_MAX)
    return SIEVE_EDRAFT;
  int rc = sieve_params_check_rule(c->rule, &s->target_params, &checked);
  if (rc == 0 && s->draft_logits)
    rc = sieve_params_check_rule(c->rule, &s->draft_params, &checked);
  if (rc == 0 && (s->vocab == 0 || s->vocab > SIEVE_VOCAB_MAX))
    rc = SIEVE_EVOCAB;
  return rc;
}

/* Every row's logits (the target's, then the draft's), then the draft tokens. */
static int check_rows(const chain *c) {
  const sieve_speculation *s = c->spec;
  int rc = 0;
  for (size_t j = 0; rc == 0 && j <= s->n_draft; j++)
    rc = sieve_filter_rule(c->rule, target_row(s, j), s->vocab, &s->target_params, c->engine, c->p,
                           NULL);
  for (size_t j = 0; rc == 0 && s->draft_logits && j < s->n_draft; j++)
    rc = sieve_filter_rule(c->rule, draft_row(s, j), s->vocab, &s->draft_params, c->engine, c->p,
                           NULL);
  for (size_t j = 0; rc == 0 && j < s->n_draft; j++)
    if (s->draft_tokens[j] < 0 || (uint64_t)s->draft_tokens[j] >= s->vocab)
      rc = SIEVE_EDRAFTTOKEN;
  return rc;
}

/* u * q < p; under the rule's variants, u <= p / q as engines divide (spec_accept le: +inf at
 * q = 0, NaN, so rejected, at p = q = 0), and q = 0 rejected (spec_q_zero reject). */
static int accepts(const sieve_rule *rule, double u, double q, double p) {
  if (q == 0.0 && SIEVE__AXIS(rule, SPEC_Q_ZERO, spec_q_zero) == SIEVE_SPEC_Q_ZERO_REJECT)
    return 0;
  if (SIEVE__AXIS(rule, SPEC_ACCEPT, spec_accept) == SIEVE_SPEC_ACCEPT_LE)
    return q == 0.0 ? p > 0.0 : u <= p / q;
  return u * q < p;
}

/* The accept test of draft token j, on p and q of its position. */
static int accept_test(const chain *c, size_t j, sieve_speculate_step *step) {
  const sieve_speculation *s = c->spec;
  size_t x = (size_t)s->draft_tokens[j];
  sieve_draw_key key = {s->seed, s->position + j, SIEVE_CASE_ACCEPT, SIEVE_TAG_MAIN};
  int rc = sieve__rule_uniform(c->rule, &key, &step->u);
  step->p = c->p[x];
  step->q = s->draft_logits ? c->q[x] : 1.0;
  step->ratio = step->p == 0.0 ? 0.0 : step->q == 0.0 ? INFINITY : step->p / step->q;
  step->margin =
      step->q == 0.0 || step->p == 0.0 ? INFINITY : fabs(step->u - step->ratio); /* exact */
  step->accepted = accepts(c->rule, step->u, step->q, step->p);
  return rc;
}

/* The replacement of rejected draft token j: a draw from max(p - q, 0), into c->q. */
static int resample(const chain *c, size_t j, sieve_speculate_result *result, int64_t *token) {
  const sieve_speculation *s = c->spec;
  size_t x = (size_t)s->draft_tokens[j];
  double mass = 0.0;
  for (size_t i = 0; i < s->vocab; i++) {
    double q = s->draft_logits ? c->q[i] : (double)(i == x);
    c->q[i] = fmax(c->p[i] - q, 0.0);
    mass += c->q[i]; /* the draw's own total: token order, float64 */
  }
  sieve_draw_key key = {s->seed, s->position + j, SIEVE_CASE_RESAMPLE, SIEVE_TAG_MAIN};
  int rc = sieve__rule_uniform(c->rule, &key, &result->u);
  result->residual_mass = mass;
  const int empty = rc == 0 && mass == 0.0
                        ? SIEVE__AXIS(c->rule, SPEC_EMPTY_RESIDUAL, spec_empty_residual)
                        : SIEVE_SPEC_EMPTY_RESIDUAL_TARGET;
  if (empty != SIEVE_SPEC_EMPTY_RESIDUAL_TARGET) {
    *token = empty == SIEVE_SPEC_EMPTY_RESIDUAL_FIRST_TOKEN ? 0 : (int64_t)s->vocab - 1;
    result->draw_margin = INFINITY; /* no arithmetic decided it */
  } else if (rc == 0)
    rc = sieve_draw(mass > 0.0 ? c->q : c->p, s->vocab, result->u, token, &result->draw_margin);
  return rc;
}

/* The bonus token after n_draft acceptances: the normal sample of target row n_draft. */
static int bonus(const chain *c, sieve_speculate_result *result, int64_t *token) {
  const sieve_speculation *s = c->spec;
  sieve_draw_key key = {s->seed, s->position + s->n_draft, SIEVE_CASE_SAMPLE, SIEVE_TAG_MAIN};
  int rc = sieve_filter_rule(c->rule, target_row(s, s->n_draft), s->vocab, &s->target_params,
                             c->engine, c->p, NULL);
  if (rc == 0)
    rc = sieve__rule_uniform(c->rule, &key, &result->u);
  if (rc == 0)
    rc = sieve__draw_logprobs(c->p, s->vocab, result->u, token, &result->draw_margin);
  result->residual_mass = NAN;
  result->bonus = 1;
  return rc;
}

/* The parameters q is read with: the draft's own, or under spec_q raw none (T = 1, no filters). */
static const sieve_params *draft_params(const chain *c) {
  static const sieve_params raw = {1.0, SIEVE_TOP_P_UNSET, SIEVE_TOP_K_UNSET, 0.0, NULL};
  return SIEVE__AXIS(c->rule, SPEC_Q, spec_q) == SIEVE_SPEC_Q_RAW ? &raw : &c->spec->draft_params;
}

static int run_chain(const chain *c, sieve_speculate_step *steps, int64_t *tokens,
                     sieve_speculate_result *result) {
  const sieve_speculation *s = c->spec;
  for (size_t j = 0; j < s->n_draft; j++) {
    int rc = processed(c, target_row(s, j), &s->target_params, c->p);
    if (rc == 0 && s->draft_logits)
      rc = processed(c, draft_row(s, j), draft_params(c), c->q);
    if (rc == 0)
      rc = accept_test(c, j, &steps[j]);
    result->accepted = j;
    result->n_tokens = result->n_steps = j + 1;
    if (rc != 0 || !steps[j].accepted)
      return rc != 0 ? rc : resample(c, j, result, &tokens[j]);
    tokens[j] = s->draft_tokens[j];
  }
  result->accepted = result->n_steps = s->n_draft;
  result->n_tokens = s->n_draft + 1;
  return bonus(c, result, &tokens[s->n_draft]);
}

int sieve_speculate(const sieve_speculation *spec, const sieve_engine *engine,
                    sieve_speculate_step *steps, int64_t *tokens, sieve_speculate_result *result) {
  return sieve_speculate_rule(NULL, spec, engine, steps, tokens, result);
}

int sieve_speculate_rule(const sieve_rule *rule, const sieve_speculation *spec,
                         const sieve_engine *engine, sieve_speculate_step *steps, int64_t *tokens,
                         sieve_speculate_result *result) {
  static const sieve_rule deepinfer = SIEVE_RULE_DEEPINFER;
  if (!spec || !spec->target_logits || !spec->draft_tokens || !steps || !tokens || !result)
    return SIEVE_EARG;
  chain c = {rule ? rule : &deepinfer, spec, engine, NULL, NULL};
  sieve_speculate_result r = {0};
  int rc = check_shape(&c);
  if (rc != 0)
    return rc;
  rc = SIEVE_ENOMEM;
  c.p = malloc(spec->vocab * sizeof *c.p);
  c.q = malloc(spec->vocab * sizeof *c.q);
  if (!c.p || !c.q)
    goto fail;
  rc = check_rows(&c);
  if (rc == 0)
    rc = run_chain(&c, steps, tokens, &r);
  if (rc == 0)
    *result = r;
fail:
  free(c.p);
  free(c.q);
  return rc;
}

int sieve_speculate_draft(const sieve_rule *rule, const sieve_speculation *spec,
                          const sieve_engine *engine, int64_t *tokens) {
  if (!spec || !spec->draft_logits || !tokens)
    return SIEVE_EARG;
  sieve_params checked;
  if (spec->n_draft == 0 || spec->n_draft > SIEVE_DRAFT_MAX)
    return SIEVE_EDRAFT;
  int rc = sieve_params_check_rule(rule, &spec->draft_params, &checked);
  if (rc == 0 && (spec->vocab == 0 || spec->vocab > SIEVE_VOCAB_MAX))
    rc = SIEVE_EVOCAB;
  if (rc != 0)
    return rc;
  double *logprobs = malloc(spec->vocab * sizeof *logprobs);
  rc = logprobs ? 0 : SIEVE_ENOMEM;
  for (size_t j = 0; rc == 0 && j < spec->n_draft; j++) {
    sieve_draw_key key = {spec->seed, spec->position + j, SIEVE_CASE_SAMPLE, SIEVE_TAG_MTP};
    double u;
    rc = sieve_filter_rule(rule, draft_row(spec, j), spec->vocab, &spec->draft_params, engine,
                           logprobs, NULL);
    if (rc == 0)
      rc = sieve__rule_uniform(rule, &key, &u);
    if (rc == 0)
      rc = sieve__draw_logprobs(logprobs, spec->vocab, u, &tokens[j], NULL);
  }
  free(logprobs);
  return rc;
}
