/*
 * The fast path (oracle/filter_fast.c, the default) against the spec path
 * (sieve_filter_spec) on 100,000 seeded rows (a quarter of them under the
 * sanitizers: PROPERTY_ROWS): small and large vocabularies
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
    return (sieve_params){1.0, (double)(1 + rng_next(r) % (v - 1)) / (double)v, -1, 0.0, NULL};
  if (rng_next(r) % 8 == 0)
    p.top_p = 1.0;
  if (rng_next(r) % 8 == 0)
    p.top_k = -1;
  if (rng_next(r) % 16 == 0)
    p.temperature = 1e-5 * (1.0 + (double)(rng_next(r) % 4));
  return p;
}

/* The fit of `sieve run` reuses an answer for every rule that agrees on the axes it read, so the
 * fast path must record every axis the spec path reads (or more). A force_topk of V changes
 * nothing and sends the row to the spec path. */
static void reads_what_the_spec_path_reads(const float *row, size_t v, const sieve_params *p,
                                           double *lp, size_t n) {
  uint32_t fast = 0, spec = 0;
  sieve_rule traced = SIEVE_RULE_DEEPINFER;
  const sieve_engine every = {.force_topk = (int64_t)v};
  traced.consulted = &fast;
  int rf = sieve_filter_rule(&traced, row, v, p, NULL, lp, NULL);
  traced.consulted = &spec;
  int rs = sieve_filter_rule(&traced, row, v, p, &every, lp, NULL);
  cr_assert_eq(rf, rs, "row %zu: traced fast %d, spec %d", n, rf, rs);
  cr_assert_eq(spec & ~fast, 0, "row %zu (V %zu): the spec path reads axes %#x, the fast path %#x",
               n, v, spec, fast);
}

/* The fast path's answer (rc, info, logprobs a) is the spec path's, bit for bit. */
static void same_answer(int ra, const sieve_filter_info *fa, const double *a, int rb,
                        const sieve_filter_info *fb, const double *b, size_t v,
                        const sieve_params *p, size_t n) {
  cr_assert_eq(ra, rb, "row %zu (V %zu): fast %d, spec %d", n, v, ra, rb);
  if (ra != 0)
    return;
  cr_assert_eq(fa->kept, fb->kept, "row %zu (V %zu, T %g, top_p %g, top_k %lld)", n, v,
               p->temperature, p->top_p, (long long)p->top_k);
  cr_assert(same_double(fa->topp_margin, fb->topp_margin) &&
                same_double(fa->cut_gap, fb->cut_gap) && same_double(fa->kept_mass, fb->kept_mass),
            "row %zu: margins or kept mass differ", n);
  cr_assert_eq(memcmp(a, b, v * sizeof *a), 0, "row %zu: logprobs differ", n);
}

static void same_result(const float *row, size_t v, const sieve_params *p, double *a, double *b,
                        size_t n) {
  sieve_filter_info fa, fb;
  const long live = live_allocations();
  int ra = sieve_filter(row, v, p, NULL, a, &fa), rb = sieve_filter_spec(row, v, p, NULL, b, &fb);
  cr_assert_eq(live_allocations(), live, "row %zu: the filters leave %ld blocks allocated", n,
               live_allocations() - live);
  same_answer(ra, &fa, a, rb, &fb, b, v, p, n);
  if (ra != 0)
    return;
  if (n % 4 == 0) /* a quarter of the rows: it costs two more filter calls */
    reads_what_the_spec_path_reads(row, v, p, b, n);
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
  for (size_t n = 0; n < PROPERTY_ROWS(ROWS_PER_SEED); n++) {
    size_t v = pick_vocab(&r);
    int exact = fill(&r, row, v);
    sieve_params p = params_for(&r, v, exact);
    same_result(row, v, &p, a, b, n);
  }
  free(row);
  free(a);
  free(b);
}

/* With a negative slack the first prefix the fast path tries (the one above 2^-4, then the
 * histogram's) is chosen as if top_p were lower, so on most rows it falls short of the decision,
 * and the floor is lowered, a bucket at a time, until the prefix holds it: the answers must
 * still be the spec path's. */
Test(fast_path, lowers_a_first_prefix_that_falls_short_until_it_holds_the_decision) {
  const size_t max_v = 4097 + 40000;
  float *row = malloc(max_v * sizeof *row);
  double *a = malloc(max_v * sizeof *a), *b = malloc(max_v * sizeof *b);
  cr_assert(row && a && b);
  rng r = {47};
  for (size_t n = 0; n < PROPERTY_ROWS(3000); n++) {
    const size_t v = n % 3 ? pick_vocab(&r) : 4097 + (size_t)(rng_next(&r) % 20000);
    const int exact = fill(&r, row, v);
    sieve_params given = params_for(&r, v, exact), p;
    if (sieve_params_check(&given, &p) != 0)
      continue;
    sieve_filter_info fa, fb;
    const long live = live_allocations();
    const int rb = sieve_filter_spec(row, v, &p, NULL, b, &fb),
              ra = sieve__filter_fast(row, v, &p, NULL, a, &fa, NULL, -0.75);
    cr_assert_eq(live_allocations(), live, "row %zu: the filters leave %ld blocks allocated", n,
                 live_allocations() - live);
    same_answer(ra, &fa, a, rb, &fb, b, v, &p, n);
  }
  free(row);
  free(a);
  free(b);
}

/* Both paths on one row, the fast one with the slack of -0.75 that makes its first prefix fall
 * short: the same answers; the spec path's info. */
static sieve_filter_info falling_short(const float *row, size_t v, const sieve_params *p,
                                       size_t n) {
  double *a = malloc(v * sizeof *a), *b = malloc(v * sizeof *b);
  cr_assert(a && b);
  sieve_filter_info fa, fb;
  const int rb = sieve_filter_spec(row, v, p, NULL, b, &fb),
            ra = sieve__filter_fast(row, v, p, NULL, a, &fa, NULL, -0.75);
  same_answer(ra, &fa, a, rb, &fb, b, v, p, n);
  free(a);
  free(b);
  return fb;
}

/* A row whose second largest e is exactly the floor of its bucket, 0x1.2p-5 (the logits
 * -0x1.ac89b8p+1 and 0x1.a3b86ap-26 are 2^-5 ln 1.125 apart, to the last bit of exp), with the
 * rest far below it. With a negative slack the prefix is lowered a bucket at a time, and the
 * one down to that floor ends where top-p cuts (top_p is the first p): the p past the prefix,
 * which cut_gap reads, is that of the largest e below the floor, not of the token at it. Both
 * tokens are past the last block of lanes (V % 8 = 2), the one at the floor first: the tail
 * loop of count_above must count it, so that the prefix has room for it and is ranked whole. */
Test(fast_path, takes_the_p_past_a_prefix_from_below_a_floor_that_a_token_is_at) {
  const size_t v = 5002;
  float *row = malloc(v * sizeof *row);
  cr_assert(row);
  for (size_t i = 0; i < v - 2; i++)
    row[i] = -4.0f - 0.001f * (float)i;
  row[v - 2] = -0x1.ac89b8p+1f;
  row[v - 1] = 0x1.a3b86ap-26f;
  const double max = (double)row[v - 1];
  cr_assert(sieve__exp((double)row[v - 2] - max) == 0x1.2p-5);
  for (size_t first = 0; first < 2; first++) { /* then the two first, in the blocks of lanes */
    if (first) {
      row[0] = row[v - 2], row[1] = row[v - 1];
      row[v - 2] = -4.0f - 0.001f * (float)(v - 2), row[v - 1] = -4.0f - 0.001f * (float)(v - 1);
    }
    const sieve_params p = {1.0, 1.0 / sieve__exp_sum(row, v, 1.0f, max, NULL), -1, 0.0, NULL};
    cr_expect_eq(falling_short(row, v, &p, first).kept, 2);
  }
  free(row);
}

/* A row whose decision needs every finite token, down to those whose e is below 2^-1026 (the
 * histogram's bucket 0): ten tokens of p 0.1 (the total is 10, to the last bit), whose masses
 * sum to 0.9999999999999999 in rank order, which is top_p, so top-p never cuts; one token of
 * e 2^-60 below them, and 4189 distinct logits from -720 down (no runs). With a negative slack
 * the first prefix stops above bucket 0, and the floor is lowered until it holds every token. */
Test(fast_path, lowers_the_floor_to_every_finite_token_when_the_decision_needs_them) {
  const size_t v = 4200;
  float *row = malloc(v * sizeof *row);
  cr_assert(row);
  for (size_t i = 0; i < v; i++)
    row[i] = i < 10 ? 0.0f : i == 10 ? -41.588830833596715f : -720.0f - 0.005f * (float)(i - 11);
  const sieve_params p = {1.0, nextafter(1.0, 0.0), -1, 0.0, NULL};
  cr_expect_eq(falling_short(row, v, &p, 0).kept, v, "top-p keeps every token");
  free(row);
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
  const sieve_params cases[3] = {
      {0.7, 0.9, 50, 0.0, NULL}, {1.0, 0.95, -1, 0.0, NULL}, {1.0, 1.0, -1, 0.0, NULL}};
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
  const sieve_params cases[6] = {{0.7, 0.9, 50, 0.0, NULL},       {1.0, 0.95, -1, 0.0, NULL},
                                 {1.0, 0.5, -1, 0.0, NULL},       {1.0, 1.0, 9000, 0.0, NULL},
                                 {1.3, 0.999, 100000, 0.0, NULL}, {1.0, 0.01, -1, 0.0, NULL}};
  same_results(row, v, cases, 6);
}

/* The mass of the first r ranks summed rank by rank, as the spec path sums it, on a row of
 * the given distinct logits (largest first, `count` tokens each) at T = 1. */
static double mass_before(const float *row, size_t v, const float *levels, const size_t *count,
                          size_t r) {
  const double max = levels[0], total = sieve__exp_sum(row, v, 1.0f, max, NULL);
  double mass = 0.0;
  for (size_t l = 0; r > 0; l++)
    for (size_t c = 0; c < count[l] && r > 0; c++, r--)
      mass += sieve__exp((double)levels[l] - max) / total;
  return mass;
}

/* A row of n_levels distinct logits (largest first) in long runs, some rare, one perhaps far
 * below the rest (its p under half an ulp of the running mass), with -inf holes. */
static void fill_levels(rng *r, float *row, size_t v, float *levels, size_t *count,
                        size_t n_levels) {
  float x = 0.0f;
  for (size_t l = 0; l < n_levels; l++) {
    levels[l] = x;
    count[l] = 0;
    x -= l + 2 == n_levels && rng_next(r) % 2 ? 45.0f : (float)(1 + rng_next(r) % 64) / 64.0f;
  }
  const int holes = rng_next(r) % 3 == 0;
  for (size_t i = 0; i < v; i++) {
    size_t l = (size_t)(rng_next(r) % n_levels);
    l = rng_next(r) % 4 == 0 ? l / 2 : l;
    row[i] = levels[l];
    count[l]++;
    if (holes && i % 7 == 3) {
      row[i] = -INFINITY;
      count[l]--;
    }
  }
}

Test(fast_path, agrees_with_the_spec_path_on_rows_of_few_levels_in_long_runs) {
  /* Rows of 1 to 70 distinct logits (from 65 on, the fast path ranks a prefix instead), where
   * top-p sums runs of equal p in jumps (oracle/runs.c): cuts at random depths, at exactly the
   * mass before a rank and just around it, below half an ulp of the mass, with top-k. */
  const size_t max_v = 200000;
  float *row = malloc(max_v * sizeof *row), levels[70];
  double *a = malloc(max_v * sizeof *a), *b = malloc(max_v * sizeof *b);
  size_t count[70];
  cr_assert(row && a && b);
  rng r = {41};
  for (size_t n = 0; n < PROPERTY_ROWS(240); n++) {
    const size_t v = 4097 + (size_t)(rng_next(&r) % (n % 8 ? 20000 : max_v - 4097));
    const size_t n_levels = 1 + (size_t)(rng_next(&r) % (n % 5 ? 13 : 70));
    fill_levels(&r, row, v, levels, count, n_levels);
    const double at = mass_before(row, v, levels, count, 1 + (size_t)(rng_next(&r) % (v / 2)));
    size_t finite = 0, last = count[n_levels - 1];
    for (size_t l = 0; l < n_levels; l++)
      finite += count[l];
    /* At T = 0.01 a level 45 below has p = 0: a top-k that ends inside the last level. */
    const int64_t in_last = (int64_t)(finite - 1 - (last ? rng_next(&r) % last : 0));
    const sieve_params cases[7] = {
        {1.0, at, -1, 0.0, NULL},
        {1.0, nextafter(at, 0.0), -1, 0.0, NULL},
        {1.0, nextafter(at, 1.0), (int64_t)(rng_next(&r) % v), 0.0, NULL},
        {1.0, 1.0 - 0x1p-53, -1, 0.0, NULL},
        {0.7, (double)(rng_next(&r) % 1000) / 1000.0, 50, 0.0, NULL},
        {1.3, 1.0, 1 + (int64_t)(rng_next(&r) % v), 0.0, NULL},
        {0.01, 1.0, in_last > 0 ? in_last : 1, 0.0, NULL}};
    for (size_t c = 0; c < 7; c++)
      same_result(row, v, &cases[c], a, b, n * 7 + c);
  }
  free(row);
  free(a);
  free(b);
}

/* Step 3 summed rank by rank over runs, as filter.c sums it. */
static size_t top_p_by_rank(const sieve__run *runs, size_t n_runs, double top_p, double *margin) {
  size_t n = 0, r = 1;
  for (size_t k = 0; k < n_runs; k++)
    n += runs[k].count;
  *margin = INFINITY;
  if (top_p >= 1.0)
    return n;
  double mass = runs[0].p;
  for (size_t k = 0; k < n_runs; k++)
    for (size_t left = runs[k].count - (k == 0); left > 0; left--, r++) {
      *margin = fmin(*margin, fabs(mass - top_p));
      if (mass > top_p)
        return r;
      mass += runs[k].p;
    }
  return n;
}

/* A top_p for runs: at random, or on odd trials the mass before a random rank (up to `ranks`)
 * or the total, as it is (trial % 4 == 1), just below (trial % 8 == 3) or just above. */
static double a_top_p(rng *r, const sieve__run *runs, size_t n_runs, int trial, size_t ranks) {
  double top_p = (double)(rng_next(r) >> 11) * 0x1p-53;
  if (trial % 2) {
    size_t upto = 1 + (size_t)(rng_next(r) % ranks);
    top_p = runs[0].p;
    for (size_t k = 0; k < n_runs; k++)
      for (size_t c = k == 0; c < runs[k].count && upto > 1; c++, upto--)
        top_p += runs[k].p;
    top_p = trial % 4 == 1 ? top_p : nextafter(top_p, trial % 8 == 3 ? 0.0 : 2.0);
  }
  return top_p;
}

static void same_as_rank_by_rank(const sieve__run *runs, size_t n_runs, double top_p, int trial) {
  double m1, m2;
  const size_t a = sieve__top_p_runs(runs, n_runs, top_p, &m1),
               b = top_p_by_rank(runs, n_runs, top_p, &m2);
  cr_assert(a == b && same_double(m1, m2), "trial %d: kept %zu, %zu; margins %a, %a", trial, a, b,
            m1, m2);
}

/* Runs at the edges of a stretch: a first mass k ulps below a power of two (k = 0: at it), then
 * a p of a few of those ulps and a fraction of one. Their sums reach the next binade, where
 * the ulp doubles, and their p fall below half an ulp, on it, or just above a multiple of one. */
static size_t runs_at_a_binade_edge(rng *r, sieve__run *runs) {
  static const double fraction[5] = {0.0, 0.25, 0.375, 0.5, 0.75};
  const int e = -(int)(rng_next(r) % 12);
  const double u = ldexp(1.0, e - 53); /* the ulp just below 2^e */
  runs[0] = (sieve__run){ldexp(1.0, e) - (double)(rng_next(r) % 300) * u, 1};
  const double p = u * ((double)(rng_next(r) % 5) + fraction[rng_next(r) % 5]);
  runs[1] = (sieve__run){p, 1 + (size_t)(rng_next(r) % 2000)};
  return p > 0.0 ? 2 : 1;
}

Test(fast_path, sums_runs_of_equal_probabilities_as_rank_by_rank) {
  /* sieve__top_p_runs against one addition per rank: runs whose p have few bits (additions
   * halfway between two multiples of the mass's ulp, whose rounding alternates), p below half
   * an ulp of the mass, runs crossing binades, top_p at, just below and just above a mass. */
  rng r = {43};
  for (int trial = 0; trial < 10000; trial++) {
    sieve__run runs[6];
    const size_t n_runs = 1 + (size_t)(rng_next(&r) % 6);
    const int kind = (int)(rng_next(&r) % 3);
    double p = 0.25 + (double)(rng_next(&r) >> 11) * 0x1p-55, weight = 0.0;
    for (size_t k = 0; k < n_runs; k++) {
      if (k > 0 && kind == 0)
        p = nextafter(p * (double)(rng_next(&r) >> 11) * 0x1p-53, 0.0);
      if (k > 0 && kind == 1)
        p = ldexp(1.0, -(int)(rng_next(&r) % 24) - 2) * (1.0 + (double)(rng_next(&r) % 8) / 8.0);
      if (k > 0 && kind == 2)
        p = ldexp(p, -(int)(rng_next(&r) % 60) - 1);
      p = k > 0 && p >= runs[k - 1].p ? nextafter(runs[k - 1].p, 0.0) : p;
      runs[k] = (sieve__run){p, 1 + (size_t)(rng_next(&r) % (rng_next(&r) % 2 ? 4 : 100000))};
      weight += p * (double)runs[k].count;
    }
    const double scale = rng_next(&r) % 2 ? weight : 1.0; /* half the rows' p sum to about 1 */
    for (size_t k = 0; k < n_runs; k++)
      runs[k].p /= scale;
    same_as_rank_by_rank(runs, n_runs, a_top_p(&r, runs, n_runs, trial, 100000), trial);
  }
  /* Runs at a binade's edge: a stretch that would end one ulp past 2^e, or cross it with the
   * ulp below it, or subtract p instead of adding it (found by a search against runs.c's
   * mutants of the room, the step and d). */
  for (int trial = 0; trial < 4000; trial++) {
    sieve__run runs[2];
    const size_t n_runs = runs_at_a_binade_edge(&r, runs);
    same_as_rank_by_rank(runs, n_runs, a_top_p(&r, runs, n_runs, trial, 2000), 10000 + trial);
  }
}

Test(fast_path, keeps_blacklisted_tokens_removed_when_one_over_t_underflows) {
  /* Found by fuzz_oracle: at T = 3e144, (float)(1/T) is 0 and -inf * 0 is NaN; a -inf logit
   * must stay -inf (p = 0, never kept) and the finite ones all scale to 0, as in the spec. */
  const float row[3] = {0.0f, 4.47e-43f, 3.0f};
  const int64_t blacklist[2] = {0, 1};
  const sieve_engine engine = {0, blacklist, 2};
  const sieve_params p = {3.121749120157552e+144, 6.6e-25, 33555007, 0.0, NULL};
  double a[4], b[4];
  sieve_filter_info fa, fb;
  cr_assert_eq(sieve_filter(row, 3, &p, &engine, a, &fa), 0);
  cr_assert_eq(sieve_filter_spec(row, 3, &p, &engine, b, &fb), 0);
  cr_expect_eq(fa.kept, 1);
  cr_expect_eq(fb.kept, 1);
  cr_expect(isinf(a[0]) && isinf(a[1]) && same_double(a[2], 0.0));
  cr_expect_eq(memcmp(a, b, 3 * sizeof *a), 0);
  const float mixed[4] = {-INFINITY, 2.0f, -1.0f, -INFINITY};
  const sieve_params all = {1e300, 1.0, -1, 0.0, NULL};
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

/* The axes a traced DeepInfer answer records on the fast path, and on the spec path (a
 * force_topk of V changes nothing and sends the row there). */
static void axes_read(const float *row, size_t v, const sieve_params *p, uint32_t *fast,
                      uint32_t *spec) {
  double *lp = malloc(v * sizeof *lp);
  sieve_rule traced = SIEVE_RULE_DEEPINFER;
  sieve_engine every = {.force_topk = (int64_t)v};
  cr_assert(lp);
  *fast = *spec = 0;
  traced.consulted = fast;
  cr_assert_eq(sieve_filter_rule(&traced, row, v, p, NULL, lp, NULL), 0);
  traced.consulted = spec;
  cr_assert_eq(sieve_filter_rule(&traced, row, v, p, &every, lp, NULL), 0);
  free(lp);
}

/* The fit of `sieve run` reuses an answer for every rule that agrees on the axes it read
 * (sieve_rule.consulted). top_p = 1 with a top-k is where topp_one=float32_tail can cut a long
 * row, so both paths record topp_one there, and only there. */
Test(fast_path, records_topp_one_where_top_p_is_1_and_a_top_k_is_set) {
  float row[300];
  rng r = {29};
  for (size_t i = 0; i < 300; i++)
    row[i] = (float)(rng_unit(&r) * 8.0);
  const uint32_t bit = (uint32_t)1 << SIEVE_AXIS_TOPP_ONE;
  const sieve_params with_k = {1.0, 1.0, 50, 0.0, NULL}, without_k = {1.0, 1.0, -1, 0.0, NULL},
                     top_p = {1.0, 0.9, 50, 0.0, NULL};
  uint32_t fast, spec;
  axes_read(row, 300, &with_k, &fast, &spec);
  cr_expect(fast & bit && spec & bit, "top_p 1, top_k 50: fast %#x, spec %#x", fast, spec);
  axes_read(row, 300, &without_k, &fast, &spec);
  cr_expect(!(fast & bit) && !(spec & bit), "top_p 1, no top-k: fast %#x, spec %#x", fast, spec);
  axes_read(row, 300, &top_p, &fast, &spec);
  cr_expect(!(fast & bit) && !(spec & bit), "top_p 0.9: fast %#x, spec %#x", fast, spec);
}

Test(fast_path, records_rank_key_only_where_two_logits_could_meet_in_one_probability) {
  /* rank_key can change an answer only where two tokens tie in probability with different
   * logits (sieve.h: an axis is read only where its value could change the answer). */
  const float row[4] = {2.0f, 1.5f, 1.0f, 0.0f};
  const sieve_params p = {1.0, 1.0, 2, 0.0, NULL};
  uint32_t fast, spec;
  axes_read(row, 4, &p, &fast, &spec);
  cr_expect_eq((fast | spec) >> SIEVE_AXIS_RANK_KEY & 1, 0, "an ordinary row: fast %#x, spec %#x",
               fast, spec);
}

/* A row of v (2 or 3) tokens whose last two have one probability and different logits; top_k
 * v - 1 keeps token v - 2 (the lower id) under DeepInfer's rule and token v - 1 (the larger
 * logit) when ranking by logit. Both paths must record that the answer read rank_key. */
static void reads_rank_key_where_logits_meet(const float *row, size_t v) {
  const sieve_params p = {1.0, 1.0, (int64_t)v - 1, 0.0, NULL};
  sieve_rule by_logit = SIEVE_RULE_DEEPINFER;
  by_logit.rank_key = SIEVE_RANK_KEY_LOGIT;
  double ours[3], theirs[3];
  cr_assert_eq(sieve_filter(row, v, &p, NULL, ours, NULL), 0);
  cr_assert_eq(sieve_filter_rule(&by_logit, row, v, &p, NULL, theirs, NULL), 0);
  cr_assert(!isinf(ours[v - 2]) && isinf(ours[v - 1]) && isinf(theirs[v - 2]) &&
            !isinf(theirs[v - 1]));
  uint32_t fast, spec;
  axes_read(row, v, &p, &fast, &spec);
  cr_expect(fast >> SIEVE_AXIS_RANK_KEY & spec >> SIEVE_AXIS_RANK_KEY & 1, "fast %#x, spec %#x",
            fast, spec);
}

Test(fast_path, records_rank_key_where_rounding_s_minus_max_ties_two_logits) {
  const float row[3] = {3.0f, 0.0f, 0x1p-100f}; /* 2^-100 - 3 rounds to -3 in double */
  reads_rank_key_where_logits_meet(row, 3);
}

/* 2^-20 - 2^-44 - 600 rounds (to even) to 2^-20 - 600: one e for two logits, only one of them
 * below 2^-20 and e far above the subnormals, so only the rounding of s - max shows the tie. */
Test(fast_path, records_rank_key_where_rounding_s_minus_max_ties_a_logit_of_2_to_the_minus_20) {
  const float row[3] = {600.0f, 0x1.fffffep-21f, 0x1p-20f};
  reads_rank_key_where_logits_meet(row, 3);
}

Test(fast_path, records_rank_key_where_exp_ties_two_logits_near_the_largest) {
  const float row[3] = {0x1p-80f, 0x1p-90f, 0x1.000002p-90f}; /* both e round to 1 */
  reads_rank_key_where_logits_meet(row, 3);
}

Test(fast_path, records_rank_key_where_token_0_and_the_largest_share_one_probability) {
  const float row[2] = {0x1p-90f, 0x1p-80f}; /* both e round to 1 */
  reads_rank_key_where_logits_meet(row, 2);
}

/* A flat row whose most probable tokens have two logits and one probability (2^-80 and 2^-90
 * both give e = 1): the runs of equal p must merge the two levels, so that a top-k inside them
 * keeps the first tokens in token order. */
Test(fast_path, keeps_a_top_k_inside_one_probability_that_two_logits_share) {
  const size_t v = 5000;
  float *row = malloc(v * sizeof *row);
  cr_assert(row);
  for (size_t i = 0; i < v; i++)
    row[i] = i >= 100 ? -1.0f : i % 2 ? 0x1p-90f : 0x1p-80f;
  const sieve_params cases[] = {{1.0, 1.0, 60, 0.0, NULL}, {1.0, 0.01, -1, 0.0, NULL}};
  same_results(row, v, cases, 2);
}

/* A flat row whose levels have e one double apart (logits 0, -2^-53, -2^-52, ... give e = 1,
 * 1 - 2^-53, 1 - 2^-52, ...), so that runs of neighbouring p meet at the thresholds that tell
 * one run's tokens from the next; top-k cuts inside each run. */
Test(fast_path, finds_the_tokens_of_runs_whose_probabilities_are_neighbours) {
  const size_t v = 5000, levels = 6;
  float *row = malloc(v * sizeof *row);
  cr_assert(row);
  for (size_t i = 0; i < v; i++)
    row[i] = -(float)ldexp((double)(i * 7 % levels), -53);
  sieve_params cases[12];
  for (size_t c = 0; c < 12; c++)
    cases[c] = (sieve_params){1.0, 1.0, (int64_t)(1 + c * v / 12 + c % 3), 0.0, NULL};
  same_results(row, v, cases, 12);
}

/* The fit of `sieve run` reuses an answer for every rule that agrees on the axes it read. On a
 * flat row (here of SIEVE__RUNS_MAX distinct logits) every rank is known as a run, so the fast
 * path reads topp_ties as the spec path does: not where the cut falls between two
 * probabilities (after the 100 tokens of the largest), and where it falls inside a run. A
 * prefix would end at that cut and read it, as it does on a row of more distinct logits. */
Test(fast_path, reads_topp_ties_on_a_flat_row_only_where_the_cut_falls_in_a_tie) {
  const size_t v = 5000;
  float *row = malloc(v * sizeof *row);
  cr_assert(row);
  for (size_t i = 0; i < v; i++)
    row[i] = i < 100 ? 0.0f : -10.0f - 0.01f * (float)(i % (SIEVE__RUNS_MAX - 1));
  const uint32_t bit = (uint32_t)1 << SIEVE_AXIS_TOPP_TIES;
  const double top_p[2] = {0.995, 0.5}; /* the cut after rank 100, and inside the first run */
  for (int c = 0; c < 2; c++) {
    uint32_t fast, spec;
    axes_read(row, v, &(sieve_params){1.0, top_p[c], -1, 0.0, NULL}, &fast, &spec);
    cr_assert_eq(spec & bit, c == 1 ? bit : 0, "top_p %g: the spec path reads %#x", top_p[c], spec);
    cr_expect_eq(fast & bit, spec & bit, "top_p %g: fast %#x, spec %#x", top_p[c], fast, spec);
  }
  free(row);
}

/* Each way the filter writes its output (the few kept tokens by id, the kept set by a test on
 * e, a row of runs, the spec path) on a row whose logits and logprobs end at an inaccessible
 * page: a read or a write past the row crashes the test. */
Test(fast_path, reads_and_writes_nothing_past_the_row) {
  const size_t v = 5003; /* odd, and long enough for the prefix and the few kept tokens */
  float *row = guarded(v * sizeof *row), *flat = guarded(v * sizeof *flat);
  double *lp = guarded(v * sizeof *lp);
  rng r = {31};
  for (size_t i = 0; i < v; i++) {
    row[i] = (float)(rng_unit(&r) * 8.0 - 4.0);
    flat[i] = (float)(i % 3);
  }
  const sieve_engine spec = {.force_topk = (int64_t)v};
  const sieve_params cases[] = {
      {1.0, 1.0, 3, 0.0, NULL}, {1.0, 0.9, -1, 0.0, NULL}, {0.7, 0.5, 40, 0.0, NULL}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    cr_expect_eq(sieve_filter(row, v, &cases[c], NULL, lp, NULL), 0, "case %zu", c);
    cr_expect_eq(sieve_filter(flat, v, &cases[c], NULL, lp, NULL), 0, "case %zu, flat", c);
    cr_expect_eq(sieve_filter(row, v, &cases[c], &spec, lp, NULL), 0, "case %zu, spec", c);
  }
}

/* sieve_filter_spec ranks the whole row (its entries take more bytes than the row in float64);
 * the fast path at top_p = 1 with no top-k ranks nothing. */
Test(fast_path, the_spec_path_ranks_the_whole_row_and_the_fast_path_does_not) {
  enum { V = 5000 };
  static float row[V];
  static double lp[V];
  const sieve_params p = SIEVE_PARAMS_DEFAULT;
  if (!fail_allocations(sizeof lp + 1, 0))
    cr_skip_test("malloc is the sanitizer's");
  const int spec = sieve_filter_spec(row, V, &p, NULL, lp, NULL);
  const int fast = sieve_filter(row, V, &p, NULL, lp, NULL);
  allocations_succeed();
  cr_expect_eq(spec, SIEVE_ENOMEM);
  cr_expect_eq(fast, 0);
}
