/* The fixture matchers (fixtures/README.md): each passes what it should and fails the rest. */
#include <stdio.h>
#include <string.h>

#include "helpers.h"
#include "protocol/recipe.h"
#include "run/check.h"
#include "run/suites.h"

static int check(const char *expect, const char *got) {
  cJSON *e = cJSON_Parse(expect), *g = cJSON_Parse(got);
  cr_assert(e && g, "test JSON must parse");
  char why[512];
  int ok = sieve_check(e, g, why, sizeof why);
  cJSON_Delete(e);
  cJSON_Delete(g);
  return ok;
}

Test(check, exact_compares_numbers_bit_for_bit) {
  cr_expect(check("{\"u\":{\"$exact\":0.5}}", "{\"u\":0.5}"));
  cr_expect(!check("{\"u\":{\"$exact\":0.5}}", "{\"u\":0.50000000000000011}"));
  cr_expect(!check("{\"u\":{\"$exact\":0.5}}", "{\"u\":\"0.5\"}"));
}

Test(check, approx_uses_abs_plus_rel_tolerance) {
  const char *e = "{\"x\":{\"$approx\":100.0,\"abs\":1e-9,\"rel\":1e-6}}";
  cr_expect(check(e, "{\"x\":100.00009}"));
  cr_expect(!check(e, "{\"x\":100.0002}"));
}

Test(check, approx_null_needs_minus_inf_exactly) {
  const char *e = "{\"x\":{\"$approx\":null,\"abs\":1,\"rel\":1}}";
  cr_expect(check(e, "{\"x\":null}"));
  cr_expect(!check(e, "{\"x\":-1e308}"));
  cr_expect(!check("{\"x\":{\"$approx\":-3.0,\"abs\":1,\"rel\":1}}", "{\"x\":null}"));
}

Test(check, approx_array_needs_the_same_length) {
  const char *e = "{\"lp\":{\"$approx_array\":[-0.5,null],\"abs\":1e-9,\"rel\":0}}";
  cr_expect(check(e, "{\"lp\":[-0.5,null]}"));
  cr_expect(!check(e, "{\"lp\":[-0.5]}"));
  cr_expect(!check(e, "{\"lp\":[-0.5,-9]}"));
}

Test(check, approx_array_of_pairs_matches_ids) {
  const char *e = "{\"t\":{\"$approx_array\":[[3,-0.1],[1,null]],\"abs\":1e-9,\"rel\":0}}";
  cr_expect(check(e, "{\"t\":[[3,-0.1],[1,null]]}"));
  cr_expect(!check(e, "{\"t\":[[1,-0.1],[3,null]]}"));
}

Test(check, any_of_passes_when_one_outcome_matches) {
  const char *e = "{\"rows\":[{\"token\":{\"$any_of\":[3,4]}}]}";
  cr_expect(check(e, "{\"rows\":[{\"token\":4}]}"));
  cr_expect(!check(e, "{\"rows\":[{\"token\":5}]}"));
}

Test(check, plain_values_compare_exactly_and_extra_keys_are_ignored) {
  cr_expect(check("{\"kept\":3}", "{\"kept\":3,\"kept_mass\":0.75}"));
  cr_expect(!check("{\"kept\":3}", "{\"kept\":2}"));
  cr_expect(!check("{\"kept\":3}", "{}"));
}

Test(check, an_error_where_an_answer_was_due_is_a_mismatch_and_the_reverse) {
  cr_expect(!check("{\"rows\":[{\"kept\":1}]}",
                   "{\"rows\":[{\"error\":{\"kind\":\"invalid_logits\",\"field\":\"logits\"}}]}"));
  cr_expect(
      !check("{\"error\":{\"kind\":\"invalid_params\",\"field\":\"top_k\"}}", "{\"params\":{}}"));
}

Test(check, error_kind_and_field_are_compared_and_code_only_when_reported) {
  const char *e =
      "{\"error\":{\"kind\":\"invalid_params\",\"field\":\"top_k\",\"code\":\"SIEVE_ETOPK\"}}";
  cr_expect(
      check(e, "{\"error\":{\"kind\":\"invalid_params\",\"field\":\"top_k\",\"message\":\"m\"}}"));
  cr_expect(check(
      e, "{\"error\":{\"kind\":\"invalid_params\",\"field\":\"top_k\",\"code\":\"SIEVE_ETOPK\"}}"));
  cr_expect(!check(
      e, "{\"error\":{\"kind\":\"invalid_params\",\"field\":\"top_k\",\"code\":\"SIEVE_ETOPP\"}}"));
  cr_expect(!check(e, "{\"error\":{\"kind\":\"invalid_params\",\"field\":\"top_p\"}}"));
}

Test(check, sparse_checks_count_checksum_and_sampled_entries) {
  uint32_t kept[2] = {0, 2};
  char e[512];
  snprintf(e, sizeof e,
           "{\"lp\":{\"$sparse\":{\"length\":4,\"kept_count\":2,\"kept_mixsum64\":\"%016llx\","
           "\"at\":{\"0\":-0.25,\"1\":null},\"abs\":1e-9,\"rel\":0}}}",
           (unsigned long long)sieve_mixsum64(kept, 2));
  cr_expect(check(e, "{\"lp\":[-0.25,null,-1.5,null]}"));
  cr_expect(!check(e, "{\"lp\":[-0.25,-1.5,null,null]}"), "other kept ids");
  cr_expect(!check(e, "{\"lp\":[-0.3,null,-1.5,null]}"), "a sampled entry differs");
  cr_expect(!check(e, "{\"lp\":[-0.25,null,-1.5]}"), "wrong length");
}

Test(check, mixsum64_is_order_sensitive) {
  uint32_t a[2] = {1, 2}, b[2] = {2, 1};
  cr_expect_neq(sieve_mixsum64(a, 2), sieve_mixsum64(b, 2));
  cr_expect_eq(sieve_mixsum64(a, 0), 0);
}

static int check_at(const char *expect, const char *got, int precision) {
  cJSON *e = cJSON_Parse(expect), *g = cJSON_Parse(got);
  cr_assert(e && g, "test JSON must parse");
  char why[512];
  int ok = sieve_check_at(e, g, precision, why, sizeof why, NULL);
  cJSON_Delete(e);
  cJSON_Delete(g);
  return ok;
}

Test(check, float32_bound_is_added_at_float32_only) {
  const char *e = "{\"x\":{\"$approx\":-0.5,\"abs\":1e-9,\"rel\":1e-9,\"f32_abs\":1e-6}}";
  cr_expect(check_at(e, "{\"x\":-0.5000005}", SIEVE_PRECISION_FLOAT32));
  cr_expect(!check_at(e, "{\"x\":-0.5000005}", SIEVE_PRECISION_FLOAT64));
  cr_expect(!check_at(e, "{\"x\":-0.500002}", SIEVE_PRECISION_FLOAT32));
}

Test(check, float32_bound_applies_to_sparse_entries) {
  uint32_t ids[] = {0, 1};
  char expect[400];
  snprintf(expect, sizeof expect,
           "{\"lp\":{\"$sparse\":{\"length\":2,\"kept_count\":2,\"kept_mixsum64\":\"%016llx\","
           "\"at\":{\"0\":-0.25},\"abs\":1e-9,\"rel\":1e-9,\"f32_abs\":1e-6}}}",
           (unsigned long long)sieve_mixsum64(ids, 2));
  cr_expect(check_at(expect, "{\"lp\":[-0.2500004,-1]}", SIEVE_PRECISION_FLOAT32), "%s", expect);
  cr_expect(!check_at(expect, "{\"lp\":[-0.2500004,-1]}", SIEVE_PRECISION_FLOAT64));
}

Test(check, a_logprob_failure_says_how_far_off_and_the_bound) {
  cJSON *e = cJSON_Parse("{\"x\":{\"$approx\":-0.5,\"abs\":1e-9,\"rel\":0,\"f32_abs\":1e-6}}");
  cJSON *g = cJSON_Parse("{\"x\":-0.5001}");
  char why[512];
  cr_assert(!sieve_check_at(e, g, SIEVE_PRECISION_FLOAT32, why, sizeof why, NULL));
  cr_expect(strstr(why, "off by 0.0001, beyond the float32 bound 1e-06") != NULL, "%s", why);
  cJSON_Delete(e);
  cJSON_Delete(g);
}

Test(check, precisions_parse_by_name_and_nothing_else) {
  cr_expect_eq(sieve_precision_parse("float32"), SIEVE_PRECISION_FLOAT32);
  cr_expect_eq(sieve_precision_parse("float64"), SIEVE_PRECISION_FLOAT64);
  cr_expect_eq(sieve_precision_parse("fp16"), -1);
  cr_expect_str_eq(sieve_precision_name(SIEVE_PRECISION_FLOAT64), "float64");
}

/* ----------------------------------------------------------------------------- details */

/* A filter case on 10 tokens whose rule keeps 0..8 and whose one reading keeps 0..7. */
static const char detail_case[] =
    "{\"id\":\"t/x\",\"axis\":\"boundary\",\"expect\":{\"rows\":[{\"logprobs\":{\"$approx_array\":"
    "[-2,-2,-2,-2,-2,-2,-2,-2,-2,null],\"abs\":1e-9,\"rel\":1e-9,\"f32_abs\":1e-6}}]},"
    "\"readings\":[{\"name\":\"ge-boundary\",\"axis\":\"boundary\",\"hint\":\">= instead of >\","
    "\"precisions\":[\"float32\",\"float64\"],\"expect\":{\"rows\":[{\"logprobs\":"
    "{\"$approx_array\":[-3,-3,-3,-3,-3,-3,-3,-3,null,null],\"abs\":1e-9,\"rel\":1e-9}}]}}]}";

/* The detail of an answer to a case given as JSON text; `causes` (160 bytes) may be NULL. */
static void detail_for(const char *case_text, const char *answer, int precision, char *out,
                       size_t len, char *causes) {
  char unused[160];
  cJSON *c = cJSON_Parse(case_text), *a = cJSON_Parse(answer);
  cr_assert(c && a, "test JSON must parse");
  sieve_case_detail(c, a, precision, "why", NULL, out, len, causes ? causes : unused,
                    sizeof unused);
  cJSON_Delete(c);
  cJSON_Delete(a);
}

static void detail_of(const char *answer, int precision, char *out, size_t len) {
  detail_for(detail_case, answer, precision, out, len, NULL);
}

Test(detail, names_a_reading_only_when_the_answer_is_that_readings_answer) {
  char out[700];
  detail_of("{\"rows\":[{\"logprobs\":[-3,-3,-3,-3,-3,-3,-3,-3,null,null]}]}",
            SIEVE_PRECISION_FLOAT64, out, sizeof out);
  cr_expect(strstr(out, "same answer as [ge-boundary]: >= instead of >") != NULL, "%s", out);
  detail_of("{\"rows\":[{\"logprobs\":[-4,-4,-4,-4,-4,-4,-4,-4,null,null]}]}",
            SIEVE_PRECISION_FLOAT64, out, sizeof out);
  cr_expect(strstr(out, "[ge-boundary]") == NULL, "%s", out);
  cr_expect(strstr(out, "no known misreading gives this answer") != NULL, "%s", out);
}

Test(detail, compares_whole_kept_sets_and_shortens_them_only_in_print) {
  char out[700];
  detail_of("{\"rows\":[{\"logprobs\":[-3,-3,-3,-3,-3,-3,-3,-3,null,null]}]}",
            SIEVE_PRECISION_FLOAT64, out, sizeof out);
  cr_expect(strstr(out, "kept {0,1,2,3,4,5,6,7} expected {0,1,2,3,4,5,6,...,8} (9 in all)") != NULL,
            "%s", out);
}

Test(detail, says_nothing_of_kept_sets_when_they_are_equal) {
  char out[700];
  detail_of("{\"rows\":[{\"logprobs\":[-2.1,-2,-2,-2,-2,-2,-2,-2,-2,null]}]}",
            SIEVE_PRECISION_FLOAT64, out, sizeof out);
  cr_expect(strstr(out, "kept") == NULL, "%s", out);
}

Test(detail, an_answer_within_the_float32_bound_at_float64_says_float32_arithmetic) {
  char out[700];
  detail_of("{\"rows\":[{\"logprobs\":[-2.0000005,-2,-2,-2,-2,-2,-2,-2,-2,null]}]}",
            SIEVE_PRECISION_FLOAT64, out, sizeof out);
  cr_expect(strstr(out, "float32 arithmetic") != NULL, "%s", out);
}

Test(detail, a_reading_that_separates_only_at_float64_is_not_named_at_float32) {
  char out[700];
  cJSON *c = cJSON_Parse(detail_case);
  cJSON *r = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(c, "readings"), 0);
  cJSON_ReplaceItemInObject(r, "precisions",
                            cJSON_CreateStringArray((const char *[]){"float64"}, 1));
  cJSON *a = cJSON_Parse("{\"rows\":[{\"logprobs\":[-3,-3,-3,-3,-3,-3,-3,-3,null,null]}]}");
  char causes[160];
  sieve_case_detail(c, a, SIEVE_PRECISION_FLOAT32, "why", NULL, out, sizeof out, causes,
                    sizeof causes);
  cr_expect_str_eq(causes, "");
  cr_expect(strstr(out, "[ge-boundary]") == NULL, "%s", out);
  cJSON_Delete(c);
  cJSON_Delete(a);
}

Test(detail, lists_the_readings_of_the_cases_own_axis_first_and_names_them) {
  const char *text =
      "{\"id\":\"t/y\",\"axis\":\"boundary\",\"expect\":{\"rows\":[{\"token\":1}]},\"readings\":["
      "{\"name\":\"draw-ge\",\"axis\":\"draw\",\"hint\":\"a\",\"precisions\":[\"float64\"],"
      "\"expect\":{\"rows\":[{\"token\":0}]}},"
      "{\"name\":\"ge-boundary\",\"axis\":\"boundary\",\"hint\":\"b\",\"precisions\":[\"float64\"],"
      "\"expect\":{\"rows\":[{\"token\":0}]}}]}";
  char out[700], causes[160];
  detail_for(text, "{\"rows\":[{\"token\":0}]}", SIEVE_PRECISION_FLOAT64, out, sizeof out, causes);
  cr_expect(strstr(out, "drew token 0 expected 1: same answer as [ge-boundary]: b; or as "
                        "[draw-ge]: a") != NULL,
            "%s", out);
  cr_expect_str_eq(causes, "ge-boundary,draw-ge");
}

Test(detail, a_kept_set_of_any_acceptable_outcome_is_not_called_different) {
  const char *text = "{\"id\":\"t/z\",\"axis\":\"none\",\"expect\":{\"rows\":[{\"$any_of\":["
                     "{\"logprobs\":{\"$approx_array\":[-0.7,-0.7,null],\"abs\":0,\"rel\":0}},"
                     "{\"logprobs\":{\"$approx_array\":[0,null,null],\"abs\":0,\"rel\":0}}]}]}}";
  char out[700];
  detail_for(text, "{\"rows\":[{\"logprobs\":[-0.1,null,null]}]}", SIEVE_PRECISION_FLOAT64, out,
             sizeof out, NULL);
  cr_expect(strstr(out, "kept") == NULL, "%s", out);
  detail_for(text, "{\"rows\":[{\"logprobs\":[null,0,null]}]}", SIEVE_PRECISION_FLOAT64, out,
             sizeof out, NULL);
  cr_expect(strstr(out, "kept {1} expected {0,1} (or another close outcome)") != NULL, "%s", out);
}

Test(check, any_of_outcomes_for_float32_only_do_not_count_at_float64) {
  const char *e = "{\"x\":{\"$any_of\":[1,2],\"float32_only\":[1]}}";
  cr_expect(check_at(e, "{\"x\":2}", SIEVE_PRECISION_FLOAT32));
  cr_expect(!check_at(e, "{\"x\":2}", SIEVE_PRECISION_FLOAT64));
  cr_expect(check_at(e, "{\"x\":1}", SIEVE_PRECISION_FLOAT64));
}
