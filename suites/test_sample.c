/* Sample end to end (seed 000:34-57, 000:70-74) and the batch entry points. */
#include <stdlib.h>

#include "helpers.h"

enum { MAT, FLOOR, RUG, SOFA, BED, CHAIR, N_ROW };
static const float mat_row[N_ROW] = {2.0f, 1.5f, 1.0f, 0.3f, -0.2f, -1.0f};

static sieve_sample_result sample(uint64_t seed, uint64_t position, sieve_top_entry *top,
                                  size_t n_top) {
  sieve_params p = {1.0, 0.8, 2, 0.0, NULL};
  sieve_draw_key key = {seed, position, SIEVE_CASE_SAMPLE, SIEVE_TAG_MAIN};
  sieve_sample_result r;
  const long live = live_allocations();
  cr_assert_eq(sieve_sample(mat_row, N_ROW, &p, NULL, &key, n_top, top, &r), 0);
  cr_expect_eq(live_allocations(), live, "the sample leaves no block allocated");
  return r;
}

Test(sample, s000_l55_draws_with_the_hash_uniform_over_processed_probabilities) {
  sieve_params p = {1.0, 0.8, 2, 0.0, NULL};
  double lp[N_ROW], probs[N_ROW];
  cr_assert_eq(sieve_filter(mat_row, N_ROW, &p, NULL, lp, NULL), 0);
  for (size_t i = 0; i < N_ROW; i++)
    probs[i] = exp(lp[i]);
  for (uint64_t pos = 0; pos < 200; pos++) {
    sieve_draw_key key = {77, pos, 0, 0};
    double u;
    int64_t want;
    cr_assert_eq(sieve_uniform(&key, &u), 0);
    cr_assert_eq(sieve_draw(probs, N_ROW, u, &want, NULL), 0);
    sieve_sample_result r = sample(77, pos, NULL, 0);
    cr_assert_eq(r.token, want, "position %lu", (unsigned long)pos);
    expect_near(r.u, u, 0, "u");
  }
}

Test(sample, s000_l72_drawn_floor_returns_processed_logprob_minus_0_973) {
  int seen_floor = 0;
  for (uint64_t pos = 0; pos < 64; pos++) {
    sieve_sample_result r = sample(5, pos, NULL, 0);
    cr_assert(r.token == MAT || r.token == FLOOR, "only {mat, floor} are kept");
    if (r.token == FLOOR) {
      seen_floor = 1;
      expect_near(r.logprob, -0.973, 0.0015, "processed logprob of floor");
    }
  }
  cr_expect(seen_floor, "64 draws at p = 0.378 should include floor");
}

Test(sample, s000_l74_top_logprobs_come_from_the_processed_row) {
  sieve_top_entry top[4];
  sieve_sample_result r = sample(9, 3, top, 4);
  cr_expect_eq(top[0].token, MAT);
  cr_expect_eq(top[1].token, FLOOR);
  expect_near(top[1].logprob, -0.973, 0.0015, "floor");
  expect_minus_inf(top[2].logprob, "third entry");
  expect_minus_inf(top[3].logprob, "fourth entry");
  cr_expect_eq(r.filter.kept, 2);
}

Test(sample, s000_l34_same_inputs_give_the_same_token) {
  sieve_sample_result a = sample(1234, 99, NULL, 0), b = sample(1234, 99, NULL, 0);
  cr_expect_eq(a.token, b.token);
  cr_expect(same_double(a.logprob, b.logprob));
}

Test(sample, s000_l61_different_seeds_give_different_draws) {
  int differs = 0;
  sieve_sample_result first = sample(0, 1, NULL, 0);
  for (uint64_t seed = 1; seed < 64 && !differs; seed++)
    differs = sample(seed, 1, NULL, 0).token != first.token;
  cr_expect(differs);
}

Test(sample, t0_samples_the_argmax) {
  sieve_params p = {0.0, 1.0, -1, 0.0, NULL};
  for (uint64_t pos = 0; pos < 50; pos++) {
    sieve_draw_key key = {3, pos, 0, 0};
    sieve_sample_result r;
    cr_assert_eq(sieve_sample(mat_row, N_ROW, &p, NULL, &key, 0, NULL, &r), 0);
    cr_assert_eq(r.token, MAT);
    expect_near(r.logprob, 0.0, 0, "logprob of the argmax");
  }
}

Test(sample, a_row_of_one_token_draws_it_with_logprob_0) {
  const float one[1] = {0.25f};
  sieve_params p = {0.7, 0.5, 1, 0.0, NULL};
  sieve_draw_key key = {5, 9, SIEVE_CASE_SAMPLE, SIEVE_TAG_MAIN};
  sieve_sample_result r;
  cr_assert_eq(sieve_sample(one, 1, &p, NULL, &key, 0, NULL, &r), 0);
  cr_expect_eq(r.token, 0);
  expect_near(r.logprob, 0, 0, "the only token's logprob");
}

Test(sample, errors_are_reported_in_the_documented_order) {
  sieve_params bad_t = {-1.0, 1.0, -1, 0.0, NULL}, ok = SIEVE_PARAMS_DEFAULT;
  sieve_draw_key key = {0, 0, 0, 0}, bad_case = {0, 0, 5, 0};
  sieve_sample_result r;
  sieve_top_entry top[8];
  cr_expect_eq(sieve_sample(mat_row, 0, &bad_t, NULL, &key, 0, NULL, &r), SIEVE_ETEMPERATURE);
  cr_expect_eq(sieve_sample(mat_row, 0, &ok, NULL, &key, 0, NULL, &r), SIEVE_EVOCAB);
  cr_expect_eq(sieve_sample(mat_row, N_ROW, &ok, NULL, &key, 7, top, &r), SIEVE_ETOPLOGPROBS);
  cr_expect_eq(sieve_sample(mat_row, N_ROW, &ok, NULL, &bad_case, 0, NULL, &r), SIEVE_ECASE);
  cr_expect_eq(sieve_sample(mat_row, N_ROW, &ok, NULL, &bad_case, 7, top, &r), SIEVE_ETOPLOGPROBS,
               "n_top is checked before the draw key");
  cr_expect_eq(sieve_sample(mat_row, N_ROW, &ok, NULL, &key, 1, NULL, &r), SIEVE_EARG);
  cr_expect_eq(sieve_sample(mat_row, N_ROW, &bad_t, NULL, &key, 1, NULL, &r), SIEVE_EARG,
               "a NULL top is checked before the parameters");
}

Test(sample, a_vocabulary_too_large_is_an_error_before_anything_is_allocated) {
  /* SIZE_MAX tokens of 8 bytes would wrap the allocation's size; the check comes first. */
  sieve_params ok = SIEVE_PARAMS_DEFAULT;
  sieve_draw_key key = {0, 0, 0, 0};
  sieve_sample_result r;
  cr_expect_eq(sieve_sample(mat_row, SIZE_MAX, &ok, NULL, &key, 0, NULL, &r), SIEVE_EVOCAB);
  cr_expect_eq(sieve_sample(mat_row, SIEVE_VOCAB_MAX + 1, &ok, NULL, &key, 0, NULL, &r),
               SIEVE_EVOCAB);
}

Test(sample, running_out_of_memory_is_sieve_enomem_before_the_row_is_read) {
  const size_t v = (size_t)1 << 20; /* rows of 8 MB in float64: room for one, not two */
  float *row = calloc(v, sizeof *row);
  cr_assert(row);
  row[0] = NAN;
  sieve_params ok = SIEVE_PARAMS_DEFAULT;
  sieve_draw_key key = {0, 0, 0, 0};
  sieve_sample_result r;
  sieve_rule raw = SIEVE_RULE_DEEPINFER;
  raw.logprobs = SIEVE_LOGPROBS_RAW; /* a second row for the reported logprobs */
  if (!fail_allocations(v * sizeof(double), 1))
    cr_skip_test("malloc cannot be replaced under AddressSanitizer");
  const int rc_raw = sieve_sample_rule(&raw, row, v, &ok, NULL, &key, 0, NULL, &r);
  /* SIEVE_VOCAB_MAX passes the size check: its 16 GB are not there. */
  const int rc_max = sieve_sample(row, SIEVE_VOCAB_MAX, &ok, NULL, &key, 0, NULL, &r);
  allocations_succeed();
  cr_expect_eq(rc_raw, SIEVE_ENOMEM);
  cr_expect_eq(rc_max, SIEVE_ENOMEM);
  cr_expect_eq(sieve_sample_rule(&raw, row, v, &ok, NULL, &key, 0, NULL, &r), SIEVE_ENAN,
               "with the memory");
  free(row);
}

Test(batch, filter_batch_reports_each_rows_own_status) {
  const float good[3] = {1.0f, 2.0f, 3.0f}, bad[3] = {1.0f, NAN, 3.0f};
  double lp0[3], lp1[3], lp2[3];
  sieve_filter_row rows[3] = {{good, 3, {1.0, 1.0, -1, 0.0, NULL}, lp0},
                              {bad, 3, {1.0, 1.0, -1, 0.0, NULL}, lp1},
                              {good, 3, {1.0, 1.0, 0, 0.0, NULL}, lp2}};
  sieve_filter_info infos[3];
  int status[3];
  cr_assert_eq(sieve_filter_batch(rows, 3, NULL, infos, status), 0);
  cr_expect_eq(status[0], 0);
  cr_expect_eq(status[1], SIEVE_ENAN);
  cr_expect_eq(status[2], SIEVE_ETOPK);
  cr_expect_eq(infos[0].kept, 3);
}

Test(batch, filter_batch_matches_filter_row_by_row) {
  const float a[3] = {0.1f, 2.0f, -3.0f}, b[5] = {1.0f, 1.0f, 1.0f, 1.0f, 9.0f};
  double lpa[3], lpb[5], one[5];
  sieve_filter_row rows[2] = {{a, 3, {0.7, 0.9, 2, 0.0, NULL}, lpa},
                              {b, 5, {1.3, 0.5, -1, 0.0, NULL}, lpb}};
  int status[2];
  cr_assert_eq(sieve_filter_batch(rows, 2, NULL, NULL, status), 0);
  cr_assert_eq(sieve_filter(b, 5, &rows[1].params, NULL, one, NULL), 0);
  for (size_t i = 0; i < 5; i++)
    cr_expect(same_double(one[i], lpb[i]));
}

Test(batch, null_arrays_are_an_error_and_empty_batches_are_fine) {
  int status[1];
  sieve_sample_result res[1];
  cr_expect_eq(sieve_filter_batch(NULL, 1, NULL, NULL, status), SIEVE_EARG);
  cr_expect_eq(sieve_sample_batch(NULL, 1, NULL, res, status), SIEVE_EARG);
  cr_expect_eq(sieve_filter_batch(NULL, 0, NULL, NULL, NULL), 0);
  cr_expect_eq(sieve_sample_batch(NULL, 0, NULL, NULL, NULL), 0);
}
