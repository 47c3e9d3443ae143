/* Naming the reading; see readings.h. */
#define _GNU_SOURCE
#include "readings.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "protocol/jbuf.h"
#include "protocol/proc.h"
#include "run/check.h"
#include "run/fixture.h"

#define FUZZ_READINGS_TIMEOUT_MS 120000 /* for the generators to import PyTorch and answer */

static int deepinfer(const sieve_rule *rule) {
  for (int axis = 0; axis < SIEVE_AXIS_COUNT; axis++)
    if (sieve_rule_get(rule, axis) != 0)
      return 0;
  return 1;
}

/* The generators' answer: for each request, its readings or null. NULL with `why`. */
static cJSON *ask_generators(const fuzz_answered *answered, size_t n, char *why, size_t why_len) {
  static const char *const places[] = {"../generators", "../../generators"};
  char script[PATH_MAX];
  const char *python = getenv("SIEVE_PYTHON");
  char *argv[] = {(char *)(python && *python ? python : "/usr/bin/python3"), script, NULL};
  sieve_beside_self(places, 2, "readings_of.py", script, sizeof script);
  if (access(script, R_OK) != 0)
    return snprintf(why, why_len, "generators/readings_of.py is not beside this sieve"), NULL;
  cJSON *input = cJSON_CreateObject(), *requests = cJSON_AddArrayToObject(input, "requests");
  for (size_t i = 0; requests && i < n; i++)
    cJSON_AddItemReferenceToArray(requests, (cJSON *)answered[i].request);
  jbuf text = {0};
  jbuf_json(&text, input);
  cJSON_Delete(input);
  proc p;
  cJSON *answer = NULL;
  if (text.failed || proc_start(&p, argv, FUZZ_READINGS_TIMEOUT_MS) != PROC_OK)
    snprintf(why, why_len, "%s could not be started", argv[0]);
  else
    answer = proc_ask(&p, text.data, text.len, why, why_len), proc_stop(&p, NULL, 0);
  jbuf_free(&text);
  const cJSON *lists = cJSON_GetObjectItemCaseSensitive(answer, "readings");
  if (answer && cJSON_GetArraySize(lists) != (int)n) {
    snprintf(why, why_len, "generators/readings_of.py answered something else");
    cJSON_Delete(answer);
    return NULL;
  }
  return answer;
}

/* The reading named `name` among a request's readings, or NULL. */
static const cJSON *reading_named(const cJSON *list, const char *name) {
  const cJSON *r;
  cJSON_ArrayForEach(r, list) if (strcmp(sieve_case_str(r, "name"), name) == 0) return r;
  return NULL;
}

/* Whether the generators could rebuild request i (null where the reference refuses it). */
static int rebuilt(const cJSON *lists, size_t i) {
  return cJSON_IsArray(cJSON_GetArrayItem(lists, (int)i));
}

/* Whether the reading `name` of request i expects its answer: a row's answer is matched as the
 * answer {"rows": [answer]} of the request that asks it alone. */
static int expects(const cJSON *lists, const fuzz_answered *a, size_t i, const char *name,
                   int precision) {
  const cJSON *r = reading_named(cJSON_GetArrayItem(lists, (int)i), name);
  cJSON *whole = NULL, *rows = NULL;
  if (cJSON_HasObjectItem(a[i].request, "rows") && (whole = cJSON_CreateObject()) &&
      (rows = cJSON_AddArrayToObject(whole, "rows")))
    cJSON_AddItemReferenceToArray(rows, (cJSON *)a[i].answer);
  char why[8];
  const int ok = r && a[i].answer &&
                 sieve_check_at(cJSON_GetObjectItemCaseSensitive(r, "expect"),
                                whole ? whole : a[i].answer, precision, why, sizeof why, NULL);
  cJSON_Delete(whole);
  return ok;
}

/* The readings of the first rebuilt answer of `kind` (the minimal case, when the generators
 * could rebuild it) that give it and more than half of the kind's rebuilt answers, with their
 * counts. Not all of them: a float32 implementation of a reading may decide a row within reach
 * of its cut otherwise than the reading's float64 answer, which no expectation lists
 * (topp-inclusive-cumsum's port on rows of tie levels). */
static void name_kind(const cJSON *lists, const fuzz_answered *a, size_t n, int kind, int precision,
                      fuzz_named *out) {
  size_t first = n, at = 0;
  *out = (fuzz_named){.names = ""};
  for (size_t i = 0; i < n; i++)
    if (a[i].kind == kind) {
      out->total++;
      out->rebuilt += (size_t)rebuilt(lists, i);
      first = first == n && rebuilt(lists, i) ? i : first;
    }
  const cJSON *r, *own = first < n ? cJSON_GetArrayItem(lists, (int)first) : NULL;
  cJSON_ArrayForEach(r, own) {
    const char *name = sieve_case_str(r, "name");
    size_t gives = 0;
    if (!expects(lists, a, first, name, precision))
      continue;
    for (size_t i = first; i < n; i++)
      gives += a[i].kind == kind && rebuilt(lists, i) && expects(lists, a, i, name, precision);
    /* A reading of an axis value gives the value beside its name, where the two differ. */
    const char *rule = sieve_case_str(r, "rule");
    const int aside = *rule && strcmp(rule, name) != 0;
    if (at < sizeof out->names && 2 * gives > out->rebuilt)
      at += (size_t)snprintf(out->names + at, sizeof out->names - at,
                             "%s%s%s%s%s gives %zu of %zu: %s", at ? "; " : "", name,
                             aside ? " (" : "", aside ? rule : "", aside ? ")" : "", gives,
                             out->rebuilt, sieve_case_str(r, "hint"));
  }
}

int fuzz_name_readings(const sieve_rule *rule, const fuzz_answered *answered, size_t n,
                       int precision, fuzz_named *named, int kinds, char *why, size_t why_len) {
  for (int k = 0; k < kinds; k++)
    named[k] = (fuzz_named){.names = ""};
  if (!deepinfer(rule))
    return 1;
  cJSON *answer = n ? ask_generators(answered, n, why, why_len) : NULL;
  if (!answer)
    return n ? -1 : 0;
  const cJSON *lists = cJSON_GetObjectItemCaseSensitive(answer, "readings");
  for (int k = 0; k < kinds; k++)
    name_kind(lists, answered, n, k, precision, &named[k]);
  cJSON_Delete(answer);
  return 0;
}
