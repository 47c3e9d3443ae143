/*
 * The hash-based uniform (seed 000:34-54; random_sampling_ref, fused_sample.py:15, :93).
 *
 * Rule, all arithmetic modulo 2^64 with logical shifts:
 *   seed' = seed, or seed + 1000000007 for the tag "mtp" (seed 000:59);
 *   seq = (position * 3 + case) * 0x9E3779B97F4A7C15        (seed 000:45)
 *   combined = seed' + (seq XOR (seq << 13))                (seed 000:46)
 *   u = (mix(combined) >> 11) * 2^-53                       (seed 000:47, :54)
 * Ours: the seed does not print _hash_to_uniform (random_sampling.py:58-67);
 * we read it as the SplitMix64 finalizer (Steele, Lea and Flood; Vigna's
 * splitmix64.c) applied to the value as it is, with no increment before it,
 * and the top 53 bits as the mantissa. It lives in sieve_mix64 alone.
 * Invariant: u is a multiple of 2^-53 in [0, 1); it depends on the key only.
 */
#include "internal.h"

uint64_t sieve_mix64(uint64_t z) {
  z ^= z >> 30;
  z *= UINT64_C(0xBF58476D1CE4E5B9);
  z ^= z >> 27;
  z *= UINT64_C(0x94D049BB133111EB);
  z ^= z >> 31;
  return z;
}

/* The position and the case mixed, what the seed is added to (seed 000:45-46). */
static uint64_t mixed_position(uint64_t position, int sample_case) {
  uint64_t seq = (position * 3 + (uint64_t)sample_case) * SIEVE_HASH_GOLDEN;
  return seq ^ (seq << 13);
}

uint64_t sieve_seed_of_zero_u(uint64_t position, int sample_case) {
  return 0 - mixed_position(position, sample_case);
}

int sieve_uniform(const sieve_draw_key *key, double *u) {
  if (!key || !u)
    return SIEVE_EARG;
  if (key->sample_case < SIEVE_CASE_SAMPLE || key->sample_case > SIEVE_CASE_ACCEPT)
    return SIEVE_ECASE;
  if (key->tag != SIEVE_TAG_MAIN && key->tag != SIEVE_TAG_MTP)
    return SIEVE_ETAG;
  uint64_t seed = key->seed + (key->tag == SIEVE_TAG_MTP ? SIEVE_MTP_SEED_OFFSET : 0);
  uint64_t combined = seed + mixed_position(key->position, key->sample_case);
  *u = (double)(sieve_mix64(combined) >> 11) * 0x1.0p-53;
  return 0;
}

/* A generator that is not the hash, for rules whose engine draws with its own (ENGINES.md): the
 * same key gives the same uniform, so a run repeats, but no hash uniform predicts it. */
static int own_uniform(const sieve_draw_key *key, double *u) {
  int rc = sieve_uniform(key, u);
  uint64_t z = sieve_mix64(key->seed ^ 0xD1B54A32D192ED03ULL) + key->position;
  if (rc == 0)
    *u = (double)(sieve_mix64(z * SIEVE_HASH_GOLDEN + (uint64_t)key->sample_case +
                              ((uint64_t)key->tag << 8)) >>
                  11) *
         0x1.0p-53;
  return rc;
}

int sieve__rule_uniform(const sieve_rule *rule, const sieve_draw_key *key, double *u) {
  return rule && SIEVE__AXIS(rule, DRAW, draw) == SIEVE_DRAW_OWN ? own_uniform(key, u)
                                                                 : sieve_uniform(key, u);
}
