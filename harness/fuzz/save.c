/*
 * Saving minimal cases (save.h). Every expected value is the oracle's under the rule the run
 * judged by, with the tolerances fixtures/README.md derives: 1e-9 at float64 and the float32
 * logprob bound of the kept set. A decision the judge found within float reach is not saved:
 * only failures are, and their rows' other outcomes are not listed.
 */
#define _POSIX_C_SOURCE 200809L
#include "save.h"

#include <errno.h>
#include <float.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "protocol/jbuf.h"
#include "report/outfile.h"
#include "run/fixture.h"

static const cJSON *member(const cJSON *x, const char *name) {
  return cJSON_GetObjectItemCaseSensitive(x, name);
}

static void copy_member(cJSON *to, const cJSON *from, const char *name) {
  if (member(from, name))
    cJSON_AddItemToObject(to, name, cJSON_Duplicate(member(from, name), 1));
}

/* A sample row's token, exact, and its logprob within the bound of its kept set. */
static void sample_expectation(const fuzz_judge *j, const cJSON *row, const cJSON *engine,
                               const cJSON *answer, cJSON *out) {
  cJSON *filter_row = fuzz_filter_row(member(row, "logits"), member(row, "params"));
  cJSON *filtered = filter_row ? fuzz_oracle_row(j, filter_row, engine) : NULL;
  copy_member(out, answer, "token");
  cJSON *lp = cJSON_AddObjectToObject(out, "logprob");
  cJSON_AddItemToObject(lp, "$approx", cJSON_Duplicate(member(answer, "logprob"), 1));
  cJSON_AddNumberToObject(lp, "abs", 1e-9);
  cJSON_AddNumberToObject(lp, "rel", 1e-9);
  cJSON_AddNumberToObject(lp, "f32_abs", filtered ? fuzz_f32_bound(filter_row, filtered) : 0.0);
  cJSON_Delete(filtered);
  cJSON_Delete(filter_row);
}

/* The expectation of a request without rows: uniforms exact, a position, a committed chain. */
static void whole_expectation(const cJSON *answer, cJSON *out) {
  const cJSON *u;
  if (cJSON_IsArray(member(answer, "u"))) {
    cJSON *list = cJSON_AddArrayToObject(out, "u");
    cJSON_ArrayForEach(u, member(answer, "u")) {
      cJSON *exact = cJSON_CreateObject();
      cJSON_AddItemToObject(exact, "$exact", cJSON_Duplicate(u, 1));
      cJSON_AddItemToArray(list, exact);
    }
  }
  copy_member(out, answer, "position");
  copy_member(out, answer, "accepted");
  copy_member(out, answer, "tokens");
  copy_member(out, answer, "bonus");
}

/* The expectation of row `at` of the request (or of the whole request when it has no rows):
 * the error's kind and field, or the answer with the bounds of its values. */
static cJSON *expectation(const fuzz_judge *j, const cJSON *request, size_t at) {
  cJSON *answer = fuzz_oracle_answer(j, request, at), *out = cJSON_CreateObject();
  const cJSON *row = cJSON_GetArrayItem(member(request, "rows"), (int)at);
  const cJSON *engine = member(request, "engine"), *op = member(request, "op");
  const cJSON *error = member(answer, "error");
  const cJSON *lp = member(answer, "logprobs");
  if (error) {
    cJSON *e = cJSON_AddObjectToObject(out, "error");
    copy_member(e, error, "kind");
    copy_member(e, error, "field");
  } else if (!row)
    whole_expectation(answer, out);
  else if (cJSON_IsString(op) && strcmp(op->valuestring, "sample") == 0)
    sample_expectation(j, row, engine, answer, out);
  else if (lp) {
    cJSON *m = cJSON_AddObjectToObject(out, "logprobs");
    cJSON_AddItemToObject(m, "$approx_array", cJSON_Duplicate(lp, 1));
    cJSON_AddNumberToObject(m, "abs", 1e-9);
    cJSON_AddNumberToObject(m, "rel", 1e-9);
    cJSON_AddNumberToObject(m, "f32_abs", fuzz_f32_bound(row, answer));
    cJSON_AddNumberToObject(m, "p_abs", 2 * DBL_TRUE_MIN);
    cJSON_AddNumberToObject(m, "f32_p_abs", 2 * FLT_TRUE_MIN);
  }
  cJSON_Delete(answer);
  return out;
}

/* The suite and the seed lines of each op's cases, as the generated fixtures give them. */
static void suite_of(const cJSON *request, const char **suite, const char **seed_ref) {
  static const char *const ops[][3] = {{"sample", "sample", "000:34-54"},
                                       {"uniform", "uniform", "000:45-47,000:52,000:59"},
                                       {"position", "position", "000:59"},
                                       {"speculate", "speculative", "000:52"}};
  const cJSON *op = member(request, "op");
  *suite = "ordering", *seed_ref = "000:11-32";
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (cJSON_IsString(op) && strcmp(op->valuestring, ops[i][0]) == 0)
      *suite = ops[i][1], *seed_ref = ops[i][2];
}

static cJSON *case_of(const fuzz_judge *j, const fuzz_failure *f, const char *label,
                      const char *replay) {
  char id[96], description[160];
  const char *suite, *seed_ref;
  cJSON *c = cJSON_CreateObject(), *rows;
  snprintf(id, sizeof id, "fuzz/%s-%s", label, fuzz_verdict_name(f->judgement.verdict));
  for (char *p = id; *p; p++)
    *p = *p == ' ' ? '-' : *p;
  snprintf(description, sizeof description, "A minimal case of sieve fuzz %s: %s", replay,
           fuzz_verdict_what(f->judgement.verdict));
  cJSON_AddStringToObject(c, "id", id);
  cJSON_AddStringToObject(c, "family", "fuzz");
  suite_of(f->request, &suite, &seed_ref);
  cJSON_AddStringToObject(c, "suite", suite);
  cJSON_AddStringToObject(c, "seed_ref", seed_ref);
  cJSON_AddStringToObject(c, "description", description);
  cJSON_AddStringToObject(c, "axis", "none");
  cJSON_AddItemToObject(c, "request", cJSON_Duplicate(f->request, 1));
  const int n = cJSON_GetArraySize(member(f->request, "rows"));
  if (!member(f->request, "rows"))
    cJSON_AddItemToObject(c, "expect", expectation(j, f->request, 0));
  rows = n ? cJSON_AddArrayToObject(cJSON_AddObjectToObject(c, "expect"), "rows") : NULL;
  for (int i = 0; i < n; i++)
    cJSON_AddItemToArray(rows, expectation(j, f->request, (size_t)i));
  cJSON_AddArrayToObject(c, "readings");
  return c;
}

/* Makes the folder and those above it that are missing, as mkdir -p does; -1 with errno. */
static int make_folders(const char *dir) {
  char path[4096];
  const size_t n = strlen(dir);
  if (n >= sizeof path)
    return errno = ENAMETOOLONG, -1;
  memcpy(path, dir, n + 1);
  for (size_t i = 1; i <= n; i++)
    if (path[i] == '/' || path[i] == '\0') {
      const char end = path[i];
      path[i] = '\0';
      if (mkdir(path, 0777) != 0 && errno != EEXIST)
        return -1;
      path[i] = end;
    }
  return 0;
}

int fuzz_save(const char *dir, const char *label, const char *replay, const fuzz_judge *j,
              const fuzz_failure *found, size_t n, char *path, size_t len) {
  if (make_folders(dir) != 0)
    return snprintf(path, len, "cannot make the folder %s: %s", dir, strerror(errno)), -1;
  snprintf(path, len, "%s/fuzz-%s.json", dir, label + strlen("seed-"));
  /* jbuf writes every number so that it reads back the same (cJSON's printer rounds some). */
  jbuf text = {0};
  jbuf_raw(&text, "{\"schema\": \"" SIEVE_FIXTURE_SCHEMA "\",\n \"cases\": [");
  for (size_t i = 0, k = 0; i < n; i++) {
    if (!found[i].request)
      continue;
    cJSON *c = case_of(j, &found[i], label, replay);
    jbuf_raw(&text, k++ ? ",\n  " : "\n  ");
    jbuf_json(&text, c);
    cJSON_Delete(c);
  }
  jbuf_raw(&text, "]}\n");
  outfile o;
  FILE *f = text.failed ? NULL : outfile_open(&o, path);
  const int ok = f && fputs(text.data, f) >= 0;
  const int rc = f && outfile_commit(&o, ok) == 0 && ok ? 0 : -1;
  if (rc != 0)
    snprintf(path + strlen(path), len - strlen(path), ": not written: %s",
             text.failed ? "out of memory" : strerror(errno));
  jbuf_free(&text);
  return rc;
}
