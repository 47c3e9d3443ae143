/*
 * The fast path (oracle/filter_fast.c, the default) against the spec path
 * (sieve_filter_spec) on 100,000 seeded rows: small and large vocabularies
 * (the large ones take the histogram), normal, peaked, tied, flat, -inf holes,
 * extreme temperatures, and blocks of 2^k equal logits whose top-p boundaries
 * are exact. Kept sets, margins, kept mass and every logprob
 * must be the same bit for bit; the draw on the logprobs (which reads only
 * the kept entries) must pick what sieve_draw picks on their exps.
 */
#include <stdlib.h>
#include <string.h>

#include "../oracle/internal.h"
#include "helpers.h"
/* After criterion.h (in helpers.h): included first, it leaves Test() undefined. */
#include <criterion/parameterized.h>

#define ROWS_PER_SEED 12500

static size_t pick_vocab(rng *r) {
  unsigned kind = (unsigned)(rng_next(r) % 50);
  if (kind == 1)
    return (size_t)1 << (1 + rng_next(r) % 14); /* powers of two, for exact boundaries */
  if (kind == 0)
    return 4097 + (size_t)(rng_next(r) % 40000); /* the histogram path */
  if (kind < 5)
    return 65 + (size_t)(rng_next(r) % 4000);
  return 1 + (size_t)(rng_next(r) % 64);
}

/* Fills a row; returns 1 when its top-p boundaries are exact (2^k equal logits). */
static int fill(rng *r, float *row, size_t v) {
  unsigned shape = (unsigned)(rng_next(r) % 7);
  if (shape == 6) {
    for (size_t i = 0; i < v; i++)
      row[i] = 0.75f;
    return (v & (v - 1)) == 0;
  }
  for (size_t i = 0; i < v; i++) {
    double x = (double)(rng_next(r) >> 11) * 0x1p-53 * 8.0 - 4.0;
    if (shape == 1 && rng_next(r) % 997 == 0)
      x += 12.0; /* a few peaks */
    if (shape == 2)
      x = (double)(rng_next(r) % 5) * 0.5; /* exact ties on a few levels */
    if (shape == 3)
      x = 0.25 + (double)(rng_next(r) % 3) * 1e-6; /* nearly flat */
    row[i] = (float)x;
  }
  if (shape == 4) /* -inf holes, never the whole row */
    for (size_t i = 1; i < v; i++)
      if (rng_next(r) % 4 == 0)
        row[i] = -INFINITY;
  if (shape == 5) /* one token far above the rest */
    row[rng_next(r) % v] = 40.0f;
  return 0;
}

static sieve_params params_for(rng *r, size_t v, int exact) {
  sieve_params p = random_params(r, v);
  if (exact && v > 1) /* a top_p that is exactly the mass of the first j tokens */
    return (sieve_params){1.0, (double)(1 + rng_next(r) % (v - 1)) / (double)v, -1};
  if (rng_next(r) % 8 == 0)
    p.top_p = 1.0;
  if (rng_next(r) % 8 == 0)
    p.top_k = -1;
  if (rng_next(r) % 16 == 0)
    p.temperature = 1e-5 * (1.0 + (double)(rng_next(r) % 4));
  return p;
}

static void same_result(const float *row, size_t v, const sieve_params *p, double *a, double *b,
                        size_t n) {
  sieve_filter_info fa, fb;
  int ra = sieve_filter(row, v, p, NULL, a, &fa), rb = sieve_filter_spec(row, v, p, NULL, b, &fb);
  cr_assert_eq(ra, rb, "row %zu (V %zu): fast %d, spec %d", n, v, ra, rb);
  if (ra != 0)
    return;
  cr_assert_eq(fa.kept, fb.kept, "row %zu (V %zu, T %g, top_p %g, top_k %lld)", n, v,
               p->temperature, p->top_p, (long long)p->top_k);
  cr_assert(same_double(fa.topp_margin, fb.topp_margin) && same_double(fa.cut_gap, fb.cut_gap) &&
                same_double(fa.kept_mass, fb.kept_mass),
            "row %zu: margins or kept mass differ", n);
  cr_assert_eq(memcmp(a, b, v * sizeof *a), 0, "row %zu: logprobs differ", n);
  /* The draw reads only the kept entries of a logprob row; on the probabilities exp(logprob)
   * of every entry, sieve_draw must pick the same token with the same margin. */
  const double u = (double)((uint64_t)n * 0x9E3779B97F4A7C15ULL >> 11) * 0x1p-53;
  for (size_t i = 0; i < v; i++)
    b[i] = sieve__exp(a[i]);
  int64_t ta, tb;
  double ma, mb;
  int da = sieve__draw_logprobs(a, v, u, &ta, &ma), db = sieve_draw(b, v, u, &tb, &mb);
  cr_assert_eq(da, db, "row %zu: draw status %d, %d", n, da, db);
  cr_assert(da != 0 || (ta == tb && same_double(ma, mb)), "row %zu: drew %lld and %lld", n,
            (long long)ta, (long long)tb);
}

ParameterizedTestParameters(fast_path, gives_the_spec_paths_results_bit_for_bit) {
  static uint64_t seeds[] = {11, 12, 13, 14, 15, 16, 17, 18};
  return cr_make_param_array(uint64_t, seeds, sizeof seeds / sizeof seeds[0]);
}

ParameterizedTest(uint64_t *seed, fast_path, gives_the_spec_paths_results_bit_for_bit) {
  const size_t max_v = 4097 + 40000;
  float *row = malloc(max_v * sizeof *row);
  double *a = malloc(max_v * sizeof *a), *b = malloc(max_v * sizeof *b);
  cr_assert(row && a && b);
  rng r = {*seed};
  for (size_t n = 0; n < ROWS_PER_SEED; n++) {
    size_t v = pick_vocab(&r);
    int exact = fill(&r, row, v);
    sieve_params p = params_for(&r, v, exact);
    same_result(row, v, &p, a, b, n);
  }
  free(row);
  free(a);
  free(b);
}

/* same_result on one row under each of n parameter sets; frees the row. */
static void same_results(float *row, size_t v, const sieve_params *cases, size_t n) {
  double *a = malloc(v * sizeof *a), *b = malloc(v * sizeof *b);
  cr_assert(row && a && b);
  for (size_t c = 0; c < n; c++)
    same_result(row, v, &cases[c], a, b, c);
  free(row);
  free(a);
  free(b);
}

Test(fast_path, agrees_with_the_spec_path_on_a_262144_token_row) {
  /* Behaviour, not speed: the answer equals the spec path's on a 262144-token row. */
  const size_t v = 262144;
  float *row = malloc(v * sizeof *row);
  rng r = {5};
  for (size_t i = 0; row && i < v; i++)
    row[i] = (float)((double)(rng_next(&r) >> 11) * 0x1p-53 * 6.0 - 3.0) + (i % 40009 ? 0 : 14);
  const sieve_params cases[3] = {{0.7, 0.9, 50}, {1.0, 0.95, -1}, {1.0, 1.0, -1}};
  same_results(row, v, cases, 3);
}

Test(fast_path, agrees_with_the_spec_path_on_rows_of_a_few_tied_levels) {
  /* The shape of make bench's flat rows: 13 levels 0.25 apart, so every bucket of the
   * prefix is one tie and top-p cuts deep into it. Cuts at several depths, with top-k. */
  const size_t v = 151936;
  float *row = malloc(v * sizeof *row);
  rng r = {31};
  for (size_t i = 0; row && i < v; i++)
    row[i] = i % 5003 == 7 ? -INFINITY : 0.25f * (float)(rng_next(&r) % 13);
  const sieve_params cases[6] = {{0.7, 0.9, 50},   {1.0, 0.95, -1},      {1.0, 0.5, -1},
                                 {1.0, 1.0, 9000}, {1.3, 0.999, 100000}, {1.0, 0.01, -1}};
  same_results(row, v, cases, 6);
}

Test(fast_path, keeps_blacklisted_tokens_removed_when_one_over_t_underflows) {
  /* Found by fuzz_oracle: at T = 3e144, (float)(1/T) is 0 and -inf * 0 is NaN; a -inf logit
   * must stay -inf (p = 0, never kept) and the finite ones all scale to 0, as in the spec. */
  const float row[3] = {0.0f, 4.47e-43f, 3.0f};
  const int64_t blacklist[2] = {0, 1};
  const sieve_engine engine = {0, blacklist, 2};
  const sieve_params p = {3.121749120157552e+144, 6.6e-25, 33555007};
  double a[4], b[4];
  sieve_filter_info fa, fb;
  cr_assert_eq(sieve_filter(row, 3, &p, &engine, a, &fa), 0);
  cr_assert_eq(sieve_filter_spec(row, 3, &p, &engine, b, &fb), 0);
  cr_expect_eq(fa.kept, 1);
  cr_expect_eq(fb.kept, 1);
  cr_expect(isinf(a[0]) && isinf(a[1]) && same_double(a[2], 0.0));
  cr_expect_eq(memcmp(a, b, 3 * sizeof *a), 0);
  const float mixed[4] = {-INFINITY, 2.0f, -1.0f, -INFINITY};
  const sieve_params all = {1e300, 1.0, -1};
  cr_assert_eq(sieve_filter(mixed, 4, &all, NULL, a, &fa), 0);
  cr_expect(isinf(a[0]) && isinf(a[3]) && same_double(a[1], -log(2.0)) &&
            same_double(a[2], -log(2.0)));
}

Test(rank, long_arrays_sort_by_key_descending_then_token_id) {
  /* The radix path (over 4096 items in token order) must give the comparison sort's order,
   * negative, infinite and tied keys included. */
  const size_t n = 50000;
  sieve__ranked *items = malloc(n * sizeof *items);
  rng r = {77};
  for (size_t i = 0; i < n; i++) {
    double key = (double)(rng_next(&r) % 2000) / 7.0 - 100.0;
    if (i % 997 == 0)
      key = -INFINITY;
    items[i] = (sieve__ranked){key, (uint32_t)i};
  }
  sieve__rank(items, n);
  for (size_t i = 1; i < n; i++)
    cr_assert(items[i - 1].key > items[i].key ||
                  (same_double(items[i - 1].key, items[i].key) && items[i - 1].id < items[i].id),
              "items %zu and %zu out of order", i - 1, i);
  free(items);
}
