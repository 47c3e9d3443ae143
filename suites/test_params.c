/* Parameters: seed 000:9, 000:11, 000:32, 000:63 (sampling_params.py:47-99). */
#include "helpers.h"

static int check(double t, double top_p, int64_t top_k, sieve_params *out) {
  sieve_params in = {t, top_p, top_k, 0.0, NULL};
  return sieve_params_check(&in, out);
}

Test(params, s000_l63_defaults_are_t1_top_p1_top_k_off) {
  sieve_params d = SIEVE_PARAMS_DEFAULT, out;
  cr_assert_eq(sieve_params_check(&d, &out), 0);
  expect_near(out.temperature, 1.0, 0, "temperature");
  expect_near(out.top_p, 1.0, 0, "top_p");
  cr_expect_eq(out.top_k, -1);
}

Test(params, s000_l11_negative_temperature_is_an_error) {
  sieve_params out;
  cr_expect_eq(check(-1.0, 1.0, -1, &out), SIEVE_ETEMPERATURE);
  cr_expect_eq(check(-1e-300, 1.0, -1, &out), SIEVE_ETEMPERATURE);
}

Test(params, nan_temperature_is_an_error) {
  sieve_params out;
  cr_expect_eq(check(NAN, 1.0, -1, &out), SIEVE_ETEMPERATURE);
}

Test(params, infinite_temperature_is_an_error) {
  sieve_params out;
  cr_expect_eq(check(INFINITY, 1.0, -1, &out), SIEVE_ETEMPERATURE);
  cr_expect_eq(check(-INFINITY, 1.0, -1, &out), SIEVE_ETEMPERATURE);
}

Test(params, negative_zero_temperature_is_zero_and_is_clamped) {
  sieve_params out;
  cr_assert_eq(check(-0.0, 0.5, 3, &out), 0);
  expect_near(out.temperature, SIEVE_SAMPLING_EPS, 0, "temperature");
}

Test(params, s000_l32_top_p_zero_is_an_error) {
  sieve_params out;
  cr_expect_eq(check(1.0, 0.0, -1, &out), SIEVE_ETOPP);
  cr_expect_eq(check(1.0, -0.0, -1, &out), SIEVE_ETOPP);
}

Test(params, s000_l32_top_p_above_one_is_an_error) {
  sieve_params out;
  cr_expect_eq(check(1.0, nextafter(1.0, 2.0), -1, &out), SIEVE_ETOPP);
  cr_expect_eq(check(1.0, INFINITY, -1, &out), SIEVE_ETOPP);
}

Test(params, s000_l32_top_p_negative_or_nan_is_an_error) {
  sieve_params out;
  cr_expect_eq(check(1.0, -0.5, -1, &out), SIEVE_ETOPP);
  cr_expect_eq(check(1.0, NAN, -1, &out), SIEVE_ETOPP);
}

Test(params, s000_l32_top_p_bounds_one_and_smallest_positive_are_valid) {
  sieve_params out;
  cr_expect_eq(check(1.0, 1.0, -1, &out), 0);
  cr_expect_eq(check(1.0, 0x1p-1074, -1, &out), 0);
}

Test(params, s000_l32_top_k_zero_is_an_error) {
  sieve_params out;
  cr_expect_eq(check(1.0, 1.0, 0, &out), SIEVE_ETOPK);
}

Test(params, s000_l32_top_k_below_minus_one_is_an_error) {
  sieve_params out;
  cr_expect_eq(check(1.0, 1.0, -2, &out), SIEVE_ETOPK);
  cr_expect_eq(check(1.0, 1.0, INT64_MIN + 1, &out), SIEVE_ETOPK);
}

Test(params, a_top_k_left_out_is_off) {
  sieve_params out;
  cr_assert_eq(check(1.0, 1.0, SIEVE_TOP_K_UNSET, &out), 0);
  cr_expect_eq(out.top_k, -1);
}

Test(params, s000_l32_top_k_above_int32_max_is_an_error) {
  sieve_params out;
  cr_expect_eq(check(1.0, 1.0, SIEVE_TOP_K_MAX + 1, &out), SIEVE_ETOPK);
  cr_expect_eq(check(1.0, 1.0, INT64_MAX, &out), SIEVE_ETOPK);
}

Test(params, s000_l32_top_k_bounds_one_and_int32_max_are_valid) {
  sieve_params out;
  cr_expect_eq(check(1.0, 1.0, 1, &out), 0);
  cr_expect_eq(check(1.0, 1.0, SIEVE_TOP_K_MAX, &out), 0);
}

Test(params, s000_l63_temperature_is_checked_before_top_p_and_top_k) {
  sieve_params out;
  cr_expect_eq(check(-1.0, 0.0, 0, &out), SIEVE_ETEMPERATURE);
}

Test(params, s000_l63_top_p_is_checked_before_top_k) {
  sieve_params out;
  cr_expect_eq(check(1.0, 2.0, 0, &out), SIEVE_ETOPP);
}

Test(params, s000_l63_checks_run_before_the_clamp_so_t0_with_top_k0_is_an_error) {
  sieve_params out;
  cr_expect_eq(check(0.0, 1.0, 0, &out), SIEVE_ETOPK);
}

Test(params, s000_l9_temperature_zero_becomes_eps_with_filters_reset) {
  sieve_params out;
  cr_assert_eq(check(0.0, 0.3, 5, &out), 0);
  expect_near(out.temperature, 1e-5, 0, "temperature");
  expect_near(out.top_p, 1.0, 0, "top_p");
  cr_expect_eq(out.top_k, -1);
}

Test(params, s000_l9_temperature_just_below_eps_is_clamped) {
  sieve_params out;
  cr_assert_eq(check(nextafter(1e-5, 0.0), 0.3, 5, &out), 0);
  expect_near(out.temperature, 1e-5, 0, "temperature");
  cr_expect_eq(out.top_k, -1);
}

Test(params, s000_l9_temperature_equal_to_eps_is_kept_with_its_filters) {
  sieve_params out;
  cr_assert_eq(check(1e-5, 0.3, 5, &out), 0);
  cr_expect(same_double(out.temperature, 1e-5));
  cr_expect(same_double(out.top_p, 0.3));
  cr_expect_eq(out.top_k, 5);
}

Test(params, very_large_finite_temperature_is_valid) {
  sieve_params out;
  cr_expect_eq(check(1e308, 1.0, -1, &out), 0);
}

Test(params, normalizing_twice_changes_nothing) {
  sieve_params once, twice;
  cr_assert_eq(check(0.0, 0.3, 5, &once), 0);
  cr_assert_eq(sieve_params_check(&once, &twice), 0);
  cr_expect(same_double(once.temperature, twice.temperature));
  cr_expect(same_double(once.top_p, twice.top_p));
  cr_expect_eq(once.top_k, twice.top_k);
}

Test(params, output_is_untouched_on_error) {
  sieve_params out = {7.0, 0.7, 7, 0.0, NULL};
  cr_assert_eq(check(1.0, 1.0, 0, &out), SIEVE_ETOPK);
  cr_expect(same_double(out.temperature, 7.0));
  cr_expect_eq(out.top_k, 7);
}

Test(params, null_arguments_are_an_error) {
  sieve_params p = SIEVE_PARAMS_DEFAULT;
  cr_expect_eq(sieve_params_check(NULL, &p), SIEVE_EARG);
  cr_expect_eq(sieve_params_check(&p, NULL), SIEVE_EARG);
}

static int check_rest(double min_p, const sieve_penalties *pen) {
  sieve_params in = {1.0, 1.0, -1, min_p, pen}, out;
  return sieve_params_check(&in, &out);
}

static sieve_penalties with(double frequency, double presence, double repetition, int64_t last_n) {
  return (sieve_penalties){frequency, presence, repetition, last_n, NULL, 0, NULL, 0};
}

Test(params, min_p_must_be_in_0_to_1) {
  cr_expect_eq(check_rest(0.0, NULL), 0);
  cr_expect_eq(check_rest(1.0, NULL), 0);
  cr_expect_eq(check_rest(-0x1p-1074, NULL), SIEVE_EMINP);
  cr_expect_eq(check_rest(nextafter(1.0, 2.0), NULL), SIEVE_EMINP);
  cr_expect_eq(check_rest(NAN, NULL), SIEVE_EMINP);
}

Test(params, frequency_and_presence_penalties_must_be_in_minus_2_to_2) {
  sieve_penalties pen = with(-2.0, 2.0, 1.0, -1);
  cr_expect_eq(check_rest(0.0, &pen), 0);
  pen = with(nextafter(2.0, 3.0), 0.0, 1.0, -1);
  cr_expect_eq(check_rest(0.0, &pen), SIEVE_EFREQUENCY);
  pen = with(NAN, 0.0, 1.0, -1);
  cr_expect_eq(check_rest(0.0, &pen), SIEVE_EFREQUENCY);
  pen = with(0.0, nextafter(-2.0, -3.0), 1.0, -1);
  cr_expect_eq(check_rest(0.0, &pen), SIEVE_EPRESENCE);
  pen = with(0.0, NAN, 1.0, -1);
  cr_expect_eq(check_rest(0.0, &pen), SIEVE_EPRESENCE);
}

Test(params, repetition_penalty_must_be_in_0_exclusive_to_2) {
  sieve_penalties pen = with(0.0, 0.0, 2.0, -1);
  cr_expect_eq(check_rest(0.0, &pen), 0);
  pen.repetition = 0x1p-1074;
  cr_expect_eq(check_rest(0.0, &pen), 0);
  pen.repetition = 0.0;
  cr_expect_eq(check_rest(0.0, &pen), SIEVE_EREPETITION);
  pen.repetition = nextafter(2.0, 3.0);
  cr_expect_eq(check_rest(0.0, &pen), SIEVE_EREPETITION);
  pen.repetition = NAN;
  cr_expect_eq(check_rest(0.0, &pen), SIEVE_EREPETITION);
}

Test(params, penalty_last_n_is_minus_1_or_at_least_0) {
  sieve_penalties pen = with(0.0, 0.0, 1.0, -1);
  cr_expect_eq(check_rest(0.0, &pen), 0);
  pen.last_n = 0;
  cr_expect_eq(check_rest(0.0, &pen), 0);
  pen.last_n = -2;
  cr_expect_eq(check_rest(0.0, &pen), SIEVE_EPENALTYWINDOW);
}

Test(params, min_p_and_the_penalties_are_checked_after_top_k_in_their_order) {
  sieve_penalties pen = with(3.0, 3.0, 0.0, -2);
  sieve_params in = {1.0, 1.0, 0, -1.0, &pen}, out;
  cr_expect_eq(sieve_params_check(&in, &out), SIEVE_ETOPK);
  in.top_k = -1;
  cr_expect_eq(sieve_params_check(&in, &out), SIEVE_EMINP);
  in.min_p = 0.0;
  cr_expect_eq(sieve_params_check(&in, &out), SIEVE_EFREQUENCY);
  pen.frequency = 0.0;
  cr_expect_eq(sieve_params_check(&in, &out), SIEVE_EPRESENCE);
  pen.presence = 0.0;
  cr_expect_eq(sieve_params_check(&in, &out), SIEVE_EREPETITION);
  pen.repetition = 1.0;
  cr_expect_eq(sieve_params_check(&in, &out), SIEVE_EPENALTYWINDOW);
}

Test(params, counted_ids_without_their_array_are_an_error) {
  sieve_penalties pen = with(0.0, 0.0, 1.0, -1);
  pen.n_output = 1;
  cr_expect_eq(check_rest(0.0, &pen), SIEVE_EARG);
  pen = with(0.0, 0.0, 1.0, -1);
  pen.n_prompt = 1;
  cr_expect_eq(check_rest(0.0, &pen), SIEVE_EARG);
}

Test(params, the_temperature_0_clamp_keeps_min_p_and_the_penalties) {
  sieve_penalties pen = with(0.5, 0.0, 1.0, -1);
  sieve_params in = {0.0, 0.5, 3, 0.25, &pen}, out;
  cr_assert_eq(sieve_params_check(&in, &out), 0);
  cr_expect_eq(out.top_k, -1, "the clamp resets top_k");
  expect_near(out.min_p, 0.25, 0, "min_p");
  cr_expect(out.penalties == &pen);
}
