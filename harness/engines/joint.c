/*
 * The joint reading of `sieve fingerprint`: the filter rows every probe asked become cases, and
 * the fit (run/fit.h) finds the rule their answers follow, the one `sieve run` fits to the
 * fixtures. Each axis's verdict is then the values under which that rule, with the axis set to
 * them, gives every answer its probe got: a probe is read under the values the other probes
 * found, so one axis's departure never becomes another axis's verdict.
 */
#define _GNU_SOURCE
#include "joint.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiles.h"
#include "protocol/jbuf.h"
#include "protocol/request.h"
#include "protocol/serve.h"
#include "run/check.h"
#include "run/fixture.h"

/* The float32 bound of a row's logprobs: a few roundings of the largest scaled logit, which is
 * what a float32 sampler carries through subtracting the maximum and the log of the sum. */
static double f32_bound(const cJSON *row) {
  const cJSON *params = cJSON_GetObjectItemCaseSensitive(row, "params");
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(params, "temperature");
  double temperature = cJSON_IsNumber(t) && t->valuedouble > 0 ? t->valuedouble : 1.0;
  double largest = 0;
  const cJSON *logits = cJSON_GetObjectItemCaseSensitive(row, "logits");
  for (const cJSON *x = logits ? logits->child : NULL; x; x = x->next)
    if (cJSON_IsNumber(x) && fabs(x->valuedouble) > largest)
      largest = fabs(x->valuedouble);
  return 8.0 * FLT_EPSILON * (1.0 + largest / fmin(temperature, 1.0));
}

/* An error as a row's expectation: its kind and field, as fixtures compare errors. */
static cJSON *error_expectation(const cJSON *error) {
  cJSON *e = cJSON_CreateObject(), *inner = cJSON_AddObjectToObject(e, "error");
  for (const char *const *k = (const char *const[]){"kind", "field", NULL}; *k; k++) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(error, *k);
    if (cJSON_IsString(v))
      cJSON_AddStringToObject(inner, *k, v->valuestring);
  }
  return e;
}

/* DeepInfer's answer to a row as its expectation: the logprobs within 1e-9 relative, plus the
 * row's float32 bound at float32, and a kept token whose probability underflows the arithmetic
 * (removed, or a coarse logprob) matches as the same token. */
static cJSON *row_expectation(const cJSON *answer, const cJSON *request_row) {
  const cJSON *error = cJSON_GetObjectItemCaseSensitive(answer, "error");
  if (error)
    return error_expectation(error);
  cJSON *e = cJSON_CreateObject(), *m = cJSON_AddObjectToObject(e, "logprobs");
  cJSON_AddItemToObject(m, "$approx_array",
                        cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(answer, "logprobs"), 1));
  cJSON_AddNumberToObject(m, "abs", 1e-9);
  cJSON_AddNumberToObject(m, "rel", 1e-9);
  cJSON_AddNumberToObject(m, "f32_abs", f32_bound(request_row));
  cJSON_AddNumberToObject(m, "p_abs", 2 * DBL_TRUE_MIN);
  cJSON_AddNumberToObject(m, "f32_p_abs", 2 * FLT_TRUE_MIN);
  return e;
}

/* DeepInfer's answer to a filter request as its expectation, row by row; NULL when its rows
 * are not the request's. */
static cJSON *filter_expectation(const cJSON *answer, const cJSON *request) {
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(answer, "rows");
  const cJSON *asked = cJSON_GetObjectItemCaseSensitive(request, "rows");
  cJSON *expect = cJSON_CreateObject(), *list = cJSON_AddArrayToObject(expect, "rows");
  for (const cJSON *r = rows ? rows->child : NULL, *q = asked ? asked->child : NULL; r && q;
       r = r->next, q = q->next)
    cJSON_AddItemToArray(list, row_expectation(r, q));
  if (cJSON_GetArraySize(list) != cJSON_GetArraySize(asked)) {
    cJSON_Delete(expect);
    return NULL;
  }
  return expect;
}

/* A probe's request as a fixture case: DeepInfer's answer is the expectation (a sample's or a
 * speculative step's as the fit writes a rule's answer). */
static cJSON *probe_case(const probe_row *row, size_t index, jbuf *buf) {
  static const sieve_rule deepinfer = SIEVE_RULE_DEEPINFER;
  cJSON *request = cJSON_Parse(row->request), *c = cJSON_CreateObject();
  char id[96];
  int first = __builtin_ctz(row->axes);
  snprintf(id, sizeof id, "probe/%s/%zu", sieve_axis_name(first), index);
  cJSON_AddStringToObject(c, "id", id);
  cJSON_AddStringToObject(c, "family", "probes");
  cJSON_AddStringToObject(c, "suite", "probes");
  cJSON_AddItemToObject(c, "request", request);
  sieve_serve_request(request, "fingerprint", &deepinfer, REQ_OPTIONS_ALL, buf);
  cJSON *answer = buf->failed ? NULL : cJSON_Parse(buf->data);
  cJSON *expect = !answer ? NULL
                  : !strcmp(sieve_case_str(request, "op"), "filter")
                      ? filter_expectation(answer, request)
                      : fit_expectation(answer);
  cJSON_Delete(answer);
  if (expect)
    cJSON_AddItemToObject(c, "expect", expect);
  if (!request || !expect) {
    cJSON_Delete(c);
    return NULL;
  }
  return c;
}

/* The case of one probe row, judged against DeepInfer's answer as `sieve run` judges. */
static int add_case(joint_reading *j, const probe_row *row, int precision) {
  cJSON *fixture = probe_case(row, j->report.n_cases, &j->buf);
  if (!fixture)
    return -1;
  cJSON_AddItemToArray(j->fixtures, fixture);
  case_result *c = &j->report.cases[j->report.n_cases++];
  sieve_case_of(c, fixture);
  c->probed_axes = row->axes;
  cJSON *have = cJSON_Parse(row->answer);
  if (have)
    sieve_case_judge(c, have, precision);
  c->answer = have ? sieve_answer_text(have) : NULL;
  cJSON_Delete(have);
  return c->answer ? 0 : -1;
}

int joint_read(const prober *pr, int precision, int own_rng, int with_draws, joint_reading *j) {
  fit_start starts[64];
  size_t n_starts = profiles_fit_starts(starts, sizeof starts / sizeof starts[0]);
  memset(j, 0, sizeof *j);
  j->fixtures = cJSON_CreateArray();
  j->report.cases = calloc(pr->n_rows + 1, sizeof *j->report.cases);
  j->report.precision = precision;
  j->report.own_rng = own_rng;
  const mask read = pr->found[SIEVE_AXIS_PARAM_PRECISION]; /* validate's echo, one value or more */
  for (int v = 0; read && !(read & (read - 1)) && v < 32; v++)
    if (read == (mask)1 << v)
      j->report.read_param_precision = v + 1;
  if (!j->fixtures || !j->report.cases)
    return -1;
  for (size_t i = 0; i < pr->n_rows; i++)
    if ((with_draws || !strncmp(pr->rows[i].request, "{\"op\":\"filter\"", 14)) &&
        add_case(j, &pr->rows[i], precision) != 0)
      return -1;
  sieve_report_count(&j->report);
  return sieve_fit(&j->report, starts, n_starts);
}

void joint_free(joint_reading *j) {
  for (size_t i = 0; i < j->report.n_cases; i++)
    free(j->report.cases[i].answer);
  free(j->report.cases);
  cJSON_Delete(j->fixtures);
  jbuf_free(&j->buf);
  memset(j, 0, sizeof *j);
}
