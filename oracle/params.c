/*
 * Parameters (seed 000:9, 000:11, 000:32, 000:63; sampling_params.py:47-99).
 *
 * Rule: check temperature (NaN, infinite or < 0 is an error), then top_p
 * (NaN or outside (0, 1]), then top_k (neither -1 nor in [1, 2^31-1]), each
 * with its own code. Only then normalize: a temperature below 1e-5 becomes
 * 1e-5 and resets top_p to 1 and top_k to -1. Because the checks come first,
 * temperature 0 with top_k 0 is an error for top_k (seed 000:63).
 * Invariant: normalizing a normalized set changes nothing.
 * Other engines' choices (a sieve_rule) change only what the rule's axes say.
 */
#include <math.h>

#include "internal.h"

static int check_temperature(double t) {
  return (isnan(t) || isinf(t) || t < 0.0) ? SIEVE_ETEMPERATURE : 0;
}

static int check_top_p(double p) {
  return (isnan(p) || !(p > 0.0) || p > 1.0) ? SIEVE_ETOPP : 0;
}

static int check_top_k(int64_t k) {
  return (k == -1 || (k >= 1 && k <= SIEVE_TOP_K_MAX)) ? 0 : SIEVE_ETOPK;
}

/* Another engine's rule (oracle/ENGINES.md): top_k = 0 may mean off, and a temperature
 * below 1e-5 may mean greedy (T = 0 with top_k = 1) or T = 1 with top_k = 1. */
static void normalize_other(const sieve_rule *rule, sieve_params *p) {
  if (rule->t0 == SIEVE_T0_ARGMAX)
    *p = (sieve_params){0.0, 1.0, 1};
  else if (rule->t0 == SIEVE_T0_TOPK1)
    *p = (sieve_params){1.0, p->top_p, 1};
}

int sieve__check_rule(const sieve_rule *r) {
  int ok = (unsigned)r->topp_scope <= SIEVE_TOPP_AFTER_TOPK &&
           (unsigned)r->boundary <= SIEVE_BOUNDARY_GE &&
           (unsigned)r->topk_ties <= SIEVE_TIES_KEEP_ALL &&
           (unsigned)r->temperature_at <= SIEVE_TEMP_AFTER && (unsigned)r->t0 <= SIEVE_T0_TOPK1 &&
           (unsigned)r->top_k_zero <= SIEVE_K0_OFF && (unsigned)r->logprobs <= SIEVE_LP_RAW &&
           (unsigned)r->draw <= SIEVE_DRAW_OWN;
  return ok ? 0 : SIEVE_ERULE;
}

int sieve_params_check_rule(const sieve_rule *rule, const sieve_params *in, sieve_params *out) {
  static const sieve_rule deepinfer = SIEVE_RULE_DEEPINFER;
  rule = rule ? rule : &deepinfer;
  if (!in || !out)
    return SIEVE_EARG;
  int rc = sieve__check_rule(rule);
  if (rc != 0)
    return rc;
  sieve_params p = *in;
  if (rule->top_k_zero == SIEVE_K0_OFF && p.top_k == 0)
    p.top_k = -1;
  rc = check_temperature(p.temperature);
  if (rc == 0)
    rc = check_top_p(p.top_p);
  if (rc == 0)
    rc = check_top_k(p.top_k);
  if (rc != 0)
    return rc;
  if (p.temperature < SIEVE_SAMPLING_EPS && rule->t0 == SIEVE_T0_CLAMP) {
    p.temperature = SIEVE_SAMPLING_EPS;
    p.top_p = 1.0;
    p.top_k = -1;
  } else if (p.temperature < SIEVE_SAMPLING_EPS) {
    normalize_other(rule, &p);
  }
  *out = p;
  return 0;
}

int sieve_params_check(const sieve_params *in, sieve_params *out) {
  return sieve_params_check_rule(NULL, in, out);
}
