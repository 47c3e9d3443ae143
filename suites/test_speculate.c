/*
 * Speculative verification (oracle/speculate.c; SPEC.md "Speculative decoding"): the accept
 * test with the case-2 uniform (seed 000:52), the residual draw with the case-1 uniform, the
 * bonus token with case 0, and the draft's own tokens under the tag mtp (seed 000:59).
 */
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

#define K_MAX 5

/* A chain of up to K_MAX drafts over rows of up to MAX_V tokens. */
typedef struct chain {
  float target[(K_MAX + 1) * MAX_V], draft[K_MAX * MAX_V];
  int64_t tokens[K_MAX];
  sieve_speculation spec;
  sieve_speculate_step steps[K_MAX];
  int64_t out[K_MAX + 1];
  sieve_speculate_result result;
} chain;

static void init_chain(chain *c, size_t k, size_t v, uint64_t seed, uint64_t position) {
  memset(c, 0, sizeof *c);
  c->spec = (sieve_speculation){
      c->target, c->draft, c->tokens, k, v, SIEVE_PARAMS_DEFAULT, SIEVE_PARAMS_DEFAULT,
      seed,      position};
  for (size_t j = 0; j < K_MAX; j++)
    c->steps[j].u = -1.0; /* a step the oracle does not write keeps this */
}

/* The chain's steps, which must leave no block allocated. */
static int run(chain *c) {
  const long live = live_allocations();
  const int rc = sieve_speculate(&c->spec, NULL, c->steps, c->out, &c->result);
  cr_expect_eq(live_allocations(), live, "speculate leaves %ld blocks allocated",
               live_allocations() - live);
  return rc;
}

static double uniform(uint64_t seed, uint64_t position, int sample_case) {
  sieve_draw_key key = {seed, position, sample_case, SIEVE_TAG_MAIN};
  double u = -1.0;
  cr_assert_eq(sieve_uniform(&key, &u), 0);
  return u;
}

/* The processed probability of token x of a row, as the filter gives it. */
static double processed_p(const float *row, size_t v, const sieve_params *p, size_t x) {
  double lp[MAX_V];
  cr_assert_eq(sieve_filter(row, v, p, NULL, lp, NULL), 0);
  return lp[x] == -INFINITY ? 0.0 : exp(lp[x]);
}

static void set_row(float *row, const double *p, size_t v) { logits_from_probs(p, v, row); }

Test(speculate, s000_l52_the_accept_test_uses_the_case_2_uniform_at_its_position) {
  chain c;
  const double p[4] = {0.4, 0.3, 0.2, 0.1};
  init_chain(&c, 3, 4, 77, 1000);
  for (size_t j = 0; j < 4; j++)
    set_row(c.target + j * 4, p, 4);
  for (size_t j = 0; j < 3; j++)
    set_row(c.draft + j * 4, p, 4);
  cr_assert_eq(run(&c), 0);
  for (size_t j = 0; j <= c.result.accepted && j < 3; j++)
    cr_expect(same_double(c.steps[j].u, uniform(77, 1000 + j, SIEVE_CASE_ACCEPT)), "step %zu", j);
}

Test(speculate, a_draft_whose_q_equals_p_is_always_accepted) {
  rng r = {5};
  for (int trial = 0; trial < 300; trial++) {
    chain c;
    float row[MAX_V];
    random_row(&r, row, 16);
    init_chain(&c, 1, 16, rng_next(&r), rng_next(&r) % 100000);
    memcpy(c.target, row, sizeof(float) * 16);
    memcpy(c.target + 16, row, sizeof(float) * 16);
    memcpy(c.draft, row, sizeof(float) * 16);
    c.tokens[0] = (int64_t)(rng_next(&r) % 16);
    cr_assert_eq(run(&c), 0);
    if (c.steps[0].p > 0.0)
      cr_expect(c.steps[0].accepted, "trial %d: p = q = %g, u = %g", trial, c.steps[0].p,
                c.steps[0].u);
  }
}

Test(speculate, accepts_exactly_when_u_times_q_is_below_p) {
  rng r = {11};
  for (int trial = 0; trial < 2000; trial++) {
    chain c;
    init_chain(&c, 1, 12, rng_next(&r), rng_next(&r) % 1000000);
    random_row(&r, c.target, 12);
    random_row(&r, c.target + 12, 12);
    random_row(&r, c.draft, 12);
    c.spec.target_params = random_params(&r, 12);
    c.spec.draft_params = random_params(&r, 12);
    c.tokens[0] = (int64_t)(rng_next(&r) % 12);
    if (run(&c) != 0)
      continue; /* a random row the filter rejects */
    const sieve_speculate_step *s = &c.steps[0];
    double p = processed_p(c.target, 12, &c.spec.target_params, (size_t)c.tokens[0]);
    double q = processed_p(c.draft, 12, &c.spec.draft_params, (size_t)c.tokens[0]);
    expect_near(s->p, p, 4e-16 * p, "p (the oracle's exp there, libm's here)");
    expect_near(s->q, q, 4e-16 * q, "q");
    cr_expect_eq(s->accepted, s->u * s->q < s->p, "trial %d: u %.17g q %.17g p %.17g", trial, s->u,
                 s->q, s->p);
    if (s->p > 0.0 && s->q > 0.0)
      cr_expect(same_double(s->ratio, s->p / s->q) && same_double(s->margin, fabs(s->u - s->ratio)),
                "trial %d: the margin is |u - p / q|", trial);
  }
}

Test(speculate, a_token_the_target_removes_is_always_rejected) {
  chain c;
  const double p[4] = {0.4, 0.3, 0.2, 0.1};
  init_chain(&c, 1, 4, 3, 9);
  set_row(c.target, p, 4);
  set_row(c.target + 4, p, 4);
  set_row(c.draft, p, 4);
  c.spec.target_params.top_k = 2;
  for (uint64_t seed = 0; seed < 200; seed++) {
    c.spec.seed = seed;
    c.tokens[0] = 3;
    cr_assert_eq(run(&c), 0);
    cr_expect(!c.steps[0].accepted && c.steps[0].p == 0.0 && c.steps[0].ratio == 0.0);
    cr_expect(isinf(c.steps[0].margin), "no u accepts it: the margin is +inf");
    cr_expect_neq(c.out[0], 3, "the rejected token is never its own replacement");
  }
}

Test(speculate, a_token_the_draft_removes_but_the_target_keeps_is_accepted) {
  chain c;
  const double p[4] = {0.4, 0.3, 0.2, 0.1};
  init_chain(&c, 1, 4, 3, 9);
  set_row(c.target, p, 4);
  set_row(c.target + 4, p, 4);
  set_row(c.draft, p, 4);
  c.spec.draft_params.top_k = 1;
  c.tokens[0] = 2;
  for (uint64_t seed = 0; seed < 200; seed++) {
    c.spec.seed = seed;
    cr_assert_eq(run(&c), 0);
    cr_expect(c.steps[0].accepted && c.steps[0].q == 0.0 && isinf(c.steps[0].ratio) &&
              isinf(c.steps[0].margin));
  }
}

/* The residual draw of a one-step chain that rejects, computed here from p and q. */
static int64_t residual_draw(const chain *c, double *mass) {
  double p[MAX_V], q[MAX_V], r[MAX_V];
  size_t v = c->spec.vocab;
  int64_t token = -1;
  *mass = 0.0;
  for (size_t i = 0; i < v; i++) {
    p[i] = processed_p(c->target, v, &c->spec.target_params, i);
    q[i] = processed_p(c->draft, v, &c->spec.draft_params, i);
    r[i] = p[i] > q[i] ? p[i] - q[i] : 0.0;
    *mass += r[i];
  }
  double u = uniform(c->spec.seed, c->spec.position, SIEVE_CASE_RESAMPLE);
  cr_assert_eq(sieve_draw(r, v, u, &token, NULL), 0);
  return token;
}

Test(speculate, a_rejection_draws_from_max_p_minus_q_with_the_case_1_uniform) {
  const double p[4] = {0.1, 0.2, 0.3, 0.4}, q[4] = {0.7, 0.1, 0.1, 0.1};
  int rejected = 0;
  for (uint64_t seed = 0; seed < 300; seed++) {
    chain c;
    init_chain(&c, 1, 4, seed, 42);
    set_row(c.target, p, 4);
    set_row(c.target + 4, p, 4);
    set_row(c.draft, q, 4);
    c.tokens[0] = 0; /* p/q = 1/7: mostly rejected */
    cr_assert_eq(run(&c), 0);
    if (c.steps[0].accepted)
      continue;
    rejected++;
    double mass;
    cr_expect_eq(c.out[0], residual_draw(&c, &mass), "seed %lu", (unsigned long)seed);
    cr_expect(same_double(c.result.u, uniform(seed, 42, SIEVE_CASE_RESAMPLE)));
    cr_expect(same_double(c.result.residual_mass, mass));
    cr_expect(!c.result.bonus && c.result.accepted == 0 && c.result.n_tokens == 1);
  }
  cr_expect_gt(rejected, 200, "p/q = 1/7 rejects most seeds");
}

Test(speculate, the_chain_stops_at_the_first_rejection) {
  const double p[3] = {0.6, 0.3, 0.1};
  chain c;
  init_chain(&c, 4, 3, 0, 500);
  for (size_t j = 0; j < 5; j++)
    set_row(c.target + j * 3, p, 3);
  for (size_t j = 0; j < 4; j++)
    set_row(c.draft + j * 3, p, 3);
  c.spec.target_params.top_k = 2; /* token 2 is always rejected */
  const int64_t drafts[4] = {0, 1, 2, 0};
  memcpy(c.tokens, drafts, sizeof drafts);
  cr_assert_eq(run(&c), 0);
  cr_expect_eq(c.result.accepted, 2);
  cr_expect_eq(c.result.n_tokens, 3);
  cr_expect(c.out[0] == 0 && c.out[1] == 1 && c.out[2] != 2);
  cr_expect(c.steps[2].u >= 0.0 && !c.steps[2].accepted, "the rejecting test is written");
  cr_expect(same_double(c.steps[3].u, -1.0), "no test runs after the rejection");
}

Test(speculate, after_every_acceptance_the_bonus_is_the_normal_sample_of_the_last_target_row) {
  const double p[4] = {0.4, 0.3, 0.2, 0.1}, last[4] = {0.1, 0.2, 0.3, 0.4};
  for (uint64_t seed = 0; seed < 100; seed++) {
    chain c;
    init_chain(&c, 2, 4, seed, 70);
    set_row(c.target, p, 4);
    set_row(c.target + 4, p, 4);
    set_row(c.target + 8, last, 4);
    set_row(c.draft, p, 4);
    set_row(c.draft + 4, p, 4);
    c.tokens[0] = 0;
    c.tokens[1] = 1; /* q = p: both accepted */
    cr_assert_eq(run(&c), 0);
    sieve_sample_result want;
    sieve_draw_key key = {seed, 72, SIEVE_CASE_SAMPLE, SIEVE_TAG_MAIN};
    cr_assert_eq(sieve_sample(c.target + 8, 4, &c.spec.target_params, NULL, &key, 0, NULL, &want),
                 0);
    cr_expect(c.result.bonus && c.result.accepted == 2 && c.result.n_tokens == 3);
    cr_expect(isnan(c.result.residual_mass), "no residual was drawn");
    cr_expect_eq(c.out[2], want.token);
    cr_expect(same_double(c.result.u, want.u));
  }
}

Test(speculate, a_greedy_draft_is_a_one_hot_q) {
  const double p[4] = {0.4, 0.3, 0.2, 0.1};
  for (uint64_t seed = 0; seed < 200; seed++) {
    chain c;
    init_chain(&c, 1, 4, seed, 3);
    c.spec.draft_logits = NULL;
    set_row(c.target, p, 4);
    set_row(c.target + 4, p, 4);
    c.tokens[0] = 1;
    cr_assert_eq(run(&c), 0);
    double u = uniform(seed, 3, SIEVE_CASE_ACCEPT);
    cr_expect(same_double(c.steps[0].q, 1.0));
    cr_expect_eq(c.steps[0].accepted, u < c.steps[0].p);
    if (!c.steps[0].accepted)
      cr_expect_neq(c.out[0], 1, "the residual of a one-hot q is p without the draft token");
  }
}

Test(speculate, a_residual_of_total_zero_is_drawn_as_p) {
  const double p[4] = {0.4, 0.3, 0.2, 0.1};
  chain c;
  init_chain(&c, 1, 4, 8, 8);
  set_row(c.target, p, 4);
  set_row(c.target + 4, p, 4);
  set_row(c.draft, p, 4);
  c.spec.target_params.top_k = c.spec.draft_params.top_k = 3;
  c.tokens[0] = 3; /* p = q = 0 there: rejected, and max(p - q, 0) is 0 everywhere */
  cr_assert_eq(run(&c), 0);
  sieve_sample_result want;
  sieve_draw_key key = {8, 8, SIEVE_CASE_RESAMPLE, SIEVE_TAG_MAIN};
  cr_assert_eq(sieve_sample(c.target, 4, &c.spec.target_params, NULL, &key, 0, NULL, &want), 0);
  cr_expect(!c.steps[0].accepted && c.result.residual_mass == 0.0);
  cr_expect_eq(c.out[0], want.token);
}

Test(speculate, s000_l59_the_draft_samples_its_tokens_with_the_tag_mtp) {
  const double q[4] = {0.25, 0.25, 0.25, 0.25};
  chain c;
  init_chain(&c, 3, 4, 123, 40);
  for (size_t j = 0; j < 3; j++)
    set_row(c.draft + j * 4, q, 4);
  c.tokens[3] = -7;
  const long live = live_allocations();
  cr_assert_eq(sieve_speculate_draft(NULL, &c.spec, NULL, c.tokens), 0);
  cr_expect_eq(live_allocations(), live, "the draft leaves no block allocated");
  cr_expect_eq(c.tokens[3], -7, "n_draft tokens, no more");
  for (size_t j = 0; j < 3; j++) {
    sieve_sample_result want;
    sieve_draw_key key = {123, 40 + j, SIEVE_CASE_SAMPLE, SIEVE_TAG_MTP};
    cr_assert_eq(sieve_sample(c.draft + j * 4, 4, &c.spec.draft_params, NULL, &key, 0, NULL, &want),
                 0);
    cr_expect_eq(c.tokens[j], want.token, "draft %zu", j);
  }
}

Test(speculate, a_chain_of_0_or_more_than_64_drafts_is_an_error) {
  chain c;
  init_chain(&c, 0, 4, 0, 0);
  cr_expect_eq(run(&c), SIEVE_EDRAFT);
  c.spec.n_draft = SIEVE_DRAFT_MAX + 1;
  cr_expect_eq(run(&c), SIEVE_EDRAFT);
}

Test(speculate, a_chain_of_sieve_draft_max_drafts_is_verified) {
  static float target[(SIEVE_DRAFT_MAX + 1) * 2], draft[SIEVE_DRAFT_MAX * 2];
  static int64_t drafts[SIEVE_DRAFT_MAX], out[SIEVE_DRAFT_MAX + 1];
  static sieve_speculate_step steps[SIEVE_DRAFT_MAX];
  sieve_speculate_result result;
  sieve_speculation s = {
      target, draft, drafts, SIEVE_DRAFT_MAX, 2, SIEVE_PARAMS_DEFAULT, SIEVE_PARAMS_DEFAULT, 1, 0};
  cr_assert_eq(sieve_speculate(&s, NULL, steps, out, &result), 0); /* q = p: all accepted */
  cr_expect(result.accepted == SIEVE_DRAFT_MAX && result.n_tokens == SIEVE_DRAFT_MAX + 1);
  cr_expect_eq(sieve_speculate_draft(NULL, &s, NULL, drafts), 0);
}

Test(speculate, a_vocabulary_of_one_token_commits_it) {
  chain c;
  init_chain(&c, 1, 1, 4, 4);
  cr_assert_eq(run(&c), 0);
  cr_expect(c.steps[0].accepted && c.result.bonus && c.out[0] == 0 && c.out[1] == 0);
}

Test(speculate, the_size_is_checked_after_the_parameters) {
  chain c;
  init_chain(&c, 1, 0, 0, 0);
  cr_expect_eq(run(&c), SIEVE_EVOCAB);
  c.spec.vocab = SIZE_MAX; /* no allocation is tried: its size would wrap */
  cr_expect_eq(run(&c), SIEVE_EVOCAB);
  c.spec.target_params.temperature = -1.0;
  cr_expect_eq(run(&c), SIEVE_ETEMPERATURE);
  c.spec.vocab = 0;
  cr_expect_eq(run(&c), SIEVE_ETEMPERATURE);
}

Test(speculate, the_first_target_row_is_checked_before_the_draft_tokens) {
  chain c;
  init_chain(&c, 1, 4, 0, 0);
  c.target[0] = NAN;
  c.tokens[0] = 4;
  cr_expect_eq(run(&c), SIEVE_ENAN);
}

Test(speculate, running_out_of_memory_is_sieve_enomem_before_a_row_is_read) {
  const size_t v = (size_t)1 << 20; /* rows of 8 MB in float64: room for one, not two */
  float *target = calloc(2 * v, sizeof *target);
  cr_assert(target);
  target[0] = NAN;
  const int64_t drafts[1] = {0};
  sieve_speculation s = {target, NULL, drafts, 1, v, SIEVE_PARAMS_DEFAULT, SIEVE_PARAMS_DEFAULT,
                         0,      0};
  sieve_speculate_step steps[1];
  int64_t out[2];
  sieve_speculate_result result;
  if (!fail_allocations(v * sizeof(double), 1))
    cr_skip_test("malloc cannot be replaced under AddressSanitizer");
  const int rc = sieve_speculate(&s, NULL, steps, out, &result);
  s.vocab = SIEVE_VOCAB_MAX; /* passes the size check: the allocation fails */
  const int rc_max = sieve_speculate(&s, NULL, steps, out, &result);
  s.draft_logits = target;
  const int rc_draft = sieve_speculate_draft(NULL, &s, NULL, out);
  allocations_succeed();
  cr_expect_eq(rc, SIEVE_ENOMEM);
  cr_expect_eq(rc_max, SIEVE_ENOMEM);
  cr_expect_eq(rc_draft, SIEVE_ENOMEM);
  s.draft_logits = NULL;
  s.vocab = v;
  cr_expect_eq(sieve_speculate(&s, NULL, steps, out, &result), SIEVE_ENAN, "with the memory");
  free(target);
}

Test(speculate, the_draft_checks_its_length_then_its_parameters_then_its_size) {
  chain c;
  init_chain(&c, 0, 4, 0, 0);
  cr_expect_eq(sieve_speculate_draft(NULL, &c.spec, NULL, c.tokens), SIEVE_EDRAFT);
  c.spec.n_draft = SIEVE_DRAFT_MAX + 1;
  cr_expect_eq(sieve_speculate_draft(NULL, &c.spec, NULL, c.tokens), SIEVE_EDRAFT);
  c.spec.n_draft = 1;
  c.spec.vocab = 1;
  c.tokens[0] = -1;
  cr_expect_eq(sieve_speculate_draft(NULL, &c.spec, NULL, c.tokens), 0);
  cr_expect_eq(c.tokens[0], 0, "a vocabulary of one token drafts it");
  c.spec.vocab = 0;
  cr_expect_eq(sieve_speculate_draft(NULL, &c.spec, NULL, c.tokens), SIEVE_EVOCAB);
  c.spec.vocab = SIZE_MAX;
  cr_expect_eq(sieve_speculate_draft(NULL, &c.spec, NULL, c.tokens), SIEVE_EVOCAB);
  c.spec.draft_params.temperature = -1.0;
  cr_expect_eq(sieve_speculate_draft(NULL, &c.spec, NULL, c.tokens), SIEVE_ETEMPERATURE);
  c.spec.vocab = 0;
  cr_expect_eq(sieve_speculate_draft(NULL, &c.spec, NULL, c.tokens), SIEVE_ETEMPERATURE);
}

Test(speculate, errors_come_in_the_order_parameters_logits_draft_tokens) {
  const double p[4] = {0.4, 0.3, 0.2, 0.1};
  chain c;
  init_chain(&c, 1, 4, 0, 0);
  set_row(c.target, p, 4);
  set_row(c.target + 4, p, 4);
  set_row(c.draft, p, 4);
  c.tokens[0] = 4;
  cr_expect_eq(run(&c), SIEVE_EDRAFTTOKEN);
  c.target[4] = NAN;
  cr_expect_eq(run(&c), SIEVE_ENAN, "a row nobody reaches is still checked");
  c.spec.draft_params.top_p = 0.0;
  cr_expect_eq(run(&c), SIEVE_ETOPP);
  c.spec.target_params.temperature = -1.0;
  cr_expect_eq(run(&c), SIEVE_ETEMPERATURE);
}

/* ----------------------------------------------------------- the spec_* axes (ENGINES.md) */

static int run_rule(chain *c, const sieve_rule *rule) {
  return sieve_speculate_rule(rule, &c->spec, NULL, c->steps, c->out, &c->result);
}

/* One draft of token `x` whose target rows and draft row are all `row`. */
static void one_draft(chain *c, const float *row, size_t v, int64_t x, uint64_t seed,
                      uint64_t position) {
  init_chain(c, 1, v, seed, position);
  memcpy(c->target, row, v * sizeof *row);
  memcpy(c->target + v, row, v * sizeof *row);
  memcpy(c->draft, row, v * sizeof *row);
  c->tokens[0] = x;
}

Test(rules, vllm_an_inclusive_accept_test_accepts_at_u_zero_what_the_target_removes) {
  static const float row[4] = {2.0f, 1.5f, 1.0f, -1.0f};
  sieve_rule le = SIEVE_RULE_DEEPINFER;
  le.spec_accept = SIEVE_SPEC_ACCEPT_LE;
  chain c;
  one_draft(&c, row, 4, 3, sieve_seed_of_zero_u(5, SIEVE_CASE_ACCEPT), 5);
  c.spec.target_params.top_k = 3; /* p(3) = 0 < q(3) */
  cr_assert_eq(run_rule(&c, &le), 0);
  cr_expect(c.steps[0].u == 0.0 && c.steps[0].accepted, "0 <= 0 / q accepts");
  cr_assert_eq(run(&c), 0);
  cr_expect(!c.steps[0].accepted, "0 * q < 0 rejects");
}

Test(rules, an_inclusive_test_accepts_a_draft_whose_q_equals_p_whatever_u) {
  static const float row[4] = {2.0f, 1.5f, 1.0f, -1.0f};
  sieve_rule le = SIEVE_RULE_DEEPINFER;
  le.spec_accept = SIEVE_SPEC_ACCEPT_LE;
  for (uint64_t seed = 0; seed < 50; seed++) {
    chain c;
    one_draft(&c, row, 4, 1, seed, 5);
    cr_assert_eq(run_rule(&c, &le), 0);
    cr_expect(c.steps[0].accepted, "u = %g <= p / q = 1", c.steps[0].u);
  }
}

Test(rules, an_inclusive_test_divides_so_p_and_q_both_zero_still_rejects) {
  static const float row[4] = {2.0f, 1.5f, 1.0f, -1.0f};
  sieve_rule le = SIEVE_RULE_DEEPINFER;
  le.spec_accept = SIEVE_SPEC_ACCEPT_LE;
  chain c;
  one_draft(&c, row, 4, 3, sieve_seed_of_zero_u(5, SIEVE_CASE_ACCEPT), 5);
  c.spec.target_params.top_k = c.spec.draft_params.top_k = 3; /* p(3) = q(3) = 0 */
  cr_assert_eq(run_rule(&c, &le), 0);
  cr_expect(!c.steps[0].accepted, "0 / 0 is NaN, and u <= NaN is false");
}

Test(rules, vllm_a_q_zero_guard_rejects_a_draft_its_own_filter_removed) {
  static const float row[6] = {2.0f, 1.5f, 1.0f, 0.3f, -0.2f, -1.5f};
  sieve_rule guard = SIEVE_RULE_DEEPINFER;
  guard.spec_q_zero = SIEVE_SPEC_Q_ZERO_REJECT;
  chain c;
  one_draft(&c, row, 6, 4, 21, 3);
  c.spec.draft_params.top_k = 2; /* q(4) = 0 < p(4) */
  cr_assert_eq(run(&c), 0);
  cr_expect(c.steps[0].accepted, "u * 0 < p accepts whatever u");
  cr_assert_eq(run_rule(&c, &guard), 0);
  cr_expect(!c.steps[0].accepted);
}

Test(rules, a_raw_q_is_the_draft_rows_softmax_without_its_filters) {
  static const float row[6] = {1.0f, 2.0f, 1.5f, 0.5f, 0.0f, -1.0f};
  const sieve_params raw_params = {1.0, 1.0, -1, 0.0, NULL};
  sieve_rule raw = SIEVE_RULE_DEEPINFER;
  raw.spec_q = SIEVE_SPEC_Q_RAW;
  chain c;
  one_draft(&c, row, 6, 1, 7, 3);
  c.spec.draft_params = (sieve_params){0.5, 1.0, 3, 0.0, NULL};
  cr_assert_eq(run_rule(&c, &raw), 0);
  expect_near(c.steps[0].q, processed_p(row, 6, &raw_params, 1), 1e-15, "q is the raw softmax");
  cr_assert_eq(run(&c), 0);
  expect_near(c.steps[0].q, processed_p(row, 6, &c.spec.draft_params, 1), 1e-15,
              "q is the processed row");
}

Test(rules, an_empty_residual_gives_a_token_of_p_token_0_or_the_last_token) {
  static const float row[6] = {-3.0f, 2.0f, 1.5f, 1.0f, 0.3f, -2.0f};
  static const int values[3] = {SIEVE_SPEC_EMPTY_RESIDUAL_TARGET,
                                SIEVE_SPEC_EMPTY_RESIDUAL_FIRST_TOKEN,
                                SIEVE_SPEC_EMPTY_RESIDUAL_LAST_TOKEN};
  for (int i = 0; i < 3; i++) {
    sieve_rule r = SIEVE_RULE_DEEPINFER;
    r.spec_empty_residual = values[i];
    chain c;
    one_draft(&c, row, 6, 4, 31, 31);
    c.spec.target_params.top_k = c.spec.draft_params.top_k = 3; /* p = q, p(4) = q(4) = 0 */
    cr_assert_eq(run_rule(&c, &r), 0);
    cr_expect(!c.steps[0].accepted && c.result.residual_mass == 0.0);
    if (i == 0)
      cr_expect(c.out[0] >= 1 && c.out[0] <= 3, "drawn from p's {1, 2, 3}: %lld",
                (long long)c.out[0]);
    else {
      cr_expect_eq(c.out[0], i == 1 ? 0 : 5, "%s",
                   sieve_axis_value_name(SIEVE_AXIS_SPEC_EMPTY_RESIDUAL, values[i]));
      cr_expect(isinf(c.result.draw_margin), "no arithmetic decided the token");
    }
  }
}

Test(rules, an_empty_residual_rule_leaves_a_residual_with_mass_to_the_draw) {
  const double p[4] = {0.1, 0.2, 0.3, 0.4}, q[4] = {0.7, 0.1, 0.1, 0.1};
  sieve_rule first = SIEVE_RULE_DEEPINFER;
  first.spec_empty_residual = SIEVE_SPEC_EMPTY_RESIDUAL_FIRST_TOKEN;
  int rejected = 0;
  for (uint64_t seed = 0; seed < 50; seed++) {
    chain c;
    init_chain(&c, 1, 4, seed, 42);
    set_row(c.target, p, 4);
    set_row(c.target + 4, p, 4);
    set_row(c.draft, q, 4);
    cr_assert_eq(run_rule(&c, &first), 0);
    if (c.steps[0].accepted)
      continue;
    rejected++;
    cr_expect_neq(c.out[0], 0, "r(0) = max(0.1 - 0.7, 0) = 0: token 0 is never drawn");
  }
  cr_expect_gt(rejected, 0);
}

Test(rules, an_own_generator_draws_every_uniform_of_the_chain) {
  static const float row[4] = {1.0f, 0.5f, 0.0f, -0.5f};
  sieve_rule own = SIEVE_RULE_DEEPINFER;
  own.draw = SIEVE_DRAW_OWN;
  int differs = 0;
  for (uint64_t pos = 0; pos < 16; pos++) {
    chain c;
    one_draft(&c, row, 4, 0, 9, pos);
    cr_assert_eq(run_rule(&c, &own), 0);
    differs += c.steps[0].u != uniform(9, pos, SIEVE_CASE_ACCEPT);
    int64_t mine[1], hashed[1];
    cr_assert_eq(sieve_speculate_draft(&own, &c.spec, NULL, mine), 0);
    cr_assert_eq(sieve_speculate_draft(NULL, &c.spec, NULL, hashed), 0);
    differs += mine[0] != hashed[0];
  }
  cr_expect_gt(differs, 16, "the accept tests' u and some drafts are not the hash's");
}
