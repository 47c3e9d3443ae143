/*
 * Parameters (seed 000:9, 000:11, 000:32, 000:63; sampling_params.py:47-99).
 *
 * Rule: check temperature (NaN, infinite or < 0 is an error), then top_p
 * (NaN or outside (0, 1]), then top_k (neither -1 nor in [1, 2^31-1]), each
 * with its own code. Only then normalize: a temperature below 1e-5 becomes
 * 1e-5 and resets top_p to 1 and top_k to -1. Because the checks come first,
 * temperature 0 with top_k 0 is an error for top_k (seed 000:63).
 * Invariant: normalizing a normalized set changes nothing.
 */
#include <math.h>

#include "sieve.h"

static int check_temperature(double t) {
  return (isnan(t) || isinf(t) || t < 0.0) ? SIEVE_ETEMPERATURE : 0;
}

static int check_top_p(double p) {
  return (isnan(p) || !(p > 0.0) || p > 1.0) ? SIEVE_ETOPP : 0;
}

static int check_top_k(int64_t k) {
  return (k == -1 || (k >= 1 && k <= SIEVE_TOP_K_MAX)) ? 0 : SIEVE_ETOPK;
}

int sieve_params_check(const sieve_params *in, sieve_params *out) {
  if (!in || !out)
    return SIEVE_EARG;
  int rc = check_temperature(in->temperature);
  if (rc == 0)
    rc = check_top_p(in->top_p);
  if (rc == 0)
    rc = check_top_k(in->top_k);
  if (rc != 0)
    return rc;
  sieve_params p = *in;
  if (p.temperature < SIEVE_SAMPLING_EPS) {
    p.temperature = SIEVE_SAMPLING_EPS;
    p.top_p = 1.0;
    p.top_k = -1;
  }
  *out = p;
  return 0;
}
