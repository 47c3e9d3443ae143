/* sieve fuzz's judge and rows (harness/fuzz/README.md): a decision the precision could flip
 * admits each outcome it could give, and no other; a seed gives the same rows. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/judge.h"
#include "fuzz/rows.h"
#include "helpers.h"
#include "report/xml.h"
#include "run/check.h"

static fuzz_verdict judged(int precision, const char *row, const char *got) {
  static const sieve_rule deepinfer = SIEVE_RULE_DEEPINFER;
  const fuzz_judge j = {&deepinfer, "deepinfer", precision};
  cJSON *r = cJSON_Parse(row), *g = cJSON_Parse(got);
  cr_assert(r && g, "test JSON must parse");
  fuzz_judgement out;
  cr_assert_eq(fuzz_judge_row(&j, r, NULL, g, &out), 0);
  cJSON_Delete(r);
  cJSON_Delete(g);
  return out.verdict;
}

#define F32 SIEVE_PRECISION_FLOAT32
#define F64 SIEVE_PRECISION_FLOAT64
static const char *const issue_row = "{\"logits\":[0,-200,-300,-250],\"params\":{\"top_k\":3}}";

Test(fuzz_judge, float32_probabilities_that_underflow_and_tie_keep_token_order_within_reach) {
  cr_expect_eq(judged(F32, issue_row, "{\"logprobs\":[0,-200,-300,null]}"), FUZZ_REACH);
  cr_expect_eq(judged(F32, issue_row, "{\"logprobs\":[0,-200,null,-250]}"), FUZZ_PASS);
}

Test(fuzz_judge, float64_arithmetic_is_held_to_the_float64_ranking) {
  cr_expect_eq(judged(F64, issue_row, "{\"logprobs\":[0,-200,-300,null]}"), FUZZ_KEPT);
}

Test(fuzz_judge, an_exact_binary_boundary_is_judged_strictly) {
  const char *row = "{\"logits\":[1,1,1,1],\"params\":{\"top_p\":0.5}}";
  const char *ge = "{\"logprobs\":[-0.6931471805599453,-0.6931471805599453,null,null]}";
  cr_expect_eq(judged(F32, row, ge), FUZZ_KEPT);
}

Test(fuzz_judge, a_top_p_one_step_below_an_exact_mass_rounds_to_it_in_float32) {
  /* 0.625 - 2^-54 reads as 0.625 in float32, where the token after 10 of 16 stays. */
  const char *row = "{\"logits\":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],"
                    "\"params\":{\"top_p\":0.62499999999999989}}";
  const char *eleven = "{\"logprobs\":[-2.3978952727983707,-2.3978952727983707,"
                       "-2.3978952727983707,-2.3978952727983707,-2.3978952727983707,"
                       "-2.3978952727983707,-2.3978952727983707,-2.3978952727983707,"
                       "-2.3978952727983707,-2.3978952727983707,-2.3978952727983707,"
                       "null,null,null,null,null]}";
  cr_expect_eq(judged(F32, row, eleven), FUZZ_REACH);
  cr_expect_eq(judged(F64, row, eleven), FUZZ_KEPT);
}

/* Three equal logits and one a float32 ulp below, which the float32 1/T of T = 2.532 scales onto
 * them: a float32 kernel ties all four and keeps tokens 0 and 1 by id, the rule keeps 1 and 2. */
static const char *const joins_the_tie =
    "{\"logits\":[-0.7626152634620667,-0.7626152038574219,-0.7626152038574219,"
    "-0.7626152038574219],\"params\":{\"temperature\":2.532001830355122,\"top_p\":0.3}}";

Test(fuzz_judge, a_token_the_float32_scale_ties_with_a_class_the_cut_splits_may_lead_it) {
  const char *by_id = "{\"logprobs\":[-0.69314718246459961,-0.69314718246459961,null,null]}";
  cr_expect_eq(judged(F32, joins_the_tie, by_id), FUZZ_REACH);
  cr_expect_eq(judged(F64, joins_the_tie, by_id), FUZZ_KEPT);
  static const sieve_rule deepinfer = SIEVE_RULE_DEEPINFER;
  const fuzz_judge j = {&deepinfer, "deepinfer", F32};
  cJSON *row = cJSON_Parse(joins_the_tie);
  int close = 0;
  cr_assert_eq(fuzz_filter_close(&j, row, NULL, &close), 0);
  cr_expect(close, "a speculative chain that reads this row is within reach of its filter");
  cJSON_Delete(row);
}

Test(fuzz_judge, a_logprob_off_its_bound_errors_and_short_rows_are_failures) {
  const char *row = "{\"logits\":[1,0],\"params\":{\"top_p\":0}}";
  cr_expect_eq(judged(F32, row, "{\"logprobs\":[0,null]}"), FUZZ_ERROR);
  cr_expect_eq(judged(F32, "{\"logits\":[1,0]}", "{\"logprobs\":[0]}"), FUZZ_MALFORMED);
  cr_expect_eq(judged(F32, "{\"logits\":[1,0]}", "{\"logprobs\":[-0.3,-1.3]}"), FUZZ_VALUE);
}

Test(fuzz_rows, a_seed_gives_the_same_rows) {
  const fuzz_space space = {fuzz_default_vocabs, fuzz_default_n_vocabs,
                            (1u << FUZZ_FAMILY_COUNT) - 1, 1};
  for (int k = 0; k < 20; k++) {
    fuzz_rng a = {42 + (uint64_t)k}, b = {42 + (uint64_t)k};
    int fa, fb;
    const size_t v = fuzz_vocab(&a, &space, 300);
    cr_assert_eq(fuzz_vocab(&b, &space, 300), v);
    cJSON *x = fuzz_row(&a, &space, v, &fa), *y = fuzz_row(&b, &space, v, &fb);
    char *tx = cJSON_PrintUnformatted(x), *ty = cJSON_PrintUnformatted(y);
    cr_expect(fa == fb && strcmp(tx, ty) == 0, "seed %d", 42 + k);
    cr_expect_leq(v, 300);
    cJSON_free(tx);
    cJSON_free(ty);
    cJSON_Delete(x);
    cJSON_Delete(y);
  }
}

Test(fuzz_judge, of_two_tokens_whose_float32_probabilities_underflow_either_may_stay) {
  /* top_k 3 of 4: the rule removes token 1 (e^-102.86 below e^-102.69); in float32 both are
   * the smallest subnormal or 0, tie, and a port keeps the lower id. */
  const char *row = "{\"logits\":[0,-102.859375,-80.5625,-102.6875],\"params\":{\"top_k\":3}}";
  cr_expect_eq(judged(F32, row, "{\"logprobs\":[0,-102.859375,-80.5625,null]}"), FUZZ_REACH);
  cr_expect_eq(judged(F32, row, "{\"logprobs\":[0,null,-80.5625,-102.6875]}"), FUZZ_PASS);
}

Test(fuzz_judge, a_logprob_beyond_the_float32_range_is_minus_infinity_at_float32) {
  const char *row = "{\"logits\":[-3e38,3.3e38]}";
  cr_expect_eq(judged(F32, row, "{\"logprobs\":[null,0]}"), FUZZ_PASS);
  cr_expect_eq(judged(F32, "{\"logits\":[-50,0]}", "{\"logprobs\":[null,0]}"), FUZZ_KEPT);
}

Test(fuzz_judge, probabilities_that_are_float32_subnormals_may_tie_whatever_the_largest_logit) {
  /* Normalized by a total of 1e5 tokens, e^-86.5 and e^-86.499 are one float32 subnormal. */
  cJSON *row = cJSON_CreateObject(), *logits = cJSON_AddArrayToObject(row, "logits");
  cJSON *got = cJSON_CreateObject(), *lp = cJSON_AddArrayToObject(got, "logprobs");
  const double ln_s = log(100000.0 + exp(-86.5) + exp(-86.499));
  cJSON_AddItemToArray(logits, cJSON_CreateNumber(-86.5));
  cJSON_AddItemToArray(logits, cJSON_CreateNumber((double)-86.499f));
  cJSON_AddItemToArray(lp, cJSON_CreateNumber(-86.5 - ln_s));
  cJSON_AddItemToArray(lp, cJSON_CreateNull());
  for (int i = 0; i < 100000; i++) {
    cJSON_AddItemToArray(logits, cJSON_CreateNumber(0));
    cJSON_AddItemToArray(lp, cJSON_CreateNumber(-ln_s));
  }
  cJSON_AddNumberToObject(cJSON_AddObjectToObject(row, "params"), "top_k", 100001);
  char *r = cJSON_PrintUnformatted(row), *g = cJSON_PrintUnformatted(got);
  cr_expect_eq(judged(F32, r, g), FUZZ_REACH);
  cJSON_free(r);
  cJSON_free(g);
  cJSON_Delete(row);
  cJSON_Delete(got);
}

Test(fuzz_judge, a_rule_that_leaves_ties_to_the_sort_takes_any_of_the_tied_tokens) {
  sieve_rule unspecified = SIEVE_RULE_DEEPINFER;
  cr_assert_eq(sieve_rule_set(&unspecified, SIEVE_AXIS_TOPK_TIES, SIEVE_TOPK_TIES_UNSPECIFIED), 0);
  const fuzz_judge j = {&unspecified, "unspecified", F64};
  cJSON *row = cJSON_Parse("{\"logits\":[1,1,1,0],\"params\":{\"top_k\":2}}");
  cJSON *got = cJSON_Parse("{\"logprobs\":[null,-0.6931471805599453,-0.6931471805599453,null]}");
  fuzz_judgement out;
  cr_assert_eq(fuzz_judge_row(&j, row, NULL, got, &out), 0);
  cr_expect_lt(out.verdict, FUZZ_KEPT, "%s", out.why);
  cr_expect_eq(judged(F64, "{\"logits\":[1,1,1,0],\"params\":{\"top_k\":2}}",
                      "{\"logprobs\":[null,-0.6931471805599453,-0.6931471805599453,null]}"),
               FUZZ_KEPT);
  cJSON_Delete(row);
  cJSON_Delete(got);
}

/* ----------------------------------------------------------------------------- draws */

static cJSON *parsed(const char *text) {
  cJSON *x = cJSON_Parse(text);
  cr_assert(x, "test JSON must parse: %s", text);
  return x;
}

/* The verdict on `got` (an answer to row 0 of `request`, or to the whole request) at float32. */
static fuzz_verdict judged_answer(const cJSON *request, const cJSON *got) {
  static const sieve_rule deepinfer = SIEVE_RULE_DEEPINFER;
  const fuzz_judge j = {&deepinfer, "deepinfer", F32};
  fuzz_judgement out;
  cr_assert_eq(fuzz_judge_answer(&j, request, 0, got, &out), 0);
  return out.verdict;
}

static cJSON *oracle_answer(const cJSON *request) {
  static const sieve_rule deepinfer = SIEVE_RULE_DEEPINFER;
  const fuzz_judge j = {&deepinfer, "deepinfer", F32};
  cJSON *answer = fuzz_oracle_answer(&j, request, 0);
  cr_assert(answer && !cJSON_HasObjectItem(answer, "error"), "the oracle answers");
  return answer;
}

/* A sample request of one row at a seed and a position (case 0, tag main). */
static cJSON *sample_request(const char *logits, uint64_t seed, int64_t position) {
  char text[400];
  snprintf(text, sizeof text,
           "{\"op\":\"sample\",\"rows\":[{\"logits\":%s,\"seed\":\"%llu\",\"position\":%lld}]}",
           logits, (unsigned long long)seed, (long long)position);
  return parsed(text);
}

static void set_token(cJSON *answer, double token) {
  cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(answer, "token"), token);
}

Test(fuzz_draws, a_token_other_than_the_rules_fails_where_the_draw_is_far_from_a_cdf_step) {
  cJSON *request = sample_request("[0,0]", sieve_seed_of_zero_u(7, 0), 7);
  cJSON *answer = oracle_answer(request);
  cr_expect_eq(judged_answer(request, answer), FUZZ_PASS);
  /* u = 0: the first token whose cdf is above 0, in any arithmetic. */
  set_token(answer, 1 - cJSON_GetObjectItemCaseSensitive(answer, "token")->valuedouble);
  cr_expect_eq(judged_answer(request, answer), FUZZ_TOKEN);
  cJSON_Delete(answer);
  cJSON_Delete(request);
}

Test(fuzz_draws, at_u_zero_a_first_token_whose_float32_probability_underflows_may_be_skipped) {
  /* e^-128 is above 0 in float64, where the draw takes token 0, and 0 in float32. */
  cJSON *request = sample_request("[-128,0]", sieve_seed_of_zero_u(7, 0), 7);
  cJSON *answer = oracle_answer(request);
  cr_assert_eq(cJSON_GetObjectItemCaseSensitive(answer, "token")->valuedouble, 0);
  set_token(answer, 1);
  cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(answer, "logprob"), 0.0);
  cr_expect_eq(judged_answer(request, answer), FUZZ_REACH);
  cJSON_Delete(answer);
  cJSON_Delete(request);
}

Test(fuzz_draws, a_token_across_a_cdf_step_within_float_reach_of_u_is_within_reach) {
  const sieve_draw_key key = {12345, 9, SIEVE_CASE_SAMPLE, SIEVE_TAG_MAIN};
  double u;
  char logits[128];
  cr_assert_eq(sieve_uniform(&key, &u), 0);
  /* p0 = u up to the float32 rounding of the logits: the draw sits on the step after token 0. */
  snprintf(logits, sizeof logits, "[%.9g,%.9g]", log(u), log1p(-u));
  cJSON *request = sample_request(logits, 12345, 9);
  cJSON *answer = oracle_answer(request);
  set_token(answer, 1 - cJSON_GetObjectItemCaseSensitive(answer, "token")->valuedouble);
  cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(answer, "logprob"),
                       cJSON_GetObjectItemCaseSensitive(answer, "token")->valuedouble ? log1p(-u)
                                                                                      : log(u));
  cr_expect_eq(judged_answer(request, answer), FUZZ_REACH);
  cJSON_Delete(answer);
  cJSON_Delete(request);
}

Test(fuzz_draws, a_drawn_tokens_logprob_is_held_to_the_bound_of_its_kept_set) {
  cJSON *request = sample_request("[0,1,2,3]", 99, 5);
  cJSON *answer = oracle_answer(request);
  cJSON *lp = cJSON_GetObjectItemCaseSensitive(answer, "logprob");
  cJSON_SetNumberValue(lp, lp->valuedouble + 1e-3);
  cr_expect_eq(judged_answer(request, answer), FUZZ_VALUE);
  cJSON_Delete(answer);
  cJSON_Delete(request);
}

Test(fuzz_draws, uniforms_and_positions_are_exact) {
  cJSON *uniform = parsed("{\"op\":\"uniform\",\"items\":[{\"seed\":\"18446744073709551615\","
                          "\"position\":4294967296,\"case\":2,\"tag\":\"mtp\"}]}");
  cJSON *position = parsed("{\"op\":\"position\",\"mode\":\"decode\",\"seqlen_q\":4,"
                           "\"seqlen_k\":10,\"row\":3}");
  cJSON *u = oracle_answer(uniform), *p = oracle_answer(position);
  cr_expect_eq(judged_answer(uniform, u), FUZZ_PASS);
  cr_expect_eq(judged_answer(position, p), FUZZ_PASS);
  cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(u, "u"), 0);
  cJSON_SetNumberValue(first, nextafter(first->valuedouble, 1.0));
  cJSON *at = cJSON_GetObjectItemCaseSensitive(p, "position");
  cJSON_SetNumberValue(at, at->valuedouble - 1);
  cr_expect_eq(judged_answer(uniform, u), FUZZ_KEY);
  cr_expect_eq(judged_answer(position, p), FUZZ_KEY);
  cJSON_Delete(u);
  cJSON_Delete(p);
  cJSON_Delete(uniform);
  cJSON_Delete(position);
}

Test(fuzz_draws, a_chain_other_than_the_rules_fails_where_no_decision_is_within_reach) {
  /* Greedy drafts (q = 1) over two equal tokens: the accept test is u < 1/2. */
  cJSON *request = parsed("{\"op\":\"speculate\",\"seed\":\"12\",\"position\":40,\"target\":"
                          "{\"rows\":[[0,0],[0,0]]},\"draft\":{\"tokens\":[1]}}");
  cJSON *answer = oracle_answer(request);
  const cJSON *step = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(answer, "steps"), 0);
  cr_assert_gt(cJSON_GetObjectItemCaseSensitive(step, "margin")->valuedouble, 1e-3,
               "the test needs an accept test far from its u");
  cr_expect_eq(judged_answer(request, answer), FUZZ_PASS);
  cJSON *accepted = cJSON_GetObjectItemCaseSensitive(answer, "accepted");
  cJSON_SetNumberValue(accepted, 1 - accepted->valuedouble);
  cr_expect_eq(judged_answer(request, answer), FUZZ_TOKEN);
  cJSON_Delete(answer);
  cJSON_Delete(request);
}

/* ----------------------------------------------------------------------------- reports */

static char *xml_of(const char *text, int lines) {
  char *out = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&out, &n);
  cr_assert(f);
  (lines ? xml_lines : xml_text)(f, text);
  fclose(f);
  return out;
}

Test(xml_text, bytes_that_are_no_utf8_character_become_the_replacement_character) {
  /* "é" cut after its first byte, a lone continuation byte, an overlong "/", U+FFFF. */
  char *cut = xml_of("a\xC3", 0), *lone = xml_of("\x80z", 0), *overlong = xml_of("\xC0\xAF", 0);
  char *noncharacter = xml_of("\xEF\xBF\xBF", 0), *fine = xml_of("\xC3\xA9<\n", 1);
  cr_expect_str_eq(cut, "a\xEF\xBF\xBD");
  cr_expect_str_eq(lone, "\xEF\xBF\xBDz");
  cr_expect_str_eq(overlong, "\xEF\xBF\xBD\xEF\xBF\xBD");
  cr_expect_str_eq(noncharacter, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  cr_expect_str_eq(fine, "\xC3\xA9&lt;\n", "a valid character, markup and a kept line break");
  free(cut), free(lone), free(overlong), free(noncharacter), free(fine);
}
