/*
 * Parameters (seed 000:9, 000:11, 000:32, 000:63; sampling_params.py:47-99).
 *
 * Rule: check temperature (NaN, infinite or < 0 is an error), then top_p
 * (NaN or outside (0, 1]), then top_k (neither -1 nor in [1, 2^31-1]), each
 * with its own code. Only then normalize: a temperature below 1e-5 becomes
 * 1e-5 and resets top_p to 1 and top_k to -1. Because the checks come first,
 * temperature 0 with top_k 0 is an error for top_k (seed 000:63).
 * Ours (seed 000 has neither; seed 004:20-21 names the penalties): then min_p
 * (NaN or outside [0, 1]), frequency_penalty and presence_penalty (NaN or outside
 * [-2, 2]), repetition_penalty (NaN or outside (0, 2]) and penalty_last_n (below
 * -1), SGLang's ranges (sampling_params.py:158-177 at 15a4398), each with its own
 * code; the temperature-0 rule leaves them as they are.
 * A top_k left out (SIEVE_TOP_K_UNSET) is -1, and a top_p left out
 * (SIEVE_TOP_P_UNSET) is 1, under every rule.
 * Invariant: normalizing a normalized set changes nothing.
 * Other engines' choices (a sieve_rule) change only what the rule's axes say:
 * which temperatures take the temperature-0 rule and what it does (and whether
 * a negative one is accepted, to take that rule or to scale the logits), whether
 * that rule applies before top_p and top_k are checked and which of them is
 * checked first, a temperature floor, whether top_k 0 or -1 means off, whether
 * an explicit top_p = 1 is accepted, whether a top_k above the int32 maximum
 * is, (sieve__check_top_k_vocab) whether a top_k of V or more is, whether
 * temperature and top_p are rounded to float32 first, and the ranges of min_p
 * and the penalties (any repetition above 0, or every finite value; a penalty
 * window below -1 is an error under every rule).
 */
#include <math.h>

#include "internal.h"

static int negative_accepted(const sieve_rule *rule) {
  const int below = SIEVE__AXIS(rule, T0_BELOW, t0_below);
  return below == SIEVE_T0_BELOW_NONPOSITIVE || below == SIEVE_T0_BELOW_ZERO_NEGATIVE_SCALES ||
         below == SIEVE_T0_BELOW_NANO_NEGATIVE;
}

static int check_temperature(const sieve_rule *rule, double t) {
  return (isnan(t) || isinf(t) || (t < 0.0 && !negative_accepted(rule))) ? SIEVE_ETEMPERATURE : 0;
}

static int check_top_p(double p) { return (isnan(p) || !(p > 0.0) || p > 1.0) ? SIEVE_ETOPP : 0; }

/* -1 or a positive top_k, at most SIEVE_TOP_K_MAX unless the rule has no largest (top_k_max). */
static int check_top_k(const sieve_rule *rule, int64_t k) {
  if (k == -1 || (k >= 1 && k <= SIEVE_TOP_K_MAX))
    return 0;
  return k > SIEVE_TOP_K_MAX && SIEVE__AXIS(rule, TOP_K_MAX, top_k_max) == SIEVE_TOP_K_MAX_NONE
             ? 0
             : SIEVE_ETOPK;
}

/* What top_p means under the rule's explicit_top_p_one axis; an explicit 1 that the rule rejects
 * becomes 0, so check_top_p reports it. */
static double top_p_meaning(const sieve_rule *rule, double p) {
  if (p == SIEVE_TOP_P_UNSET)
    return 1.0;
  if (p == 1.0 &&
      SIEVE__AXIS(rule, EXPLICIT_TOP_P_ONE, explicit_top_p_one) == SIEVE_EXPLICIT_TOP_P_ONE_ERROR)
    return 0.0;
  return p;
}

/* What top_k means under the rule's top_k_zero and top_k_minus_one axes; 0 stays 0 (an error)
 * and an explicit -1 that the rule rejects becomes 0 too, so check_top_k reports it. */
static int64_t top_k_meaning(const sieve_rule *rule, int64_t k) {
  if (k == SIEVE_TOP_K_UNSET)
    return -1;
  if (k == 0 && SIEVE__AXIS(rule, TOP_K_ZERO, top_k_zero) == SIEVE_TOP_K_ZERO_OFF)
    return -1;
  if (k == -1 && SIEVE__AXIS(rule, TOP_K_MINUS_ONE, top_k_minus_one) == SIEVE_TOP_K_MINUS_ONE_ERROR)
    return 0;
  return k;
}

/* Every choice of t0_below lies below 1e-5. */
static int takes_t0_rule(const sieve_rule *rule, double t) {
  if (!(t < SIEVE_SAMPLING_EPS))
    return 0;
  switch (SIEVE__AXIS(rule, T0_BELOW, t0_below)) {
  case SIEVE_T0_BELOW_MICRO:
    return t < 1e-6;
  case SIEVE_T0_BELOW_NANO_NEGATIVE:
    return t < 1e-7;
  case SIEVE_T0_BELOW_ZERO:
  case SIEVE_T0_BELOW_ZERO_NEGATIVE_SCALES:
    return t == 0.0;
  case SIEVE_T0_BELOW_NONPOSITIVE:
    return t <= 0.0;
  default:
    return t < SIEVE_SAMPLING_EPS;
  }
}

static void set_filters(sieve_params *p, double temperature, double top_p, int64_t top_k) {
  p->temperature = temperature;
  p->top_p = top_p;
  p->top_k = top_k;
}

/* The temperature-0 rule: DeepInfer's clamp resets the filters; other engines take the first
 * argmax alone (T = 0 with top_k = 1), T = 1 with top_k = 1, or reject the temperature. */
static int apply_t0(const sieve_rule *rule, sieve_params *p) {
  switch (SIEVE__AXIS(rule, T0, t0)) {
  case SIEVE_T0_ARGMAX:
    set_filters(p, 0.0, 1.0, 1);
    return 0;
  case SIEVE_T0_TOPK1:
    set_filters(p, 1.0, p->top_p, 1);
    return 0;
  case SIEVE_T0_REJECT:
    return SIEVE_ETEMPERATURE;
  default:
    set_filters(p, SIEVE_SAMPLING_EPS, 1.0, -1);
    return 0;
  }
}

/* top_p, then top_k; another engine checks top_k first, which shows when both are bad. */
static int check_filters(const sieve_rule *rule, const sieve_params *p) {
  const int bad_p = check_top_p(p->top_p), bad_k = check_top_k(rule, p->top_k);
  if (bad_p && bad_k &&
      SIEVE__AXIS(rule, CHECK_ORDER, check_order) == SIEVE_CHECK_ORDER_T0_RULE_TOP_K_FIRST)
    return bad_k;
  return bad_p ? bad_p : bad_k;
}

/* Whether x is outside [low, high], or under penalty_range=unchecked not finite. */
static int outside(const sieve_rule *rule, double x, double low, double high) {
  if (isnan(x))
    return 1;
  if (x >= low && x <= high)
    return 0;
  return isinf(x) ||
         SIEVE__AXIS(rule, PENALTY_RANGE, penalty_range) != SIEVE_PENALTY_RANGE_UNCHECKED;
}

/* A repetition penalty in (0, 2], or above 2 where the rule sets no largest. */
static int bad_repetition(const sieve_rule *rule, double r) {
  if (r > 2.0 && isfinite(r) &&
      SIEVE__AXIS(rule, PENALTY_RANGE, penalty_range) == SIEVE_PENALTY_RANGE_REPETITION_UNBOUNDED)
    return 0;
  return outside(rule, r, nextafter(0.0, 1.0), 2.0);
}

/* min_p, then the penalties in the order of sieve_penalties. */
static int check_rest(const sieve_rule *rule, const sieve_params *p) {
  const sieve_penalties *pen = p->penalties;
  if (outside(rule, p->min_p, 0.0, 1.0))
    return SIEVE_EMINP;
  if (!pen)
    return 0;
  if (outside(rule, pen->frequency, -2.0, 2.0))
    return SIEVE_EFREQUENCY;
  if (outside(rule, pen->presence, -2.0, 2.0))
    return SIEVE_EPRESENCE;
  if (bad_repetition(rule, pen->repetition))
    return SIEVE_EREPETITION;
  if (pen->last_n < -1)
    return SIEVE_EPENALTYWINDOW;
  return (pen->n_output && !pen->output) || (pen->n_prompt && !pen->prompt) ? SIEVE_EARG : 0;
}

/* A temperature in (0, 0.01) becomes 0.01 where the rule has that floor. */
static void apply_floor(const sieve_rule *rule, sieve_params *p) {
  if (p->temperature > 0.0 && p->temperature < 0.01 &&
      SIEVE__AXIS(rule, TEMPERATURE_FLOOR, temperature_floor) == SIEVE_TEMPERATURE_FLOOR_CENTI)
    p->temperature = 0.01;
}

double sieve__to_float32(double x) {
  if (fabs(x) > FLT_MAX)
    return fabs(x) < 0x1.ffffffp127 ? copysign(FLT_MAX, x) : copysign(INFINITY, x);
  return (double)(float)x;
}

/* x as the rule reads it: rounded to float32 under param_precision=float32 (the axis read only
 * where the rounding changes x). */
static double read_param(const sieve_rule *rule, double x) {
  const double rounded = sieve__to_float32(x);
  if (isnan(x) || rounded == x)
    return x;
  return SIEVE__AXIS(rule, PARAM_PRECISION, param_precision) == SIEVE_PARAM_PRECISION_FLOAT32
             ? rounded
             : x;
}

int sieve_params_check_rule(const sieve_rule *rule, const sieve_params *in, sieve_params *out) {
  static const sieve_rule deepinfer = SIEVE_RULE_DEEPINFER;
  rule = rule ? rule : &deepinfer;
  if (!in || !out)
    return SIEVE_EARG;
  int rc = sieve__check_rule(rule);
  if (rc != 0)
    return rc;
  const double top_p = in->top_p == SIEVE_TOP_P_UNSET ? in->top_p : read_param(rule, in->top_p);
  sieve_params p = {read_param(rule, in->temperature), top_p_meaning(rule, top_p),
                    top_k_meaning(rule, in->top_k), in->min_p, in->penalties};
  rc = check_temperature(rule, p.temperature);
  const int t0 = rc == 0 && takes_t0_rule(rule, p.temperature);
  const int t0_first =
      t0 && SIEVE__AXIS(rule, CHECK_ORDER, check_order) != SIEVE_CHECK_ORDER_CHECKS_FIRST;
  if (t0_first)
    rc = apply_t0(rule, &p);
  if (rc == 0)
    rc = check_filters(rule, &p);
  if (rc == 0)
    rc = check_rest(rule, &p);
  if (rc == 0 && t0 && !t0_first)
    rc = apply_t0(rule, &p);
  else if (rc == 0 && !t0)
    apply_floor(rule, &p);
  if (rc == 0)
    *out = p;
  return rc;
}

int sieve__check_top_k_vocab(const sieve_rule *rule, const sieve_params *checked, size_t vocab) {
  if (!rule || checked->top_k == -1 || (uint64_t)checked->top_k < vocab)
    return 0;
  return SIEVE__AXIS(rule, TOP_K_VOCAB, top_k_vocab) == SIEVE_TOP_K_VOCAB_ERROR ? SIEVE_ETOPK : 0;
}

int sieve_params_check(const sieve_params *in, sieve_params *out) {
  return sieve_params_check_rule(NULL, in, out);
}
