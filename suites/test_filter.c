/*
 * The filter, statement by statement (seed 000:3-32) and the worked examples
 * of seeds 000, 002 and 004 that concern this rule.
 */
#include "helpers.h"

/* The mat/floor row of seed 000:21-23 and 000:57, 000:72: logit gap 0.5 between mat and floor. */
enum { MAT, FLOOR, RUG, SOFA, BED, CHAIR, N_MAT_ROW };
static const float mat_row[N_MAT_ROW] = {2.0f, 1.5f, 1.0f, 0.3f, -0.2f, -1.5f};

static size_t count_kept(const filtered *f, size_t v) {
  size_t n = 0;
  for (size_t i = 0; i < v; i++)
    n += (size_t)is_kept(f, i);
  return n;
}

/* --- step 1: temperature and the softmax over the whole row ------------------ */

Test(temperature, s000_l5_softmax_is_over_the_full_vocabulary) {
  filtered f = run_filter(mat_row, N_MAT_ROW, 1.0, 1.0, -1);
  cr_assert_eq(f.rc, 0);
  double total = 0;
  for (size_t i = 0; i < N_MAT_ROW; i++)
    total += exp(f.lp[i]);
  expect_near(total, 1.0, 1e-12, "sum of probabilities");
  expect_near(exp(f.lp[FLOOR]), 0.2639276790724073, 1e-7, "p(floor)");
}

Test(temperature, s000_l7_ratio_of_mat_to_floor_is_1_65_at_t1) {
  filtered f = run_filter(mat_row, N_MAT_ROW, 1.0, 1.0, -1);
  cr_assert_eq(f.rc, 0);
  expect_near(exp(f.lp[MAT] - f.lp[FLOOR]), 1.65, 0.005, "ratio at T = 1");
}

Test(temperature, s000_l7_ratio_of_mat_to_floor_is_2_72_at_t0_5) {
  filtered f = run_filter(mat_row, N_MAT_ROW, 0.5, 1.0, -1);
  cr_assert_eq(f.rc, 0);
  expect_near(exp(f.lp[MAT] - f.lp[FLOOR]), 2.72, 0.005, "ratio at T = 0.5");
}

Test(temperature, s000_l11_logits_are_multiplied_by_the_float32_reciprocal_of_t) {
  /* 5 * (float)(1/0.7) is one float32 ulp above 5 / (float)0.7 and (float)(5/0.7). */
  const float row[2] = {5.0f, 0.0f};
  const double t = 0.7;
  float by_reciprocal = 5.0f * (float)(1.0 / t), by_division = 5.0f / (float)t;
  cr_assert(fabs((double)by_reciprocal - (double)by_division) > 1e-7,
            "the chosen row must tell the two apart");
  filtered f = run_filter(row, 2, t, 1.0, -1);
  cr_assert_eq(f.rc, 0);
  expect_near(f.lp[0] - f.lp[1], (double)by_reciprocal, 1e-13, "scaled gap");
}

Test(temperature, s000_l9_t0_with_a_0_01_gap_gives_the_best_token_probability_1) {
  const float row[3] = {1.0f, 0.99f, 0.5f};
  filtered f = run_filter(row, 3, 0.0, 1.0, -1);
  cr_assert_eq(f.rc, 0);
  expect_near(exp(f.lp[0]), 1.0, 0, "p(best)");
  expect_near(exp(f.lp[1]), 0.0, 0, "p(second)");
}

Test(temperature, s000_l9_equal_logits_at_t0_share_the_probability) {
  const float row[3] = {2.0f, 2.0f, 1.0f};
  filtered f = run_filter(row, 3, 0.0, 1.0, -1);
  cr_assert_eq(f.rc, 0);
  expect_near(exp(f.lp[0]), 0.5, 1e-15, "p(token 0)");
  expect_near(exp(f.lp[1]), 0.5, 1e-15, "p(token 1)");
}

Test(temperature, s000_l9_t0_resets_top_k_so_ties_keep_every_token) {
  const float row[4] = {2.0f, 2.0f, 2.0f, 2.0f};
  filtered f = run_filter(row, 4, 0.0, 0.1, 1);
  cr_assert_eq(f.rc, 0);
  cr_expect_eq(f.info.kept, 4);
}

Test(temperature, s000_l7_lower_temperature_makes_every_gap_larger) {
  filtered hot = run_filter(mat_row, N_MAT_ROW, 2.0, 1.0, -1);
  filtered cold = run_filter(mat_row, N_MAT_ROW, 0.5, 1.0, -1);
  for (size_t i = 1; i < N_MAT_ROW; i++)
    cr_expect_gt(cold.lp[0] - cold.lp[i], hot.lp[0] - hot.lp[i]);
}

Test(temperature, huge_temperature_gives_a_uniform_row) {
  filtered f = run_filter(mat_row, N_MAT_ROW, 1e300, 1.0, -1);
  cr_assert_eq(f.rc, 0);
  for (size_t i = 0; i < N_MAT_ROW; i++)
    expect_near(f.lp[i], -log((double)N_MAT_ROW), 1e-15, "uniform logprob");
}

/* --- step 2: the order ------------------------------------------------------- */

Test(order, s000_l16_ties_keep_token_order_under_top_k) {
  const float row[5] = {1.0f, 3.0f, 1.0f, 3.0f, 3.0f};
  filtered f = run_filter(row, 5, 1.0, 1.0, 2);
  cr_assert_eq(f.rc, 0);
  cr_expect(is_kept(&f, 1) && is_kept(&f, 3) && !is_kept(&f, 4));
  expect_near(f.info.cut_gap, 0.0, 0, "a cut inside a tie has gap 0");
}

Test(order, s000_l16_ties_keep_token_order_under_top_p) {
  const float row[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  filtered f = run_filter(row, 4, 1.0, 0.3, -1);
  cr_assert_eq(f.rc, 0);
  cr_expect(is_kept(&f, 0) && is_kept(&f, 1) && !is_kept(&f, 2) && !is_kept(&f, 3));
}

/* --- step 3: top-p ----------------------------------------------------------- */

Test(top_p, s000_l17_removes_a_token_when_the_mass_before_it_exceeds_top_p) {
  filtered f = run_filter(mat_row, N_MAT_ROW, 1.0, 0.8, -1);
  cr_assert_eq(f.rc, 0);
  cr_expect(is_kept(&f, RUG), "mass before rug is 0.699 <= 0.8");
  cr_expect(!is_kept(&f, SOFA), "mass before sofa is 0.859 > 0.8");
}

Test(top_p, s000_l17_keeps_a_token_whose_mass_before_equals_top_p) {
  /* Four equal logits: masses before are 0, 0.25, 0.5, 0.75, exact in any precision. */
  const float row[4] = {1.0f, 1.0f, 1.0f, 1.0f};
  filtered f = run_filter(row, 4, 1.0, 0.5, -1);
  cr_assert_eq(f.rc, 0);
  cr_expect_eq(f.info.kept, 3, "the strict > keeps tokens 0, 1, 2");
  cr_expect(is_kept(&f, 2) && !is_kept(&f, 3));
  expect_near(f.info.topp_margin, 0.0, 0, "the decision sits on the boundary");
}

Test(top_p, s000_l17_keeps_first_token_always) {
  const float row[3] = {10.0f, 0.0f, 0.0f};
  filtered f = run_filter(row, 3, 1.0, 1e-9, -1);
  cr_assert_eq(f.rc, 0);
  cr_expect_eq(f.info.kept, 1);
  expect_near(f.lp[0], 0.0, 0, "the lone kept token has logprob 0");
}

Test(top_p, top_p_one_removes_nothing) {
  const float row[3] = {50.0f, 0.0f, -50.0f};
  filtered f = run_filter(row, 3, 1.0, 1.0, -1);
  cr_assert_eq(f.rc, 0);
  cr_expect_eq(f.info.kept, 3);
  cr_expect(isinf(f.info.topp_margin), "top-p off has no margin");
}

Test(top_p, s000_l23_panel2_top_p_0_8_keeps_3_tokens_with_mass_0_859) {
  filtered f = run_filter(mat_row, N_MAT_ROW, 1.0, 0.8, -1);
  cr_assert_eq(f.rc, 0);
  cr_expect_eq(f.info.kept, 3);
  expect_near(f.info.kept_mass, 0.859, 0.0005, "kept mass");
}

Test(top_p, margin_is_the_distance_of_the_nearest_mass_from_top_p) {
  filtered f = run_filter(mat_row, N_MAT_ROW, 1.0, 0.8, -1);
  cr_assert_eq(f.rc, 0);
  expect_near(f.info.topp_margin, 0.8591510867898136 - 0.8, 1e-7, "top-p margin");
}

/* --- step 4: top-k ----------------------------------------------------------- */

Test(top_k, s000_l18_removes_every_rank_at_or_above_k) {
  filtered f = run_filter(mat_row, N_MAT_ROW, 1.0, 1.0, 2);
  cr_assert_eq(f.rc, 0);
  cr_expect_eq(f.info.kept, 2);
  cr_expect(is_kept(&f, MAT) && is_kept(&f, FLOOR) && !is_kept(&f, RUG));
}

Test(top_k, s000_l18_minus_one_is_off) {
  filtered f = run_filter(mat_row, N_MAT_ROW, 1.0, 1.0, -1);
  cr_assert_eq(f.rc, 0);
  cr_expect_eq(f.info.kept, N_MAT_ROW);
}

Test(top_k, s000_l32_top_k_larger_than_the_vocabulary_keeps_all_tokens) {
  filtered f = run_filter(mat_row, N_MAT_ROW, 1.0, 1.0, 1000);
  cr_assert_eq(f.rc, 0);
  cr_expect_eq(f.info.kept, N_MAT_ROW);
  cr_expect(isinf(f.info.cut_gap), "nothing removed, no cut");
}

Test(top_k, top_k_equal_to_the_vocabulary_keeps_all_tokens) {
  filtered f = run_filter(mat_row, N_MAT_ROW, 1.0, 1.0, N_MAT_ROW);
  cr_assert_eq(f.rc, 0);
  cr_expect_eq(f.info.kept, N_MAT_ROW);
}

Test(top_k, top_k_one_keeps_the_argmax_with_probability_one) {
  filtered f = run_filter(mat_row, N_MAT_ROW, 3.0, 1.0, 1);
  cr_assert_eq(f.rc, 0);
  cr_expect_eq(f.info.kept, 1);
  expect_near(f.lp[MAT], 0.0, 0, "logprob of the argmax");
}

Test(top_k, s000_l23_panel2_top_k_2_after_top_p_leaves_mat_and_floor) {
  filtered f = run_filter(mat_row, N_MAT_ROW, 1.0, 0.8, 2);
  cr_assert_eq(f.rc, 0);
  cr_expect_eq(count_kept(&f, N_MAT_ROW), 2);
  cr_expect(is_kept(&f, MAT) && is_kept(&f, FLOOR));
}

Test(top_k, s000_l27_order_example_deepinfer_keeps_2_tokens) {
  const double p[3] = {0.5, 0.3, 0.2};
  float row[3];
  logits_from_probs(p, 3, row);
  filtered f = run_filter(row, 3, 1.0, 0.55, 2);
  cr_assert_eq(f.rc, 0);
  cr_expect_eq(f.info.kept, 2, "mass before the second token is 0.5 <= 0.55");
  cr_expect_gt(f.info.topp_margin, 0.04, "the decision is far from the boundary");
}

Test(top_k, s000_l28_order_example_renormalized_mass_would_have_removed_the_second) {
  /* Top-k first would renormalize to (0.625, 0.375) and see 0.625 > 0.55; the rule does not. */
  const double p[3] = {0.5, 0.3, 0.2};
  float row[3];
  logits_from_probs(p, 3, row);
  filtered f = run_filter(row, 3, 1.0, 0.55, 2);
  cr_assert_eq(f.rc, 0);
  expect_near(exp(f.lp[0]), 0.625, 1e-7, "renormalized p(first)");
  cr_expect(is_kept(&f, 1));
}

/* --- step 5: processed logprobs ---------------------------------------------- */

Test(logprobs, s000_l19_kept_probabilities_add_up_to_1) {
  filtered f = run_filter(mat_row, N_MAT_ROW, 0.7, 0.9, 4);
  cr_assert_eq(f.rc, 0);
  double total = 0;
  for (size_t i = 0; i < N_MAT_ROW; i++)
    total += exp(f.lp[i]);
  expect_near(total, 1.0, 1e-12, "kept mass");
}

Test(logprobs, s000_l19_removed_tokens_get_minus_inf) {
  filtered f = run_filter(mat_row, N_MAT_ROW, 1.0, 0.8, 2);
  cr_assert_eq(f.rc, 0);
  for (size_t i = RUG; i < N_MAT_ROW; i++)
    expect_minus_inf(f.lp[i], "removed token");
}

Test(logprobs, s000_l72_floor_has_processed_logprob_ln_0_378_not_raw_ln_0_264) {
  filtered f = run_filter(mat_row, N_MAT_ROW, 1.0, 0.8, 2);
  cr_assert_eq(f.rc, 0);
  expect_near(exp(f.lp[FLOOR]), 0.378, 0.0005, "processed p(floor)");
  expect_near(exp(f.lp[MAT]), 0.622, 0.0005, "processed p(mat)");
  /* The seed prints ln 0.378 = -0.973; a gap of exactly 0.5 gives -0.9741. */
  expect_near(f.lp[FLOOR], -0.973, 0.0015, "processed logprob of floor");
  filtered raw = run_filter(mat_row, N_MAT_ROW, 1.0, 1.0, -1);
  expect_near(raw.lp[FLOOR], -1.332, 0.0005, "raw logprob of floor");
}

Test(logprobs, s000_l70_processed_logprobs_include_temperature) {
  filtered f = run_filter(mat_row, N_MAT_ROW, 0.5, 1.0, -1);
  cr_assert_eq(f.rc, 0);
  expect_near(f.lp[MAT] - f.lp[FLOOR], 1.0, 1e-6, "gap 0.5 at T 0.5");
}

Test(logprobs, a_token_whose_probability_underflows_keeps_a_finite_logprob) {
  const float row[2] = {0.0f, -1.0f};
  filtered f = run_filter(row, 2, 1e-3, 1.0, -1);
  cr_assert_eq(f.rc, 0);
  expect_near(f.lp[1], -1000.0, 1e-9, "log-softmax of the kept set");
  expect_near(exp(f.lp[1]), 0.0, 0, "its probability");
}

/* --- seed 002 and 004 worked examples that concern this rule -------------------- */

Test(seed_examples, s002_l61_temperature_table_for_logits_1_2_3) {
  const float row[3] = {1.0f, 2.0f, 3.0f};
  const double t[3] = {0.5, 1.0, 2.0};
  const double want[3][3] = {
      {0.0159, 0.1173, 0.8668}, {0.0900, 0.2447, 0.6652}, {0.1863, 0.3072, 0.5065}};
  for (int k = 0; k < 3; k++) {
    filtered f = run_filter(row, 3, t[k], 1.0, -1);
    cr_assert_eq(f.rc, 0);
    for (int i = 0; i < 3; i++)
      expect_near(exp(f.lp[i]), want[k][i], 0.00005, "seed 002 table entry");
  }
}

Test(seed_examples, s002_l111_top_p_0_9_walkthrough_keeps_tokens_1_2_0) {
  const float row[5] = {1.0f, 3.0f, 2.0f, 0.5f, -1.0f};
  filtered f = run_filter(row, 5, 1.0, 0.9, -1);
  cr_assert_eq(f.rc, 0);
  cr_expect(is_kept(&f, 1) && is_kept(&f, 2) && is_kept(&f, 0));
  cr_expect(!is_kept(&f, 3) && !is_kept(&f, 4));
  expect_near(f.info.kept_mass, 0.9374, 0.00005, "mass kept");
}

Test(seed_examples, s002_l84_top_k_2_keeps_logits_3_and_2) {
  const float row[5] = {1.0f, 3.0f, 2.0f, 0.5f, -1.0f};
  filtered f = run_filter(row, 5, 1.0, 1.0, 2);
  cr_assert_eq(f.rc, 0);
  cr_expect(is_kept(&f, 1) && is_kept(&f, 2));
  cr_expect_eq(f.info.kept, 2);
}

Test(seed_examples, s004_l124_temperature_examples_for_logits_2_1_0_5) {
  const float row[3] = {2.0f, 1.0f, 0.5f};
  const double t[3] = {1.0, 0.5, 2.0};
  const double want[3][3] = {{0.629, 0.231, 0.140}, {0.844, 0.114, 0.042}, {0.481, 0.292, 0.227}};
  for (int k = 0; k < 3; k++) {
    filtered f = run_filter(row, 3, t[k], 1.0, -1);
    cr_assert_eq(f.rc, 0);
    for (int i = 0; i < 3; i++)
      expect_near(exp(f.lp[i]), want[k][i], 0.0005, "seed 004 example");
  }
}

Test(seed_examples, s004_l177_top_k_2_gives_0_731_0_269_0) {
  const float row[3] = {2.0f, 1.0f, 0.5f};
  filtered f = run_filter(row, 3, 1.0, 1.0, 2);
  cr_assert_eq(f.rc, 0);
  expect_near(exp(f.lp[0]), 0.731, 0.0005, "p0");
  expect_near(exp(f.lp[1]), 0.269, 0.0005, "p1");
  expect_minus_inf(f.lp[2], "token 2");
}

Test(seed_examples, s004_l228_top_p_0_7_on_0_4_0_3_0_2_0_1_sits_on_the_boundary) {
  /* The mass before token 2 is 0.7 = top_p in exact arithmetic: the rule keeps 3 tokens,
   * 004's >= rule keeps 2, and float arithmetic may land either side. */
  const double p[4] = {0.4, 0.3, 0.2, 0.1};
  float row[4];
  logits_from_probs(p, 4, row);
  filtered f = run_filter(row, 4, 1.0, 0.7, -1);
  cr_assert_eq(f.rc, 0);
  cr_expect(f.info.kept == 2 || f.info.kept == 3, "kept %zu", f.info.kept);
  cr_expect_lt(f.info.topp_margin, 1e-6, "too close to the boundary to decide in float32");
}

Test(seed_examples, s004_l242_top_p_0_7_on_0_8_keeps_one_token) {
  const double p[4] = {0.8, 0.1, 0.06, 0.04};
  float row[4];
  logits_from_probs(p, 4, row);
  filtered f = run_filter(row, 4, 1.0, 0.7, -1);
  cr_assert_eq(f.rc, 0);
  cr_expect_eq(f.info.kept, 1);
}

Test(seed_examples, s004_l253_top_k_3_keeps_3_where_top_p_0_9_keeps_1) {
  const double p[4] = {0.99, 0.005, 0.003, 0.002};
  float row[4];
  logits_from_probs(p, 4, row);
  cr_expect_eq(run_filter(row, 4, 1.0, 1.0, 3).info.kept, 3);
  cr_expect_eq(run_filter(row, 4, 1.0, 0.9, -1).info.kept, 1);
}
