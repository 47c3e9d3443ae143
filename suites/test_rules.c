/*
 * The axes on which engines differ (sieve_rule, oracle/ENGINES.md): each value
 * against a row that tells it apart, and the spec's rule as the all-zero rule.
 */
#include "helpers.h"

static filtered run_rule(const sieve_rule *rule, const float *logits, size_t v, double t,
                         double top_p, int64_t top_k) {
  filtered f;
  sieve_params p = {t, top_p, top_k};
  f.rc = sieve_filter_rule(rule, logits, v, &p, NULL, f.lp, &f.info);
  return f;
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
  r.topp_scope = SIEVE_TOPP_AFTER_TOPK;
  cr_expect_eq(run_rule(&r, order_row, 3, 1.0, 0.55, 2).info.kept, 1);
}

Test(rules, s004_l219_the_ge_boundary_keeps_one_token_fewer_at_an_exact_mass) {
  sieve_rule r = SIEVE_RULE_DEEPINFER;
  r.boundary = SIEVE_BOUNDARY_GE;
  cr_expect_eq(run_rule(&r, equal4, 4, 1.0, 0.5, -1).info.kept, 2);
}

Test(rules, s002_l89_keep_all_ties_keeps_every_token_tied_with_the_kth) {
  sieve_rule r = SIEVE_RULE_DEEPINFER;
  r.topk_ties = SIEVE_TIES_KEEP_ALL;
  filtered f = run_rule(&r, tied, 6, 1.0, 1.0, 2);
  cr_expect_eq(f.info.kept, 3);
}

Test(rules, ties_by_descending_id_keep_the_highest_ids) {
  sieve_rule r = SIEVE_RULE_DEEPINFER;
  r.topk_ties = SIEVE_TIES_BY_ID_DESC;
  filtered f = run_rule(&r, tied, 6, 1.0, 1.0, 2);
  cr_expect(is_kept(&f, 3) && is_kept(&f, 4) && !is_kept(&f, 1));
}

Test(rules, temperature_after_the_filters_cuts_the_unscaled_distribution) {
  sieve_rule r = SIEVE_RULE_DEEPINFER;
  r.temperature_at = SIEVE_TEMP_AFTER;
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
  sieve_params in = {0.0, 0.3, 5}, out;
  cr_assert_eq(sieve_params_check_rule(&r, &in, &out), 0);
  expect_near(out.temperature, 1.0, 0, "T");
  expect_near(out.top_p, 0.3, 0, "top_p");
  cr_expect_eq(out.top_k, 1);
}

Test(rules, s004_l165_top_k_zero_can_mean_off) {
  sieve_rule r = SIEVE_RULE_DEEPINFER;
  r.top_k_zero = SIEVE_K0_OFF;
  cr_expect_eq(run_rule(&r, mat, 6, 1.0, 1.0, 0).info.kept, 6);
  cr_expect_eq(run_filter(mat, 6, 1.0, 1.0, 0).rc, SIEVE_ETOPK);
}

Test(rules, raw_and_scaled_logprobs_are_what_sample_returns) {
  sieve_draw_key key = {42, 7, 0, 0};
  sieve_params p = {0.5, 1.0, 2};
  sieve_sample_result processed, scaled, raw;
  sieve_rule r = SIEVE_RULE_DEEPINFER;
  cr_assert_eq(sieve_sample_rule(&r, mat, 6, &p, NULL, &key, 0, NULL, &processed), 0);
  r.logprobs = SIEVE_LP_SCALED;
  cr_assert_eq(sieve_sample_rule(&r, mat, 6, &p, NULL, &key, 0, NULL, &scaled), 0);
  r.logprobs = SIEVE_LP_RAW;
  cr_assert_eq(sieve_sample_rule(&r, mat, 6, &p, NULL, &key, 0, NULL, &raw), 0);
  cr_assert_eq(processed.token, raw.token);
  double lp[6];
  sieve_params full = {1.0, 1.0, -1};
  sieve_filter(mat, 6, &full, NULL, lp, NULL);
  expect_near(raw.logprob, lp[raw.token], 1e-15, "raw logprob");
  cr_expect_gt(processed.logprob, scaled.logprob, "renormalized over 2 tokens, it is larger");
}

Test(rules, an_own_generator_is_not_the_hash) {
  sieve_params p = {1.0, 1.0, -1};
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

Test(rules, an_axis_out_of_range_is_an_error) {
  sieve_rule r = SIEVE_RULE_DEEPINFER;
  r.boundary = 7;
  cr_expect_eq(run_rule(&r, mat, 6, 1.0, 1.0, -1).rc, SIEVE_ERULE);
}
