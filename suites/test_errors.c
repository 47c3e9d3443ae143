/* Error codes: one list generates the enum, the messages and the names. */
#include <string.h>

#include "helpers.h"

static const int all_codes[] = {
#define CODE(name, value, message) SIEVE_##name,
    SIEVE_ERRNO_MAP(CODE)
#undef CODE
};
#define N_CODES (sizeof all_codes / sizeof all_codes[0])

Test(errors, every_code_is_negative_and_distinct) {
  for (size_t i = 0; i < N_CODES; i++) {
    cr_expect_lt(all_codes[i], 0);
    for (size_t j = 0; j < i; j++)
      cr_expect_neq(all_codes[i], all_codes[j]);
  }
}

Test(errors, every_code_has_its_own_message_and_name) {
  for (size_t i = 0; i < N_CODES; i++) {
    cr_expect_str_neq(sieve_strerror(all_codes[i]), "unknown error");
    cr_expect_eq(strncmp(sieve_err_name(all_codes[i]), "SIEVE_E", 7), 0);
    for (size_t j = 0; j < i; j++)
      cr_expect_str_neq(sieve_err_name(all_codes[i]), sieve_err_name(all_codes[j]));
  }
}

Test(errors, param_messages_name_their_field) {
  cr_expect(strstr(sieve_strerror(SIEVE_ETEMPERATURE), "temperature") != NULL);
  cr_expect(strstr(sieve_strerror(SIEVE_ETOPP), "top_p") != NULL);
  cr_expect(strstr(sieve_strerror(SIEVE_ETOPK), "top_k") != NULL);
}

Test(errors, success_and_unknown_codes_have_names) {
  cr_expect_str_eq(sieve_strerror(0), "success");
  cr_expect_str_eq(sieve_err_name(0), "SIEVE_OK");
  cr_expect_str_eq(sieve_strerror(-9999), "unknown error");
  cr_expect_str_eq(sieve_err_name(12345), "SIEVE_UNKNOWN");
  cr_expect_str_eq(sieve_err_name(SIEVE_ETOPK), "SIEVE_ETOPK");
}

/* Two errors at once: the parameters, then the logits, then the request's own fields
 * (top_logprobs), as sieve serve and generators/reference.py order them too. */
Test(errors, s000_l63_parameters_come_before_logits_and_logits_before_top_logprobs) {
  const float good[3] = {1.0f, 2.0f, 3.0f}, nan_row[3] = {1.0f, NAN, 3.0f};
  const sieve_params bad_top_p = {1.0, 0.0, -1, 0.0, NULL}, fine = {1.0, 1.0, -1, 0.0, NULL};
  sieve_draw_key key = {1, 0, 0, 0};
  sieve_top_entry top[9];
  sieve_sample_result r;
  double lp[3];
  cr_expect_eq(sieve_filter(nan_row, 3, &bad_top_p, NULL, lp, NULL), SIEVE_ETOPP);
  cr_expect_eq(sieve_sample(nan_row, 3, &bad_top_p, NULL, &key, 0, NULL, &r), SIEVE_ETOPP);
  cr_expect_eq(sieve_sample(good, 3, &bad_top_p, NULL, &key, 9, top, &r), SIEVE_ETOPP);
  cr_expect_eq(sieve_sample(nan_row, 3, &fine, NULL, &key, 9, top, &r), SIEVE_ENAN);
  cr_expect_eq(sieve_sample(good, 3, &fine, NULL, &key, 9, top, &r), SIEVE_ETOPLOGPROBS);
}
