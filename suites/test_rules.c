/*
 * The axes on which engines differ (sieve_rule, oracle/ENGINES.md): each value
 * against a row that tells it apart, and the spec's rule as the all-zero rule.
 */
#include <float.h>
#include <stdio.h>
#include <string.h>

#include "helpers.h"

/* The filter under `rule`, which must leave no block allocated. */
static filtered run_rule_params(const sieve_rule *rule, const float *logits, size_t v,
                                const sieve_params *p) {
  filtered f;
  const long live = live_allocations();
  f.rc = sieve_filter_rule(rule, logits, v, p, NULL, f.lp, &f.info);
  cr_expect_eq(live_allocations(), live, "the filter leaves %ld blocks allocated",
               live_allocations() - live);
  return f;
}

static filtered run_rule(const sieve_rule *rule, const float *logits, size_t v, double t,
                         double top_p, int64_t top_k) {
  const sieve_params p = {t, top_p, top_k, 0.0, NULL};
  return run_rule_params(rule, logits, v, &p);
}

static const float order_row[3] = {-0.6931472f, -1.2039728f, -1.6094379f}; /* (0.5, 0.3, 0.2) */
static const float equal4[4] = {1.0f, 1.0f, 1.0f, 1.0f};
static const float tied[6] = {1.0f, 3.0f, 1.0f, 3.0f, 3.0f, 0.0f};
static const float mat[6] = {2.0f, 1.5f, 1.0f, 0.3f, -0.2f, -1.5f};

Test(rules, the_deepinfer_rule_is_the_spec) {
  sieve_rule deepinfer = SIEVE_RULE_DEEPINFER;
  filtered a = run_rule(&deepinfer, mat, 6, 0.7, 0.8, 2), b = run_filter(mat, 6, 0.7, 0.8, 2);
  for (size_t i = 0; i < 6; i++)
    cr_expect(same_double(a.lp[i], b.lp[i]));
}

Test(rules, s000_l28_top_p_after_top_k_renormalizes_and_keeps_one_token) {
  sieve_rule r = SIEVE_RULE_DEEPINFER;
  r.topp_scope = SIEVE_TOPP_SCOPE_AFTER_TOPK;
  cr_expect_eq(run_rule(&r, order_row, 3, 1.0, 0.55, 2).info.kept, 1);
}

Test(rules, s004_l219_the_ge_boundary_keeps_one_token_fewer_at_an_exact_mass) {
  sieve_rule r = SIEVE_RULE_DEEPINFER;
  r.boundary = SIEVE_BOUNDARY_GE;
  cr_expect_eq(run_rule(&r, equal4, 4, 1.0, 0.5, -1).info.kept, 2);
}

Test(rules, s002_l89_keep_all_ties_keeps_every_token_tied_with_the_kth) {
  sieve_rule r = SIEVE_RULE_DEEPINFER;
  r.topk_ties = SIEVE_TOPK_TIES_KEEP_ALL;
  filtered f = run_rule(&r, tied, 6, 1.0, 1.0, 2);
  cr_expect_eq(f.info.kept, 3);
}

Test(rules, ties_by_descending_id_keep_the_highest_ids) {
  sieve_rule r = SIEVE_RULE_DEEPINFER;
  r.topk_ties = SIEVE_TOPK_TIES_BY_ID_DESC;
  filtered f = run_rule(&r, tied, 6, 1.0, 1.0, 2);
  cr_expect(is_kept(&f, 3) && is_kept(&f, 4) && !is_kept(&f, 1));
}

Test(rules, temperature_after_the_filters_cuts_the_unscaled_distribution) {
  sieve_rule r = SIEVE_RULE_DEEPINFER;
  r.temperature_at = SIEVE_TEMPERATURE_AT_AFTER;
  filtered after = run_rule(&r, mat, 6, 0.5, 0.8, -1);
  cr_expect_eq(after.info.kept, 3, "top_p 0.8 on the T = 1 distribution keeps 3");
  expect_near(after.lp[0] - after.lp[1], 1.0, 1e-6, "the kept set is scaled by T = 0.5");
  cr_expect_eq(run_filter(mat, 6, 0.5, 0.8, -1).info.kept, 2);
}

Test(rules, s002_l48_argmax_at_t0_keeps_the_first_maximum_alone) {
  const float row[3] = {2.0f, 2.0f, 1.0f};
  sieve_rule r = SIEVE_RULE_DEEPINFER;
  r.t0 = SIEVE_T0_ARGMAX;
  filtered f = run_rule(&r, row, 3, 0.0, 1.0, -1);
  cr_expect(is_kept(&f, 0) && !is_kept(&f, 1));
  expect_near(f.lp[0], 0.0, 0, "logprob of the argmax");
}

Test(rules, s004_l54_t0_becomes_t1_with_top_k_1) {
  sieve_rule r = SIEVE_RULE_DEEPINFER;
  r.t0 = SIEVE_T0_TOPK1;
  sieve_params in = {0.0, 0.3, 5, 0.0, NULL}, out;
  cr_assert_eq(sieve_params_check_rule(&r, &in, &out), 0);
  expect_near(out.temperature, 1.0, 0, "T");
  expect_near(out.top_p, 0.3, 0, "top_p");
  cr_expect_eq(out.top_k, 1);
}

Test(rules, s004_l165_top_k_zero_can_mean_off) {
  sieve_rule r = SIEVE_RULE_DEEPINFER;
  r.top_k_zero = SIEVE_TOP_K_ZERO_OFF;
  cr_expect_eq(run_rule(&r, mat, 6, 1.0, 1.0, 0).info.kept, 6);
  cr_expect_eq(run_filter(mat, 6, 1.0, 1.0, 0).rc, SIEVE_ETOPK);
}

Test(rules, raw_and_scaled_logprobs_are_what_sample_returns) {
  sieve_draw_key key = {42, 7, 0, 0};
  sieve_params p = {0.5, 1.0, 2, 0.0, NULL};
  sieve_sample_result processed, scaled, raw;
  sieve_rule r = SIEVE_RULE_DEEPINFER;
  cr_assert_eq(sieve_sample_rule(&r, mat, 6, &p, NULL, &key, 0, NULL, &processed), 0);
  r.logprobs = SIEVE_LOGPROBS_SCALED;
  cr_assert_eq(sieve_sample_rule(&r, mat, 6, &p, NULL, &key, 0, NULL, &scaled), 0);
  r.logprobs = SIEVE_LOGPROBS_RAW;
  cr_assert_eq(sieve_sample_rule(&r, mat, 6, &p, NULL, &key, 0, NULL, &raw), 0);
  cr_assert_eq(processed.token, raw.token);
  double lp[6];
  sieve_params full = {1.0, 1.0, -1, 0.0, NULL};
  sieve_filter(mat, 6, &full, NULL, lp, NULL);
  expect_near(raw.logprob, lp[raw.token], 1e-15, "raw logprob");
  cr_expect_gt(processed.logprob, scaled.logprob, "renormalized over 2 tokens, it is larger");
}

Test(rules, an_own_generator_is_not_the_hash) {
  sieve_params p = {1.0, 1.0, -1, 0.0, NULL};
  sieve_rule r = SIEVE_RULE_DEEPINFER;
  r.draw = SIEVE_DRAW_OWN;
  int differs = 0;
  for (uint64_t pos = 0; pos < 32; pos++) {
    sieve_draw_key key = {9, pos, 0, 0};
    sieve_sample_result own, hash;
    sieve_sample_rule(&r, equal4, 4, &p, NULL, &key, 0, NULL, &own);
    sieve_sample(equal4, 4, &p, NULL, &key, 0, NULL, &hash);
    differs += own.token != hash.token;
  }
  cr_expect_gt(differs, 0);
}

/* The own generator's uniform of a key: what sieve_sample_rule reports under draw = own. */
static double own_u(uint64_t seed, uint64_t position, int sample_case, int tag) {
  sieve_params p = SIEVE_PARAMS_DEFAULT;
  sieve_rule r = SIEVE_RULE_DEEPINFER;
  r.draw = SIEVE_DRAW_OWN;
  sieve_draw_key key = {seed, position, sample_case, tag};
  sieve_sample_result out;
  cr_assert_eq(sieve_sample_rule(&r, equal4, 4, &p, NULL, &key, 0, NULL, &out), 0);
  return out.u;
}

Test(rules, an_own_generators_uniforms_spread_evenly_over_0_to_1) {
  int bins[16] = {0};
  double last = -1.0;
  int repeats = 0;
  for (uint64_t pos = 0; pos < 4096; pos++) {
    const double u = own_u(3, pos, SIEVE_CASE_SAMPLE, SIEVE_TAG_MAIN);
    cr_assert(u >= 0.0 && u < 1.0);
    bins[(int)(u * 16)]++;
    repeats += u == last;
    last = u;
  }
  cr_expect_eq(repeats, 0, "the next position gives another uniform");
  for (int b = 0; b < 16; b++) /* 256 expected; 5 standard deviations either way */
    cr_expect(bins[b] > 176 && bins[b] < 336, "bin %d holds %d of 4096", b, bins[b]);
}

/* The own generator is a fixed function of the key, so a run under draw = own repeats across
 * versions of the oracle; these are its values, every part of the key in play. */
Test(rules, an_own_generators_uniforms_are_fixed_by_the_key) {
  cr_expect(same_double(own_u(7, 11, SIEVE_CASE_RESAMPLE, SIEVE_TAG_MTP), 0x1.a310ad6c766dcp-1));
  cr_expect(
      same_double(own_u(123456789, 1000, SIEVE_CASE_ACCEPT, SIEVE_TAG_MAIN), 0x1.ec8cd21b650f6p-1));
  cr_expect(same_double(own_u(0, 5, SIEVE_CASE_SAMPLE, SIEVE_TAG_MTP), 0x1.c6809c5b08bc4p-3));
}

Test(rules, an_axis_out_of_range_is_an_error) {
  sieve_rule r = SIEVE_RULE_DEEPINFER;
  r.boundary = 7;
  cr_expect_eq(run_rule(&r, mat, 6, 1.0, 1.0, -1).rc, SIEVE_ERULE);
}

/* The axes as data (oracle/rule.c): every table comes from SIEVE_AXES. */

Test(axes, every_axis_and_value_has_a_name_found_again_by_it) {
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++) {
    cr_expect_eq(sieve_axis_find(sieve_axis_name(a)), a, "%s", sieve_axis_name(a));
    cr_expect_gt(sieve_axis_values(a), 1, "%s has a choice", sieve_axis_name(a));
    for (int v = 0; v < sieve_axis_values(a); v++)
      cr_expect_eq(sieve_axis_value_find(a, sieve_axis_value_name(a, v)), v, "%s=%s",
                   sieve_axis_name(a), sieve_axis_value_name(a, v));
  }
}

Test(axes, the_deepinfer_rule_is_value_zero_on_every_axis) {
  sieve_rule r = SIEVE_RULE_DEEPINFER;
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
    cr_expect_eq(sieve_rule_get(&r, a), 0, "%s", sieve_axis_name(a));
}

Test(axes, set_then_get_gives_the_value_and_touches_no_other_axis) {
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++) {
    sieve_rule r = SIEVE_RULE_DEEPINFER;
    int last = sieve_axis_values(a) - 1;
    cr_assert_eq(sieve_rule_set(&r, a, last), 0);
    for (int b = 0; b < SIEVE_AXIS_COUNT; b++)
      cr_expect_eq(sieve_rule_get(&r, b), b == a ? last : 0, "%s", sieve_axis_name(b));
  }
}

Test(axes, out_of_range_axes_and_values_are_errors) {
  sieve_rule r = SIEVE_RULE_DEEPINFER;
  cr_expect_null(sieve_axis_name(SIEVE_AXIS_COUNT));
  cr_expect_null(sieve_axis_value_name(0, sieve_axis_values(0)));
  cr_expect_eq(sieve_axis_values(-1), SIEVE_ERULE);
  cr_expect_eq(sieve_rule_set(&r, 0, sieve_axis_values(0)), SIEVE_ERULE);
  cr_expect_eq(sieve_rule_get(&r, SIEVE_AXIS_COUNT), SIEVE_ERULE);
  cr_expect_eq(sieve_axis_find("no-such-axis"), SIEVE_ERULE);
  cr_expect_eq(sieve_axis_value_find(SIEVE_AXIS_BOUNDARY, "lt"), SIEVE_ERULE);
}

Test(axes, an_axis_finds_no_value_name_it_does_not_have) {
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
    for (int b = 0; b < SIEVE_AXIS_COUNT; b++)
      for (int v = 0; v < sieve_axis_values(b); v++) {
        const char *name = sieve_axis_value_name(b, v);
        int has = 0;
        for (int w = 0; w < sieve_axis_values(a); w++)
          has |= strcmp(sieve_axis_value_name(a, w), name) == 0;
        if (!has)
          cr_expect_eq(sieve_axis_value_find(a, name), SIEVE_ERULE, "%s=%s", sieve_axis_name(a),
                       name);
      }
}

/* The axes real engines need (oracle/ENGINES.md), each value on a row that shows it. */

static sieve_rule with(int axis, int value) {
  sieve_rule r = SIEVE_RULE_DEEPINFER;
  sieve_rule_set(&r, axis, value);
  return r;
}

Test(rules, top_p_not_applied_keeps_every_token) {
  sieve_rule r = with(SIEVE_AXIS_TOPP_SCOPE, SIEVE_TOPP_SCOPE_IGNORED);
  cr_expect_eq(run_rule(&r, order_row, 3, 1.0, 0.3, -1).info.kept, 3);
  cr_expect_eq(run_rule(&r, order_row, 3, 1.0, 0.3, 2).info.kept, 2, "top-k still cuts");
}

Test(rules, vllm_topp_ties_highest_keeps_the_highest_tied_ids) {
  sieve_rule r = with(SIEVE_AXIS_TOPP_TIES, SIEVE_TOPP_TIES_HIGHEST);
  r.boundary = SIEVE_BOUNDARY_GE;
  filtered f = run_rule(&r, equal4, 4, 1.0, 0.5, -1);
  cr_expect(!is_kept(&f, 0) && !is_kept(&f, 1) && is_kept(&f, 2) && is_kept(&f, 3));
}

Test(rules, topp_ties_all_keeps_every_token_tied_with_the_last_kept) {
  sieve_rule r = with(SIEVE_AXIS_TOPP_TIES, SIEVE_TOPP_TIES_ALL);
  cr_expect_eq(run_rule(&r, equal4, 4, 1.0, 0.25, -1).info.kept, 4);
}

Test(rules, unspecified_tie_orders_keep_as_many_but_not_the_lowest_ids) {
  const float row[8] = {5, 5, 5, 5, 5, 5, 5, 5};
  sieve_rule p = with(SIEVE_AXIS_TOPP_TIES, SIEVE_TOPP_TIES_UNSPECIFIED);
  sieve_rule k = with(SIEVE_AXIS_TOPK_TIES, SIEVE_TOPK_TIES_UNSPECIFIED);
  filtered by_p = run_rule(&p, row, 8, 1.0, 0.25, -1), by_k = run_rule(&k, row, 8, 1.0, 1.0, 3);
  cr_expect_eq(by_p.info.kept, 3);
  cr_expect_eq(by_k.info.kept, 3);
  cr_expect(!(is_kept(&by_p, 0) && is_kept(&by_p, 1) && is_kept(&by_p, 2)));
  cr_expect(!(is_kept(&by_k, 0) && is_kept(&by_k, 1) && is_kept(&by_k, 2)));
}

Test(rules, t0_thresholds_say_which_temperatures_take_the_t0_rule) {
  sieve_params in = {5e-6, 0.3, 5, 0.0, NULL}, out;
  sieve_rule micro = with(SIEVE_AXIS_T0_BELOW, SIEVE_T0_BELOW_MICRO);
  cr_assert_eq(sieve_params_check_rule(&micro, &in, &out), 0);
  expect_near(out.temperature, 5e-6, 0, "5e-6 is not below 1e-6");
  in.temperature = 5e-7;
  cr_assert_eq(sieve_params_check_rule(&micro, &in, &out), 0);
  expect_near(out.temperature, SIEVE_SAMPLING_EPS, 0, "5e-7 is clamped");
  sieve_rule zero = with(SIEVE_AXIS_T0_BELOW, SIEVE_T0_BELOW_ZERO);
  cr_assert_eq(sieve_params_check_rule(&zero, &in, &out), 0);
  expect_near(out.temperature, 5e-7, 0, "only 0 takes the rule");
  sieve_rule neg = with(SIEVE_AXIS_T0_BELOW, SIEVE_T0_BELOW_NONPOSITIVE);
  in.temperature = -1.0;
  cr_expect_eq(sieve_params_check_rule(NULL, &in, &out), SIEVE_ETEMPERATURE);
  cr_assert_eq(sieve_params_check_rule(&neg, &in, &out), 0);
  expect_near(out.temperature, SIEVE_SAMPLING_EPS, 0, "a negative T takes the rule");
  in.temperature = 0.0;
  cr_assert_eq(sieve_params_check_rule(&neg, &in, &out), 0);
  expect_near(out.temperature, SIEVE_SAMPLING_EPS, 0, "so does 0");
}

Test(rules, below_1e_7_takes_negative_and_nano_temperatures_but_not_5e_7) {
  sieve_rule nano = with(SIEVE_AXIS_T0_BELOW, SIEVE_T0_BELOW_NANO_NEGATIVE);
  sieve_params out;
  const double taken[] = {-1.0, 0.0, 5e-8}, kept[] = {5e-7, 1e-7};
  for (size_t i = 0; i < 3; i++) {
    sieve_params in = {taken[i], 0.3, 5, 0.0, NULL};
    cr_assert_eq(sieve_params_check_rule(&nano, &in, &out), 0);
    expect_near(out.temperature, SIEVE_SAMPLING_EPS, 0, "T < 1e-7 takes the rule");
  }
  for (size_t i = 0; i < 2; i++) {
    sieve_params in = {kept[i], 0.3, 5, 0.0, NULL};
    cr_assert_eq(sieve_params_check_rule(&nano, &in, &out), 0);
    expect_near(out.temperature, kept[i], 0, "T >= 1e-7 is used as given");
  }
}

Test(rules, a_negative_temperature_that_scales_reverses_the_row) {
  const float row[3] = {1.0f, 2.0f, 3.0f};
  sieve_rule r = with(SIEVE_AXIS_T0_BELOW, SIEVE_T0_BELOW_ZERO_NEGATIVE_SCALES);
  sieve_params in = {-1.0, 1.0, -1, 0.0, NULL}, out;
  cr_assert_eq(sieve_params_check_rule(&r, &in, &out), 0);
  expect_near(out.temperature, -1.0, 0, "a negative T stays as given");
  in.temperature = 0.0;
  cr_assert_eq(sieve_params_check_rule(&r, &in, &out), 0);
  expect_near(out.temperature, SIEVE_SAMPLING_EPS, 0, "T = 0 takes the temperature-0 rule");
  filtered f = run_rule(&r, row, 3, -1.0, 0.6, -1);
  cr_expect_eq(f.info.kept, 1);
  cr_expect(is_kept(&f, 0), "the lowest logit is the most probable at T = -1");
}

/* Two adjacent float32 logits below 512 whose products with the float32 1/T are equal while
 * their quotients by the float32 T differ. */
static void tie_made_by_reciprocal(double t, float *a, float *b) {
  const float inv_t = (float)(1.0 / t), t32 = (float)t;
  *b = 512.0f;
  do {
    *a = nextafterf(*b, 0.0f);
    if (*a * inv_t == *b * inv_t && *a / t32 != *b / t32)
      return;
    *b = *a;
  } while (*b > 256.0f);
  cr_assert_fail("no tie made by 1/T at T = %g", t);
}

Test(rules, dividing_by_temperature_makes_no_tie_that_the_rounded_reciprocal_makes) {
  float row[3];
  tie_made_by_reciprocal(1.5, &row[0], &row[1]);
  row[2] = 0.0f;
  sieve_rule divide = with(SIEVE_AXIS_TEMPERATURE_OP, SIEVE_TEMPERATURE_OP_DIVIDE);
  filtered spec = run_rule(NULL, row, 3, 1.5, 1.0, 1), f = run_rule(&divide, row, 3, 1.5, 1.0, 1);
  cr_expect(is_kept(&spec, 0) && !is_kept(&spec, 1), "tied, top_k 1 keeps the lower id");
  cr_expect(is_kept(&f, 1) && !is_kept(&f, 0), "apart, top_k 1 keeps the larger logit");
  uint32_t read = 0;
  divide.consulted = &read;
  run_rule(&divide, row, 3, 2.0, 1.0, 1);
  cr_expect_eq(read >> SIEVE_AXIS_TEMPERATURE_OP & 1, 0, "T = 2: both operations are exact");
}

/* Two adjacent float32 logits below 512 whose quotients by the float64 T, rounded to float32,
 * are equal while their products with the float32 1/T and their float32 quotients differ. */
static void tie_made_by_float64_division(double t, float *a, float *b) {
  const float inv_t = (float)(1.0 / t), t32 = (float)t;
  for (*b = 512.0f; *b > 256.0f; *b = *a) {
    *a = nextafterf(*b, 0.0f);
    if ((float)(*a / t) == (float)(*b / t) && *a * inv_t != *b * inv_t && *a / t32 != *b / t32)
      return;
  }
  cr_assert_fail("no tie made by the float64 T at T = %g", t);
}

Test(rules, transformers_js_dividing_by_the_float64_t_ties_what_float32_operations_keep_apart) {
  float row[3] = {520.0f, 0.0f, 0.0f};
  tie_made_by_float64_division(1.1, &row[1], &row[2]);
  sieve_rule f64 = with(SIEVE_AXIS_TEMPERATURE_OP, SIEVE_TEMPERATURE_OP_DIVIDE_FLOAT64);
  sieve_rule f32 = with(SIEVE_AXIS_TEMPERATURE_OP, SIEVE_TEMPERATURE_OP_DIVIDE);
  filtered spec = run_rule(NULL, row, 3, 1.1, 1.0, 2), d = run_rule(&f32, row, 3, 1.1, 1.0, 2);
  filtered g = run_rule(&f64, row, 3, 1.1, 1.0, 2);
  cr_expect(is_kept(&spec, 2) && !is_kept(&spec, 1), "times 1/T: apart, the larger stays");
  cr_expect(is_kept(&d, 2) && !is_kept(&d, 1), "by the float32 T: apart too");
  cr_expect(is_kept(&g, 1) && !is_kept(&g, 2), "by the float64 T: tied, the lower id stays");
  float pair[3];
  tie_made_by_reciprocal(1.5, &pair[0], &pair[1]);
  pair[2] = 0.0f;
  filtered e = run_rule(&f64, pair, 3, 1.5, 1.0, 1), h = run_rule(&f32, pair, 3, 1.5, 1.0, 1);
  cr_expect(is_kept(&e, 1) == is_kept(&h, 1) && is_kept(&e, 0) == is_kept(&h, 0),
            "T = 1.5 is a float32: both divisions give one quotient");
}

Test(rules, exllamav2_subtracting_the_largest_first_ties_a_far_pair_and_overflows_no_top) {
  /* Below 2e8 the float32 spacing is 16: 0 - 2e8 and 4 - 2e8 round to one difference. */
  const float far[4] = {2e8f, 0.0f, 4.0f, -5.0f};
  sieve_rule shifted = with(SIEVE_AXIS_TEMPERATURE_OP, SIEVE_TEMPERATURE_OP_SHIFTED);
  filtered spec = run_rule(NULL, far, 4, 1e8, 1.0, 2);
  filtered f = run_rule(&shifted, far, 4, 1e8, 1.0, 2);
  cr_expect(is_kept(&spec, 2) && !is_kept(&spec, 1), "times 1/T, 4 ranks above 0");
  cr_expect(is_kept(&f, 1) && !is_kept(&f, 2), "shifted, the two tie and the lower id stays");
  float near[3];
  tie_made_by_reciprocal(1.5, &near[0], &near[1]);
  near[2] = 0.0f;
  filtered g = run_rule(&shifted, near, 3, 1.5, 1.0, 1);
  cr_expect(is_kept(&g, 1) && !is_kept(&g, 0), "exact differences: no tie that 1/T makes");
  const float huge[2] = {3e38f, 2e38f};
  cr_expect_eq(run_rule(NULL, huge, 2, 0.5, 1.0, -1).rc, SIEVE_EOVERFLOW, "6e38 overflows");
  cr_expect_eq(run_rule(&shifted, huge, 2, 0.5, 1.0, -1).rc, 0, "0 and -2e38 do not");
  uint32_t read = 0;
  shifted.consulted = &read;
  run_rule(&shifted, near, 3, 2.0, 1.0, 1);
  cr_expect_eq(read >> SIEVE_AXIS_TEMPERATURE_OP & 1, 0, "T = 2 and exact differences");
  run_rule(&shifted, far, 4, 2.0, 1.0, 1);
  cr_expect_eq(read >> SIEVE_AXIS_TEMPERATURE_OP & 1, 1, "a difference that rounds");
}

Test(rules, sglang_a_temperature_0_rule_before_the_checks_hides_a_bad_top_k) {
  sieve_rule r = with(SIEVE_AXIS_CHECK_ORDER, SIEVE_CHECK_ORDER_T0_RULE_FIRST);
  sieve_rule_set(&r, SIEVE_AXIS_T0, SIEVE_T0_TOPK1);
  sieve_params bad_k = {0.0, 1.0, 0, 0.0, NULL}, bad_p = {0.0, 0.0, -1, 0.0, NULL}, out;
  cr_expect_eq(sieve_params_check_rule(NULL, &bad_k, &out), SIEVE_ETOPK, "checked first");
  cr_assert_eq(sieve_params_check_rule(&r, &bad_k, &out), 0);
  cr_expect_eq(out.top_k, 1, "the rule's top_k 1 replaced it");
  cr_expect_eq(sieve_params_check_rule(&r, &bad_p, &out), SIEVE_ETOPP, "top_k 1 keeps top_p");
}

Test(rules, hf_the_temperature_0_error_comes_first_then_top_k_before_top_p) {
  sieve_rule r = with(SIEVE_AXIS_CHECK_ORDER, SIEVE_CHECK_ORDER_T0_RULE_TOP_K_FIRST);
  sieve_rule_set(&r, SIEVE_AXIS_T0, SIEVE_T0_REJECT);
  sieve_params cold = {0.0, 0.0, 0, 0.0, NULL}, both = {1.0, 0.0, -5, 0.0, NULL}, out;
  cr_expect_eq(sieve_params_check_rule(NULL, &both, &out), SIEVE_ETOPP, "the spec: top_p first");
  cr_expect_eq(sieve_params_check_rule(&r, &cold, &out), SIEVE_ETEMPERATURE);
  cr_expect_eq(sieve_params_check_rule(&r, &both, &out), SIEVE_ETOPK);
}

Test(rules, hf_t0_reject_makes_temperature_zero_an_error) {
  sieve_rule r = with(SIEVE_AXIS_T0, SIEVE_T0_REJECT);
  sieve_params in = {0.0, 1.0, -1, 0.0, NULL}, out;
  cr_expect_eq(sieve_params_check_rule(&r, &in, &out), SIEVE_ETEMPERATURE);
}

Test(rules, vllm_the_temperature_floor_raises_small_temperatures_to_a_hundredth) {
  sieve_rule r = with(SIEVE_AXIS_TEMPERATURE_FLOOR, SIEVE_TEMPERATURE_FLOOR_CENTI);
  sieve_params in = {0.001, 1.0, -1, 0.0, NULL}, out;
  cr_assert_eq(sieve_params_check_rule(&r, &in, &out), 0);
  expect_near(out.temperature, 0.01, 0, "floor");
  in.temperature = 0.5;
  cr_assert_eq(sieve_params_check_rule(&r, &in, &out), 0);
  expect_near(out.temperature, 0.5, 0, "above the floor");
}

Test(rules, hf_an_explicit_minus_one_can_be_an_error_while_leaving_it_out_is_off) {
  sieve_rule r = with(SIEVE_AXIS_TOP_K_MINUS_ONE, SIEVE_TOP_K_MINUS_ONE_ERROR);
  sieve_params minus_one = {1.0, 1.0, -1, 0.0, NULL},
               unset = {1.0, 1.0, SIEVE_TOP_K_UNSET, 0.0, NULL}, out;
  cr_expect_eq(sieve_params_check_rule(&r, &minus_one, &out), SIEVE_ETOPK);
  cr_assert_eq(sieve_params_check_rule(&r, &unset, &out), 0);
  cr_expect_eq(out.top_k, -1);
  cr_assert_eq(sieve_params_check_rule(NULL, &unset, &out), 0);
  cr_expect_eq(out.top_k, -1, "unset is -1 under DeepInfer's rule too");
}

Test(rules, tgi_an_explicit_top_p_one_can_be_an_error_while_leaving_it_out_is_off) {
  sieve_rule r = with(SIEVE_AXIS_EXPLICIT_TOP_P_ONE, SIEVE_EXPLICIT_TOP_P_ONE_ERROR);
  sieve_params one = {1.0, 1.0, -1, 0.0, NULL}, unset = {1.0, SIEVE_TOP_P_UNSET, -1, 0.0, NULL},
               out;
  sieve_params bad_t = {-1.0, 1.0, -1, 0.0, NULL}, bad_k = {1.0, 1.0, 0, 0.0, NULL};
  cr_expect_eq(sieve_params_check_rule(&r, &one, &out), SIEVE_ETOPP);
  cr_expect_eq(sieve_params_check_rule(&r, &bad_t, &out), SIEVE_ETEMPERATURE, "T is first");
  cr_expect_eq(sieve_params_check_rule(&r, &bad_k, &out), SIEVE_ETOPP, "top_p before top_k");
  cr_assert_eq(sieve_params_check_rule(&r, &unset, &out), 0);
  cr_expect_eq(out.top_p, 1.0);
  cr_assert_eq(sieve_params_check_rule(NULL, &unset, &out), 0);
  cr_expect_eq(out.top_p, 1.0, "unset is 1 under DeepInfer's rule too");
  cr_expect_eq(sieve_params_check_rule(NULL, &one, &out), 0);
}

Test(rules, mlx_a_top_k_of_the_vocabulary_size_or_more_can_be_an_error) {
  sieve_rule r = with(SIEVE_AXIS_TOP_K_VOCAB, SIEVE_TOP_K_VOCAB_ERROR);
  cr_expect_eq(run_rule(&r, mat, 6, 1.0, 1.0, 6).rc, SIEVE_ETOPK, "V itself");
  cr_expect_eq(run_rule(&r, mat, 6, 1.0, 1.0, 7).rc, SIEVE_ETOPK);
  cr_expect_eq(run_rule(&r, mat, 6, 1.0, 1.0, 5).info.kept, 5);
  cr_expect_eq(run_rule(&r, mat, 6, 0.0, 1.0, 6).rc, 0, "the clamp resets top_k first");
  cr_expect_eq(run_rule(NULL, mat, 6, 1.0, 1.0, 7).info.kept, 6, "DeepInfer keeps all");
}

Test(rules, vllm_a_top_k_above_the_int32_maximum_can_be_accepted_and_keeps_all) {
  sieve_rule r = with(SIEVE_AXIS_TOP_K_MAX, SIEVE_TOP_K_MAX_NONE);
  sieve_params big = {1.0, 1.0, SIEVE_TOP_K_MAX + 1, 0.0, NULL}, out;
  cr_expect_eq(sieve_params_check_rule(NULL, &big, &out), SIEVE_ETOPK);
  cr_assert_eq(sieve_params_check_rule(&r, &big, &out), 0);
  cr_expect_eq(out.top_k, SIEVE_TOP_K_MAX + 1, "kept as given");
  cr_expect_eq(run_rule(&r, mat, 6, 1.0, 1.0, INT64_MAX).info.kept, 6);
  cr_expect_eq(run_rule(&r, mat, 6, 1.0, 1.0, -2).rc, SIEVE_ETOPK, "a negative is still one");
}

Test(rules, tgi_reading_parameters_as_float32_rounds_them_before_the_checks) {
  sieve_rule r = with(SIEVE_AXIS_PARAM_PRECISION, SIEVE_PARAM_PRECISION_FLOAT32);
  sieve_params given = {0.7, 0.9, -1, 0.0, NULL}, denormal = {5e-324, 1.0, -1, 0.0, NULL},
               huge = {1e308, 1.0, -1, 0.0, NULL};
  sieve_params almost_one = {1.0, 0.9999999999999999, -1, 0.0, NULL}, out;
  cr_assert_eq(sieve_params_check_rule(&r, &given, &out), 0);
  cr_expect_eq(out.temperature, (double)0.7f);
  cr_expect_eq(out.top_p, (double)0.9f);
  cr_assert_eq(sieve_params_check_rule(NULL, &given, &out), 0);
  cr_expect_eq(out.temperature, 0.7, "DeepInfer reads them as given");
  cr_assert_eq(sieve_params_check_rule(&r, &denormal, &out), 0);
  cr_expect_eq(out.temperature, SIEVE_SAMPLING_EPS, "0 takes the clamp");
  cr_expect_eq(sieve_params_check_rule(&r, &huge, &out), SIEVE_ETEMPERATURE, "an infinity");
  /* Halfway between FLT_MAX and 2^128, the tie goes to the even 2^128: an infinity. */
  sieve_params halfway = {0x1.ffffffp127, 1.0, -1, 0.0, NULL},
               below = {0x1.fffffefffffffp127, 1.0, -1, 0.0, NULL};
  cr_expect_eq(sieve_params_check_rule(&r, &halfway, &out), SIEVE_ETEMPERATURE, "rounds up");
  cr_assert_eq(sieve_params_check_rule(&r, &below, &out), 0);
  cr_expect_eq(out.temperature, (double)FLT_MAX, "rounds down");
  r.explicit_top_p_one = SIEVE_EXPLICIT_TOP_P_ONE_ERROR;
  cr_expect_eq(sieve_params_check_rule(&r, &almost_one, &out), SIEVE_ETOPP, "it rounds to 1");
}

Test(rules, sglang_top_p_one_with_a_top_k_cuts_a_peaked_rows_float32_tail) {
  static float row[1024];
  static double lp[1024];
  sieve_filter_info info;
  row[0] = 20.0f;
  sieve_rule r = with(SIEVE_AXIS_TOPP_ONE, SIEVE_TOPP_ONE_FLOAT32_TAIL);
  sieve_params p = {1.0, 1.0, 1024, 0.0, NULL};
  const long live = live_allocations();
  cr_assert_eq(sieve_filter_rule(&r, row, 1024, &p, NULL, lp, &info), 0);
  cr_expect_eq(live_allocations(), live, "the float32 tail leaves no block allocated");
  cr_expect_lt(info.kept, 1024);
  cr_expect_gt(info.kept, 1);
  p.top_k = -1;
  cr_assert_eq(sieve_filter_rule(&r, row, 1024, &p, NULL, lp, &info), 0);
  cr_expect_eq(info.kept, 1024, "without a top-k, top_p = 1 is not applied");
}

Test(rules, the_float32_tail_cut_in_a_run_of_tied_zeros_takes_the_top_p_tie_choice) {
  static float row[1024];
  static double spec[1024], highest[1024];
  sieve_filter_info a, b;
  row[0] = 20.0f;
  sieve_rule r = with(SIEVE_AXIS_TOPP_ONE, SIEVE_TOPP_ONE_FLOAT32_TAIL);
  sieve_params p = {1.0, 1.0, 1024, 0.0, NULL};
  cr_assert_eq(sieve_filter_rule(&r, row, 1024, &p, NULL, spec, &a), 0);
  sieve_rule_set(&r, SIEVE_AXIS_TOPP_TIES, SIEVE_TOPP_TIES_HIGHEST);
  cr_assert_eq(sieve_filter_rule(&r, row, 1024, &p, NULL, highest, &b), 0);
  cr_assert_eq(a.kept, b.kept, "the same count");
  cr_expect(isfinite(spec[1]) && isinf(spec[1023]), "the lowest tied ids stay");
  cr_expect(isinf(highest[1]) && isfinite(highest[1023]), "the highest tied ids stay");
}

/* The profiles and probes derived from the axes (harness/engines/profiles.c,
 * harness/engines/probes.c). */

#include "engines/fingerprint.h"
#include "engines/profiles.h"

/* ------------------------------------------------ the penalties and min-p */

/* The one token top_k 1 keeps, or -1. */
static int64_t first_kept(const filtered *f) {
  for (size_t i = 0; f->rc == 0 && i < MAX_V; i++)
    if (f->info.kept == 1 && is_kept(f, i))
      return (int64_t)i;
  return -1;
}

Test(rules, vllm_the_repetition_penalty_first_scales_a_logit_the_additive_ones_have_not_lowered) {
  const float row[3] = {2.0f, 0.25f, -1.0f};
  const int64_t output[1] = {0};
  sieve_penalties pen = {0.0, 1.0, 2.0, -1, output, 1, NULL, 0};
  sieve_params p = {1.0, 1.0, 1, 0.0, &pen};
  uint32_t consulted = 0;
  sieve_rule ours = {.consulted = &consulted}, vllm = ours;
  vllm.penalty_order = SIEVE_PENALTY_ORDER_REPETITION_FIRST;
  filtered a = run_rule_params(&ours, row, 3, &p), b = run_rule_params(&vllm, row, 3, &p);
  cr_expect_eq(first_kept(&a), 0, "(2 - 1) / 2 = 0.5 stays above 0.25");
  cr_expect_eq(first_kept(&b), 1, "2 / 2 - 1 = 0 goes below it");
  cr_expect(consulted >> SIEVE_AXIS_PENALTY_ORDER & 1);
  consulted = 0;
  pen.repetition = 1.0;
  run_rule_params(&ours, row, 3, &p);
  cr_expect_not(consulted >> SIEVE_AXIS_PENALTY_ORDER & 1, "no repetition penalty, no order");
}

Test(rules, the_prompt_counts_for_the_repetition_penalty_or_for_every_penalty_as_the_rule_says) {
  const float row[3] = {2.0f, 1.5f, -1.0f};
  const int64_t prompt[1] = {0};
  sieve_penalties repetition = {0.0, 0.0, 2.0, -1, NULL, 0, prompt, 1};
  sieve_penalties presence = {0.0, 1.0, 1.0, -1, NULL, 0, prompt, 1};
  sieve_params by_repetition = {1.0, 1.0, 1, 0.0, &repetition},
               by_presence = {1.0, 1.0, 1, 0.0, &presence};
  const int64_t first[3][2] = {{0, 0}, {1, 0}, {1, 1}}; /* by each value: repetition, presence */
  for (int value = 0; value < SIEVE_PENALTY_TOKENS_COUNT; value++) {
    sieve_rule r = with(SIEVE_AXIS_PENALTY_TOKENS, value);
    filtered a = run_rule_params(&r, row, 3, &by_repetition);
    filtered b = run_rule_params(&r, row, 3, &by_presence);
    cr_expect_eq(first_kept(&a), first[value][0], "penalty_tokens %d, repetition 2", value);
    cr_expect_eq(first_kept(&b), first[value][1], "penalty_tokens %d, presence 1", value);
  }
}

Test(rules, llama_cpp_a_window_reaching_into_the_prompt_counts_its_last_tokens) {
  const float row[5] = {1.0f, 1.0f, 1.0f, 1.0f, 1.0f};
  const int64_t prompt[4] = {1, 2, 3, 4}, output[1] = {0};
  sieve_penalties pen = {0.5, 0.0, 1.0, 3, output, 1, prompt, 4};
  sieve_params p = {1.0, 1.0, -1, 0.0, &pen};
  sieve_rule server = with(SIEVE_AXIS_PENALTY_TOKENS, SIEVE_PENALTY_TOKENS_PROMPT);
  filtered f = run_rule_params(&server, row, 5, &p);
  expect_near(f.lp[1] - f.lp[2], 0.0, 0, "neither 1 nor 2 is in the window");
  expect_near(f.lp[1] - f.lp[3], 0.5, 1e-12, "the window holds tokens 3, 4 and 0");
  expect_near(f.lp[1] - f.lp[4], 0.5, 1e-12, "token 4 is counted");
  expect_near(f.lp[1] - f.lp[0], 0.5, 1e-12, "token 0 is counted");
}

Test(rules, vllm_repetition_first_scales_a_counted_token_that_a_prompt_token_precedes_in_id) {
  const float row[3] = {1.0f, 1.0f, 2.0f};
  const int64_t prompt[1] = {0}, output[1] = {2};
  sieve_penalties pen = {0.5, 0.0, 2.0, -1, output, 1, prompt, 1};
  sieve_params p = {1.0, 1.0, -1, 0.0, &pen};
  sieve_rule vllm = with(SIEVE_AXIS_PENALTY_TOKENS, SIEVE_PENALTY_TOKENS_REPETITION_PROMPT);
  vllm.penalty_order = SIEVE_PENALTY_ORDER_REPETITION_FIRST;
  filtered f = run_rule_params(&vllm, row, 3, &p);
  expect_near(f.lp[2] - f.lp[1], -0.5, 1e-12, "token 2: 2 / 2 - 0.5, not (2 - 0.5) / 2");
  expect_near(f.lp[0] - f.lp[1], -0.5, 1e-12, "token 0, in the prompt: 1 / 2");
}

Test(rules, llama_cpp_unscaled_min_p_compares_probabilities_not_the_exps_they_come_from) {
  /* e_1 = exp(-8e-5) and min_p = e_1: as exps the two meet the bar exactly, but e_1 / total
   * rounds below min_p * (1 / total), so the probability at T = 1 is under it and goes. */
  const float row[2] = {0.0f, -8e-5f};
  sieve_params p = {2.0, 1.0, -1, exp((double)row[1]), NULL};
  sieve_rule unscaled = with(SIEVE_AXIS_MIN_P_SCALE, SIEVE_MIN_P_SCALE_UNSCALED);
  filtered f = run_rule_params(&unscaled, row, 2, &p);
  cr_expect(f.rc == 0 && f.info.kept == 1 && is_kept(&f, 0), "kept %zu", f.info.kept);
}

Test(rules, llama_cpp_the_window_is_the_last_n_of_the_prompt_and_the_output) {
  const float row[4] = {1.0f, 1.0f, 1.0f, 1.0f};
  const int64_t prompt[2] = {1, 2}, output[1] = {0};
  sieve_penalties pen = {0.5, 0.0, 1.0, 2, output, 1, prompt, 2};
  sieve_params p = {1.0, 1.0, -1, 0.0, &pen};
  sieve_rule server = with(SIEVE_AXIS_PENALTY_TOKENS, SIEVE_PENALTY_TOKENS_PROMPT);
  sieve_rule ours = SIEVE_RULE_DEEPINFER;
  filtered a = run_rule_params(&server, row, 4, &p), b = run_rule_params(&ours, row, 4, &p);
  expect_near(a.lp[1] - a.lp[2], 0.5, 1e-12, "the window holds tokens 2 and 0, not 1");
  expect_near(a.lp[1] - a.lp[0], 0.5, 1e-12, "token 0 is counted");
  expect_near(b.lp[1] - b.lp[2], 0.0, 0, "ours counts the output's token 0 alone");
}

static const float min_p_row[4] = {3.0f, 2.0f, 1.0f, 0.0f}; /* p / p_max 1, 0.37, 0.14, 0.05 */

Test(rules, llama_cpp_min_p_on_the_probabilities_at_t1_keeps_fewer_at_a_high_temperature) {
  sieve_params hot = {2.0, 1.0, -1, 0.3, NULL}, cold = {1.0, 1.0, -1, 0.3, NULL};
  uint32_t consulted = 0;
  sieve_rule unscaled = with(SIEVE_AXIS_MIN_P_SCALE, SIEVE_MIN_P_SCALE_UNSCALED);
  unscaled.consulted = &consulted;
  cr_expect_eq(run_rule_params(&unscaled, min_p_row, 4, &hot).info.kept, 2);
  cr_expect_eq(run_filter_params(min_p_row, 4, &hot, NULL).info.kept, 3, "scaled, 0.37 >= 0.3");
  consulted = 0;
  cr_expect_eq(run_rule_params(&unscaled, min_p_row, 4, &cold).info.kept, 2);
  cr_expect_not(consulted >> SIEVE_AXIS_MIN_P_SCALE & 1, "at T = 1 both scales agree");
}

Test(rules, vllm_min_p_first_makes_top_p_measure_the_mass_min_p_keeps) {
  sieve_params p = {1.0, 0.9, -1, 0.1, NULL};
  sieve_rule first = with(SIEVE_AXIS_MIN_P_ORDER, SIEVE_MIN_P_ORDER_FIRST);
  cr_expect_eq(run_filter_params(min_p_row, 4, &p, NULL).info.kept, 3, "0.881 of the row before 2");
  cr_expect_eq(run_rule_params(&first, min_p_row, 4, &p).info.kept, 2,
               "0.910 of the 3 tokens min-p keeps");
}

Test(rules, vllm_min_p_first_keeping_every_rank_leaves_top_p_measuring_the_whole_distribution) {
  /* Ten probabilities of 0.1 sum to 0.9999999999999999 in rank order: measured against that
   * sum, the mass 0.5 before the sixth token would be past top_p 0.5. Renormalized over every
   * rank it is the distribution itself, whose mass is 1. */
  const float row[10] = {0};
  sieve_params p = {1.0, 0.5, -1, 0.5, NULL};
  sieve_rule first = with(SIEVE_AXIS_MIN_P_ORDER, SIEVE_MIN_P_ORDER_FIRST);
  cr_expect_eq(run_rule_params(&first, row, 10, &p).info.kept, 6);
}

Test(rules, mistral_rs_min_p_removes_a_token_at_its_bar_but_keeps_the_first) {
  const float row[4] = {0.5f, 2.0f, 2.0f, 1.0f};
  sieve_params p = {1.0, 1.0, -1, 1.0, NULL};
  sieve_rule remove = with(SIEVE_AXIS_MIN_P_BOUNDARY, SIEVE_MIN_P_BOUNDARY_REMOVE_EQUAL);
  filtered ours = run_filter_params(row, 4, &p, NULL),
           mistral = run_rule_params(&remove, row, 4, &p);
  cr_expect(ours.info.kept == 2 && is_kept(&ours, 1) && is_kept(&ours, 2));
  cr_expect(mistral.info.kept == 1 && is_kept(&mistral, 1));
}

/* Repetition 3, presence 3 and min_p 1.5 under each penalty range: the spec's rejects all
 * three, repetition_unbounded the first only, unchecked none; a NaN is an error under each. */
Test(rules, vllm_takes_a_repetition_penalty_above_2_and_llama_cpp_any_finite_value) {
  const int ranges[] = {SIEVE_PENALTY_RANGE_BOUNDED, SIEVE_PENALTY_RANGE_REPETITION_UNBOUNDED,
                        SIEVE_PENALTY_RANGE_UNCHECKED};
  const int repetition[] = {SIEVE_EREPETITION, 0, 0};
  const int presence[] = {SIEVE_EPRESENCE, SIEVE_EPRESENCE, 0};
  const int min_p[] = {SIEVE_EMINP, SIEVE_EMINP, 0};
  for (int i = 0; i < 3; i++) {
    sieve_rule r = with(SIEVE_AXIS_PENALTY_RANGE, ranges[i]);
    sieve_penalties big_r = {0.0, 0.0, 3.0, -1, NULL, 0, NULL, 0},
                    big_p = {0.0, 3.0, 1.0, -1, NULL, 0, NULL, 0},
                    nan_p = {0.0, NAN, 1.0, -1, NULL, 0, NULL, 0};
    sieve_params a = {1.0, 1.0, -1, 0.0, &big_r}, b = {1.0, 1.0, -1, 0.0, &big_p},
                 c = {1.0, 1.0, -1, 1.5, NULL}, d = {1.0, 1.0, -1, 0.0, &nan_p}, out;
    cr_expect_eq(sieve_params_check_rule(&r, &a, &out), repetition[i], "range %d", i);
    cr_expect_eq(sieve_params_check_rule(&r, &b, &out), presence[i], "range %d", i);
    cr_expect_eq(sieve_params_check_rule(&r, &c, &out), min_p[i], "range %d", i);
    cr_expect_eq(sieve_params_check_rule(&r, &d, &out), SIEVE_EPRESENCE, "range %d", i);
  }
}

Test(rules, llama_cpp_min_p_above_1_keeps_the_first_rank_alone) {
  const float row[4] = {2.0f, 2.0f, 1.0f, 0.0f};
  sieve_params p = {1.0, 1.0, -1, 1.5, NULL};
  sieve_rule unchecked = with(SIEVE_AXIS_PENALTY_RANGE, SIEVE_PENALTY_RANGE_UNCHECKED);
  filtered f = run_rule_params(&unchecked, row, 4, &p);
  cr_expect(f.rc == 0 && f.info.kept == 1 && is_kept(&f, 0), "rc %d, kept %zu", f.rc,
            f.info.kept);
}

/* Repetition 2 on -3e38 is -6e38: the spec's overflow error, or -inf and the token gone; 3e38
 * over a repetition of 0.5 is +inf, an error under both. */
Test(rules, engines_leave_a_penalized_logit_below_float32_at_minus_inf_and_drop_its_token) {
  const float row[3] = {1.0f, -3e38f, 3e38f};
  const int64_t low[1] = {1}, high[1] = {2};
  sieve_penalties down = {0.0, 0.0, 2.0, -1, low, 1, NULL, 0},
                  up = {0.0, 0.0, 0.5, -1, high, 1, NULL, 0};
  sieve_params p = {1.0, 1.0, -1, 0.0, &down}, q = {1.0, 1.0, -1, 0.0, &up};
  sieve_rule ours = SIEVE_RULE_DEEPINFER,
             minus_inf = with(SIEVE_AXIS_PENALTY_OVERFLOW, SIEVE_PENALTY_OVERFLOW_MINUS_INF);
  cr_expect_eq(run_rule_params(&ours, row, 3, &p).rc, SIEVE_EOVERFLOW);
  filtered f = run_rule_params(&minus_inf, row, 3, &p);
  cr_expect(f.rc == 0 && f.info.kept == 2 && !is_kept(&f, 1), "rc %d, kept %zu", f.rc,
            f.info.kept);
  cr_expect_eq(run_rule_params(&minus_inf, row, 3, &q).rc, SIEVE_EOVERFLOW);
}

/* The axes whose values change the answers to a request with one sampling option. */
static uint32_t axes_of_option(const char *option, int with_repetition) {
  const uint32_t counted = 1u << SIEVE_AXIS_PENALTY_TOKENS | 1u << SIEVE_AXIS_PENALTY_RANGE |
                           1u << SIEVE_AXIS_PENALTY_OVERFLOW;
  if (strcmp(option, "min_p") == 0)
    return 1u << SIEVE_AXIS_MIN_P_SCALE | 1u << SIEVE_AXIS_MIN_P_ORDER |
           1u << SIEVE_AXIS_MIN_P_BOUNDARY | 1u << SIEVE_AXIS_PENALTY_RANGE;
  if (strcmp(option, "penalty_last_n") == 0)
    return 1u << SIEVE_AXIS_PENALTY_TOKENS;
  if (strcmp(option, "repetition_penalty") == 0 || !with_repetition)
    return counted;
  return counted | 1u << SIEVE_AXIS_PENALTY_ORDER;
}

Test(profiles, take_a_sampling_option_only_where_every_axis_it_touches_is_confirmed) {
  for (const engine_profile *p = profiles; p->name; p++) {
    char options[128];
    snprintf(options, sizeof options, "%s", p->sampling_options);
    const int with_repetition = strstr(options, "repetition_penalty") != NULL;
    for (char *o = strtok(options, ","); o; o = strtok(NULL, ","))
      for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
        cr_expect(!(axes_of_option(o, with_repetition) >> a & 1) || p->why[a].confirmed,
                  "%s takes %s, but its %s is unconfirmed", p->name, o, sieve_axis_name(a));
  }
}

Test(profiles, every_choice_names_its_source_or_why_it_is_unconfirmed) {
  for (const engine_profile *p = profiles; p->name; p++)
    for (int a = 0; a < SIEVE_AXIS_COUNT; a++) {
      cr_expect(p->why[a].source && p->why[a].source[0], "%s has no source for %s", p->name,
                sieve_axis_name(a));
      cr_expect_geq(sieve_rule_get(&p->rule, a), 0);
    }
}

Test(profiles, every_axis_has_a_fingerprint_probe) {
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
    cr_expect(sieve_fingerprint_has_probe(a), "%s", sieve_axis_name(a));
}

Test(profiles, a_rule_text_sets_the_axes_it_names_and_rejects_unknown_ones) {
  sieve_rule r = SIEVE_RULE_DEEPINFER;
  char err[200];
  cr_assert_eq(profile_parse_rule("boundary=ge,topp_ties=highest", &r, err, sizeof err), 0);
  cr_expect_eq(r.boundary, SIEVE_BOUNDARY_GE);
  cr_expect_eq(r.topp_ties, SIEVE_TOPP_TIES_HIGHEST);
  cr_expect_eq(profile_parse_rule("boundary=lt", &r, err, sizeof err), -1);
  cr_expect(strstr(err, "'lt'") != NULL, "%s", err);
  cr_expect_eq(profile_parse_rule("bondary=ge", &r, err, sizeof err), -1);
  cr_expect(strstr(err, "'bondary'") != NULL, "%s", err);
}

static int pick(rng *s, int n) { return (int)(rng_next(s) % (uint64_t)n); }

/* DeepInfer's rule one time in four (its fast path reports what the spec path would read), else
 * a few axes off it. */
static void random_rule(rng *s, sieve_rule *r) {
  const int deepinfer = pick(s, 4) == 0;
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
    sieve_rule_set(r, a, deepinfer || pick(s, 3) ? 0 : pick(s, sieve_axis_values(a)));
}

/* Rows with ties, underflowing probabilities and -inf, and parameters at every rule's edges. */
static size_t edge_row(rng *s, float *row, sieve_params *p) {
  static const float logits[] = {2.0f,  1.0f,     1.0f,     0.5f,      0.0f,
                                 -1.0f, -1000.0f, -1500.0f, -INFINITY, 3e38f};
  static const double temperatures[] = {0.0, -0.0, -1.0, 1e-7, 5e-6, 0.005, 0.5, 1.0, 2.0};
  static const double top_ps[] = {0.25, 0.5, 0.75, 0.8, 1.0};
  static const int64_t top_ks[] = {-1, 0, 1, 2, 3, 20, SIEVE_TOP_K_UNSET};
  size_t v = 1 + (size_t)pick(s, 10);
  for (size_t i = 0; i < v; i++)
    row[i] = logits[pick(s, 10)];
  row[0] = pick(s, 2) ? row[0] : 1.0f; /* most rows keep a finite logit */
  *p = (sieve_params){temperatures[pick(s, 9)], top_ps[pick(s, 5)], top_ks[pick(s, 7)], 0.0, NULL};
  return v;
}

/* The promise of sieve_rule.consulted that the fit of `sieve run` reuses answers on: a rule
 * that agrees on the axes an answer read gives the same answer, bit for bit. */
Test(rules, an_answer_depends_only_on_the_axes_it_read) {
  rng s = {23};
  for (int trial = 0; trial < 4000; trial++) {
    float row[MAX_V];
    sieve_params p;
    size_t v = edge_row(&s, row, &p);
    sieve_rule r = SIEVE_RULE_DEEPINFER, other;
    random_rule(&s, &r);
    uint32_t read = 0;
    r.consulted = &read;
    sieve_draw_key key = {7, (uint64_t)trial, 0, 0};
    sieve_sample_result a, b;
    double la[MAX_V], lb[MAX_V];
    int ra = sieve_filter_rule(&r, row, v, &p, NULL, la, NULL);
    int sa = sieve_sample_rule(&r, row, v, &p, NULL, &key, 0, NULL, &a);
    other = r;
    other.consulted = NULL;
    for (int x = 0; x < SIEVE_AXIS_COUNT; x++)
      if (!(read >> x & 1))
        sieve_rule_set(&other, x, pick(&s, sieve_axis_values(x)));
    int rb = sieve_filter_rule(&other, row, v, &p, NULL, lb, NULL);
    int sb = sieve_sample_rule(&other, row, v, &p, NULL, &key, 0, NULL, &b);
    cr_assert_eq(ra, rb, "trial %d: filter %d then %d", trial, ra, rb);
    cr_assert_eq(sa, sb, "trial %d: sample %d then %d", trial, sa, sb);
    for (size_t i = 0; ra == 0 && i < v; i++)
      cr_assert(same_double(la[i], lb[i]), "trial %d: logprob %zu", trial, i);
    cr_assert(sa != 0 || (a.token == b.token && same_double(a.logprob, b.logprob) &&
                          same_double(a.u, b.u)),
              "trial %d: sample", trial);
  }
}

Test(rules, a_temperature_far_from_one_rounds_its_float32_scale_to_an_infinity_or_zero) {
  /* Under t0_below=zero, T = 1e-40 reaches the scaling: its 1/T is beyond FLT_MAX, so the
   * float32 1/T is an infinity and a finite logit's product the overflow error. A T beyond
   * FLT_MAX divides every logit by an infinity, and the row is flat. */
  const float row[2] = {1.0f, 0.5f};
  const int ops[3] = {SIEVE_TEMPERATURE_OP_RECIPROCAL, SIEVE_TEMPERATURE_OP_DIVIDE,
                      SIEVE_TEMPERATURE_OP_SHIFTED};
  for (int i = 0; i < 3; i++) {
    sieve_rule r = with(SIEVE_AXIS_TEMPERATURE_OP, ops[i]);
    sieve_rule_set(&r, SIEVE_AXIS_T0_BELOW, SIEVE_T0_BELOW_ZERO);
    cr_expect_eq(run_rule(&r, row, 2, 1e-40, 1.0, -1).rc, SIEVE_EOVERFLOW, "op %d, T = 1e-40",
                 ops[i]);
    filtered f = run_rule(&r, row, 2, 1e300, 1.0, 1);
    cr_expect(f.rc == 0 && is_kept(&f, 0) && !is_kept(&f, 1), "op %d, T = 1e300: a tie", ops[i]);
  }
}

/* Tokens 2 and 3 underflow to probability 0 with different logits, so ranking by logit orders
 * them; the top-p cut before them is measured in probability, as DeepInfer measures it. */
Test(rules, ranking_by_logit_measures_top_p_in_probability) {
  static const float underflow[4] = {0.0f, -1.0f, -900.0f, -800.0f};
  sieve_rule r = SIEVE_RULE_DEEPINFER, deepinfer = SIEVE_RULE_DEEPINFER;
  r.rank_key = SIEVE_RANK_KEY_LOGIT;
  filtered by_logit = run_rule(&r, underflow, 4, 1.0, 0.5, -1);
  filtered spec = run_rule(&deepinfer, underflow, 4, 1.0, 0.5, -1);
  cr_assert_eq(by_logit.rc, 0);
  cr_expect_eq(by_logit.info.kept, spec.info.kept);
  cr_expect(same_double(by_logit.info.kept_mass, spec.info.kept_mass));
  for (size_t i = 0; i < 4; i++)
    cr_expect(same_double(by_logit.lp[i], spec.lp[i]), "token %zu", i);
}

/* Tokens 1 and 2 underflow to probability 0, so ranking by logit orders all three by logit. */
Test(rules, ranking_by_logit_ranks_the_largest_logit_first) {
  static const float row[3] = {1000.0f, 10.0f, 5.0f};
  sieve_rule r = with(SIEVE_AXIS_RANK_KEY, SIEVE_RANK_KEY_LOGIT);
  filtered f = run_rule(&r, row, 3, 1.0, 1.0, 1);
  cr_assert_eq(f.rc, 0);
  cr_expect(is_kept(&f, 0) && !is_kept(&f, 1), "its logit 1000 ranks above 10, not its p = 1");
}

Test(rules, ranking_by_logit_ties_only_equal_logits) {
  static const float row[4] = {1000.0f, 10.0f, 5.0f, 0.0f};
  sieve_rule r = with(SIEVE_AXIS_RANK_KEY, SIEVE_RANK_KEY_LOGIT);
  sieve_rule_set(&r, SIEVE_AXIS_TOPK_TIES, SIEVE_TOPK_TIES_KEEP_ALL);
  filtered f = run_rule(&r, row, 4, 1.0, 1.0, 2);
  cr_assert_eq(f.rc, 0);
  cr_expect_eq(f.info.kept, 2, "10 and 5 are not tied, though both have p = 0");
}

/* Above 4096 tokens the ranking takes a radix sort on the keys' bits, where -0 and +0 differ. */
Test(rules, ranking_by_logit_ties_minus_zero_and_zero_in_a_long_row) {
  enum { V = 5000 };
  static float row[V];
  static double lp[V];
  for (size_t i = 0; i < V; i++)
    row[i] = -1.0f;
  row[0] = 1000.0f;
  row[1] = -0.0f;
  row[2] = 0.0f;
  sieve_rule r = with(SIEVE_AXIS_RANK_KEY, SIEVE_RANK_KEY_LOGIT);
  const sieve_params p = {1.0, 1.0, 2, 0.0, NULL};
  cr_assert_eq(sieve_filter_rule(&r, row, V, &p, NULL, lp, NULL), 0);
  cr_expect(!isinf(lp[1]) && isinf(lp[2]), "-0 == 0: the lower id stays");
}

/* Top-p keeps the highest ids of a run of 10000 ties; they go on in token order, so top-k's
 * own choice (the lowest ids) takes the lowest of them. */
Test(rules, a_long_tie_run_reversed_by_top_p_goes_on_in_token_order) {
  enum { V = 10000 };
  static float row[V];
  static double lp[V];
  sieve_rule r = with(SIEVE_AXIS_TOPP_TIES, SIEVE_TOPP_TIES_HIGHEST);
  const sieve_params p = {1.0, 0.5, 10, 0.0, NULL};
  sieve_filter_info info;
  cr_assert_eq(sieve_filter_rule(&r, row, V, &p, NULL, lp, &info), 0);
  cr_expect_eq(info.kept, 10);
  cr_expect(!isinf(lp[5000]) && !isinf(lp[5008]) && isinf(lp[V - 1]),
            "top-p keeps ids 4999 or 5000 to 9999, top-k the first 10 of them");
}

/* exllamav2's loop takes the first of equal largest logits: -0 - -0 is +0, where -0 - +0 would
 * be -0. */
Test(rules, exllamav2_subtracts_the_first_of_equal_largest_logits) {
  static const float row[2] = {-0.0f, 0.0f};
  sieve_rule r = with(SIEVE_AXIS_TEMPERATURE_OP, SIEVE_TEMPERATURE_OP_SHIFTED);
  filtered f = run_rule(&r, row, 2, 0.7, 1.0, 1);
  cr_assert_eq(f.rc, 0);
  cr_expect(same_double(f.lp[0], 0.0), "token 0 alone, its shifted logit +0");
}

/* At a power-of-two 1/T scaling is exact, but (x - largest) / T can still overflow where x / T
 * does not: the difference is checked for every token, the first too. */
Test(rules, exllamav2_a_difference_that_overflows_is_an_error_at_a_power_of_two_temperature) {
  static const float row[2] = {-0x1p117f, 0x1p117f};
  sieve_rule r = with(SIEVE_AXIS_TEMPERATURE_OP, SIEVE_TEMPERATURE_OP_SHIFTED);
  cr_expect_eq(run_rule(&r, row, 2, 0x1p-10, 1.0, -1).rc, SIEVE_EOVERFLOW, "-2^118 * 2^10");
  cr_expect_eq(run_rule(NULL, row, 2, 0x1p-10, 1.0, -1).rc, 0, "2^117 * 2^10 is finite");
}

/* Only the all-zero rule is DeepInfer's (and takes the fast path); a rule whose every axis is 1
 * breaks the top-k tie by descending id. */
Test(rules, a_rule_with_every_axis_set_is_not_deepinfers) {
  static const float row[4] = {1.0f, 1.0f, 1.0f, 0.0f};
  sieve_rule r = SIEVE_RULE_DEEPINFER;
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
    sieve_rule_set(&r, a, 1);
  filtered f = run_rule(&r, row, 4, 1.0, 0.99, 2);
  cr_assert_eq(f.rc, 0);
  cr_expect(!is_kept(&f, 0) && is_kept(&f, 1) && is_kept(&f, 2));
}

/* The row's float64 buffers (its probabilities and ranking) are allocated, the sorts' buffers
 * are not: qsort then sorts in place (glibc's quicksort), and the tie order is the same. */
Test(rules, ties_by_descending_id_keep_the_highest_ids_without_memory_for_the_sort_buffers) {
  enum { V = 100 };
  static float row[V];
  static double lp[V];
  sieve_rule r = with(SIEVE_AXIS_TOPK_TIES, SIEVE_TOPK_TIES_BY_ID_DESC);
  const sieve_params p = {1.0, 1.0, 10, 0.0, NULL};
  if (!fail_allocations(sizeof lp, 2))
    cr_skip_test("malloc is the sanitizer's");
  const int rc = sieve_filter_rule(&r, row, V, &p, NULL, lp, NULL);
  allocations_succeed();
  cr_assert_eq(rc, 0);
  for (size_t i = 0; i < V; i++)
    cr_expect_eq(!isinf(lp[i]), i >= V - 10, "token %zu", i);
}
