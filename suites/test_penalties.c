/* Penalties (seed 004's step 1, before temperature) and min-p (ours; oracle/SPEC.md,
 * "Penalties and min-p"). Every value below is exact in float32, so each check is exact too. */
#include <stdlib.h>

#include "helpers.h"

static const float row4[4] = {2.0f, 1.5f, 1.0f, 0.0f};

static sieve_penalties counting(const int64_t *output, size_t n, double frequency, double presence,
                                double repetition) {
  sieve_penalties pen = SIEVE_PENALTIES_DEFAULT;
  pen.output = output;
  pen.n_output = n;
  pen.frequency = frequency;
  pen.presence = presence;
  pen.repetition = repetition;
  return pen;
}

static filtered penalized(const float *row, size_t v, double t, int64_t top_k,
                          const sieve_penalties *pen) {
  const sieve_params p = {t, 1.0, top_k, 0.0, pen};
  return run_filter_params(row, v, &p, NULL);
}

/* The penalized logit of token i less that of token j, read back from the logprobs at T = 1. */
static double gap(const filtered *f, size_t i, size_t j) { return f->lp[i] - f->lp[j]; }

Test(penalties, s004_l199_a_penalty_that_reorders_the_top_tokens_changes_what_top_k_keeps) {
  const int64_t out[1] = {0};
  const sieve_penalties pen = counting(out, 1, 0.75, 0.0, 1.0);
  filtered plain = penalized(row4, 4, 1.0, 1, NULL), f = penalized(row4, 4, 1.0, 1, &pen);
  cr_assert_eq(f.rc, 0);
  cr_expect(is_kept(&plain, 0) && !is_kept(&plain, 1), "without the penalty token 0 leads");
  cr_expect(is_kept(&f, 1) && !is_kept(&f, 0), "2 - 0.75 = 1.25 falls below 1.5");
  cr_expect_eq(f.info.kept, 1);
}

Test(penalties, s004_l264_the_penalty_applies_before_temperature) {
  /* Before T = 0.5: (2 - 0.625) * 2 = 2.75 < 3. After it, 4 - 0.625 = 3.375 would lead. */
  const int64_t out[1] = {0};
  const sieve_penalties pen = counting(out, 1, 0.625, 0.0, 1.0);
  filtered f = penalized(row4, 4, 0.5, 1, &pen);
  cr_assert_eq(f.rc, 0);
  cr_expect(is_kept(&f, 1) && !is_kept(&f, 0));
  filtered two = penalized(row4, 4, 0.5, 2, &pen);
  expect_near(two.lp[1], -log1p(exp(-0.25)), 1e-15, "token 1 against 0 at scaled 3 and 2.75");
}

Test(penalties, frequency_counts_each_occurrence_and_presence_once) {
  const int64_t out[4] = {2, 2, 2, 0};
  const sieve_penalties pen = counting(out, 4, 0.25, 0.5, 1.0);
  filtered f = penalized(row4, 4, 1.0, -1, &pen);
  cr_assert_eq(f.rc, 0);
  expect_near(gap(&f, 2, 3), -0.25, 1e-14, "1 - (3 * 0.25 + 0.5)");
  expect_near(gap(&f, 0, 3), 1.25, 1e-14, "2 - (0.25 + 0.5)");
  expect_near(gap(&f, 1, 3), 1.5, 1e-14, "token 1, not counted");
}

Test(penalties, a_token_counted_twice_apart_takes_presence_and_repetition_once) {
  /* Tokens 0 and 1 twice each, apart: presence and repetition once, frequency twice. */
  const int64_t out[5] = {0, 1, 2, 1, 0};
  const sieve_penalties pen = counting(out, 5, 0.25, 0.5, 2.0);
  filtered f = penalized(row4, 4, 1.0, -1, &pen);
  cr_assert_eq(f.rc, 0);
  expect_near(gap(&f, 0, 3), 0.5, 1e-14, "(2 - (2 * 0.25 + 0.5)) / 2");
  expect_near(gap(&f, 1, 3), 0.25, 1e-14, "(1.5 - (2 * 0.25 + 0.5)) / 2");
  expect_near(gap(&f, 2, 3), 0.125, 1e-14, "(1 - (0.25 + 0.5)) / 2");
}

/* glibc's qsort sorts in a buffer of its own, and falls back to an in-place quicksort when that
 * buffer cannot be allocated; the counts must not depend on which. */
Test(penalties, a_long_output_is_counted_the_same_when_the_sort_has_no_memory_of_its_own) {
  const size_t n = (size_t)1 << 20; /* 8 MB of ids: room for the oracle's copy, not the sort's */
  int64_t *out = malloc(n * sizeof *out);
  cr_assert(out);
  for (size_t i = 0; i < n; i++)
    out[i] = 1;
  const sieve_penalties pen = counting(out, n, 0x1p-20, 0.0, 1.0);
  const sieve_params p = {1.0, 1.0, -1, 0.0, &pen};
  double lp[4];
  if (!fail_allocations(n * sizeof *out, 1)) /* the oracle's copy of the ids, not the sort's */
    cr_skip_test("malloc cannot be replaced under AddressSanitizer");
  const int rc = sieve_filter(row4, 4, &p, NULL, lp, NULL);
  allocations_succeed();
  cr_assert_eq(rc, 0);
  expect_near(lp[1] - lp[3], 0.5, 0, "1.5 - 2^20 * 2^-20");
  expect_near(lp[0] - lp[3], 2.0, 0, "token 0, not counted");
  free(out);
}

Test(penalties, repetition_divides_a_positive_logit_and_multiplies_a_negative_one) {
  const float row[4] = {2.0f, -1.0f, 1.0f, 0.5f};
  const int64_t out[2] = {0, 1};
  const sieve_penalties pen = counting(out, 2, 0.0, 0.0, 2.0);
  filtered f = penalized(row, 4, 1.0, -1, &pen);
  cr_assert_eq(f.rc, 0);
  cr_expect(same_double(f.lp[0], f.lp[2]), "2 / 2 = 1");
  expect_near(gap(&f, 1, 3), -2.5, 1e-14, "-1 * 2 = -2");
}

Test(penalties, repetition_scales_after_the_additive_penalties) {
  /* (2 - 1) / 2 = 0.5 ties token 3; 2 / 2 - 1 = 0 would not. */
  const float row[4] = {2.0f, 1.5f, 1.0f, 0.5f};
  const int64_t out[1] = {0};
  const sieve_penalties pen = counting(out, 1, 1.0, 0.0, 2.0);
  filtered f = penalized(row, 4, 1.0, -1, &pen);
  cr_assert_eq(f.rc, 0);
  cr_expect(same_double(f.lp[0], f.lp[3]));
}

Test(penalties, only_the_last_n_output_tokens_count) {
  const int64_t out[3] = {0, 1, 1};
  sieve_penalties pen = counting(out, 3, 1.0, 0.0, 1.0);
  pen.last_n = 2;
  filtered f = penalized(row4, 4, 1.0, -1, &pen), plain = penalized(row4, 4, 1.0, -1, NULL);
  cr_assert_eq(f.rc, 0);
  expect_near(gap(&f, 0, 2), 1.0, 1e-14, "token 0 is before the window");
  expect_near(gap(&f, 1, 3), -0.5, 1e-14, "1.5 - 2 * 1");
  pen.last_n = 0;
  f = penalized(row4, 4, 1.0, -1, &pen);
  for (size_t i = 0; i < 4; i++)
    cr_expect(same_double(f.lp[i], plain.lp[i]), "last_n 0 counts nothing: token %zu", i);
}

Test(penalties, the_prompt_is_not_counted) {
  const int64_t prompt[2] = {0, 1};
  sieve_penalties pen = counting(NULL, 0, 1.0, 1.0, 2.0);
  pen.prompt = prompt;
  pen.n_prompt = 2;
  filtered f = penalized(row4, 4, 1.0, -1, &pen), plain = penalized(row4, 4, 1.0, -1, NULL);
  cr_assert_eq(f.rc, 0);
  for (size_t i = 0; i < 4; i++)
    cr_expect(same_double(f.lp[i], plain.lp[i]), "token %zu", i);
}

Test(penalties, a_token_id_outside_the_vocabulary_is_an_error_output_ids_first) {
  const int64_t in[1] = {3}, past[1] = {4}, negative[1] = {-1};
  sieve_penalties pen = counting(past, 1, 0.0, 0.0, 1.0);
  cr_expect_eq(penalized(row4, 4, 1.0, -1, &pen).rc, SIEVE_EOUTPUTTOKEN);
  pen.output = in;
  pen.prompt = negative;
  pen.n_prompt = 1;
  cr_expect_eq(penalized(row4, 4, 1.0, -1, &pen).rc, SIEVE_EPROMPTTOKEN);
  pen.output = past;
  cr_expect_eq(penalized(row4, 4, 1.0, -1, &pen).rc, SIEVE_EOUTPUTTOKEN);
  const float nan_row[4] = {NAN, 1.0f, 0.0f, 0.0f};
  cr_expect_eq(penalized(nan_row, 4, 1.0, -1, &pen).rc, SIEVE_ENAN, "the logits come first");
}

Test(penalties, a_penalized_logit_beyond_float32_is_an_overflow_error) {
  const int64_t out[1] = {0};
  const sieve_penalties pen = counting(out, 1, 0.0, 0.0, 1e-39);
  cr_expect_eq(penalized(row4, 4, 1.0, -1, &pen).rc, SIEVE_EOVERFLOW, "2 / 1e-39");
}

Test(penalties, removed_tokens_stay_removed) {
  const float row[4] = {-INFINITY, 1.5f, 1.0f, -1.0f};
  const int64_t out[3] = {0, 2, 3}, banned[1] = {2};
  const sieve_penalties pen = counting(out, 3, -2.0, -2.0, 0.5);
  const sieve_engine e = {0, banned, 1};
  const sieve_params p = {1.0, 1.0, -1, 0.0, &pen};
  filtered f = run_filter_params(row, 4, &p, &e);
  cr_assert_eq(f.rc, 0);
  expect_minus_inf(f.lp[0], "a -inf logit");
  expect_minus_inf(f.lp[2], "a blacklisted token");
  expect_near(gap(&f, 3, 1), 4.5, 1e-14, "(-1 - (-2 - 2)) / 0.5 = 6, against 1.5");
}

Test(penalties, s000_l67_force_topk_keeps_the_largest_raw_logits_before_the_penalties) {
  const int64_t out[1] = {0};
  const sieve_penalties pen = counting(out, 1, 2.0, 0.0, 1.0);
  const sieve_engine e = {1, NULL, 0};
  const sieve_params p = {1.0, 1.0, -1, 0.0, &pen};
  filtered f = run_filter_params(row4, 4, &p, &e);
  cr_assert_eq(f.rc, 0);
  cr_expect_eq(f.info.kept, 1);
  cr_expect(same_double(f.lp[0], 0.0), "token 0 alone, though 2 - 2 = 0 ranks it last");
}

Test(min_p, removes_a_token_whose_probability_is_below_min_p_times_the_largest) {
  const sieve_params p = {1.0, 1.0, -1, 0.5, NULL};
  filtered f = run_filter_params(row4, 4, &p, NULL);
  cr_assert_eq(f.rc, 0);
  cr_expect_eq(f.info.kept, 2, "e^-0.5 = 0.61 stays, e^-1 = 0.37 goes");
  expect_near(f.info.minp_margin, exp(-0.5) - 0.5, 1e-15, "the closest decision");
}

Test(min_p, records_the_first_token_it_removes_when_that_decision_is_the_closest) {
  const sieve_params p = {1.0, 1.0, -1, 0.38, NULL};
  filtered f = run_filter_params(row4, 4, &p, NULL);
  cr_assert_eq(f.rc, 0);
  cr_expect_eq(f.info.kept, 2, "e^-0.5 = 0.61 stays, e^-1 = 0.37 goes");
  expect_near(f.info.minp_margin, 0.38 - exp(-1.0), 1e-15, "0.37 is nearer 0.38 than 0.61 is");
}

/* Token 1 (p1 / p0 = e^-0.7 = 0.497) is nearer the bar, but top-k has removed it already. */
Test(min_p, measures_its_margin_on_the_ranks_top_k_left) {
  const float row[2] = {0.0f, -0.7f};
  const sieve_params p = {1.0, 1.0, 1, 0.5, NULL};
  filtered f = run_filter_params(row, 2, &p, NULL);
  cr_assert_eq(f.rc, 0);
  cr_expect_eq(f.info.kept, 1);
  expect_near(f.info.minp_margin, 0.5, 1e-15, "token 0's own distance, 1 - 0.5");
}

Test(min_p, a_min_p_of_1_keeps_the_tokens_tied_with_the_largest) {
  const float row[4] = {1.0f, 1.0f, 0.5f, 1.0f};
  const sieve_params p = {1.0, 1.0, -1, 1.0, NULL};
  filtered f = run_filter_params(row, 4, &p, NULL);
  cr_assert_eq(f.rc, 0);
  cr_expect(is_kept(&f, 0) && is_kept(&f, 1) && !is_kept(&f, 2) && is_kept(&f, 3));
}

Test(min_p, is_measured_on_the_probabilities_after_temperature) {
  const sieve_params p = {2.0, 1.0, -1, 0.5, NULL};
  filtered f = run_filter_params(row4, 4, &p, NULL);
  cr_assert_eq(f.rc, 0);
  cr_expect_eq(f.info.kept, 3, "at T = 2 token 2 has e^-0.5 of the largest");
}

Test(min_p, cuts_the_order_top_p_and_top_k_cut_and_the_smallest_set_stays) {
  sieve_params p = {1.0, 1.0, -1, 0.3, NULL};
  cr_expect_eq(run_filter_params(row4, 4, &p, NULL).info.kept, 3, "min-p alone");
  p.top_k = 2;
  cr_expect_eq(run_filter_params(row4, 4, &p, NULL).info.kept, 2, "top-k 2");
  p.top_p = 0.4;
  cr_expect_eq(run_filter_params(row4, 4, &p, NULL).info.kept, 1, "top-p 0.4");
  p = (sieve_params){1.0, 1.0, 3, 0.5, NULL};
  cr_expect_eq(run_filter_params(row4, 4, &p, NULL).info.kept, 2, "min-p within top-k 3");
}

Test(min_p, off_at_0_with_no_margin) {
  filtered f = run_filter(row4, 4, 1.0, 1.0, -1);
  cr_expect(isinf(f.info.minp_margin));
}
