/* Engine options (seed 000:65-68) and bad rows (the oracle's own rules, oracle/SPEC.md). */
#include "helpers.h"

static const float row6[6] = {0.5f, 3.0f, 1.0f, 3.0f, 2.0f, -1.0f};

Test(engine, s000_l67_force_topk_keeps_only_the_n_largest_logits) {
  sieve_engine e = {3, NULL, 0};
  filtered f = run_filter_engine(row6, 6, 1.0, 1.0, -1, &e);
  cr_assert_eq(f.rc, 0);
  cr_expect_eq(f.info.kept, 3);
  cr_expect(is_kept(&f, 1) && is_kept(&f, 3) && is_kept(&f, 4));
}

Test(engine, s000_l67_force_topk_softmax_is_over_the_n_kept_logits) {
  sieve_engine e = {3, NULL, 0};
  filtered forced = run_filter_engine(row6, 6, 0.7, 1.0, -1, &e);
  const float only3[6] = {-INFINITY, 3.0f, -INFINITY, 3.0f, 2.0f, -INFINITY};
  filtered direct = run_filter(only3, 6, 0.7, 1.0, -1);
  for (size_t i = 0; i < 6; i++)
    cr_expect(same_double(forced.lp[i], direct.lp[i]), "token %zu", i);
}

Test(engine, s000_l67_force_topk_runs_before_top_p) {
  /* Without force_topk, top_p 0.9 keeps more than 2 tokens of this row. */
  sieve_engine e = {2, NULL, 0};
  filtered f = run_filter_engine(row6, 6, 1.0, 0.9, -1, &e);
  cr_assert_eq(f.rc, 0);
  cr_expect_eq(f.info.kept, 2);
  expect_near(exp(f.lp[1]), 0.5, 1e-15, "tokens 1 and 3 share the mass");
}

Test(engine, force_topk_breaks_ties_by_token_id) {
  sieve_engine e = {1, NULL, 0};
  filtered f = run_filter_engine(row6, 6, 1.0, 1.0, -1, &e);
  cr_assert_eq(f.rc, 0);
  cr_expect(is_kept(&f, 1) && !is_kept(&f, 3));
}

Test(engine, force_topk_of_zero_or_at_least_v_changes_nothing) {
  sieve_engine off = {0, NULL, 0}, big = {6, NULL, 0};
  filtered plain = run_filter(row6, 6, 1.0, 1.0, -1);
  filtered a = run_filter_engine(row6, 6, 1.0, 1.0, -1, &off);
  filtered b = run_filter_engine(row6, 6, 1.0, 1.0, -1, &big);
  for (size_t i = 0; i < 6; i++)
    cr_expect(same_double(a.lp[i], plain.lp[i]) && same_double(b.lp[i], plain.lp[i]));
}

Test(engine, a_blacklist_length_without_its_array_is_an_argument_error) {
  sieve_engine e = {0, NULL, 1};
  cr_expect_eq(run_filter_engine(row6, 6, 1.0, 1.0, -1, &e).rc, SIEVE_EARG);
}

Test(engine, negative_force_topk_is_an_error) {
  sieve_engine e = {-1, NULL, 0};
  cr_expect_eq(run_filter_engine(row6, 6, 1.0, 1.0, -1, &e).rc, SIEVE_EFORCETOPK);
}

Test(engine, s000_l68_blacklisted_tokens_get_minus_inf) {
  const int64_t ids[] = {1, 5};
  sieve_engine e = {0, ids, 2};
  filtered f = run_filter_engine(row6, 6, 1.0, 1.0, -1, &e);
  cr_assert_eq(f.rc, 0);
  expect_minus_inf(f.lp[1], "blacklisted token 1");
  expect_minus_inf(f.lp[5], "blacklisted token 5");
  cr_expect_eq(f.info.kept, 4);
}

Test(engine, s000_l68_blacklisting_the_argmax_moves_the_mass_to_the_others) {
  const int64_t ids[] = {1, 3};
  sieve_engine e = {0, ids, 2};
  filtered f = run_filter_engine(row6, 6, 1.0, 1.0, 1, &e);
  cr_assert_eq(f.rc, 0);
  cr_expect(is_kept(&f, 4), "token 4 is the best one left");
  expect_near(f.lp[4], 0.0, 0, "its logprob");
}

Test(engine, blacklist_runs_before_force_topk) {
  const int64_t ids[] = {1};
  sieve_engine e = {2, ids, 1};
  filtered f = run_filter_engine(row6, 6, 1.0, 1.0, -1, &e);
  cr_assert_eq(f.rc, 0);
  cr_expect_eq(f.info.kept, 2, "force_topk keeps two drawable tokens");
  cr_expect(is_kept(&f, 3) && is_kept(&f, 4));
}

Test(engine, blacklisting_all_tokens_but_one_leaves_it_probability_one) {
  const int64_t ids[] = {0, 1, 2, 3, 5};
  sieve_engine e = {0, ids, 5};
  filtered f = run_filter_engine(row6, 6, 1.0, 0.5, 3, &e);
  cr_assert_eq(f.rc, 0);
  expect_near(f.lp[4], 0.0, 0, "the one token left");
}

Test(engine, blacklisting_every_token_is_an_error) {
  const int64_t ids[] = {0, 1, 2, 3, 4, 5};
  sieve_engine e = {0, ids, 6};
  cr_expect_eq(run_filter_engine(row6, 6, 1.0, 1.0, -1, &e).rc, SIEVE_ENOFINITE);
}

Test(engine, a_blacklist_id_outside_the_row_is_an_error) {
  const int64_t high[] = {6}, low[] = {-1};
  sieve_engine a = {0, high, 1}, b = {0, low, 1};
  cr_expect_eq(run_filter_engine(row6, 6, 1.0, 1.0, -1, &a).rc, SIEVE_EBLACKLIST);
  cr_expect_eq(run_filter_engine(row6, 6, 1.0, 1.0, -1, &b).rc, SIEVE_EBLACKLIST);
}

/* --- bad rows ------------------------------------------------------------------ */

Test(bad_rows, a_nan_logit_is_an_error) {
  const float row[3] = {0.0f, NAN, 1.0f};
  cr_expect_eq(run_filter(row, 3, 1.0, 1.0, -1).rc, SIEVE_ENAN);
}

Test(bad_rows, a_plus_inf_logit_is_an_error) {
  const float row[3] = {0.0f, INFINITY, 1.0f};
  cr_expect_eq(run_filter(row, 3, 1.0, 1.0, -1).rc, SIEVE_EPOSINF);
}

Test(bad_rows, a_minus_inf_logit_is_allowed_and_never_kept) {
  const float row[3] = {-INFINITY, 0.0f, 1.0f};
  filtered f = run_filter(row, 3, 1.0, 1.0, -1);
  cr_assert_eq(f.rc, 0);
  expect_minus_inf(f.lp[0], "the -inf token");
  cr_expect_eq(f.info.kept, 2);
}

Test(bad_rows, a_minus_inf_logit_takes_no_top_k_rank) {
  /* Token 2 underflows to p = 0, like the -inf token 0; only token 2 takes a rank. */
  const float row[3] = {-INFINITY, 0.0f, -30.0f};
  filtered f = run_filter(row, 3, 1e-3, 1.0, 2);
  cr_assert_eq(f.rc, 0);
  cr_expect(is_kept(&f, 1) && is_kept(&f, 2));
  expect_minus_inf(f.lp[0], "the -inf token");
  expect_near(f.lp[2], -30000.0, 1e-9, "the underflowed token keeps its log-softmax");
}

Test(bad_rows, a_row_of_only_minus_inf_is_an_error) {
  const float row[2] = {-INFINITY, -INFINITY};
  cr_expect_eq(run_filter(row, 2, 1.0, 1.0, -1).rc, SIEVE_ENOFINITE);
}

Test(bad_rows, an_empty_row_is_an_error) {
  const float row[1] = {0.0f};
  cr_expect_eq(run_filter(row, 0, 1.0, 1.0, -1).rc, SIEVE_EVOCAB);
}

Test(bad_rows, a_scaled_logit_that_overflows_float32_is_an_error) {
  const float row[2] = {3e38f, 0.0f};
  cr_expect_eq(run_filter(row, 2, 0.5, 1.0, -1).rc, SIEVE_EOVERFLOW);
  cr_expect_eq(run_filter(row, 2, 1.0, 1.0, -1).rc, 0);
}

Test(bad_rows, a_single_token_row_has_logprob_zero) {
  const float row[1] = {-7.0f};
  filtered f = run_filter(row, 1, 0.3, 0.01, 1);
  cr_assert_eq(f.rc, 0);
  expect_near(f.lp[0], 0.0, 0, "V = 1");
}

Test(bad_rows, params_are_checked_before_the_row) {
  const float row[1] = {NAN};
  cr_expect_eq(run_filter(row, 1, -1.0, 1.0, -1).rc, SIEVE_ETEMPERATURE);
}

Test(bad_rows, null_pointers_are_an_error) {
  sieve_params p = SIEVE_PARAMS_DEFAULT;
  double lp[1];
  float row[1] = {0};
  cr_expect_eq(sieve_filter(NULL, 1, &p, NULL, lp, NULL), SIEVE_EARG);
  cr_expect_eq(sieve_filter(row, 1, NULL, NULL, lp, NULL), SIEVE_EARG);
  cr_expect_eq(sieve_filter(row, 1, &p, NULL, NULL, NULL), SIEVE_EARG);
}

/* Above 4096 tokens the ranking takes a radix sort on the keys' bits, where -0 and +0 differ. */
Test(engine, force_topk_ties_minus_zero_and_zero_in_a_long_row) {
  enum { V = 5000 };
  static float row[V];
  static double lp[V];
  for (size_t i = 0; i < V; i++)
    row[i] = -1.0f;
  row[0] = -0.0f;
  row[1] = 0.0f;
  const sieve_engine e = {1, NULL, 0};
  const sieve_params p = SIEVE_PARAMS_DEFAULT;
  cr_assert_eq(sieve_filter(row, V, &p, &e, lp, NULL), 0);
  cr_expect(!isinf(lp[0]) && isinf(lp[1]), "-0 == 0: the lower id stays");
}
