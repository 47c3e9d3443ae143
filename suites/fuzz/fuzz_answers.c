/*
 * libFuzzer target: the answer parser of `sieve run`. The input is what an
 * implementation under test printed for a request; it is parsed as the runner
 * parses it and matched against expectations of every matcher kind.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "run/check.h"

static const char *const expectations[] = {
    "{\"rows\":[{\"logprobs\":{\"$approx_array\":[-0.5,null,-1.5],\"abs\":1e-9,\"rel\":1e-9}}]}",
    "{\"rows\":[{\"token\":{\"$any_of\":[1,2]},\"logprob\":{\"$approx\":-0.25,\"abs\":1e-9,"
    "\"rel\":0},\"top_logprobs\":{\"$approx_array\":[[1,-0.25],[0,null]],\"abs\":0,\"rel\":0}}]}",
    "{\"u\":[{\"$exact\":0.5},{\"$exact\":0}]}",
    "{\"error\":{\"kind\":\"invalid_params\",\"field\":\"top_k\",\"code\":\"SIEVE_ETOPK\"}}",
    "{\"rows\":[{\"logprobs\":{\"$sparse\":{\"length\":4,\"kept_count\":2,\"kept_mixsum64\":"
    "\"0000000000000000\",\"at\":{\"0\":-0.5,\"3\":null},\"abs\":1e-9,\"rel\":1e-9}}}]}",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *line = malloc(size + 1);
  if (!line)
    return 0;
  memcpy(line, data, size);
  line[size] = '\0';
  cJSON *answer = cJSON_Parse(line);
  char why[512];
  for (size_t i = 0; i < sizeof expectations / sizeof expectations[0]; i++) {
    cJSON *expect = cJSON_Parse(expectations[i]);
    int error_mismatch;
    sieve_check_at(expect, answer, (int)(size % SIEVE_PRECISION_COUNT), why, sizeof why,
                   &error_mismatch);
    cJSON_Delete(expect);
  }
  cJSON_Delete(answer);
  free(line);
  return 0;
}
