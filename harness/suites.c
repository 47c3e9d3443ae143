/* Suites and failure hints; see suites.h. */
#include "suites.h"

#include <stdio.h>
#include <string.h>

#include "fixture.h"
#include "runner.h"

const char *const sieve_suites[] = {"params",   "ordering", "large-vocab", "logprobs",
                                    "engine-options", "uniform", "draw", "sample",
                                    "position", "special-values", "distribution", NULL};

static const struct {
  const char *family;
  const char *suite;
} family_suites[] = {
    {"validation", "params"},   {"ordering", "ordering"},   {"ties", "ordering"},
    {"temperature", "ordering"}, {"large-vocab", "large-vocab"}, {"logprobs", "logprobs"},
    {"engine-options", "engine-options"}, {"hash", "uniform"}, {"draw", "draw"},
    {"sample", "sample"},       {"positions", "position"},  {"special-values", "special-values"},
};

const char *suite_of_case(const cJSON *c) {
  const char *family = sieve_case_str(c, "family");
  for (size_t i = 0; i < sizeof family_suites / sizeof family_suites[0]; i++)
    if (strcmp(family, family_suites[i].family) == 0)
      return family_suites[i].suite;
  const char *op = sieve_case_str(cJSON_GetObjectItemCaseSensitive(c, "request"), "op");
  if (strcmp(op, "draw") == 0)
    return "draw";
  return strcmp(op, "sample") == 0 ? "sample" : "ordering";
}

int suite_index(const char *suite) {
  for (int i = 0; sieve_suites[i]; i++)
    if (strcmp(sieve_suites[i], suite) == 0)
      return i;
  return SUITES_MAX - 1;
}

/* What a failure of a case with this id prefix most likely means. */
static const struct {
  const char *prefix;
  const char *hint;
} axis_hints[] = {
    {"ordering/top-p-on-full-distribution", "top-p measured after top-k?"},
    {"seed-examples/000-order-example", "top-p measured after top-k?"},
    {"ordering/strict-boundary", ">= instead of > at the top-p boundary?"},
    {"ordering/top-k-tie", "top-k ties not cut in token-id order?"},
    {"ordering/top-p-tie", "ties not kept in token-id order?"},
    {"ties/", "ties not broken by token id?"},
    {"ordering/temperature-before-top-p", "temperature applied after the filters?"},
    {"temperature/multiply-by-float32-reciprocal", "logits divided by T instead of multiplied by "
                                                   "the float32 1/T?"},
    {"validation/order-t0", "parameters checked after the temperature clamp?"},
    {"validation/filter-t0", "parameters checked after the temperature clamp?"},
    {"hash/", "check the logical shifts, the finalizer, the case mix and the mtp offset"},
    {"positions/decode", "decode position off by one?"},
    {"logprobs/processed", "raw or temperature-only logprobs instead of processed ones?"},
    {"engine-options/blacklist-before-force-topk", "force_topk applied before the blacklist?"},
    {"draw/", "the cdf built in another order, or >= instead of >?"},
};

/* The kept (non-null) ids of a logprobs array, as "{0,1,...}"; returns how many. */
static int kept_set(const cJSON *logprobs, char *out, size_t len) {
  size_t at = (size_t)snprintf(out, len, "{");
  int i = 0, shown = 0;
  for (const cJSON *x = logprobs ? logprobs->child : NULL; x && at < len; x = x->next, i++)
    if (!cJSON_IsNull(x) && shown++ < 8)
      at += (size_t)snprintf(out + at, len - at, "%s%d", shown > 1 ? "," : "", i);
  if (at < len)
    snprintf(out + at, len - at, "%s}", shown > 8 ? ",..." : "");
  return shown;
}

static const cJSON *first_row_logprobs(const cJSON *answer) {
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(answer, "rows");
  return cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(rows, 0), "logprobs");
}

void suite_hint(const char *id, const cJSON *expect, const cJSON *got, char *out, size_t len) {
  out[0] = '\0';
  const char *axis = "";
  for (size_t i = 0; i < sizeof axis_hints / sizeof axis_hints[0]; i++)
    if (strncmp(id, axis_hints[i].prefix, strlen(axis_hints[i].prefix)) == 0)
      axis = axis_hints[i].hint;
  const cJSON *want = cJSON_GetObjectItemCaseSensitive(first_row_logprobs(expect), "$approx_array");
  const cJSON *have = first_row_logprobs(got);
  char kept_want[96], kept_have[96];
  if (cJSON_IsArray(want) && cJSON_IsArray(have)) {
    int n_want = kept_set(want, kept_want, sizeof kept_want);
    int n_have = kept_set(have, kept_have, sizeof kept_have);
    if (n_want == n_have)
      axis = "as many tokens, other ids: ties or ranks in another order?";
    if (strcmp(kept_want, kept_have) != 0) {
      snprintf(out, len, "kept %s expected %s%s%s", kept_have, kept_want, *axis ? ": " : "",
               axis);
      return;
    }
  }
  snprintf(out, len, "%s", axis);
}
