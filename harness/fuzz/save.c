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

/* The expectation of one row: the error's kind and field, or the logprobs with their bounds. */
static cJSON *expectation(const fuzz_judge *j, const cJSON *row, const cJSON *engine) {
  cJSON *answer = fuzz_oracle_row(j, row, engine), *out = cJSON_CreateObject();
  const cJSON *error = cJSON_GetObjectItemCaseSensitive(answer, "error");
  const cJSON *lp = cJSON_GetObjectItemCaseSensitive(answer, "logprobs");
  if (error) {
    cJSON *e = cJSON_AddObjectToObject(out, "error");
    cJSON_AddItemToObject(e, "kind",
                          cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(error, "kind"), 1));
    cJSON_AddItemToObject(e, "field",
                          cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(error, "field"), 1));
  } else if (lp) {
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

static cJSON *case_of(const fuzz_judge *j, const fuzz_failure *f, uint64_t seed) {
  char id[96], description[160];
  const cJSON *engine = cJSON_GetObjectItemCaseSensitive(f->request, "engine"), *row;
  cJSON *c = cJSON_CreateObject(), *rows;
  snprintf(id, sizeof id, "fuzz/seed-%llu-%s", (unsigned long long)seed,
           fuzz_verdict_name(f->judgement.verdict));
  for (char *p = id; *p; p++)
    *p = *p == ' ' ? '-' : *p;
  snprintf(description, sizeof description, "A minimal case of sieve fuzz --seed %llu: %s",
           (unsigned long long)seed, fuzz_verdict_what(f->judgement.verdict));
  cJSON_AddStringToObject(c, "id", id);
  cJSON_AddStringToObject(c, "family", "fuzz");
  cJSON_AddStringToObject(c, "suite", "ordering");
  cJSON_AddStringToObject(c, "seed_ref", "000:11-32");
  cJSON_AddStringToObject(c, "description", description);
  cJSON_AddStringToObject(c, "axis", "none");
  cJSON_AddItemToObject(c, "request", cJSON_Duplicate(f->request, 1));
  rows = cJSON_AddArrayToObject(cJSON_AddObjectToObject(c, "expect"), "rows");
  cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(f->request, "rows"))
      cJSON_AddItemToArray(rows, expectation(j, row, engine));
  cJSON_AddArrayToObject(c, "readings");
  return c;
}

int fuzz_save(const char *dir, uint64_t seed, const fuzz_judge *j, const fuzz_failure *found,
              size_t n, char *path, size_t len) {
  if (mkdir(dir, 0777) != 0 && errno != EEXIST)
    return snprintf(path, len, "cannot make the folder %s: %s", dir, strerror(errno)), -1;
  snprintf(path, len, "%s/fuzz-%llu.json", dir, (unsigned long long)seed);
  /* jbuf writes every number so that it reads back the same (cJSON's printer rounds some). */
  jbuf text = {0};
  jbuf_raw(&text, "{\"schema\": \"" SIEVE_FIXTURE_SCHEMA "\",\n \"cases\": [");
  for (size_t i = 0, k = 0; i < n; i++) {
    if (!found[i].request)
      continue;
    cJSON *c = case_of(j, &found[i], seed);
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
