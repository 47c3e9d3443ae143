/* The fixture matchers (fixtures/README.md): each passes what it should and fails the rest. */
#include <stdio.h>

#include "../harness/check.h"
#include "helpers.h"

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
  cr_expect(!check("{\"error\":{\"kind\":\"invalid_params\",\"field\":\"top_k\"}}",
                   "{\"params\":{}}"));
}

Test(check, error_kind_and_field_are_compared_and_code_only_when_reported) {
  const char *e = "{\"error\":{\"kind\":\"invalid_params\",\"field\":\"top_k\",\"code\":\"SIEVE_ETOPK\"}}";
  cr_expect(check(e, "{\"error\":{\"kind\":\"invalid_params\",\"field\":\"top_k\",\"message\":\"m\"}}"));
  cr_expect(check(e, "{\"error\":{\"kind\":\"invalid_params\",\"field\":\"top_k\",\"code\":\"SIEVE_ETOPK\"}}"));
  cr_expect(!check(e, "{\"error\":{\"kind\":\"invalid_params\",\"field\":\"top_k\",\"code\":\"SIEVE_ETOPP\"}}"));
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
