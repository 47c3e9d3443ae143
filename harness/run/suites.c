/*
 * Suites and failure details; see suites.h. Everything a detail says about a
 * case comes from the fixture: its suite, and the readings it separates with
 * the answer each gives (fixtures/README.md, "Readings"). A cause is named
 * only when the answer matches that reading's answer.
 */
#include "suites.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture.h"
#include "runner.h"

const char *const sieve_suites[] = {"params",
                                    "ordering",
                                    "large-vocab",
                                    "logprobs",
                                    "engine-options",
                                    "uniform",
                                    "draw",
                                    "sample",
                                    "position",
                                    "special-values",
                                    "speculative",
                                    "penalties",
                                    "distribution",
                                    "speculative-distribution",
                                    NULL};

const char *suite_of_case(const cJSON *c) { return sieve_case_str(c, "suite"); }

int suite_index(const char *suite) {
  for (int i = 0; sieve_suites[i]; i++)
    if (strcmp(sieve_suites[i], suite) == 0)
      return i;
  return SUITES_MAX - 1;
}

int suite_known(const char *suite) { return suite_index(suite) < SUITES_MAX - 1; }

/* ----------------------------------------------------------------------------- kept sets */

typedef struct kept_set {
  int *ids; /* ascending; NULL when only the count is known */
  int n;
} kept_set;

/* The ids whose logprob is a number (`nan` 0) or NaN (`nan` 1): null is a removed token. */
static kept_set kept_of_array(const cJSON *logprobs, int nan) {
  kept_set k = {malloc(((size_t)cJSON_GetArraySize(logprobs) + 1) * sizeof(int)), 0};
  int i = 0;
  for (const cJSON *x = logprobs->child; k.ids && x; x = x->next, i++)
    if (!cJSON_IsNull(x) && sieve_answer_is_nan(x) == nan)
      k.ids[k.n++] = i;
  return k;
}

/* The kept set an expected logprobs matcher describes: an array, or a $sparse count. */
static int kept_of_matcher(const cJSON *m, kept_set *out) {
  const cJSON *array = cJSON_GetObjectItemCaseSensitive(m, "$approx_array");
  const cJSON *sparse = cJSON_GetObjectItemCaseSensitive(m, "$sparse");
  const cJSON *count = cJSON_GetObjectItemCaseSensitive(sparse, "kept_count");
  if (cJSON_IsArray(array)) {
    *out = kept_of_array(array, 0);
    return out->ids ? 0 : -1;
  }
  if (!cJSON_IsNumber(count))
    return -1;
  *out = (kept_set){NULL, count->valueint};
  return 0;
}

static int same_kept(const kept_set *want, const kept_set *have) {
  if (want->n != have->n)
    return 0;
  return !want->ids || memcmp(want->ids, have->ids, (size_t)want->n * sizeof(int)) == 0;
}

/* "{0,1,2}", or "{0,1,...,9} (12 in all)" past eight ids; "N tokens" when ids are unknown. */
static void print_kept(const kept_set *k, char *out, size_t len) {
  if (!k->ids) {
    snprintf(out, len, "%d tokens", k->n);
    return;
  }
  size_t at = (size_t)snprintf(out, len, "{");
  for (int i = 0; i < k->n && at < len; i++) {
    if (k->n > 8 && i == 7) {
      at += (size_t)snprintf(out + at, len - at, ",...,%d} (%d in all)", k->ids[k->n - 1], k->n);
      return;
    }
    at += (size_t)snprintf(out + at, len - at, "%s%d", i ? "," : "", k->ids[i]);
  }
  if (at < len)
    snprintf(out + at, len - at, "}");
}

/* A member of an answer's first row. */
static const cJSON *first_row(const cJSON *answer, const char *key) {
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(answer, "rows");
  return cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(rows, 0), key);
}

/* The expected first row's outcomes: the options of a row-level $any_of, or the row itself. */
static const cJSON *first_expected_row(const cJSON *expect, const cJSON **options) {
  const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(expect, "rows"), 0);
  *options = cJSON_GetObjectItemCaseSensitive(row, "$any_of");
  return *options ? (*options)->child : row;
}

/* "drew token 3 expected 1" when a sampled token is not one the case accepts. */
static void token_difference(const cJSON *expect, const cJSON *answer, char *out, size_t len) {
  const cJSON *options, *row = first_expected_row(expect, &options);
  const cJSON *want = cJSON_GetObjectItemCaseSensitive(row, "token");
  const cJSON *have = first_row(answer, "token");
  if (!cJSON_IsNumber(want) || !cJSON_IsNumber(have))
    return;
  for (const cJSON *o = row; o; o = options ? o->next : NULL) {
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "token");
    if (cJSON_IsNumber(t) && t->valuedouble == have->valuedouble)
      return;
  }
  snprintf(out, len, "drew token %.0f expected %.0f", have->valuedouble, want->valuedouble);
}

/* What differs in the first row's kept set, e.g. "kept {0} expected {0,1}"; "" when the kept
 * set is one the case accepts (or the case has none). */
static void kept_difference(const cJSON *expect, const cJSON *answer, char *out, size_t len) {
  const cJSON *options, *have = first_row(answer, "logprobs");
  out[0] = '\0';
  if (!cJSON_IsArray(have))
    return;
  kept_set got = kept_of_array(have, 0), first = {NULL, 0};
  int n_options = 0, matched = 0;
  for (const cJSON *o = first_expected_row(expect, &options); o && got.ids && !matched;
       o = options ? o->next : NULL) {
    kept_set k;
    if (kept_of_matcher(cJSON_GetObjectItemCaseSensitive(o, "logprobs"), &k) != 0)
      continue;
    kept_set view = k.ids ? got : (kept_set){NULL, got.n};
    matched = same_kept(&k, &view);
    if (n_options++ == 0)
      first = k;
    else
      free(k.ids);
  }
  kept_set nan = kept_of_array(have, 1);
  if (got.ids && nan.ids && n_options > 0 && !matched) {
    char a[120], b[120], c[120];
    print_kept(first.ids ? &got : &(kept_set){NULL, got.n}, a, sizeof a);
    print_kept(&first, b, sizeof b);
    print_kept(&nan, c, sizeof c);
    snprintf(out, len, "kept %s expected %s%s%s%s", a, b,
             n_options > 1 ? " (or another close outcome)" : "", nan.n ? "; NaN at " : "",
             nan.n ? c : "");
  }
  free(nan.ids);
  free(first.ids);
  free(got.ids);
}

/* ----------------------------------------------------------------------------- readings */

/* Whether a reading is an axis value or named in `excluded` (",a,b,"). */
static int reading_excluded(const cJSON *r, const char *excluded) {
  char key[160];
  snprintf(key, sizeof key, ",%s,", sieve_case_str(r, "name"));
  return cJSON_GetObjectItemCaseSensitive(r, "rule") || strstr(excluded, key);
}

static int separates_at(const cJSON *reading, int precision) {
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(reading, "precisions");
  for (const cJSON *p = list ? list->child : NULL; p; p = p->next)
    if (cJSON_IsString(p) && sieve_precision_parse(p->valuestring) == precision)
      return 1;
  return 0;
}

static int reading_matches(const cJSON *r, const cJSON *answer, int precision,
                           const char *excluded) {
  char why[8];
  const cJSON *expect = cJSON_GetObjectItemCaseSensitive(r, "expect");
  return expect && separates_at(r, precision) && !(excluded && reading_excluded(r, excluded)) &&
         sieve_check_at(expect, answer, precision, why, sizeof why, NULL);
}

/* The readings whose answer this is, those of the case's own axis first: "same answer as
 * [name]: hint; or as [name]: hint" in `out` for the first three, the others by name only;
 * every name, comma-separated, in `names`; returns how many. */
static int matching_readings(const cJSON *c, const cJSON *answer, int precision,
                             const char *excluded, char *out, size_t len, char *names,
                             size_t names_len) {
  const cJSON *readings = cJSON_GetObjectItemCaseSensitive(c, "readings");
  const char *axis = sieve_case_str(c, "axis");
  size_t at = 0, named = 0;
  int n = 0;
  out[0] = names[0] = '\0';
  for (int own_axis = 1; own_axis >= 0; own_axis--)
    for (const cJSON *r = readings ? readings->child : NULL; r; r = r->next) {
      if ((strcmp(sieve_case_str(r, "axis"), axis) == 0) != own_axis ||
          !reading_matches(r, answer, precision, excluded))
        continue;
      const char *name = sieve_case_str(r, "name");
      if (at < len && n < 3)
        at += (size_t)snprintf(out + at, len - at, "%s [%s]: %s", n ? "; or as" : "same answer as",
                               name, sieve_case_str(r, "hint"));
      else if (at < len)
        at += (size_t)snprintf(out + at, len - at, "%s[%s]", n == 3 ? "; also " : ", ", name);
      if (named < names_len)
        named += (size_t)snprintf(names + named, names_len - named, "%s%s", n ? "," : "", name);
      n++;
    }
  return n;
}

void sieve_case_separations(const cJSON *c, int precision, char *names, size_t len) {
  const cJSON *readings = cJSON_GetObjectItemCaseSensitive(c, "readings");
  size_t at = 0;
  names[0] = '\0';
  for (const cJSON *r = readings ? readings->child : NULL; r && at < len; r = r->next)
    if (separates_at(r, precision))
      at +=
          (size_t)snprintf(names + at, len - at, "%s%s", at ? "," : "", sieve_case_str(r, "name"));
}

/* What differs in the kept set or the drawn token, "" when neither does. */
static void kept_or_token(const cJSON *expect, const cJSON *answer, char *out, size_t len) {
  kept_difference(expect, answer, out, len);
  if (!*out)
    token_difference(expect, answer, out, len);
}

void sieve_case_detail_found(const cJSON *c, const cJSON *answer, const char *found,
                             const char *why, char *out, size_t len) {
  char kept[512];
  kept_or_token(cJSON_GetObjectItemCaseSensitive(c, "expect"), answer, kept, sizeof kept);
  snprintf(out, len, "%s%s%s; %s", kept, *kept ? ": " : "", found, why);
}

void sieve_case_detail(const cJSON *c, const cJSON *answer, int precision, const char *why,
                       const char *excluded, char *out, size_t len, char *causes,
                       size_t causes_len) {
  const cJSON *expect = cJSON_GetObjectItemCaseSensitive(c, "expect");
  char kept[512], found[480], unused[8];
  kept_or_token(expect, answer, kept, sizeof kept);
  int n =
      matching_readings(c, answer, precision, excluded, found, sizeof found, causes, causes_len);
  if (n == 0 && precision == SIEVE_PRECISION_FLOAT64 &&
      sieve_check_at(expect, answer, SIEVE_PRECISION_FLOAT32, unused, sizeof unused, NULL)) {
    snprintf(found, sizeof found,
             "float32 arithmetic: within the float32 bounds, not the "
             "float64 ones");
    snprintf(causes, causes_len, "%s", SIEVE_CAUSE_FLOAT32);
  } else if (n == 0) {
    snprintf(found, sizeof found, "no known misreading gives this answer");
  }
  if (n == 0 && excluded)
    snprintf(found, sizeof found, "no known choice explains this");
  snprintf(out, len, "%s%s%s; %s", kept, *kept ? ": " : "", found, why);
}
