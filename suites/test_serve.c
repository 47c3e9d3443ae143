/*
 * `sieve serve`, protocol v1, driven through in-memory streams: every op,
 * the error objects, and lines that must not stop the server.
 */
#define _POSIX_C_SOURCE 200809L
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/impl.h"
#include "helpers.h"
#include "protocol/recipe.h"
#include "protocol/request.h"
#include "protocol/serve.h"
#include "protocol/sieve_impl.h"

typedef struct served {
  char *text;
  size_t n_lines;
  cJSON *lines[16];
} served;

/* The answers of the oracle serving as `name` with every sampling option, or of a library's
 * table when `impl` is not NULL. */
static served serve_with(const char *input, size_t len, const char *name, const sieve_impl *impl) {
  served s;
  memset(&s, 0, sizeof s);
  FILE *in = fmemopen((void *)input, len, "r");
  size_t size = 0;
  FILE *out = open_memstream(&s.text, &size);
  cr_assert(in && out);
  cr_assert_eq(
      impl ? sieve_serve_impl(in, out, impl) : sieve_serve(in, out, name, NULL, REQ_OPTIONS_ALL),
      0);
  fclose(in);
  fclose(out);
  for (char *line = strtok(s.text, "\n"); line; line = strtok(NULL, "\n")) {
    cr_assert_lt(s.n_lines, 16);
    s.lines[s.n_lines] = cJSON_Parse(line);
    cr_assert(s.lines[s.n_lines], "response is not JSON: %.200s", line);
    s.n_lines++;
  }
  return s;
}

static served serve_n(const char *input, size_t len) {
  return serve_with(input, len, "deepinfer", NULL);
}

static served serve(const char *input) { return serve_n(input, strlen(input)); }

static void served_free(served *s) {
  for (size_t i = 0; i < s->n_lines; i++)
    cJSON_Delete(s->lines[i]);
  free(s->text);
}

static const cJSON *at(const cJSON *obj, const char *path) {
  char key[64];
  const char *dot;
  while (obj && (dot = strchr(path, '.'))) {
    snprintf(key, sizeof key, "%.*s", (int)(dot - path), path);
    obj = cJSON_GetObjectItemCaseSensitive(obj, key);
    path = dot + 1;
  }
  return obj ? cJSON_GetObjectItemCaseSensitive(obj, path) : NULL;
}

static void expect_error(const cJSON *answer, const char *kind, const char *field) {
  const cJSON *k = at(answer, "error.kind"), *f = at(answer, "error.field");
  cr_assert(cJSON_IsString(k) && cJSON_IsString(f), "not an error: %s",
            cJSON_PrintUnformatted(answer));
  cr_expect_str_eq(k->valuestring, kind);
  cr_expect_str_eq(f->valuestring, field);
  cr_expect(cJSON_IsString(at(answer, "error.message")));
}

/* A JSON number array entry as a double; null is -inf. */
static double number(const cJSON *item) {
  double x = NAN;
  cr_assert_eq(req_number(item, REQ_NULL_MINUS_INF, &x), 0, "not a protocol number");
  return x;
}

Test(serve, hello_names_protocol_1_and_every_op) {
  served s = serve("{\"op\":\"hello\",\"protocol\":1}\n");
  cr_assert_eq(s.n_lines, 1);
  cr_expect_eq(at(s.lines[0], "protocol")->valueint, 1);
  const char *ops[] = {"hello",  "validate", "filter",    "uniform", "draw",
                       "sample", "position", "speculate", "bye"};
  const cJSON *list = at(s.lines[0], "ops");
  cr_assert_eq(cJSON_GetArraySize(list), 9);
  for (int i = 0; i < 9; i++)
    cr_expect_str_eq(cJSON_GetArrayItem(list, i)->valuestring, ops[i]);
  served_free(&s);
}

Test(serve, hello_with_another_protocol_version_is_an_error) {
  served s = serve("{\"op\":\"hello\",\"protocol\":2}\n");
  expect_error(s.lines[0], "invalid_request", "protocol");
  served_free(&s);
}

Test(serve, validate_returns_normalized_params) {
  served s =
      serve("{\"op\":\"validate\",\"params\":{\"temperature\":0,\"top_p\":0.5,\"top_k\":3}}\n");
  expect_near(at(s.lines[0], "params.temperature")->valuedouble, 1e-5, 0, "T");
  expect_near(at(s.lines[0], "params.top_p")->valuedouble, 1.0, 0, "top_p");
  cr_expect_eq(at(s.lines[0], "params.top_k")->valueint, -1);
  served_free(&s);
}

Test(serve, validate_errors_name_the_field) {
  served s = serve("{\"op\":\"validate\",\"params\":{\"temperature\":-1}}\n"
                   "{\"op\":\"validate\",\"params\":{\"top_p\":0}}\n"
                   "{\"op\":\"validate\",\"params\":{\"temperature\":0,\"top_k\":0}}\n"
                   "{\"op\":\"validate\",\"params\":{\"top_k\":2.5}}\n"
                   "{\"op\":\"validate\",\"params\":{\"top_k\":1e300}}\n"
                   "{\"op\":\"validate\",\"params\":{\"temperature\":\"hot\"}}\n"
                   "{\"op\":\"validate\",\"params\":{\"temperature\":1e400}}\n");
  cr_assert_eq(s.n_lines, 7);
  const char *fields[] = {"temperature", "top_p",       "top_k",      "top_k",
                          "top_k",       "temperature", "temperature"};
  for (size_t i = 0; i < 7; i++)
    expect_error(s.lines[i], "invalid_params", fields[i]);
  cr_expect_str_eq(at(s.lines[2], "error.code")->valuestring, "SIEVE_ETOPK");
  served_free(&s);
}

Test(serve, filter_numbers_parse_back_to_the_oracles_exact_values) {
  const float row[5] = {1.0f, 3.0f, 2.0f, 0.5f, -1.0f};
  filtered f = run_filter(row, 5, 0.7, 0.9, 3);
  served s = serve("{\"op\":\"filter\",\"rows\":[{\"logits\":[1,3,2,0.5,-1],"
                   "\"params\":{\"temperature\":0.7,\"top_p\":0.9,\"top_k\":3}}]}\n");
  const cJSON *lp = at(cJSON_GetArrayItem(at(s.lines[0], "rows"), 0), "logprobs");
  cr_assert_eq(cJSON_GetArraySize(lp), 5);
  for (int i = 0; i < 5; i++)
    cr_expect(same_double(number(cJSON_GetArrayItem(lp, i)), f.lp[i]), "entry %d", i);
  served_free(&s);
}

Test(serve, filter_reports_kept_count_and_margins) {
  served s =
      serve("{\"op\":\"filter\",\"rows\":[{\"logits\":[1,1,1,1],\"params\":{\"top_p\":0.5}}]}\n");
  const cJSON *row = cJSON_GetArrayItem(at(s.lines[0], "rows"), 0);
  cr_expect_eq(at(row, "kept")->valueint, 3);
  expect_near(at(row, "topp_margin")->valuedouble, 0.0, 0, "margin");
  cr_expect(cJSON_IsNull(cJSON_GetArrayItem(at(row, "logprobs"), 3)), "-inf is null");
  served_free(&s);
}

Test(serve, a_bad_filter_row_gets_an_error_and_the_other_rows_their_answers) {
  served s = serve("{\"op\":\"filter\",\"rows\":[{\"logits\":[0,1]},{\"logits\":[]},"
                   "{\"logits\":[0,1],\"params\":{\"top_k\":0}},{\"logits\":[1e39]},"
                   "{\"logits\":[0,\"x\"]},{\"logits\":[null,null]},{\"logits\":[2,1]}]}\n");
  const cJSON *rows = at(s.lines[0], "rows");
  cr_assert_eq(cJSON_GetArraySize(rows), 7);
  cr_expect(at(cJSON_GetArrayItem(rows, 0), "logprobs") != NULL);
  expect_error(cJSON_GetArrayItem(rows, 1), "invalid_logits", "logits");
  expect_error(cJSON_GetArrayItem(rows, 2), "invalid_params", "top_k");
  expect_error(cJSON_GetArrayItem(rows, 3), "invalid_logits", "logits");
  expect_error(cJSON_GetArrayItem(rows, 4), "invalid_logits", "logits");
  expect_error(cJSON_GetArrayItem(rows, 5), "invalid_logits", "logits");
  cr_expect(at(cJSON_GetArrayItem(rows, 6), "logprobs") != NULL);
  served_free(&s);
}

Test(serve, filter_and_sample_rows_carry_min_p_the_penalties_and_the_tokens_they_count) {
  const float row[4] = {2.0f, 1.5f, 1.0f, 0.0f};
  const int64_t out[2] = {0, 0};
  sieve_penalties pen = SIEVE_PENALTIES_DEFAULT;
  pen.output = out;
  pen.n_output = 2;
  pen.frequency = 0.5;
  pen.presence = 0.25;
  pen.repetition = 1.5;
  pen.last_n = 5;
  const sieve_params p = {0.7, 1.0, -1, 0.2, &pen};
  filtered f = run_filter_params(row, 4, &p, NULL);
  served s = serve("{\"op\":\"filter\",\"rows\":[{\"logits\":[2,1.5,1,0],\"output_ids\":[0,0],"
                   "\"prompt_ids\":[3],\"params\":{\"temperature\":0.7,\"min_p\":0.2,"
                   "\"frequency_penalty\":0.5,\"presence_penalty\":0.25,"
                   "\"repetition_penalty\":1.5,\"penalty_last_n\":5}}]}\n"
                   "{\"op\":\"sample\",\"rows\":[{\"logits\":[2,1.5,1,0],\"seed\":\"7\","
                   "\"position\":0,\"output_ids\":[0,0],\"params\":{\"frequency_penalty\":2}}]}\n");
  const cJSON *lp = at(cJSON_GetArrayItem(at(s.lines[0], "rows"), 0), "logprobs");
  for (int i = 0; i < 4; i++)
    cr_expect(same_double(number(cJSON_GetArrayItem(lp, i)), f.lp[i]), "entry %d", i);
  sieve_penalties twice = SIEVE_PENALTIES_DEFAULT;
  twice.output = out;
  twice.n_output = 2;
  twice.frequency = 2.0;
  const sieve_params q = {1.0, 1.0, -1, 0.0, &twice};
  filtered g = run_filter_params(row, 4, &q, NULL);
  const cJSON *drawn = cJSON_GetArrayItem(at(s.lines[1], "rows"), 0);
  const int token = at(drawn, "token")->valueint;
  cr_assert(token >= 0 && token < 4);
  cr_expect(same_double(number(at(drawn, "logprob")), g.lp[token]), "the penalized logprob");
  served_free(&s);
}

Test(serve, bad_min_p_penalties_and_token_ids_name_their_field) {
  served s = serve("{\"op\":\"validate\",\"params\":{\"min_p\":2}}\n"
                   "{\"op\":\"validate\",\"params\":{\"frequency_penalty\":-3}}\n"
                   "{\"op\":\"validate\",\"params\":{\"presence_penalty\":\"nan\"}}\n"
                   "{\"op\":\"validate\",\"params\":{\"repetition_penalty\":0}}\n"
                   "{\"op\":\"validate\",\"params\":{\"penalty_last_n\":1.5}}\n"
                   "{\"op\":\"filter\",\"rows\":[{\"logits\":[1,2],\"output_ids\":[2]},"
                   "{\"logits\":[1,2],\"prompt_ids\":[-1]},{\"logits\":[1,2],\"output_ids\":3},"
                   "{\"logits\":[1,2],\"output_ids\":[0.5]}]}\n");
  cr_assert_eq(s.n_lines, 6);
  const char *fields[] = {"min_p", "frequency_penalty", "presence_penalty", "repetition_penalty",
                          "penalty_last_n"};
  for (size_t i = 0; i < 5; i++)
    expect_error(s.lines[i], "invalid_params", fields[i]);
  const cJSON *rows = at(s.lines[5], "rows");
  expect_error(cJSON_GetArrayItem(rows, 0), "invalid_request", "output_ids");
  cr_expect_str_eq(at(cJSON_GetArrayItem(rows, 0), "error.code")->valuestring,
                   "SIEVE_EOUTPUTTOKEN");
  expect_error(cJSON_GetArrayItem(rows, 1), "invalid_request", "prompt_ids");
  expect_error(cJSON_GetArrayItem(rows, 2), "invalid_request", "output_ids");
  expect_error(cJSON_GetArrayItem(rows, 3), "invalid_request", "output_ids");
  served_free(&s);
}

/* The answers of `sieve serve --profile profile --rule rule` to `input`. */
static served serve_profile(const char *input, const char *profile, const char *rule) {
  sieve_rule r;
  unsigned options;
  char name[256], err[256];
  cr_assert_eq(impl_rule(profile, rule, &r, &options, name, sizeof name, err, sizeof err), 0);
  served s;
  memset(&s, 0, sizeof s);
  FILE *in = fmemopen((void *)input, strlen(input), "r");
  size_t size = 0;
  FILE *out = open_memstream(&s.text, &size);
  cr_assert(in && out);
  cr_assert_eq(sieve_serve(in, out, name, &r, options), 0);
  fclose(in);
  fclose(out);
  for (char *line = strtok(s.text, "\n"); line; line = strtok(NULL, "\n"))
    cr_assert((s.lines[s.n_lines++] = cJSON_Parse(line)) != NULL && s.n_lines < 16);
  return s;
}

Test(serve, hello_declares_the_sampling_options_of_the_profile_whatever_the_rule) {
  const char *hello = "{\"op\":\"hello\",\"protocol\":1}\n";
  const char *names[] = {"deepinfer", "deepinfer", "vllm", "llama.cpp", "tgi"};
  const char *rules[] = {NULL, "boundary=ge", NULL, "boundary=ge", NULL};
  const int declared[] = {5, 5, 4, 5, 0};
  for (size_t i = 0; i < 5; i++) {
    served s = serve_profile(hello, names[i], rules[i]);
    cr_expect_eq(cJSON_GetArraySize(at(s.lines[0], "sampling_options")), declared[i], "%s",
                 names[i]);
    served_free(&s);
  }
}

Test(serve, a_profile_refuses_a_sampling_option_it_does_not_take_in_the_row_naming_it) {
  const char *input = "{\"op\":\"filter\",\"rows\":[{\"logits\":[3,2,1,0],"
                      "\"params\":{\"presence_penalty\":1,\"penalty_last_n\":2},"
                      "\"output_ids\":[0]},{\"logits\":[3,2,1,0]}]}\n"
                      "{\"op\":\"validate\",\"params\":{\"penalty_last_n\":2}}\n";
  served s = serve_profile(input, "vllm", NULL);
  cr_assert_eq(s.n_lines, 2);
  const cJSON *rows = at(s.lines[0], "rows");
  expect_error(cJSON_GetArrayItem(rows, 0), "invalid_params", "penalty_last_n");
  const char *message =
      cJSON_GetObjectItem(at(cJSON_GetArrayItem(rows, 0), "error"), "message")->valuestring;
  cr_expect(strstr(message, "rows[0]") && strstr(message, "vllm"), "%s", message);
  cr_expect(cJSON_IsArray(at(cJSON_GetArrayItem(rows, 1), "logprobs")), "the other row answers");
  expect_error(s.lines[1], "invalid_params", "penalty_last_n");
  served_free(&s);
}

static int oracle_filter(const float *logits, size_t vocab, const sieve_params *params,
                         const sieve_engine *engine, double *logprobs) {
  return sieve_filter(logits, vocab, params, engine, logprobs, NULL);
}

Test(serve, a_library_is_asked_only_the_sampling_options_its_table_lists) {
  const sieve_impl min_p_only = {.abi = SIEVE_IMPL_ABI,
                                 .name = "min-p-only",
                                 .version = "1",
                                 .filter = oracle_filter,
                                 .sampling_options = "min_p"};
  const char *input = "{\"op\":\"hello\",\"protocol\":1}\n"
                      "{\"op\":\"filter\",\"rows\":[{\"logits\":[3,2,1,0],"
                      "\"params\":{\"min_p\":0.3}}]}\n"
                      "{\"op\":\"filter\",\"rows\":[{\"logits\":[3,2,1,0],"
                      "\"params\":{\"min_p\":0.3,\"presence_penalty\":1},\"output_ids\":[0]}]}\n";
  served s = serve_with(input, strlen(input), "", &min_p_only);
  cr_assert_eq(s.n_lines, 3);
  const cJSON *options = at(s.lines[0], "sampling_options");
  cr_assert_eq(cJSON_GetArraySize(options), 1);
  cr_expect_str_eq(cJSON_GetArrayItem(options, 0)->valuestring, "min_p");
  const cJSON *lp = at(cJSON_GetArrayItem(at(s.lines[1], "rows"), 0), "logprobs");
  cr_expect(cJSON_IsArray(lp) && cJSON_IsNull(cJSON_GetArrayItem(lp, 2)), "min_p 0.3 removes 2");
  expect_error(cJSON_GetArrayItem(at(s.lines[2], "rows"), 0), "invalid_params", "presence_penalty");
  served_free(&s);
}

Test(serve, filter_applies_engine_options) {
  served s =
      serve("{\"op\":\"filter\",\"rows\":[{\"logits\":[5,4,3,2]}],"
            "\"engine\":{\"force_topk\":3,\"blacklist\":[0]}}\n"
            "{\"op\":\"filter\",\"rows\":[{\"logits\":[5,4]}],\"engine\":{\"blacklist\":[9]}}\n"
            "{\"op\":\"filter\",\"rows\":[{\"logits\":[5,4]}],\"engine\":{\"force_topk\":-2}}\n");
  const cJSON *row = cJSON_GetArrayItem(at(s.lines[0], "rows"), 0);
  cr_expect_eq(at(row, "kept")->valueint, 3);
  cr_expect(cJSON_IsNull(cJSON_GetArrayItem(at(row, "logprobs"), 0)));
  expect_error(cJSON_GetArrayItem(at(s.lines[1], "rows"), 0), "invalid_request", "blacklist");
  expect_error(cJSON_GetArrayItem(at(s.lines[2], "rows"), 0), "invalid_request", "force_topk");
  served_free(&s);
}

Test(serve, uniform_takes_64_bit_seeds_as_decimal_strings) {
  served s = serve("{\"op\":\"uniform\",\"items\":[{\"seed\":\"18446744073709551615\","
                   "\"position\":1099511627776,\"case\":2,\"tag\":\"mtp\"},"
                   "{\"seed\":\"9223372036854775808\",\"position\":3}]}\n");
  sieve_draw_key a = {UINT64_MAX, 1ULL << 40, 2, SIEVE_TAG_MTP}, b = {1ULL << 63, 3, 0, 0};
  double ua, ub;
  sieve_uniform(&a, &ua);
  sieve_uniform(&b, &ub);
  const cJSON *u = at(s.lines[0], "u");
  cr_expect(same_double(cJSON_GetArrayItem(u, 0)->valuedouble, ua));
  cr_expect(same_double(cJSON_GetArrayItem(u, 1)->valuedouble, ub));
  served_free(&s);
}

Test(serve, uniform_rejects_bad_seeds_cases_and_tags) {
  served s =
      serve("{\"op\":\"uniform\",\"items\":[{\"seed\":5,\"position\":0}]}\n"
            "{\"op\":\"uniform\",\"items\":[{\"seed\":\"18446744073709551616\",\"position\":0}]}\n"
            "{\"op\":\"uniform\",\"items\":[{\"seed\":\"-1\",\"position\":0}]}\n"
            "{\"op\":\"uniform\",\"items\":[{\"seed\":\"1\",\"position\":0,\"case\":3}]}\n"
            "{\"op\":\"uniform\",\"items\":[{\"seed\":\"1\",\"position\":0,\"tag\":\"x\"}]}\n"
            "{\"op\":\"uniform\",\"items\":[{\"seed\":\"1\",\"position\":-4}]}\n");
  cr_assert_eq(s.n_lines, 6);
  const char *fields[] = {"seed", "seed", "seed", "case", "tag", "position"};
  for (size_t i = 0; i < 6; i++)
    expect_error(s.lines[i], "invalid_request", fields[i]);
  served_free(&s);
}

Test(serve, draw_matches_the_oracle_and_rejects_zero_mass) {
  served s =
      serve("{\"op\":\"draw\",\"rows\":[{\"probs\":[0.0844,0.6236,0.2294,0.0512,0.0114],"
            "\"seed\":\"1\",\"position\":5}],\"case\":1,\"tag\":\"mtp\"}\n"
            "{\"op\":\"draw\",\"rows\":[{\"probs\":[0,0],\"seed\":\"1\",\"position\":5}]}\n");
  const double p[5] = {0.0844, 0.6236, 0.2294, 0.0512, 0.0114};
  sieve_draw_key key = {1, 5, 1, SIEVE_TAG_MTP};
  double u;
  int64_t token;
  sieve_uniform(&key, &u);
  sieve_draw(p, 5, u, &token, NULL);
  cr_expect_eq(cJSON_GetArrayItem(at(s.lines[0], "tokens"), 0)->valueint, (int)token);
  expect_error(s.lines[1], "invalid_logits", "probs");
  served_free(&s);
}

Test(serve, sample_matches_the_oracle_row_by_row) {
  served s =
      serve("{\"op\":\"sample\",\"rows\":[{\"logits\":[1,3,2,0.5,-1],\"params\":{\"top_p\":0.9},"
            "\"seed\":\"42\",\"position\":7,\"top_logprobs\":5},"
            "{\"logits\":[1],\"seed\":\"1\",\"position\":0,\"top_logprobs\":2}]}\n");
  const float row[5] = {1.0f, 3.0f, 2.0f, 0.5f, -1.0f};
  sieve_params p = {1.0, 0.9, -1, 0.0, NULL};
  sieve_draw_key key = {42, 7, 0, 0};
  sieve_top_entry top[5];
  sieve_sample_result r;
  cr_assert_eq(sieve_sample(row, 5, &p, NULL, &key, 5, top, &r), 0);
  const cJSON *got = cJSON_GetArrayItem(at(s.lines[0], "rows"), 0);
  cr_expect_eq(at(got, "token")->valueint, (int)r.token);
  cr_expect(same_double(at(got, "logprob")->valuedouble, r.logprob));
  const cJSON *tops = at(got, "top_logprobs");
  for (int i = 0; i < 5; i++) {
    const cJSON *pair = cJSON_GetArrayItem(tops, i);
    cr_expect_eq(cJSON_GetArrayItem(pair, 0)->valueint, (int)top[i].token);
    cr_expect(same_double(number(cJSON_GetArrayItem(pair, 1)), top[i].logprob));
  }
  expect_error(cJSON_GetArrayItem(at(s.lines[0], "rows"), 1), "invalid_request", "top_logprobs");
  served_free(&s);
}

Test(serve, sample_requires_a_seed_and_a_position) {
  served s = serve("{\"op\":\"sample\",\"rows\":[{\"logits\":[1,2]}]}\n");
  expect_error(cJSON_GetArrayItem(at(s.lines[0], "rows"), 0), "invalid_request", "seed");
  served_free(&s);
}

Test(serve, position_for_prefill_and_decode) {
  served s =
      serve("{\"op\":\"position\",\"mode\":\"prefill\",\"seqlen_q\":5,\"seqlen_k\":12}\n"
            "{\"op\":\"position\",\"mode\":\"decode\",\"seqlen_q\":3,\"seqlen_k\":10,\"row\":2}\n"
            "{\"op\":\"position\",\"mode\":\"decode\",\"seqlen_q\":11,\"seqlen_k\":10}\n"
            "{\"op\":\"position\",\"mode\":\"sideways\",\"seqlen_q\":1,\"seqlen_k\":1}\n");
  cr_expect_eq(at(s.lines[0], "position")->valueint, 12);
  cr_expect_eq(at(s.lines[1], "position")->valueint, 10);
  expect_error(s.lines[2], "invalid_request", "position");
  expect_error(s.lines[3], "invalid_request", "mode");
  served_free(&s);
}

Test(serve, malformed_lines_get_errors_and_the_server_goes_on) {
  static const char input[] = "garbage\n"
                              "[1,2]\n"
                              "{\"op\":\"filter\",\"rows\":[{\"logits\":[1,2\n"
                              "{\"op\":\"nope\"}\n"
                              "{\"rows\":[]}\n"
                              "{\"op\":\"validate\",\"params\":{},\"extra\":1}\n"
                              "{\"op\":\"validate\",\"op\":\"validate\"}\n"
                              "{\"op\":\"validate\"} {}\n"
                              "\n   \n"
                              "{\"op\":\"hello\",\"protocol\":1}\n";
  served s = serve(input);
  cr_assert_eq(s.n_lines, 9, "blank lines are skipped, every other line answered");
  expect_error(s.lines[0], "invalid_request", "");
  expect_error(s.lines[1], "invalid_request", "");
  expect_error(s.lines[2], "invalid_request", "");
  expect_error(s.lines[3], "unsupported_op", "op");
  expect_error(s.lines[4], "invalid_request", "op");
  expect_error(s.lines[5], "invalid_request", "extra");
  expect_error(s.lines[6], "invalid_request", "op");
  expect_error(s.lines[7], "invalid_request", "");
  cr_expect_eq(at(s.lines[8], "protocol")->valueint, 1);
  served_free(&s);
}

Test(serve, a_line_with_a_nul_byte_is_an_error) {
  static const char input[] =
      "{\"op\":\"hello\",\"protocol\":1}\0junk\n{\"op\":\"hello\",\"protocol\":1}\n";
  served s = serve_n(input, sizeof input - 1);
  cr_assert_eq(s.n_lines, 2);
  expect_error(s.lines[0], "invalid_request", "");
  served_free(&s);
}

Test(serve, bye_ends_the_session_and_later_lines_are_not_read) {
  served s = serve("{\"op\":\"bye\"}\n{\"op\":\"hello\",\"protocol\":1}\n");
  cr_assert_eq(s.n_lines, 1);
  cr_expect(cJSON_IsTrue(at(s.lines[0], "bye")));
  served_free(&s);
}

Test(serve, a_row_of_262144_logits_is_answered_in_full) {
  const size_t v = 262144;
  char *input = malloc(v * 8 + 128);
  size_t n = (size_t)sprintf(input, "{\"op\":\"filter\",\"rows\":[{\"logits\":[");
  for (size_t i = 0; i < v; i++)
    n += (size_t)sprintf(input + n, "%s%d", i ? "," : "", (int)(i % 1000) - 500);
  n += (size_t)sprintf(input + n, "],\"params\":{\"top_k\":50,\"top_p\":0.9}}]}\n");
  served s = serve_n(input, n);
  const cJSON *row = cJSON_GetArrayItem(at(s.lines[0], "rows"), 0);
  cr_assert_eq(cJSON_GetArraySize(at(row, "logprobs")), (int)v);
  cr_expect_eq(at(row, "kept")->valueint, 50);
  served_free(&s);
  free(input);
}

#define RECIPE                                                                                     \
  "{\"kind\":\"irwin_hall4\",\"seed\":\"7\",\"v\":40,\"bits\":8,\"exp\":-6,"                       \
  "\"spike_every\":9,\"spike_units\":900"

Test(serve, a_row_given_as_a_recipe_is_answered_as_its_logits) {
  cJSON *recipe = cJSON_Parse(RECIPE "}");
  size_t v = 0;
  char err[200];
  float *row = sieve_recipe_logits(recipe, &v, err, sizeof err);
  cr_assert(row && v == 40, "%s", err);
  filtered f = run_filter(row, v, 0.8, 0.9, 12);
  served s = serve("{\"op\":\"filter\",\"rows\":[{\"logits\":{\"$recipe\":" RECIPE "}},"
                   "\"params\":{\"temperature\":0.8,\"top_p\":0.9,\"top_k\":12}}]}\n");
  const cJSON *lp = at(cJSON_GetArrayItem(at(s.lines[0], "rows"), 0), "logprobs");
  cr_assert_eq(cJSON_GetArraySize(lp), 40);
  for (int i = 0; i < 40; i++)
    cr_expect(same_double(number(cJSON_GetArrayItem(lp, i)), f.lp[i]), "entry %d", i);
  served_free(&s);
  free(row);
  cJSON_Delete(recipe);
}

Test(serve, a_recipe_that_is_malformed_or_misses_its_checksum_is_an_invalid_logits_error) {
  served s = serve(
      "{\"op\":\"filter\",\"rows\":[{\"logits\":{\"$recipe\":" RECIPE ",\"mixsum64\":\"0\"}}},"
      "{\"logits\":{\"$recipe\":{\"kind\":\"gaussian\",\"seed\":\"7\",\"v\":40}}},"
      "{\"logits\":{\"$recipe\":" RECIPE "},\"extra\":1}},"
      "{\"logits\":{\"$recipe\":" RECIPE ",\"spikes\":1}}},"
      "{\"logits\":{\"$recipe\":{\"kind\":\"irwin_hall4\",\"seed\":\"7x\",\"v\":40,\"bits\":8,"
      "\"exp\":-6,\"spike_every\":9,\"spike_units\":900}}}]}\n");
  const cJSON *rows = at(s.lines[0], "rows");
  cr_assert_eq(cJSON_GetArraySize(rows), 5);
  for (int i = 0; i < 5; i++)
    if (i != 2)
      expect_error(cJSON_GetArrayItem(rows, i), "invalid_logits", "logits");
  cr_expect(at(cJSON_GetArrayItem(rows, 2), "error") != NULL, "a key beside $recipe");
  served_free(&s);
}

Test(serve, recipes_describing_more_than_2_pow_22_logits_in_a_request_are_refused_unread) {
  served s =
      serve("{\"op\":\"filter\",\"rows\":[1,"
            "{\"logits\":{\"$recipe\":{\"kind\":\"irwin_hall4\",\"seed\":\"1\",\"v\":4194304,"
            "\"bits\":8,\"exp\":-6,\"spike_every\":0,\"spike_units\":0}}},"
            "{\"logits\":{\"$recipe\":{\"kind\":\"irwin_hall4\",\"seed\":\"2\",\"v\":8,"
            "\"bits\":8,\"exp\":-6,\"spike_every\":0,\"spike_units\":0}}}]}\n");
  expect_error(s.lines[0], "invalid_request", "logits");
  served_free(&s);
}

Test(serve, deeply_nested_json_is_an_error_not_a_crash) {
  size_t depth = 5000, n = 0;
  char *line = malloc(2 * depth + 64);
  n += (size_t)sprintf(line, "{\"op\":\"validate\",\"params\":");
  for (size_t i = 0; i < depth; i++)
    line[n++] = '[';
  for (size_t i = 0; i < depth; i++)
    line[n++] = ']';
  line[n++] = '}';
  line[n++] = '\n';
  served s = serve_n(line, n);
  cr_assert_eq(s.n_lines, 1);
  expect_error(s.lines[0], "invalid_request", "");
  served_free(&s);
  free(line);
}

Test(serve, speculate_answers_the_chain_with_each_test) {
  served s = serve("{\"op\":\"speculate\",\"seed\":\"7\",\"position\":100,\"target\":{\"rows\":"
                   "[[2,1,0.5,0],[1,1,1,1]]},\"draft\":{\"tokens\":[0],\"rows\":[[2,1,0.5,0]]}}\n");
  cr_assert_eq(s.n_lines, 1);
  const cJSON *steps = at(s.lines[0], "steps");
  cr_expect_eq(at(s.lines[0], "accepted")->valueint, 1, "q = p accepts");
  cr_expect_eq(cJSON_GetArraySize(at(s.lines[0], "tokens")), 2, "the draft and the bonus");
  cr_expect(cJSON_IsTrue(at(s.lines[0], "bonus")));
  cr_expect_eq(cJSON_GetArraySize(steps), 1);
  cr_expect(cJSON_IsNumber(at(cJSON_GetArrayItem(steps, 0), "u")));
  served_free(&s);
}

Test(serve, a_speculate_error_names_the_side_and_row_at_fault) {
  served s = serve("{\"op\":\"speculate\",\"seed\":\"1\",\"position\":0,\"target\":{\"rows\":"
                   "[[1,2],[1,2]]},\"draft\":{\"tokens\":[1],\"rows\":[[1,\"nan\"]]}}\n"
                   "{\"op\":\"speculate\",\"seed\":\"1\",\"position\":0,\"target\":{\"rows\":"
                   "[[1,2],[1,2]],\"params\":{\"top_p\":0}},\"draft\":{\"tokens\":[5]}}\n");
  cr_assert_eq(s.n_lines, 2);
  cr_expect_str_eq(at(s.lines[0], "error.code")->valuestring, "SIEVE_ENAN");
  cr_expect(strstr(at(s.lines[0], "error.message")->valuestring, "draft.rows[0]"));
  cr_expect_str_eq(at(s.lines[1], "error.code")->valuestring, "SIEVE_ETOPP",
                   "the parameters are checked before the draft tokens");
  cr_expect(strstr(at(s.lines[1], "error.message")->valuestring, "target.params"));
  served_free(&s);
}
