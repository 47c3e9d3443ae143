/* Parameters: seed 000:9, 000:11, 000:32, 000:63 (sampling_params.py:47-99). */
#include "helpers.h"

static int check(double t, double top_p, int64_t top_k, sieve_params *out) {
  sieve_params in = {t, top_p, top_k};
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
  sieve_params out = {7.0, 0.7, 7};
  cr_assert_eq(check(1.0, 1.0, 0, &out), SIEVE_ETOPK);
  cr_expect(same_double(out.temperature, 7.0));
  cr_expect_eq(out.top_k, 7);
}

Test(params, null_arguments_are_an_error) {
  sieve_params p = SIEVE_PARAMS_DEFAULT;
  cr_expect_eq(sieve_params_check(NULL, &p), SIEVE_EARG);
  cr_expect_eq(sieve_params_check(&p, NULL), SIEVE_EARG);
}
