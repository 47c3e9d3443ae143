/*
 * libFuzzer target: the fixture loader. The input is a fixture file: it is
 * parsed, every case's request is built (recipes expanded and checked), and
 * every expectation is matched against itself and against an empty answer.
 */
#include <stdint.h>
#include <stdlib.h>

#include "run/check.h"
#include "run/fixture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sieve_fixtures fx;
  char err[256], why[256];
  if (sieve_fixtures_parse((const char *)data, size, &fx, err, sizeof err) != 0)
    return 0;
  cJSON *empty = cJSON_CreateObject();
  for (const cJSON *c = fx.cases->child; c; c = c->next) {
    cJSON_Delete(sieve_case_request(c, err, sizeof err));
    const cJSON *expect = cJSON_GetObjectItemCaseSensitive(c, "expect");
    if (expect) {
      sieve_check(expect, expect, why, sizeof why);
      sieve_check(expect, empty, why, sizeof why);
    }
  }
  cJSON_Delete(empty);
  sieve_fixtures_free(&fx);
  return 0;
}
