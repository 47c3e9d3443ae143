/*
 * The oracle held to every golden fixture: each case's request goes through
 * `sieve serve` (in process) and its answer must match the expectation under
 * the fixtures' comparison rules (fixtures/README.md).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines/profiles.h"
#include "helpers.h"
#include "protocol/jbuf.h"
#include "protocol/recipe.h"
#include "protocol/request.h"
#include "protocol/serve.h"
#include "run/check.h"
#include "run/fixture.h"

#define FIXTURES SIEVE_ROOT "/fixtures/sieve-fixtures.json"

static sieve_fixtures load(void) {
  sieve_fixtures fx;
  char err[256];
  cr_assert_eq(sieve_fixtures_load(FIXTURES, &fx, err, sizeof err), 0, "%s", err);
  return fx;
}

/* Serves `input` (requests, one per line) and returns the answers, one per line. */
static char *serve_text(const char *input, size_t len) {
  char *out = NULL;
  size_t size = 0;
  FILE *in = fmemopen((void *)input, len, "r");
  FILE *answers = open_memstream(&out, &size);
  cr_assert(in && answers);
  cr_assert_eq(sieve_serve(in, answers, "deepinfer", NULL, REQ_OPTIONS_ALL), 0);
  fclose(in);
  fclose(answers);
  return out;
}

/* The cases' requests, one per line, printed losslessly. */
static char *requests_of(const cJSON **cases, size_t n, size_t *len) {
  jbuf text = {0};
  for (size_t i = 0; i < n; i++) {
    char err[256];
    cJSON *request = sieve_case_request(cases[i], err, sizeof err);
    cr_assert(request, "%s: %s", sieve_case_str(cases[i], "id"), err);
    jbuf_json(&text, request);
    jbuf_char(&text, '\n');
    cJSON_Delete(request);
  }
  cr_assert(!text.failed);
  *len = text.len;
  return text.data;
}

static void check_answers(const cJSON **cases, size_t n, char *answers) {
  size_t failed = 0, i = 0;
  char *save = NULL;
  for (char *line = strtok_r(answers, "\n", &save); line && i < n;
       line = strtok_r(NULL, "\n", &save), i++) {
    cJSON *got = cJSON_Parse(line);
    char why[600];
    const cJSON *expect = cJSON_GetObjectItemCaseSensitive(cases[i], "expect");
    if (!sieve_check(expect, got, why, sizeof why)) {
      cr_log_error("%s: %s", sieve_case_str(cases[i], "id"), why);
      failed++;
    }
    cJSON_Delete(got);
  }
  cr_assert_eq(i, n, "%zu answers for %zu requests", i, n);
  cr_assert_eq(failed, 0, "%zu of %zu cases failed", failed, n);
}

static void run_family(const char *family) {
  sieve_fixtures fx = load();
  size_t n = 0, len;
  const cJSON **cases = malloc((size_t)cJSON_GetArraySize(fx.cases) * sizeof *cases);
  for (const cJSON *c = fx.cases->child; c; c = c->next)
    if (strcmp(sieve_case_str(c, "family"), family) == 0)
      cases[n++] = c;
  cr_assert_gt(n, 0, "family %s has no cases", family);
  char *input = requests_of(cases, n, &len);
  char *answers = serve_text(input, len);
  check_answers(cases, n, answers);
  free(input);
  free(answers);
  free(cases);
  sieve_fixtures_free(&fx);
}

Test(fixtures, seed_examples_pass) { run_family("seed-examples"); }
Test(fixtures, validation_passes) { run_family("validation"); }
Test(fixtures, ordering_passes) { run_family("ordering"); }
Test(fixtures, ties_pass) { run_family("ties"); }
Test(fixtures, temperature_passes) { run_family("temperature"); }
Test(fixtures, large_vocab_passes, .timeout = 120) { run_family("large-vocab"); }
Test(fixtures, logprobs_pass) { run_family("logprobs"); }
Test(fixtures, engine_options_pass) { run_family("engine-options"); }
Test(fixtures, hash_passes) { run_family("hash"); }
Test(fixtures, draw_passes) { run_family("draw"); }
Test(fixtures, sample_passes) { run_family("sample"); }
Test(fixtures, positions_pass) { run_family("positions"); }
Test(fixtures, special_values_pass) { run_family("special-values"); }
Test(fixtures, speculative_passes) { run_family("speculative"); }
Test(fixtures, penalties_pass) { run_family("penalties"); }

/* Whether the oracle under the reading's rule (an axis value) gives the answer the case records
 * for that reading; logs the difference when not. */
static int reading_holds(const cJSON *c, const cJSON *reading, const cJSON *request) {
  sieve_rule rule = SIEVE_RULE_DEEPINFER;
  char why[600];
  const char *text = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(reading, "rule"));
  cr_assert_eq(profile_parse_rule(text, &rule, why, sizeof why), 0, "%s", why);
  jbuf answer = {0};
  sieve_serve_request(request, text, &rule, REQ_OPTIONS_ALL, &answer);
  cr_assert(!answer.failed);
  cJSON *got = cJSON_ParseWithLength(answer.data, answer.len);
  int held = sieve_check(cJSON_GetObjectItemCaseSensitive(reading, "expect"), got, why, sizeof why);
  if (!held)
    cr_log_error("%s under %s: %s", sieve_case_str(c, "id"), text, why);
  cJSON_Delete(got);
  free(answer.data);
  return held;
}

/* The oracle keeps top_k in an int64_t, so under top_k_max=none a top_k above 2^63 - 1
 * saturates, where the reading (an engine with Python's integers) echoes it. */
static int representable(const cJSON *c, const cJSON *reading) {
  return strcmp(sieve_case_str(c, "id"), "validation/top-k-int64-max-as-double-t1.0") != 0 ||
         strcmp(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(reading, "rule")),
                "top_k_max=none") != 0;
}

Test(fixtures, every_axis_value_gives_the_answers_its_readings_record, .timeout = 120) {
  sieve_fixtures fx = load();
  size_t asked = 0, failed = 0;
  for (const cJSON *c = fx.cases->child; c; c = c->next) {
    cJSON *request = NULL;
    const cJSON *reading;
    cJSON_ArrayForEach(reading, cJSON_GetObjectItemCaseSensitive(c, "readings")) {
      if (!cJSON_GetObjectItemCaseSensitive(reading, "rule") || !representable(c, reading))
        continue;
      char err[256];
      request = request ? request : sieve_case_request(c, err, sizeof err);
      cr_assert(request, "%s: %s", sieve_case_str(c, "id"), err);
      failed += !reading_holds(c, reading, request);
      asked++;
    }
    cJSON_Delete(request);
  }
  cr_expect_geq(asked, 1000, "only %zu readings name an axis value", asked);
  cr_expect_eq(failed, 0, "%zu of %zu readings not given by their axis value", failed, asked);
  sieve_fixtures_free(&fx);
}

Test(fixtures, every_case_is_in_a_family_tested_here_and_ids_are_unique) {
  static const char *tested[] = {"seed-examples",  "validation",  "ordering", "ties",
                                 "temperature",    "large-vocab", "logprobs", "engine-options",
                                 "hash",           "draw",        "sample",   "positions",
                                 "special-values", "speculative", "penalties"};
  sieve_fixtures fx = load();
  size_t n = 0;
  for (const cJSON *c = fx.cases->child; c; c = c->next, n++) {
    int known = 0;
    for (size_t f = 0; f < sizeof tested / sizeof tested[0]; f++)
      known |= strcmp(sieve_case_str(c, "family"), tested[f]) == 0;
    cr_expect(known, "%s: family %s is not run by this suite", sieve_case_str(c, "id"),
              sieve_case_str(c, "family"));
    for (const cJSON *d = fx.cases->child; d != c; d = d->next)
      cr_expect_str_neq(sieve_case_str(c, "id"), sieve_case_str(d, "id"));
  }
  cr_expect_geq(n, 600, "at least 600 cases");
  sieve_fixtures_free(&fx);
}

Test(fixtures, a_recipe_with_a_wrong_checksum_is_rejected) {
  cJSON *c = cJSON_Parse("{\"id\":\"x/y\",\"request\":{\"op\":\"filter\",\"rows\":[{\"logits\":"
                         "{\"$recipe\":{\"kind\":\"irwin_hall4\",\"seed\":\"3\",\"v\":10,"
                         "\"bits\":20,\"exp\":-19,\"spike_every\":0,\"spike_units\":0,"
                         "\"mixsum64\":\"0000000000000000\"}}}]}}");
  char err[256];
  cr_assert(c);
  cr_expect_null(sieve_case_request(c, err, sizeof err));
  cr_expect(strstr(err, "mixsum64") != NULL, "%s", err);
  cJSON_Delete(c);
}

Test(fixtures, a_file_of_another_schema_version_is_rejected) {
  char path[] = "/tmp/sieve-fixture-XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  FILE *f = fdopen(fd, "w");
  fputs("{\"schema\":\"sieve-fixtures/1\",\"cases\":[]}", f);
  fclose(f);
  sieve_fixtures fx;
  char err[256];
  cr_expect_eq(sieve_fixtures_load(path, &fx, err, sizeof err), -1);
  cr_expect(strstr(err, "sieve-fixtures/2") != NULL, "%s", err);
  cr_expect_eq(sieve_fixtures_load("/nonexistent/fixtures.json", &fx, err, sizeof err), -1);
  remove(path);
}

Test(fixtures, a_recipe_with_a_field_out_of_range_is_rejected) {
  /* Found by fuzz_fixtures: spike_every 1e74 was converted to an integer unchecked. */
  static const char *const recipes[] = {
      "{\"kind\":\"irwin_hall4\",\"seed\":\"1\",\"v\":8,\"bits\":20,\"exp\":-19,"
      "\"spike_every\":1e74,\"spike_units\":0,\"mixsum64\":\"0000000000000000\"}",
      "{\"kind\":\"irwin_hall4\",\"seed\":\"1\",\"v\":8,\"bits\":20,\"exp\":-19,"
      "\"spike_every\":2,\"spike_units\":1e30,\"mixsum64\":\"0000000000000000\"}",
      "{\"kind\":\"irwin_hall4\",\"seed\":\"1\",\"v\":8,\"bits\":20,\"exp\":1e9,"
      "\"spike_every\":0,\"spike_units\":0,\"mixsum64\":\"0000000000000000\"}",
      "{\"kind\":\"irwin_hall4\",\"seed\":\"1\",\"v\":1e12,\"bits\":20,\"exp\":-19,"
      "\"spike_every\":0,\"spike_units\":0,\"mixsum64\":\"0000000000000000\"}",
  };
  for (size_t i = 0; i < sizeof recipes / sizeof recipes[0]; i++) {
    cJSON *recipe = cJSON_Parse(recipes[i]);
    char err[256];
    size_t v;
    cr_assert(recipe);
    cr_expect_null(sieve_recipe_logits(recipe, &v, err, sizeof err), "recipe %zu", i);
    cr_expect(strstr(err, "malformed recipe") != NULL, "%s", err);
    cJSON_Delete(recipe);
  }
}
