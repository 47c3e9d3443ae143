/* Expectation files; see expect.h. */
#define _GNU_SOURCE
#include "expect.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outfile.h"
#include "run/distribution.h"
#include "run/fixture.h"
#include "run/speculative_distribution.h"

static cJSON *read_json(const char *path, char *err, size_t len) {
  size_t size = 0;
  char *text = sieve_read_file(path, &size);
  if (!text) {
    snprintf(err, len, "%s: cannot read the expectation file: %s", path, strerror(errno));
    return NULL;
  }
  cJSON *root = cJSON_ParseWithLength(text, size);
  free(text);
  if (!root)
    snprintf(err, len, "%s: not valid JSON", path);
  return root;
}

/* An entry is a reason, or {"reason": ..., "issue": ..., "answer": ...} with strings only, the
 * answer a digest of 16 hex digits. */
static int entry_ok(const cJSON *x) {
  if (cJSON_IsString(x))
    return 1;
  if (!cJSON_IsObject(x) || !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(x, "reason")))
    return 0;
  for (const cJSON *k = x->child; k; k = k->next)
    if ((strcmp(k->string, "reason") && strcmp(k->string, "issue") &&
         strcmp(k->string, "answer")) ||
        !cJSON_IsString(k) ||
        (!strcmp(k->string, "answer") &&
         (strlen(k->valuestring) != 16 || strspn(k->valuestring, "0123456789abcdef") != 16)))
      return 0;
  return 1;
}

int sieve_expect_load(const char *path, expectations *e, char *err, size_t len) {
  memset(e, 0, sizeof *e);
  e->root = read_json(path, err, len);
  if (!e->root)
    return -1;
  const cJSON *schema = cJSON_GetObjectItemCaseSensitive(e->root, "schema");
  e->list = cJSON_GetObjectItemCaseSensitive(e->root, "expected_failures");
  const cJSON *bad = NULL;
  for (const cJSON *x = cJSON_IsObject(e->list) ? e->list->child : NULL; x && !bad; x = x->next)
    bad = entry_ok(x) ? NULL : x;
  if (!cJSON_IsString(schema) || (strcmp(schema->valuestring, SIEVE_FIXTURE_SCHEMA) != 0 &&
                                  strcmp(schema->valuestring, SIEVE_FIXTURE_IDS_SINCE) != 0))
    snprintf(err, len, "%s: written for fixtures \"%s\", these are \"%s\"", path,
             cJSON_IsString(schema) ? schema->valuestring : "(none)", SIEVE_FIXTURE_SCHEMA);
  else if (!cJSON_IsObject(e->list))
    snprintf(err, len, "%s: expected_failures must be an object of case id: reason", path);
  else if (bad)
    snprintf(err, len,
             "%s: expected_failures[\"%.100s\"] must be a reason, or {\"reason\": "
             "..., \"issue\": ..., \"answer\": ...} with strings, the answer 16 hex digits",
             path, bad->string);
  else
    return 0;
  sieve_expect_free(e);
  return -1;
}

void sieve_expect_free(expectations *e) {
  cJSON_Delete(e->root);
  memset(e, 0, sizeof *e);
}

static int is_distribution_case(const char *id) {
  case_result all[DISTRIBUTION_MAX_CASES];
  size_t n = distribution_cases(all, 0, 1);
  for (size_t i = 0; i < n; i++)
    if (strcmp(all[i].id, id) == 0)
      return 1;
  return specdist_is_case(id);
}

int sieve_expect_known_ids(const expectations *e, const char *fixtures_path, char *err,
                           size_t len) {
  sieve_fixtures fx;
  if (sieve_fixtures_load(fixtures_path, &fx, err, len) != 0)
    return -1;
  size_t at = 0, unknown = 0;
  for (const cJSON *x = e->list->child; x; x = x->next) {
    if (sieve_fixtures_find(&fx, x->string) || is_distribution_case(x->string))
      continue;
    if (unknown++ < 5 && at < len)
      at += (size_t)snprintf(err + at, len - at, "%s%s",
                             unknown > 1 ? ", "
                                         : "ids that are no "
                                           "case of the fixtures (a typo, or a retired case: "
                                           "fixtures/retired-ids.txt): ",
                             x->string);
  }
  sieve_fixtures_free(&fx);
  if (unknown > 5 && at < len)
    snprintf(err + at, len - at, " and %zu more", unknown - 5);
  return unknown ? -1 : 0;
}

/* "reason (issue)" of an entry. */
static void note_of(const cJSON *x, char *out, size_t len) {
  const cJSON *reason = cJSON_IsString(x) ? x : cJSON_GetObjectItemCaseSensitive(x, "reason");
  const cJSON *issue = cJSON_GetObjectItemCaseSensitive(x, "issue");
  snprintf(out, len, "%s%s%s%s", cJSON_IsString(reason) ? reason->valuestring : "",
           cJSON_IsString(issue) ? " (" : "", cJSON_IsString(issue) ? issue->valuestring : "",
           cJSON_IsString(issue) ? ")" : "");
}

static int failed(const case_result *c) {
  return c->outcome != OUTCOME_PASS && c->outcome != OUTCOME_SKIP;
}

void sieve_expect_apply(const expectations *e, run_report *report) {
  for (size_t i = 0; i < report->n_cases; i++) {
    case_result *c = &report->cases[i];
    const cJSON *x = e ? cJSON_GetObjectItemCaseSensitive(e->list, c->id) : NULL;
    const cJSON *answer = cJSON_GetObjectItemCaseSensitive(x, "answer");
    c->expected_failure = x != NULL;
    c->expected_note[0] = '\0';
    if (x)
      note_of(x, c->expected_note, sizeof c->expected_note);
    snprintf(c->expected_digest, sizeof c->expected_digest, "%s",
             cJSON_IsString(answer) ? answer->valuestring : "");
    c->changed = failed(c) && c->expected_digest[0] && c->digest[0] &&
                 strcmp(c->expected_digest, c->digest) != 0;
  }
  sieve_report_count(report);
}

static const case_result *find_case(const run_report *report, const char *id) {
  for (size_t i = 0; i < report->n_cases; i++)
    if (strcmp(report->cases[i].id, id) == 0)
      return &report->cases[i];
  return NULL;
}

/* A new entry's reason: the outcome and what the fit explains it by, or the readings whose
 * answer it is, or the detail cut at a word before 120 characters. */
static void short_reason(const case_result *c, char *out, size_t len) {
  if (c->explained_by[0]) {
    snprintf(out, len, "%s: explained by [%s]", outcome_name(c->outcome), c->explained_by);
    return;
  }
  if (c->causes[0]) {
    snprintf(out, len, "%s: same answer as [%s]", outcome_name(c->outcome), c->causes);
    return;
  }
  size_t n = strlen(c->detail);
  if (n > 120) {
    n = 120;
    while (n > 60 && c->detail[n] != ' ')
      n--;
  }
  snprintf(out, len, "%s: %.*s%s", outcome_name(c->outcome), (int)n, c->detail,
           c->detail[n] ? "..." : "");
}

/* An old entry as written again: an object, with this run's digest where it has none or where
 * --write-expect takes this run's answers. */
static cJSON *entry_again(const cJSON *x, const case_result *c, int add_failures) {
  cJSON *out = cJSON_IsString(x) ? cJSON_CreateObject() : cJSON_Duplicate(x, 1);
  if (cJSON_IsString(x))
    cJSON_AddStringToObject(out, "reason", x->valuestring);
  if (c && failed(c) && c->digest[0] &&
      (add_failures || !cJSON_GetObjectItemCaseSensitive(out, "answer"))) {
    cJSON_DeleteItemFromObjectCaseSensitive(out, "answer");
    cJSON_AddStringToObject(out, "answer", c->digest);
  }
  return out;
}

/* The entries to write: old ones not asked, still failing, or passing while the run has new
 * failures that may hide them (unless `force`), then this run's new failures. */
static cJSON *entries(const run_report *report, const expectations *old, int add_failures,
                      int force) {
  cJSON *list = cJSON_CreateObject();
  for (const cJSON *x = old ? old->list->child : NULL; x; x = x->next) {
    const case_result *c = find_case(report, x->string);
    if (!c || failed(c) || (c->masked && !force))
      cJSON_AddItemToObject(list, x->string, entry_again(x, c, add_failures));
  }
  for (size_t i = 0; add_failures && i < report->n_cases; i++) {
    const case_result *c = &report->cases[i];
    char reason[700];
    if (!failed(c) || cJSON_GetObjectItemCaseSensitive(list, c->id))
      continue;
    short_reason(c, reason, sizeof reason);
    cJSON *entry = cJSON_CreateObject();
    cJSON_AddStringToObject(entry, "reason", reason);
    if (c->digest[0])
      cJSON_AddStringToObject(entry, "answer", c->digest);
    cJSON_AddItemToObject(list, c->id, entry);
  }
  return list;
}

int sieve_expect_write(const run_report *report, const expectations *old, const char *path,
                       int add_failures, int force, char *err, size_t len) {
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "schema", SIEVE_FIXTURE_SCHEMA);
  cJSON_AddItemToObject(root, "expected_failures", entries(report, old, add_failures, force));
  char *text = cJSON_Print(root);
  cJSON_Delete(root);
  outfile o;
  FILE *out = text ? outfile_open(&o, path) : NULL;
  int ok = out && fputs(text, out) >= 0 && fputc('\n', out) != EOF;
  free(text);
  if (out && outfile_commit(&o, ok) == 0)
    return 0;
  snprintf(err, len, "cannot write the expectation file %s", path);
  return -1;
}
