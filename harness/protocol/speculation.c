/* The `speculate` op's request and answer; see speculation.h and PROTOCOL.md. */
#include "speculation.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* `rows`: an array of logits rows of one length, copied into one buffer. `want` is the row
 * count the request's other fields call for (SIZE_MAX: any count but 0). */
static int read_rows(const cJSON *rows, const char *path, size_t want, float **out, size_t *n,
                     size_t *vocab, req_error *e) {
  if (!cJSON_IsArray(rows) || (want == SIZE_MAX && cJSON_GetArraySize(rows) == 0))
    return req_fail(e, SIEVE_KIND_REQUEST, path, "%s must be a non-empty array of rows", path);
  *n = (size_t)cJSON_GetArraySize(rows);
  if (want != SIZE_MAX && *n != want)
    return req_fail(e, SIEVE_KIND_REQUEST, path, "%s must have %zu row%s, not %zu", path, want,
                    want == 1 ? "" : "s", *n);
  size_t i = 0;
  for (const cJSON *row = rows->child; row; row = row->next, i++) {
    char field[64];
    float *logits = NULL;
    size_t v = 0;
    snprintf(field, sizeof field, "%s[%zu]", path, i);
    if (req_logits(row, field, &logits, &v, e) != 0)
      return -1;
    if (i == 0) {
      *vocab = v;
      *out = malloc((v ? v : 1) * *n * sizeof **out);
    }
    int fits = *out && v == *vocab;
    if (fits)
      memcpy(*out + i * v, logits, v * sizeof *logits);
    free(logits);
    if (!fits)
      return *out ? req_fail(e, SIEVE_KIND_REQUEST, field, "%s has %zu logits, the first row %zu",
                             field, v, *vocab)
                  : req_fail_code(e, SIEVE_ENOMEM, path);
  }
  return 0;
}

static int read_tokens(const cJSON *tokens, spec_request *r, req_error *e) {
  if (!cJSON_IsArray(tokens))
    return req_fail(e, SIEVE_KIND_REQUEST, "draft.tokens", "draft.tokens must be an array");
  size_t n = (size_t)cJSON_GetArraySize(tokens), i = 0;
  r->tokens = malloc((n ? n : 1) * sizeof *r->tokens);
  if (!r->tokens)
    return req_fail_code(e, SIEVE_ENOMEM, "draft.tokens");
  for (const cJSON *t = tokens->child; t; t = t->next, i++) {
    char field[64];
    snprintf(field, sizeof field, "draft.tokens[%zu]", i);
    if (req_int(t, field, "draft.tokens", &r->tokens[i], e) != 0)
      return -1;
  }
  r->spec.n_draft = n;
  return 0;
}

/* draft: {"tokens":[...], "rows":[...], "params":{...}}, tokens or rows or both. */
static int read_draft(const cJSON *draft, spec_request *r, req_error *e) {
  static const char *const keys[] = {"tokens", "rows", "params", NULL};
  const cJSON *tokens = req_get(draft, "tokens"), *rows = req_get(draft, "rows");
  size_t n = 0, v = 0;
  if (!cJSON_IsObject(draft))
    return req_fail(e, SIEVE_KIND_REQUEST, "draft", "draft must be an object");
  if (req_check_keys(draft, keys, "draft", e) != 0 ||
      req_params(req_get(draft, "params"), "draft.params", &r->spec.draft_params,
                 &r->draft_penalties, e) != 0)
    return -1;
  if (!tokens && !rows)
    return req_fail(e, SIEVE_KIND_REQUEST, "draft", "draft needs tokens, rows, or both");
  if (tokens && read_tokens(tokens, r, e) != 0)
    return -1;
  if (rows &&
      read_rows(rows, "draft.rows", tokens ? r->spec.n_draft : SIZE_MAX, &r->draft, &n, &v, e) != 0)
    return -1;
  r->sample_draft = tokens == NULL;
  if (!tokens) {
    r->spec.n_draft = n;
    r->tokens = malloc((n ? n : 1) * sizeof *r->tokens);
    if (!r->tokens)
      return req_fail_code(e, SIEVE_ENOMEM, "draft.tokens");
  }
  r->spec.vocab = v;
  return 0;
}

static int read_target(const cJSON *target, spec_request *r, req_error *e) {
  static const char *const keys[] = {"rows", "params", NULL};
  size_t n, v;
  if (!cJSON_IsObject(target))
    return req_fail(e, SIEVE_KIND_REQUEST, "target", "target must be an object");
  if (req_check_keys(target, keys, "target", e) != 0 ||
      req_params(req_get(target, "params"), "target.params", &r->spec.target_params,
                 &r->target_penalties, e) != 0 ||
      read_rows(req_get(target, "rows"), "target.rows", r->spec.n_draft + 1, &r->target, &n, &v,
                e) != 0)
    return -1;
  if (r->draft && v != r->spec.vocab)
    return req_fail(e, SIEVE_KIND_REQUEST, "target.rows",
                    "target.rows have %zu logits, draft.rows %zu", v, r->spec.vocab);
  r->spec.vocab = v;
  return 0;
}

int req_speculation(const cJSON *req, spec_request *out, req_error *e) {
  static const char *const keys[] = {"op", "seed", "position", "target", "draft", "engine", NULL};
  memset(out, 0, sizeof *out);
  if (req_check_keys(req, keys, "request", e) != 0 ||
      req_seed(req_get(req, "seed"), "seed", &out->spec.seed, e) != 0 ||
      req_u64(req_get(req, "position"), "position", "position", &out->spec.position, e) != 0 ||
      read_draft(req_get(req, "draft"), out, e) != 0 ||
      read_target(req_get(req, "target"), out, e) != 0 ||
      req_engine(req_get(req, "engine"), &out->engine, &out->ids, e) != 0) {
    spec_request_free(out);
    return -1;
  }
  out->spec.target_logits = out->target;
  out->spec.draft_logits = out->draft;
  out->spec.draft_tokens = out->tokens;
  return 0;
}

void spec_request_free(spec_request *r) {
  free(r->target);
  free(r->draft);
  free(r->tokens);
  free(r->ids);
  memset(r, 0, sizeof *r);
}

/* The first part of the request the oracle's checks reject with `code`, in their order. */
static void part_at_fault(const spec_request *r, const sieve_rule *rule, int code, char *out,
                          size_t len) {
  const sieve_speculation *s = &r->spec;
  sieve_params checked;
  double *scratch = malloc((s->vocab ? s->vocab : 1) * sizeof *scratch);
  *out = '\0';
  if (sieve_params_check_rule(rule, &s->target_params, &checked) == code)
    snprintf(out, len, "target.params");
  else if (s->draft_logits && sieve_params_check_rule(rule, &s->draft_params, &checked) == code)
    snprintf(out, len, "draft.params");
  for (size_t j = 0; scratch && !*out && j <= s->n_draft; j++)
    if (sieve_filter_rule(rule, s->target_logits + j * s->vocab, s->vocab, &s->target_params,
                          &r->engine, scratch, NULL) == code)
      snprintf(out, len, "target.rows[%zu]", j);
  for (size_t j = 0; scratch && !*out && s->draft_logits && j < s->n_draft; j++)
    if (sieve_filter_rule(rule, s->draft_logits + j * s->vocab, s->vocab, &s->draft_params,
                          &r->engine, scratch, NULL) == code)
      snprintf(out, len, "draft.rows[%zu]", j);
  free(scratch);
}

int spec_fail(req_error *e, const spec_request *r, const sieve_rule *rule, int code) {
  char part[64] = "";
  if (rule && code != SIEVE_EDRAFTTOKEN && code != SIEVE_EDRAFT && code != SIEVE_ENOMEM)
    part_at_fault(r, rule, code, part, sizeof part);
  return req_fail_code(e, code, part);
}

static void write_tokens(jbuf *b, const char *key, const int64_t *tokens, size_t n) {
  jbuf_key(b, key, 1);
  jbuf_char(b, '[');
  for (size_t i = 0; i < n; i++) {
    if (i)
      jbuf_char(b, ',');
    jbuf_int(b, tokens[i]);
  }
  jbuf_char(b, ']');
}

static void write_step(jbuf *b, const sieve_speculate_step *s, int extras) {
  jbuf_raw(b, "{\"accepted\":");
  jbuf_raw(b, s->accepted ? "true" : "false");
  jbuf_key(b, "u", 1);
  jbuf_num(b, s->u);
  jbuf_key(b, "ratio", 1);
  jbuf_num(b, s->ratio);
  if (extras) {
    jbuf_key(b, "p", 1);
    jbuf_num(b, s->p);
    jbuf_key(b, "q", 1);
    jbuf_num(b, s->q);
    jbuf_key(b, "margin", 1);
    jbuf_num(b, s->margin);
  }
  jbuf_char(b, '}');
}

void write_speculation(jbuf *b, const spec_request *r, const sieve_speculate_step *steps,
                       const int64_t *tokens, const sieve_speculate_result *result, int extras) {
  size_t n_steps = result->n_steps;
  jbuf_raw(b, "{\"accepted\":");
  jbuf_int(b, (int64_t)result->accepted);
  write_tokens(b, "tokens", tokens, result->n_tokens);
  jbuf_key(b, "bonus", 1);
  jbuf_raw(b, result->bonus ? "true" : "false");
  jbuf_raw(b, ",\"steps\":[");
  for (size_t j = 0; j < n_steps; j++) {
    if (j)
      jbuf_char(b, ',');
    write_step(b, &steps[j], extras);
  }
  jbuf_char(b, ']');
  if (r->sample_draft)
    write_tokens(b, "draft_tokens", r->tokens, r->spec.n_draft);
  if (extras) {
    jbuf_key(b, "u", 1);
    jbuf_num(b, result->u);
    jbuf_key(b, "draw_margin", 1);
    jbuf_num(b, result->draw_margin);
    if (!result->bonus) {
      jbuf_key(b, "residual_mass", 1);
      jbuf_num(b, result->residual_mass);
    }
  }
  jbuf_char(b, '}');
}
