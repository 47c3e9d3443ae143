/* Reading protocol v1 requests; see request.h. */
#define _POSIX_C_SOURCE 200809L
#include "request.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recipe.h"

#define MAX_EXACT_INT 9007199254740992.0 /* 2^53 */

int req_fail(req_error *e, const char *kind, const char *field, const char *fmt, ...) {
  e->kind = kind;
  e->code = NULL;
  snprintf(e->field, sizeof e->field, "%s", field);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->message, sizeof e->message, fmt, ap);
  va_end(ap);
  return -1;
}

/* How each oracle error is reported: its protocol kind and the field at fault. */
static const struct {
  int code;
  const char *kind;
  const char *field;
} code_kinds[] = {
    {SIEVE_ETEMPERATURE, SIEVE_KIND_PARAMS, "temperature"},
    {SIEVE_ETOPP, SIEVE_KIND_PARAMS, "top_p"},
    {SIEVE_ETOPK, SIEVE_KIND_PARAMS, "top_k"},
    {SIEVE_EVOCAB, SIEVE_KIND_LOGITS, "logits"},
    {SIEVE_ENAN, SIEVE_KIND_LOGITS, "logits"},
    {SIEVE_EPOSINF, SIEVE_KIND_LOGITS, "logits"},
    {SIEVE_ENOFINITE, SIEVE_KIND_LOGITS, "logits"},
    {SIEVE_EOVERFLOW, SIEVE_KIND_LOGITS, "logits"},
    {SIEVE_EPROBS, SIEVE_KIND_LOGITS, "probs"},
    {SIEVE_EZEROMASS, SIEVE_KIND_LOGITS, "probs"},
    {SIEVE_EFORCETOPK, SIEVE_KIND_REQUEST, "force_topk"},
    {SIEVE_EBLACKLIST, SIEVE_KIND_REQUEST, "blacklist"},
    {SIEVE_EUNIFORM, SIEVE_KIND_REQUEST, "u"},
    {SIEVE_ECASE, SIEVE_KIND_REQUEST, "case"},
    {SIEVE_ETAG, SIEVE_KIND_REQUEST, "tag"},
    {SIEVE_EPOSITION, SIEVE_KIND_REQUEST, "position"},
    {SIEVE_ETOPLOGPROBS, SIEVE_KIND_REQUEST, "top_logprobs"},
    {SIEVE_EDRAFT, SIEVE_KIND_REQUEST, "draft"},
    {SIEVE_EDRAFTTOKEN, SIEVE_KIND_REQUEST, "draft.tokens"},
    {SIEVE_EMINP, SIEVE_KIND_PARAMS, "min_p"},
    {SIEVE_EFREQUENCY, SIEVE_KIND_PARAMS, "frequency_penalty"},
    {SIEVE_EPRESENCE, SIEVE_KIND_PARAMS, "presence_penalty"},
    {SIEVE_EREPETITION, SIEVE_KIND_PARAMS, "repetition_penalty"},
    {SIEVE_EPENALTYWINDOW, SIEVE_KIND_PARAMS, "penalty_last_n"},
    {SIEVE_EOUTPUTTOKEN, SIEVE_KIND_REQUEST, "output_ids"},
    {SIEVE_EPROMPTTOKEN, SIEVE_KIND_REQUEST, "prompt_ids"},
};

int req_fail_code(req_error *e, int code, const char *path) {
  const char *kind = SIEVE_KIND_REQUEST, *field = "";
  for (size_t i = 0; i < sizeof code_kinds / sizeof code_kinds[0]; i++)
    if (code_kinds[i].code == code) {
      kind = code_kinds[i].kind;
      field = code_kinds[i].field;
    }
  if (strcmp(sieve_err_name(code), "SIEVE_UNKNOWN") == 0) /* only a library under test */
    req_fail(e, kind, field,
             "%s%sthe implementation returned %d, which is no SIEVE_E* code "
             "(harness/protocol/sieve_impl.h)",
             path, *path ? ": " : "", code);
  else
    req_fail(e, kind, field, "%s%s%s", path, *path ? ": " : "", sieve_strerror(code));
  e->code = sieve_err_name(code);
  return -1;
}

const cJSON *req_get(const cJSON *obj, const char *key) {
  return cJSON_GetObjectItemCaseSensitive(obj, key);
}

static int key_allowed(const char *key, const char *const *allowed) {
  for (; *allowed; allowed++)
    if (strcmp(key, *allowed) == 0)
      return 1;
  return 0;
}

int req_check_keys(const cJSON *obj, const char *const *allowed, const char *path, req_error *e) {
  if (!cJSON_IsObject(obj))
    return req_fail(e, SIEVE_KIND_REQUEST, path, "%s must be a JSON object", path);
  for (const cJSON *item = obj->child; item; item = item->next) {
    if (!key_allowed(item->string, allowed))
      return req_fail(e, SIEVE_KIND_REQUEST, item->string, "%s: unknown key \"%s\"", path,
                      item->string);
    for (const cJSON *prev = obj->child; prev != item; prev = prev->next)
      if (strcmp(prev->string, item->string) == 0)
        return req_fail(e, SIEVE_KIND_REQUEST, item->string, "%s: duplicate key \"%s\"", path,
                        item->string);
  }
  return 0;
}

int req_decimal(const char *text, uint64_t *out) {
  if (!text || *text < '0' || *text > '9')
    return -1;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno == ERANGE || *end != '\0')
    return -1;
  *out = (uint64_t)v;
  return 0;
}

int req_int(const cJSON *item, const char *path, const char *field, int64_t *out, req_error *e) {
  if (cJSON_IsNumber(item)) {
    double d = item->valuedouble;
    if (!isfinite(d) || d != floor(d) || fabs(d) > MAX_EXACT_INT)
      return req_fail(e, SIEVE_KIND_REQUEST, field,
                      "%s must be an integer of magnitude <= 2^53 (got %.17g)", path, d);
    *out = (int64_t)d;
    return 0;
  }
  uint64_t u;
  if (cJSON_IsString(item) && req_decimal(item->valuestring, &u) == 0 && u <= INT64_MAX) {
    *out = (int64_t)u;
    return 0;
  }
  return req_fail(e, SIEVE_KIND_REQUEST, field, "%s must be an integer", path);
}

int req_u64(const cJSON *item, const char *path, const char *field, uint64_t *out, req_error *e) {
  if (cJSON_IsString(item) && req_decimal(item->valuestring, out) == 0)
    return 0;
  int64_t v;
  if (cJSON_IsString(item) || req_int(item, path, field, &v, e) != 0 || v < 0)
    return req_fail(e, SIEVE_KIND_REQUEST, field,
                    "%s must be an integer in [0, 2^64-1] (a number up to 2^53, or a "
                    "decimal string)",
                    path);
  *out = (uint64_t)v;
  return 0;
}

int req_seed(const cJSON *item, const char *path, uint64_t *out, req_error *e) {
  if (cJSON_IsString(item) && req_decimal(item->valuestring, out) == 0)
    return 0;
  return req_fail(e, SIEVE_KIND_REQUEST, "seed",
                  "%s must be a decimal string in [0, 18446744073709551615]", path);
}

int req_number(const cJSON *item, int null_rule, double *out) {
  if (cJSON_IsNumber(item))
    *out = item->valuedouble;
  else if (cJSON_IsNull(item) && null_rule == REQ_NULL_MINUS_INF)
    *out = -INFINITY;
  else if (!cJSON_IsString(item))
    return -1;
  else if (strcmp(item->valuestring, "nan") == 0)
    *out = NAN;
  else if (strcmp(item->valuestring, "inf") == 0)
    *out = INFINITY;
  else if (strcmp(item->valuestring, "-inf") == 0)
    *out = -INFINITY;
  else
    return -1;
  return 0;
}

static int param_number(const cJSON *obj, const char *key, const char *path, double *out,
                        req_error *e) {
  const cJSON *item = req_get(obj, key);
  if (!item)
    return 0;
  if (req_number(item, REQ_NULL_REFUSED, out) != 0)
    return req_fail(e, SIEVE_KIND_PARAMS, key, "%s.%s must be a number", path, key);
  return 0;
}

/* top_k as a 64-bit integer; values beyond int64 saturate and are rejected by the oracle. Left
 * out, it is SIEVE_TOP_K_UNSET: off under every rule, even one that rejects an explicit -1. */
static int param_top_k(const cJSON *obj, const char *path, int64_t *out, req_error *e) {
  double d = 0.0;
  if (!req_get(obj, "top_k")) {
    *out = SIEVE_TOP_K_UNSET;
    return 0;
  }
  if (param_number(obj, "top_k", path, &d, e) != 0)
    return -1;
  if (!isfinite(d) || d != floor(d))
    return req_fail_code(e, SIEVE_ETOPK, path);
  *out = d >= 0x1p63 ? INT64_MAX : d <= -0x1p63 ? INT64_MIN + 1 : (int64_t)d;
  return 0;
}

static const char *const option_names[] = {REQ_SAMPLING_OPTIONS(REQ_OPTION_NAME)};

static int option_index(const char *name, size_t len) {
  for (int i = 0; i < REQ_OPTION_COUNT; i++)
    if (strlen(option_names[i]) == len && strncmp(option_names[i], name, len) == 0)
      return i;
  return -1;
}

unsigned req_options_of_list(const cJSON *names) {
  unsigned out = 0;
  for (const cJSON *x = cJSON_IsArray(names) ? names->child : NULL; x; x = x->next) {
    int i = cJSON_IsString(x) ? option_index(x->valuestring, strlen(x->valuestring)) : -1;
    out |= i >= 0 ? 1u << i : 0u;
  }
  return out;
}

unsigned req_options_of_text(const char *names, char *unknown, size_t len) {
  unsigned out = 0;
  for (const char *at = names; at && *at;) {
    size_t n = strcspn(at, ",");
    int i = option_index(at, n);
    if (i < 0 && n > 0 && unknown) {
      snprintf(unknown, len, "%.*s", (int)n, at);
      return -1u;
    }
    out |= i >= 0 ? 1u << i : 0u;
    at += n + (at[n] == ',');
  }
  return out;
}

const char *req_params_option_missing(const cJSON *params, unsigned offered) {
  for (int i = 0; cJSON_IsObject(params) && i < REQ_OPTION_COUNT; i++)
    if (!(offered & 1u << i) && req_get(params, option_names[i]))
      return option_names[i];
  return NULL;
}

const char *req_option_missing(const cJSON *request, unsigned offered) {
  const cJSON *holders[] = {request, req_get(request, "target"), req_get(request, "draft")};
  const char *missing = NULL;
  for (size_t i = 0; i < 3 && !missing; i++)
    missing = req_params_option_missing(req_get(holders[i], "params"), offered);
  const cJSON *rows = req_get(request, "rows");
  for (const cJSON *row = cJSON_IsArray(rows) ? rows->child : NULL; row && !missing;
       row = row->next)
    missing = req_params_option_missing(req_get(row, "params"), offered);
  return missing;
}

/* penalty_last_n as a 64-bit integer, saturated, for the oracle to check in its order; one that
 * is no integer is its error here, as top_k's is. */
static int param_last_n(const cJSON *obj, const char *path, int64_t *out, req_error *e) {
  double d = -1.0;
  if (param_number(obj, "penalty_last_n", path, &d, e) != 0)
    return -1;
  if (!isfinite(d) || d != floor(d))
    return req_fail_code(e, SIEVE_EPENALTYWINDOW, path);
  *out = d >= 0x1p63 ? INT64_MAX : d <= -0x1p63 ? INT64_MIN : (int64_t)d;
  return 0;
}

static int param_penalties(const cJSON *item, const char *path, sieve_params *out,
                           req_penalties *pen, req_error *e) {
  static const char *const names[] = {"frequency_penalty", "presence_penalty", "repetition_penalty",
                                      "penalty_last_n"};
  int named = 0;
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    named |= req_get(item, names[i]) != NULL;
  if (!named)
    return 0;
  sieve_penalties *p = &pen->penalties;
  if (param_number(item, names[0], path, &p->frequency, e) != 0 ||
      param_number(item, names[1], path, &p->presence, e) != 0 ||
      param_number(item, names[2], path, &p->repetition, e) != 0 ||
      param_last_n(item, path, &p->last_n, e) != 0)
    return -1;
  out->penalties = p;
  return 0;
}

/* Left out, top_p is SIEVE_TOP_P_UNSET: off under every rule, even one that rejects an explicit
 * 1; an explicit -DBL_MAX, that value, is carried as another negative, an error alike. */
int req_params(const cJSON *item, const char *path, sieve_params *out, req_penalties *pen,
               req_error *e) {
  static const char *const keys[] = {"temperature", "top_p", "top_k",
                                     REQ_SAMPLING_OPTIONS(REQ_OPTION_NAME) NULL};
  *out = (sieve_params){1.0, SIEVE_TOP_P_UNSET, SIEVE_TOP_K_UNSET, 0.0, NULL};
  pen->penalties = (sieve_penalties)SIEVE_PENALTIES_DEFAULT;
  if (!item)
    return 0;
  if (req_check_keys(item, keys, path, e) != 0)
    return -1;
  if (param_number(item, "temperature", path, &out->temperature, e) != 0 ||
      param_number(item, "top_p", path, &out->top_p, e) != 0 ||
      param_number(item, "min_p", path, &out->min_p, e) != 0)
    return -1;
  if (req_get(item, "top_p") && out->top_p == SIEVE_TOP_P_UNSET)
    out->top_p = -1.0;
  if (param_top_k(item, path, &out->top_k, e) != 0)
    return -1;
  return param_penalties(item, path, out, pen, e);
}

static int token_ids(const cJSON *item, const char *path, const char *field, int64_t **ids,
                     size_t *n, req_error *e) {
  if (!cJSON_IsArray(item))
    return req_fail(e, SIEVE_KIND_REQUEST, field, "%s.%s must be an array of token ids", path,
                    field);
  size_t count = (size_t)cJSON_GetArraySize(item);
  *ids = malloc((count ? count : 1) * sizeof **ids);
  if (!*ids)
    return req_fail(e, SIEVE_KIND_REQUEST, field, "%s.%s: out of memory", path, field);
  size_t i = 0;
  char at[96];
  for (const cJSON *x = item->child; x; x = x->next, i++) {
    snprintf(at, sizeof at, "%s.%s[%zu]", path, field, i);
    if (req_int(x, at, field, &(*ids)[i], e) != 0)
      return -1;
  }
  *n = count;
  return 0;
}

int req_counted(const cJSON *row, const char *path, sieve_params *out, req_penalties *pen,
                req_error *e) {
  const cJSON *output = req_get(row, "output_ids"), *prompt = req_get(row, "prompt_ids");
  sieve_penalties *p = &pen->penalties;
  if (output && token_ids(output, path, "output_ids", &pen->output, &p->n_output, e) != 0)
    return -1;
  if (prompt && token_ids(prompt, path, "prompt_ids", &pen->prompt, &p->n_prompt, e) != 0)
    return -1;
  p->output = pen->output;
  p->prompt = pen->prompt;
  if (output || prompt)
    out->penalties = p;
  return 0;
}

void req_penalties_free(req_penalties *pen) {
  free(pen->output);
  free(pen->prompt);
  pen->output = pen->prompt = NULL;
}

/* Reads a JSON array of numbers (null as -inf with REQ_NULL_MINUS_INF) into doubles. */
static int number_array(const cJSON *item, const char *path, const char *field, const char *kind,
                        int null_rule, double **out, size_t *n, req_error *e) {
  if (!cJSON_IsArray(item))
    return req_fail(e, kind, field, "%s must be an array of numbers", path);
  size_t count = (size_t)cJSON_GetArraySize(item);
  double *values = malloc((count ? count : 1) * sizeof *values);
  if (!values)
    return req_fail(e, SIEVE_KIND_REQUEST, field, "%s: out of memory", path);
  size_t i = 0;
  for (const cJSON *x = item->child; x; x = x->next, i++) {
    if (req_number(x, null_rule, &values[i]) != 0) {
      free(values);
      return req_fail(e, kind, field, "%s[%zu] must be a number%s", path, i,
                      null_rule == REQ_NULL_MINUS_INF ? " or null (-inf)" : "");
    }
  }
  *out = values;
  *n = count;
  return 0;
}

/* A row given as a recipe (recipe.h), the only member of its object. */
static int recipe_logits(const cJSON *item, const char *path, float **out, size_t *vocab,
                         req_error *e) {
  static const char *const keys[] = {"$recipe", NULL};
  char why[200];
  if (req_check_keys(item, keys, path, e) != 0)
    return -1;
  *out = sieve_recipe_logits(sieve_recipe_of(item), vocab, why, sizeof why);
  return *out ? 0 : req_fail(e, SIEVE_KIND_LOGITS, "logits", "%s: %s", path, why);
}

int req_logits(const cJSON *item, const char *path, float **out, size_t *vocab, req_error *e) {
  if (sieve_recipe_of(item))
    return recipe_logits(item, path, out, vocab, e);
  double *values;
  if (number_array(item, path, "logits", SIEVE_KIND_LOGITS, REQ_NULL_MINUS_INF, &values, vocab,
                   e) != 0)
    return -1;
  float *row = malloc((*vocab ? *vocab : 1) * sizeof *row);
  if (!row) {
    free(values);
    return req_fail(e, SIEVE_KIND_REQUEST, "logits", "%s: out of memory", path);
  }
  for (size_t i = 0; i < *vocab; i++) {
    row[i] = (float)values[i];
    if (isinf(row[i]) && !isinf(values[i])) {
      req_fail(e, SIEVE_KIND_LOGITS, "logits", "%s[%zu] = %.17g is outside the float32 range", path,
               i, values[i]);
      free(values);
      free(row);
      return -1;
    }
  }
  free(values);
  *out = row;
  return 0;
}

int req_probs(const cJSON *item, const char *path, double **out, size_t *vocab, req_error *e) {
  return number_array(item, path, "probs", SIEVE_KIND_LOGITS, REQ_NULL_REFUSED, out, vocab, e);
}

int req_engine(const cJSON *item, sieve_engine *out, int64_t **ids, req_error *e) {
  static const char *const keys[] = {"force_topk", "blacklist", NULL};
  *out = (sieve_engine)SIEVE_ENGINE_DEFAULT;
  *ids = NULL;
  if (!item)
    return 0;
  if (req_check_keys(item, keys, "engine", e) != 0)
    return -1;
  const cJSON *force = req_get(item, "force_topk");
  if (force && req_int(force, "engine.force_topk", "force_topk", &out->force_topk, e) != 0)
    return -1;
  const cJSON *list = req_get(item, "blacklist");
  if (list && token_ids(list, "engine", "blacklist", ids, &out->blacklist_len, e) != 0)
    return -1;
  out->blacklist = *ids;
  return 0;
}

int req_case_tag(const cJSON *req, int *sample_case, int *tag, req_error *e) {
  *sample_case = SIEVE_CASE_SAMPLE;
  *tag = SIEVE_TAG_MAIN;
  const cJSON *c = req_get(req, "case");
  int64_t value;
  if (c && req_int(c, "case", "case", &value, e) != 0)
    return -1;
  if (c && (value < SIEVE_CASE_SAMPLE || value > SIEVE_CASE_ACCEPT))
    return req_fail_code(e, SIEVE_ECASE, "case");
  if (c)
    *sample_case = (int)value;
  const cJSON *t = req_get(req, "tag");
  if (!t)
    return 0;
  if (cJSON_IsString(t) && strcmp(t->valuestring, "main") == 0)
    *tag = SIEVE_TAG_MAIN;
  else if (cJSON_IsString(t) && strcmp(t->valuestring, "mtp") == 0)
    *tag = SIEVE_TAG_MTP;
  else
    return req_fail_code(e, SIEVE_ETAG, "tag");
  return 0;
}
