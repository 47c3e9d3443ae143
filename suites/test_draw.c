/*
 * The uniform (seed 000:34-54), the draw (seed 000:48-57), positions
 * (seed 000:59) and top_logprobs (seed 000:74).
 */
#include <string.h>

#include "helpers.h"

static double uniform(uint64_t seed, uint64_t position, int sample_case, int tag) {
  sieve_draw_key key = {seed, position, sample_case, tag};
  double u = -1.0;
  cr_assert_eq(sieve_uniform(&key, &u), 0);
  return u;
}

/* --- SplitMix64 against published vectors ------------------------------------ */

/* splitmix64.c (Vigna, prng.di.unimi.it) and Rosetta Code "Pseudo-random numbers/Splitmix64":
 * next() = mix(state += golden). Seeds 0 and 1234567, first five outputs. */
Test(hash, mix64_matches_the_published_splitmix64_stream_for_seed_0) {
  const uint64_t want[5] = {0xe220a8397b1dcdafULL, 0x6e789e6aa1b965f4ULL, 0x06c45d188009454fULL,
                            0xf88bb8a8724c81ecULL, 0x1b39896a51a8749bULL};
  for (uint64_t k = 0; k < 5; k++)
    cr_expect_eq(sieve_mix64((k + 1) * SIEVE_HASH_GOLDEN), want[k], "output %lu", (unsigned long)k);
}

Test(hash, mix64_matches_the_published_splitmix64_stream_for_seed_1234567) {
  const uint64_t want[5] = {6457827717110365317ULL, 3203168211198807973ULL, 9817491932198370423ULL,
                            4593380528125082431ULL, 16408922859458223821ULL};
  for (uint64_t k = 0; k < 5; k++)
    cr_expect_eq(sieve_mix64(1234567 + (k + 1) * SIEVE_HASH_GOLDEN), want[k]);
}

Test(hash, mix64_has_no_increment_so_zero_maps_to_zero) { cr_expect_eq(sieve_mix64(0), 0); }

/* --- the uniform -------------------------------------------------------------- */

Test(uniform, s000_l47_seed0_position0_case0_gives_u_zero) {
  /* seq = 0, combined = 0, and the finalizer maps 0 to 0. */
  expect_near(uniform(0, 0, 0, SIEVE_TAG_MAIN), 0.0, 0, "u");
}

Test(uniform, s000_l54_u_is_a_multiple_of_2_pow_minus_53_in_0_1) {
  rng r = {99};
  for (int i = 0; i < 2000; i++) {
    double u = uniform(rng_next(&r), rng_next(&r), (int)(rng_next(&r) % 3), i % 2);
    cr_assert(u >= 0.0 && u < 1.0);
    double scaled = u * 0x1p53;
    cr_assert(scaled == floor(scaled), "u * 2^53 must be an integer");
  }
}

Test(uniform, s000_l47_u_uses_the_top_53_bits_of_the_mixed_value) {
  /* position 0, case 0: seq = 0 and combined = seed. */
  const uint64_t seed = 0x0123456789abcdefULL;
  double want = (double)(sieve_mix64(seed) >> 11) * 0x1p-53;
  expect_near(uniform(seed, 0, 0, SIEVE_TAG_MAIN), want, 0, "u");
}

Test(uniform, s000_l59_tag_mtp_adds_1000000007_to_the_seed) {
  rng r = {7};
  for (int i = 0; i < 200; i++) {
    uint64_t seed = rng_next(&r), pos = rng_next(&r) % (1ULL << 40);
    int c = (int)(rng_next(&r) % 3);
    double mtp = uniform(seed, pos, c, SIEVE_TAG_MTP);
    double main_shifted = uniform(seed + 1000000007ULL, pos, c, SIEVE_TAG_MAIN);
    expect_near(mtp, main_shifted, 0, "mtp");
  }
}

Test(uniform, s000_l59_mtp_seed_offset_wraps_modulo_2_pow_64) {
  double mtp = uniform(UINT64_MAX, 3, 0, SIEVE_TAG_MTP);
  expect_near(mtp, uniform(1000000006ULL, 3, 0, SIEVE_TAG_MAIN), 0, "wrapped seed");
}

Test(uniform, s000_l52_the_three_cases_give_different_numbers) {
  double a = uniform(42, 10, 0, 0), b = uniform(42, 10, 1, 0), c = uniform(42, 10, 2, 0);
  cr_expect(a != b && b != c && a != c);
}

Test(uniform, s000_l45_l46_combined_is_seed_plus_seq_xor_seq_shifted_13) {
  /* The statement of seed 000:45-47, written out over random keys with high bits set. */
  rng r = {2024};
  for (int i = 0; i < 500; i++) {
    uint64_t seed = rng_next(&r), pos = rng_next(&r) >> (rng_next(&r) % 64);
    int c = (int)(rng_next(&r) % 3);
    uint64_t seq = (pos * 3 + (uint64_t)c) * 0x9E3779B97F4A7C15ULL;
    uint64_t combined = seed + (seq ^ (seq << 13));
    double want = (double)(sieve_mix64(combined) >> 11) / 9007199254740992.0;
    expect_near(uniform(seed, pos, c, SIEVE_TAG_MAIN), want, 0, "u");
  }
}

Test(uniform, the_seed_of_zero_u_draws_exactly_zero_at_its_position_and_case) {
  rng r = {31};
  for (int i = 0; i < 300; i++) {
    uint64_t pos = rng_next(&r) >> (rng_next(&r) % 64);
    int c = (int)(rng_next(&r) % 3);
    uint64_t seed = sieve_seed_of_zero_u(pos, c);
    expect_near(uniform(seed, pos, c, SIEVE_TAG_MAIN), 0.0, 0, "u at its own key");
    cr_expect(uniform(seed, pos + 1, c, SIEVE_TAG_MAIN) > 0.0, "u at the next position");
  }
}

Test(uniform, s000_l34_depends_only_on_seed_position_case_and_tag) {
  double first = uniform(123, 456, 1, SIEVE_TAG_MTP);
  for (int i = 0; i < 10; i++)
    expect_near(uniform(123, 456, 1, SIEVE_TAG_MTP), first, 0, "repeat");
}

Test(uniform, a_case_outside_0_to_2_is_an_error) {
  sieve_draw_key key = {1, 1, 3, SIEVE_TAG_MAIN};
  double u;
  cr_expect_eq(sieve_uniform(&key, &u), SIEVE_ECASE);
  key.sample_case = -1;
  cr_expect_eq(sieve_uniform(&key, &u), SIEVE_ECASE);
}

Test(uniform, a_null_key_or_a_null_u_is_an_error) {
  sieve_draw_key key = {1, 1, 0, SIEVE_TAG_MAIN};
  double u = -1.0;
  cr_expect_eq(sieve_uniform(NULL, &u), SIEVE_EARG);
  cr_expect_eq(sieve_uniform(&key, NULL), SIEVE_EARG);
  cr_expect(same_double(u, -1.0), "nothing written");
}

Test(uniform, an_unknown_tag_is_an_error) {
  sieve_draw_key key = {1, 1, 0, 2};
  double u;
  cr_expect_eq(sieve_uniform(&key, &u), SIEVE_ETAG);
}

/* --- the draw ----------------------------------------------------------------- */

static int64_t draw(const double *p, size_t v, double u) {
  int64_t token = -1;
  cr_assert_eq(sieve_draw(p, v, u, &token, NULL), 0);
  return token;
}

Test(draw, s000_l57_panel3_u_0_70_on_0_622_0_378_draws_floor) {
  const double p[2] = {0.622, 0.378};
  cr_expect_eq(draw(p, 2, 0.70), 1);
}

Test(draw, s000_l55_returns_the_first_token_whose_cdf_exceeds_u_times_total) {
  const double p[3] = {1.0, 1.0, 2.0}; /* total 4: cdf 1, 2, 4 */
  cr_expect_eq(draw(p, 3, 0.0), 0);
  cr_expect_eq(draw(p, 3, 0.24), 0);
  cr_expect_eq(draw(p, 3, 0.25), 1, "cdf 1 is not > 1");
  cr_expect_eq(draw(p, 3, 0.5), 2, "cdf 2 is not > 2");
  cr_expect_eq(draw(p, 3, 0.999), 2);
}

Test(draw, s002_l145_cdf_darts_pick_tokens_0_1_3_4) {
  const double p[5] = {0.0844, 0.6236, 0.2294, 0.0512, 0.0114};
  cr_expect_eq(draw(p, 5, 0.05), 0);
  cr_expect_eq(draw(p, 5, 0.5), 1);
  cr_expect_eq(draw(p, 5, 0.95), 3);
  cr_expect_eq(draw(p, 5, 0.999), 4);
}

Test(draw, a_token_of_probability_zero_is_never_drawn) {
  const double p[6] = {0.0, 0.5, 0.0, 0.0, 0.5, 0.0};
  for (int i = 0; i < 1000; i++) {
    int64_t t = draw(p, 6, i / 1000.0);
    cr_assert(t == 1 || t == 4, "drew %ld", (long)t);
  }
}

Test(draw, s000_l48_cdf_is_in_token_order_not_probability_order) {
  const double p[3] = {0.1, 0.2, 0.7};
  cr_expect_eq(draw(p, 3, 0.05), 0, "probability order would give token 2");
}

Test(draw, probabilities_need_not_sum_to_one) {
  const double p[2] = {3.0, 1.0};
  cr_expect_eq(draw(p, 2, 0.74), 0);
  cr_expect_eq(draw(p, 2, 0.75), 1);
}

Test(draw, margin_is_the_distance_to_the_nearer_cdf_step) {
  const double p[3] = {1.0, 1.0, 2.0};
  int64_t token;
  double margin;
  cr_assert_eq(sieve_draw(p, 3, 0.3, &token, &margin), 0);
  expect_near(margin, 0.2, 1e-15, "target 1.2 lies 0.2 above the step at 1");
  cr_assert_eq(sieve_draw(p, 3, 0.45, &token, &margin), 0);
  expect_near(margin, 0.2, 1e-15, "target 1.8 lies 0.2 below the step at 2");
}

Test(draw, zero_total_is_an_error) {
  const double p[3] = {0.0, 0.0, 0.0};
  int64_t t;
  cr_expect_eq(sieve_draw(p, 3, 0.5, &t, NULL), SIEVE_EZEROMASS);
}

Test(draw, negative_nan_or_infinite_probabilities_are_an_error) {
  const double bad[3][2] = {{0.5, -0.1}, {NAN, 1.0}, {INFINITY, 1.0}};
  int64_t t;
  for (int i = 0; i < 3; i++)
    cr_expect_eq(sieve_draw(bad[i], 2, 0.5, &t, NULL), SIEVE_EPROBS);
  const double huge[2] = {1.7e308, 1.7e308};
  cr_expect_eq(sieve_draw(huge, 2, 0.5, &t, NULL), SIEVE_EPROBS, "the sum overflows");
}

Test(draw, a_minus_inf_probability_is_an_error) {
  const double p[3] = {0.5, -INFINITY, 0.5};
  int64_t t;
  cr_expect_eq(sieve_draw(p, 3, 0.5, &t, NULL), SIEVE_EPROBS);
}

Test(draw, a_null_row_or_token_is_an_argument_error) {
  const double p[1] = {1.0};
  int64_t t;
  cr_expect_eq(sieve_draw(NULL, 1, 0.5, &t, NULL), SIEVE_EARG);
  cr_expect_eq(sieve_draw(p, 1, 0.5, NULL, NULL), SIEVE_EARG);
}

Test(draw, the_vocabulary_is_checked_before_u) {
  const double p[1] = {1.0};
  int64_t t;
  cr_expect_eq(sieve_draw(p, 0, 0.5, &t, NULL), SIEVE_EVOCAB);
  cr_expect_eq(sieve_draw(p, (size_t)SIEVE_VOCAB_MAX + 1, 2.0, &t, NULL), SIEVE_EVOCAB);
  cr_expect_eq(sieve_draw(p, SIEVE_VOCAB_MAX, 2.0, &t, NULL), SIEVE_EUNIFORM,
               "2^31 - 1 tokens is a vocabulary size, so u is checked next");
}

Test(draw, reads_nothing_past_the_row) {
  const double *p = guarded_row(700); /* a partial last chunk, at the end of a page */
  int64_t t;
  double margin;
  cr_expect_eq(sieve_draw(p, 700, 0.999, &t, &margin), 0);
  cr_expect_eq(t, 699);
}

Test(draw, u_outside_0_1_is_an_error) {
  const double p[1] = {1.0};
  int64_t t;
  cr_expect_eq(sieve_draw(p, 1, 1.0, &t, NULL), SIEVE_EUNIFORM);
  cr_expect_eq(sieve_draw(p, 1, -0.1, &t, NULL), SIEVE_EUNIFORM);
  cr_expect_eq(sieve_draw(p, 1, NAN, &t, NULL), SIEVE_EUNIFORM);
}

Test(draw, largest_u_still_draws_the_last_positive_token) {
  const double p[4] = {0.25, 0.25, 0.5, 0.0};
  cr_expect_eq(draw(p, 4, 1.0 - 0x1p-53), 2);
}

/* --- positions ------------------------------------------------------------------ */

static int64_t position(sieve_mode mode, int64_t q, int64_t k, int64_t row) {
  int64_t pos = -1;
  cr_assert_eq(sieve_position(mode, q, k, row, &pos), 0);
  return pos;
}

Test(position, s000_l59_prefill_position_is_seqlen_k) {
  cr_expect_eq(position(SIEVE_PREFILL, 7, 7, 0), 7);
  cr_expect_eq(position(SIEVE_PREFILL, 3, 12, 0), 12);
}

Test(position, s000_l59_decode_first_row_is_seqlen_k_minus_seqlen_q_plus_1) {
  cr_expect_eq(position(SIEVE_DECODE, 1, 10, 0), 10);
  cr_expect_eq(position(SIEVE_DECODE, 4, 10, 0), 7);
}

Test(position, s000_l59_decode_row_r_adds_r) { cr_expect_eq(position(SIEVE_DECODE, 4, 10, 3), 10); }

Test(position, positions_up_to_2_pow_40_are_exact) {
  int64_t k = INT64_C(1) << 40;
  cr_expect_eq(position(SIEVE_DECODE, 2, k, 1), k);
}

Test(position, impossible_lengths_and_rows_are_an_error) {
  int64_t pos;
  cr_expect_eq(sieve_position(SIEVE_DECODE, 0, 5, 0, &pos), SIEVE_EPOSITION);
  cr_expect_eq(sieve_position(SIEVE_DECODE, 6, 5, 0, &pos), SIEVE_EPOSITION);
  cr_expect_eq(sieve_position(SIEVE_DECODE, 2, 5, 2, &pos), SIEVE_EPOSITION);
  cr_expect_eq(sieve_position(SIEVE_PREFILL, 2, 5, 1, &pos), SIEVE_EPOSITION);
  cr_expect_eq(sieve_position(SIEVE_DECODE, 2, 5, -1, &pos), SIEVE_EPOSITION);
}

/* --- top_logprobs --------------------------------------------------------------- */

Test(top_logprobs, s000_l74_top_k_2_with_4_entries_has_two_finite) {
  const float row[5] = {1.0f, 3.0f, 2.0f, 0.5f, -1.0f};
  filtered f = run_filter(row, 5, 1.0, 1.0, 2);
  sieve_top_entry top[4];
  cr_assert_eq(sieve_top_logprobs(f.lp, 5, 4, top), 0);
  cr_expect_eq(top[0].token, 1);
  cr_expect_eq(top[1].token, 2);
  cr_expect(!isinf(top[0].logprob) && !isinf(top[1].logprob));
  expect_minus_inf(top[2].logprob, "entry 3");
  expect_minus_inf(top[3].logprob, "entry 4");
}

Test(top_logprobs, minus_inf_entries_come_in_token_order) {
  const float row[5] = {1.0f, 3.0f, 2.0f, 0.5f, -1.0f};
  filtered f = run_filter(row, 5, 1.0, 1.0, 2);
  sieve_top_entry top[5];
  cr_assert_eq(sieve_top_logprobs(f.lp, 5, 5, top), 0);
  cr_expect_eq(top[2].token, 0);
  cr_expect_eq(top[3].token, 3);
  cr_expect_eq(top[4].token, 4);
}

Test(top_logprobs, equal_logprobs_come_in_token_order) {
  const double lp[4] = {-1.0, -0.5, -1.0, -0.5};
  sieve_top_entry top[4];
  cr_assert_eq(sieve_top_logprobs(lp, 4, 4, top), 0);
  cr_expect(top[0].token == 1 && top[1].token == 3 && top[2].token == 0 && top[3].token == 2);
}

/* Above 4096 entries the ranking takes a radix sort on the keys' bits, where -0 and +0 differ. */
Test(top_logprobs, minus_zero_and_zero_are_equal_logprobs_in_a_long_row) {
  enum { V = 5000 };
  static double lp[V];
  for (size_t i = 0; i < V; i++)
    lp[i] = -1.0;
  lp[0] = -0.0;
  lp[1] = 0.0;
  sieve_top_entry top[2];
  cr_assert_eq(sieve_top_logprobs(lp, V, 2, top), 0);
  cr_expect(top[0].token == 0 && top[1].token == 1);
}

/* The entries are allocated (the first allocation as large as the row); the radix sort's buffers
 * and qsort's merge buffer are not, so qsort sorts in place: the same order. */
Test(top_logprobs, a_long_row_is_ranked_without_memory_for_the_sort_buffers) {
  enum { V = 5000 };
  static double lp[V];
  for (size_t i = 0; i < V; i++)
    lp[i] = -1.0;
  lp[V - 1] = 0.0;
  sieve_top_entry top[2];
  if (!fail_allocations(sizeof lp, 1))
    cr_skip_test("malloc is the sanitizer's");
  const int rc = sieve_top_logprobs(lp, V, 2, top);
  allocations_succeed();
  cr_assert_eq(rc, 0);
  cr_expect(top[0].token == V - 1 && top[1].token == 0);
}

Test(top_logprobs, n_zero_writes_nothing_and_n_above_v_is_an_error) {
  const double lp[2] = {-0.1, -2.0};
  sieve_top_entry top[3];
  memset(top, 0x5a, sizeof top);
  cr_expect_eq(sieve_top_logprobs(lp, 2, 0, top), 0);
  cr_expect_eq(top[0].token, 0x5a5a5a5a5a5a5a5aLL);
  cr_expect_eq(sieve_top_logprobs(lp, 2, 3, top), SIEVE_ETOPLOGPROBS);
}

Test(top_logprobs, a_null_row_or_a_null_out_for_one_entry_is_an_error) {
  const double lp[2] = {-0.1, -2.0};
  sieve_top_entry top[1];
  cr_expect_eq(sieve_top_logprobs(NULL, 2, 1, top), SIEVE_EARG);
  cr_expect_eq(sieve_top_logprobs(NULL, 2, 0, top), SIEVE_EARG);
  cr_expect_eq(sieve_top_logprobs(lp, 2, 1, NULL), SIEVE_EARG);
  cr_expect_eq(sieve_top_logprobs(lp, 2, 0, NULL), 0, "n = 0 needs no out");
}

Test(top_logprobs, a_vocabulary_of_0_or_above_the_largest_is_an_error) {
  const double lp[1] = {0.0};
  sieve_top_entry top[1];
  cr_expect_eq(sieve_top_logprobs(lp, 0, 0, top), SIEVE_EVOCAB);
  cr_expect_eq(sieve_top_logprobs(lp, (size_t)SIEVE_VOCAB_MAX + 1, 0, top), SIEVE_EVOCAB);
  cr_expect_eq(sieve_top_logprobs(lp, SIEVE_VOCAB_MAX, 0, top), 0, "n = 0 reads no logprob");
}
