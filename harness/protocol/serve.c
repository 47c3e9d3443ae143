/*
 * `sieve serve`: protocol v1 with the oracle as the implementation.
 * One request per line in, one response per line out, in order; a bad
 * request gets {"error":{...}} and the server goes on. See PROTOCOL.md.
 */
#define _POSIX_C_SOURCE 200809L
#include "serve.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "backend.h"
#include "jbuf.h"
#include "recipe.h"
#include "request.h"

#define SERVER_NAME "sieve-oracle"

typedef struct op_context {
  const cJSON *req;
  jbuf *out;
  req_error *err;
  const char *profile;
  const sieve_impl *impl; /* NULL: the oracle */
  const backend *backend;
} op_context;

typedef int (*op_handler)(op_context *ctx);

static void write_error(jbuf *b, const req_error *e) {
  jbuf_raw(b, "{\"error\":{");
  jbuf_key(b, "kind", 0);
  jbuf_str(b, e->kind);
  jbuf_key(b, "field", 1);
  jbuf_str(b, e->field);
  if (e->code) {
    jbuf_key(b, "code", 1);
    jbuf_str(b, e->code);
  }
  jbuf_key(b, "message", 1);
  jbuf_str(b, e->message);
  jbuf_raw(b, "}}");
}

/* The filter's decisions and, when finite, the margins of the close ones. */
static void write_info(jbuf *b, const sieve_filter_info *info) {
  jbuf_key(b, "kept", 1);
  jbuf_int(b, (int64_t)info->kept);
  jbuf_key(b, "kept_mass", 1);
  jbuf_num(b, info->kept_mass);
  if (info->topp_margin < INFINITY) {
    jbuf_key(b, "topp_margin", 1);
    jbuf_num(b, info->topp_margin);
  }
  if (info->cut_gap < INFINITY) {
    jbuf_key(b, "cut_gap", 1);
    jbuf_num(b, info->cut_gap);
  }
  if (info->minp_margin < INFINITY) {
    jbuf_key(b, "minp_margin", 1);
    jbuf_num(b, info->minp_margin);
  }
}

int sieve_serve_is_extra(const char *key) {
  static const char *const extras[] = {"kept",        "kept_mass",   "topp_margin",  "cut_gap",
                                       "minp_margin", "draw_margin", "margins",      "margin",
                                       "p",           "q",           "residual_mass"};
  for (size_t i = 0; key && i < sizeof extras / sizeof extras[0]; i++)
    if (!strcmp(key, extras[i]))
      return 1;
  return 0;
}

static int check_keys(op_context *ctx, const char *const *allowed) {
  return req_check_keys(ctx->req, allowed, "request", ctx->err);
}

static const cJSON *require_array(op_context *ctx, const char *key) {
  const cJSON *item = req_get(ctx->req, key);
  if (!cJSON_IsArray(item)) {
    req_fail(ctx->err, SIEVE_KIND_REQUEST, key, "request.%s must be an array", key);
    return NULL;
  }
  return item;
}

/* The sampling options hello declares: a library's, or all under DeepInfer's rule and its
 * variants. An engine's profile states its values on the
 * penalty and min-p axes but not yet its limits or what an overflow becomes, so it declares
 * none, and sieve run skips their cases rather than take DeepInfer's answers for the engine's. */
static int op_hello(op_context *ctx) {
  static const char *const keys[] = {"op", "protocol", NULL};
  if (check_keys(ctx, keys) != 0)
    return -1;
  const cJSON *version = req_get(ctx->req, "protocol");
  if (!cJSON_IsNumber(version) || version->valuedouble != SIEVE_PROTOCOL_VERSION)
    return req_fail(ctx->err, SIEVE_KIND_REQUEST, "protocol",
                    "request.protocol must be %d, the version this server speaks",
                    SIEVE_PROTOCOL_VERSION);
  static const char *const all_ops[] = {"hello",  "validate", "filter",    "uniform", "draw",
                                        "sample", "position", "speculate", "bye"};
  jbuf *b = ctx->out;
  jbuf_raw(b, "{\"protocol\":1");
  jbuf_key(b, "name", 1);
  jbuf_str(b, ctx->impl ? ctx->impl->name : SERVER_NAME);
  jbuf_key(b, "version", 1);
  jbuf_str(b, ctx->impl ? ctx->impl->version : SIEVE_VERSION);
  if (!ctx->impl) { /* the oracle computes in float64; a library says nothing of its own */
    jbuf_key(b, "profile", 1);
    jbuf_str(b, ctx->profile);
    jbuf_key(b, "precision", 1);
    jbuf_str(b, "float64");
  }
  if (!ctx->impl && ctx->backend->rule && ctx->backend->rule->draw == SIEVE_DRAW_OWN)
    jbuf_raw(b, ",\"rng\":\"own\"");
  static const char *const options[] = {REQ_SAMPLING_OPTIONS(REQ_OPTION_NAME)};
  const unsigned offered = backend_options(ctx->backend);
  jbuf_key(b, "sampling_options", 1);
  jbuf_raw(b, "[");
  for (int i = 0, first = 1; i < REQ_OPTION_COUNT; i++)
    if (offered & 1u << i) {
      jbuf_raw(b, first ? "" : ",");
      jbuf_str(b, options[i]);
      first = 0;
    }
  jbuf_raw(b, "]");
  jbuf_raw(b, ",\"ops\":[");
  int first = 1;
  for (size_t i = 0; i < sizeof all_ops / sizeof all_ops[0]; i++)
    if (backend_supports(ctx->impl, all_ops[i])) {
      jbuf_raw(b, first ? "" : ",");
      jbuf_str(b, all_ops[i]);
      first = 0;
    }
  jbuf_raw(b, "]}");
  return 0;
}

static int op_validate(op_context *ctx) {
  static const char *const keys[] = {"op", "params", NULL};
  sieve_params p;
  req_penalties pen = {0};
  if (check_keys(ctx, keys) != 0 ||
      req_params(req_get(ctx->req, "params"), "params", &p, &pen, ctx->err) != 0)
    return -1;
  int rc = backend_validate(ctx->backend, &p, &p);
  if (rc != 0)
    return req_fail_code(ctx->err, rc, "params");
  jbuf_raw(ctx->out, "{\"params\":");
  jbuf_params(ctx->out, &p, 0);
  jbuf_raw(ctx->out, "}");
  return 0;
}

static int filter_row(const cJSON *row, const char *path, const sieve_engine *engine,
                      const backend *target, jbuf *b, req_error *e) {
  static const char *const keys[] = {"logits", "params", "output_ids", "prompt_ids", NULL};
  float *logits = NULL;
  req_penalties pen = {0};
  double *logprobs = NULL;
  size_t vocab = 0;
  sieve_params params;
  sieve_filter_info info;
  int has_info = 0;
  char field[64];
  int rc = -1;
  snprintf(field, sizeof field, "%s.logits", path);
  if (req_check_keys(row, keys, path, e) != 0 ||
      req_params(req_get(row, "params"), path, &params, &pen, e) != 0 ||
      req_counted(row, path, &params, &pen, e) != 0 ||
      req_logits(req_get(row, "logits"), field, &logits, &vocab, e) != 0)
    goto fail;
  logprobs = malloc((vocab ? vocab : 1) * sizeof *logprobs);
  for (size_t i = 0; logprobs && i < vocab; i++)
    logprobs[i] = NAN; /* what a library leaves unwritten is answered as "nan", a failure */
  int code =
      logprobs ? backend_filter(target, logits, vocab, &params, engine, logprobs, &info, &has_info)
               : SIEVE_ENOMEM;
  if (code != 0) {
    req_fail_code(e, code, path);
    goto fail;
  }
  jbuf_raw(b, "{\"logprobs\":");
  jbuf_nums(b, logprobs, vocab);
  if (has_info)
    write_info(b, &info);
  jbuf_char(b, '}');
  rc = 0;
fail:
  free(logits);
  free(logprobs);
  req_penalties_free(&pen);
  return rc;
}

/* An error naming the first sampling option `params` names that the implementation or profile
 * does not take (a row's own error in a filter or sample request); 0 when there is none. */
static int refuse_untaken(const op_context *ctx, const cJSON *params, const char *path,
                          req_error *e) {
  const char *missing = req_params_option_missing(params, backend_options(ctx->backend));
  if (!missing)
    return 0;
  if (ctx->impl)
    return req_fail(e, SIEVE_KIND_PARAMS, missing,
                    "%s: %s is not taken by %s: its sampling_options do not list it "
                    "(harness/protocol/sieve_impl.h)",
                    path, missing, ctx->impl->name);
  return req_fail(e, SIEVE_KIND_PARAMS, missing,
                  "%s: %s is not taken by profile %s (sieve profiles lists what each takes: "
                  "the options its engine offers whose every axis its code was read for)",
                  path, missing, ctx->profile);
}

/* Runs `each` over request.rows; a row's error becomes that row's answer. */
static int for_each_row(op_context *ctx, const sieve_engine *engine,
                        int (*each)(const cJSON *, const char *, const sieve_engine *, const void *,
                                    jbuf *, req_error *),
                        const void *extra) {
  const cJSON *rows = require_array(ctx, "rows");
  if (!rows)
    return -1;
  jbuf_raw(ctx->out, "{\"rows\":[");
  size_t i = 0;
  for (const cJSON *row = rows->child; row; row = row->next, i++) {
    char path[48];
    snprintf(path, sizeof path, "rows[%zu]", i);
    if (i)
      jbuf_char(ctx->out, ',');
    req_error row_err;
    if (refuse_untaken(ctx, req_get(row, "params"), path, &row_err) != 0 ||
        each(row, path, engine, extra, ctx->out, &row_err) != 0)
      write_error(ctx->out, &row_err);
  }
  jbuf_raw(ctx->out, "]}");
  return 0;
}

static int filter_each(const cJSON *row, const char *path, const sieve_engine *engine,
                       const void *extra, jbuf *b, req_error *e) {
  return filter_row(row, path, engine, extra, b, e);
}

static int op_filter(op_context *ctx) {
  static const char *const keys[] = {"op", "rows", "engine", NULL};
  sieve_engine engine;
  int64_t *ids = NULL;
  int rc = -1;
  if (check_keys(ctx, keys) == 0 &&
      req_engine(req_get(ctx->req, "engine"), &engine, &ids, ctx->err) == 0)
    rc = for_each_row(ctx, &engine, filter_each, ctx->backend);
  free(ids);
  return rc;
}

static int draw_key(const cJSON *obj, const char *path, int sample_case, int tag,
                    sieve_draw_key *key, req_error *e) {
  char field[64];
  const cJSON *seed = req_get(obj, "seed"), *position = req_get(obj, "position");
  snprintf(field, sizeof field, "%s.seed", path);
  if (req_seed(seed, field, &key->seed, e) != 0)
    return -1;
  snprintf(field, sizeof field, "%s.position", path);
  if (req_u64(position, field, "position", &key->position, e) != 0)
    return -1;
  key->sample_case = sample_case;
  key->tag = tag;
  return 0;
}

static int uniform_item(const backend *target, const cJSON *item, const char *path, double *u,
                        req_error *e) {
  static const char *const keys[] = {"seed", "position", "case", "tag", NULL};
  int sample_case, tag;
  sieve_draw_key key;
  if (req_check_keys(item, keys, path, e) != 0 || req_case_tag(item, &sample_case, &tag, e) != 0 ||
      draw_key(item, path, sample_case, tag, &key, e) != 0)
    return -1;
  int rc = backend_uniform(target, &key, u);
  return rc ? req_fail_code(e, rc, path) : 0;
}

static int op_uniform(op_context *ctx) {
  static const char *const keys[] = {"op", "items", NULL};
  const cJSON *items = check_keys(ctx, keys) == 0 ? require_array(ctx, "items") : NULL;
  if (!items)
    return -1;
  jbuf scratch = {0};
  jbuf_raw(&scratch, "{\"u\":[");
  size_t i = 0;
  for (const cJSON *item = items->child; item; item = item->next, i++) {
    char path[48];
    double u;
    snprintf(path, sizeof path, "items[%zu]", i);
    if (uniform_item(ctx->backend, item, path, &u, ctx->err) != 0) {
      jbuf_free(&scratch);
      return -1;
    }
    if (i)
      jbuf_char(&scratch, ',');
    jbuf_num(&scratch, u);
  }
  jbuf_raw(&scratch, "]}");
  jbuf_raw(ctx->out, scratch.data);
  jbuf_free(&scratch);
  return 0;
}

static int draw_row(const backend *target, const cJSON *row, const char *path, int sample_case,
                    int tag, sieve_sample_result *answer, int *has_extras, req_error *e) {
  static const char *const keys[] = {"probs", "seed", "position", NULL};
  sieve_draw_key key;
  double *probs = NULL;
  size_t vocab;
  char field[64];
  snprintf(field, sizeof field, "%s.probs", path);
  if (req_check_keys(row, keys, path, e) != 0 ||
      draw_key(row, path, sample_case, tag, &key, e) != 0 ||
      req_probs(req_get(row, "probs"), field, &probs, &vocab, e) != 0)
    return -1;
  int rc = backend_draw(target, probs, vocab, &key, answer, has_extras);
  free(probs);
  return rc ? req_fail_code(e, rc, path) : 0;
}

static void write_draws(jbuf *b, const sieve_sample_result *answers, size_t n, int has_extras) {
  jbuf_raw(b, "{\"tokens\":[");
  for (size_t i = 0; i < n; i++) {
    if (i)
      jbuf_char(b, ',');
    jbuf_int(b, answers[i].token);
  }
  jbuf_char(b, ']');
  if (has_extras) {
    jbuf_raw(b, ",\"u\":[");
    for (size_t i = 0; i < n; i++) {
      if (i)
        jbuf_char(b, ',');
      jbuf_num(b, answers[i].u);
    }
    jbuf_raw(b, "],\"margins\":[");
    for (size_t i = 0; i < n; i++) {
      if (i)
        jbuf_char(b, ',');
      jbuf_num(b, answers[i].draw_margin);
    }
    jbuf_char(b, ']');
  }
  jbuf_char(b, '}');
}

static int op_draw(op_context *ctx) {
  static const char *const keys[] = {"op", "rows", "case", "tag", NULL};
  int sample_case, tag;
  const cJSON *rows = NULL;
  if (check_keys(ctx, keys) == 0 && req_case_tag(ctx->req, &sample_case, &tag, ctx->err) == 0)
    rows = require_array(ctx, "rows");
  if (!rows)
    return -1;
  size_t n = (size_t)cJSON_GetArraySize(rows), i = 0;
  sieve_sample_result *answers = calloc(n ? n : 1, sizeof *answers);
  int has_extras = 0;
  if (!answers)
    return req_fail(ctx->err, SIEVE_KIND_REQUEST, "rows", "request.rows: out of memory");
  int rc = 0;
  for (const cJSON *row = rows->child; row && rc == 0; row = row->next, i++) {
    char path[48];
    snprintf(path, sizeof path, "rows[%zu]", i);
    rc = draw_row(ctx->backend, row, path, sample_case, tag, &answers[i], &has_extras, ctx->err);
  }
  if (rc == 0)
    write_draws(ctx->out, answers, n, has_extras);
  free(answers);
  return rc;
}

typedef struct sample_setup {
  int sample_case;
  int tag;
  const backend *target;
} sample_setup;

static void write_sample(jbuf *b, const sieve_sample_result *r, const sieve_top_entry *top,
                         size_t n_top, int has_extras) {
  jbuf_raw(b, "{\"token\":");
  jbuf_int(b, r->token);
  jbuf_key(b, "logprob", 1);
  jbuf_num(b, r->logprob);
  jbuf_raw(b, ",\"top_logprobs\":[");
  for (size_t i = 0; i < n_top; i++) {
    jbuf_raw(b, i ? ",[" : "[");
    jbuf_int(b, top[i].token);
    jbuf_char(b, ',');
    jbuf_num(b, top[i].logprob);
    jbuf_char(b, ']');
  }
  jbuf_char(b, ']');
  if (has_extras) {
    jbuf_key(b, "u", 1);
    jbuf_num(b, r->u);
    jbuf_key(b, "draw_margin", 1);
    jbuf_num(b, r->draw_margin);
    write_info(b, &r->filter);
  }
  jbuf_char(b, '}');
}

static int sample_each(const cJSON *row, const char *path, const sieve_engine *engine,
                       const void *extra, jbuf *b, req_error *e) {
  static const char *const keys[] = {"logits",       "params",     "seed",       "position",
                                     "top_logprobs", "output_ids", "prompt_ids", NULL};
  req_penalties pen = {0};
  const sample_setup *setup = extra;
  float *logits = NULL;
  sieve_top_entry *top = NULL;
  size_t vocab = 0;
  int64_t n_top = 0;
  sieve_params params;
  sieve_draw_key key;
  char field[64], logits_path[64];
  int rc = -1;
  snprintf(field, sizeof field, "%s.top_logprobs", path);
  snprintf(logits_path, sizeof logits_path, "%s.logits", path);
  const cJSON *n_item = req_get(row, "top_logprobs");
  if (req_check_keys(row, keys, path, e) != 0 ||
      req_params(req_get(row, "params"), path, &params, &pen, e) != 0 ||
      req_counted(row, path, &params, &pen, e) != 0 ||
      draw_key(row, path, setup->sample_case, setup->tag, &key, e) != 0 ||
      (n_item && req_int(n_item, field, "top_logprobs", &n_top, e) != 0) ||
      req_logits(req_get(row, "logits"), logits_path, &logits, &vocab, e) != 0)
    goto fail;
  /* A top_logprobs out of range is the request's own field: the parameters and the logits
   * are checked first (the library's order), by a sample without it. */
  int bad_top = n_top < 0 || (uint64_t)n_top > vocab;
  size_t asked = bad_top ? 0 : (size_t)n_top;
  top = malloc((asked ? asked : 1) * sizeof *top);
  for (size_t i = 0; top && i < asked; i++)
    top[i] = (sieve_top_entry){-1, NAN}; /* as logprobs in filter_row */
  sieve_sample_result result = {0};
  int has_extras = 0;
  int code = top ? backend_sample(setup->target, logits, vocab, &params, engine, &key, asked, top,
                                  &result, &has_extras)
                 : SIEVE_ENOMEM;
  if (code == 0 && bad_top) {
    req_fail_code(e, SIEVE_ETOPLOGPROBS, field);
    goto fail;
  }
  if (code != 0) {
    req_fail_code(e, code, path);
    goto fail;
  }
  write_sample(b, &result, top, (size_t)n_top, has_extras);
  rc = 0;
fail:
  free(logits);
  free(top);
  req_penalties_free(&pen);
  return rc;
}

static int op_sample(op_context *ctx) {
  static const char *const keys[] = {"op", "rows", "case", "tag", "engine", NULL};
  sieve_engine engine;
  sample_setup setup = {0, 0, ctx->backend};
  int64_t *ids = NULL;
  int rc = -1;
  if (check_keys(ctx, keys) == 0 &&
      req_case_tag(ctx->req, &setup.sample_case, &setup.tag, ctx->err) == 0 &&
      req_engine(req_get(ctx->req, "engine"), &engine, &ids, ctx->err) == 0)
    rc = for_each_row(ctx, &engine, sample_each, &setup);
  free(ids);
  return rc;
}

static int op_position(op_context *ctx) {
  static const char *const keys[] = {"op", "mode", "seqlen_q", "seqlen_k", "row", NULL};
  if (check_keys(ctx, keys) != 0)
    return -1;
  const cJSON *mode = req_get(ctx->req, "mode"), *row_item = req_get(ctx->req, "row");
  int is_prefill = cJSON_IsString(mode) && strcmp(mode->valuestring, "prefill") == 0;
  int is_decode = cJSON_IsString(mode) && strcmp(mode->valuestring, "decode") == 0;
  if (!is_prefill && !is_decode)
    return req_fail(ctx->err, SIEVE_KIND_REQUEST, "mode",
                    "request.mode must be \"prefill\" or \"decode\"");
  int64_t q, k, row = 0, position;
  if (req_int(req_get(ctx->req, "seqlen_q"), "request.seqlen_q", "seqlen_q", &q, ctx->err) != 0 ||
      req_int(req_get(ctx->req, "seqlen_k"), "request.seqlen_k", "seqlen_k", &k, ctx->err) != 0 ||
      (row_item && req_int(row_item, "request.row", "row", &row, ctx->err) != 0))
    return -1;
  int rc = backend_position(ctx->backend, is_prefill ? SIEVE_PREFILL : SIEVE_DECODE, q, k, row,
                            &position);
  if (rc != 0)
    return req_fail_code(ctx->err, rc, "request");
  jbuf_raw(ctx->out, "{\"position\":");
  jbuf_int(ctx->out, position);
  jbuf_char(ctx->out, '}');
  return 0;
}

/* The oracle's rule, DeepInfer's when the backend names none. */
static const sieve_rule *oracle_rule(const op_context *ctx) {
  static const sieve_rule deepinfer = SIEVE_RULE_DEEPINFER;
  return ctx->backend->rule ? ctx->backend->rule : &deepinfer;
}

/* The draft chain's verification (speculation.c reads and writes it). */
static int op_speculate(op_context *ctx) {
  spec_request r;
  sieve_speculate_step steps[SIEVE_DRAFT_MAX];
  int64_t tokens[SIEVE_DRAFT_MAX + 1];
  sieve_speculate_result result = {0};
  int extras, rc;
  if (req_speculation(ctx->req, &r, ctx->err) != 0)
    return -1;
  if (ctx->impl && r.sample_draft)
    rc = req_fail(ctx->err, SIEVE_KIND_REQUEST, "draft.tokens",
                  "draft.tokens: %s verifies given drafts only (harness/protocol/sieve_impl.h)",
                  ctx->impl->name);
  else if (r.spec.n_draft == 0 || r.spec.n_draft > SIEVE_DRAFT_MAX)
    rc = req_fail_code(ctx->err, SIEVE_EDRAFT, "");
  else {
    for (size_t j = 0; j < SIEVE_DRAFT_MAX; j++) /* what a library leaves unwritten is "nan" */
      steps[j] = (sieve_speculate_step){NAN, NAN, NAN, NAN, NAN, 0};
    for (size_t j = 0; j <= SIEVE_DRAFT_MAX; j++) /* and -1 */
      tokens[j] = -1;
    rc = backend_speculate(ctx->backend, &r, steps, tokens, &result, &extras);
    if (rc != 0)
      spec_fail(ctx->err, &r, ctx->impl ? NULL : oracle_rule(ctx), rc);
    else if (result.n_tokens > r.spec.n_draft + 1 || result.n_steps > r.spec.n_draft ||
             result.accepted > result.n_steps)
      rc = req_fail(ctx->err, SIEVE_KIND_REQUEST, "accepted",
                    "the implementation answered %zu accepted, %zu tests and %zu tokens for %zu "
                    "drafts (harness/protocol/sieve_impl.h)",
                    result.accepted, result.n_steps, result.n_tokens, r.spec.n_draft);
    else
      write_speculation(ctx->out, &r, steps, tokens, &result, extras);
  }
  spec_request_free(&r);
  return rc ? -1 : 0;
}

static const struct {
  const char *name;
  op_handler handler;
} ops[] = {
    {"hello", op_hello},       {"validate", op_validate},   {"filter", op_filter},
    {"uniform", op_uniform},   {"draw", op_draw},           {"sample", op_sample},
    {"position", op_position}, {"speculate", op_speculate},
};

static int dispatch(op_context *ctx) {
  const cJSON *op = req_get(ctx->req, "op");
  if (!cJSON_IsString(op))
    return req_fail(ctx->err, SIEVE_KIND_REQUEST, "op", "request.op must be a string");
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (strcmp(op->valuestring, ops[i].name) == 0) {
      if (!backend_supports(ctx->impl, ops[i].name))
        return req_fail(ctx->err, SIEVE_KIND_OP, "op", "op \"%s\" is not implemented by %s",
                        ops[i].name, ctx->impl->name);
      if (refuse_untaken(ctx, req_get(ctx->req, "params"), "params", ctx->err) != 0 ||
          refuse_untaken(ctx, req_get(req_get(ctx->req, "target"), "params"), "target.params",
                         ctx->err) != 0 ||
          refuse_untaken(ctx, req_get(req_get(ctx->req, "draft"), "params"), "draft.params",
                         ctx->err) != 0)
        return -1;
      return ops[i].handler(ctx);
    }
  return req_fail(ctx->err, SIEVE_KIND_OP, "op", "unsupported op \"%s\"", op->valuestring);
}

static int is_bye(const cJSON *req) {
  const cJSON *op = req_get(req, "op");
  return cJSON_IsString(op) && strcmp(op->valuestring, "bye") == 0;
}

/* Answers one request that is a JSON object into `b`, an error if it is not protocol. */
static void answer_request(const cJSON *req, const char *profile, const backend *target, jbuf *b) {
  req_error err;
  op_context ctx = {req, b, &err, profile, target->impl, target};
  if (sieve_recipe_size(req) > SIEVE_RECIPE_MAX)
    req_fail(&err, SIEVE_KIND_REQUEST, "logits",
             "the recipes of the request describe more than %d logits in all", SIEVE_RECIPE_MAX);
  else if (dispatch(&ctx) == 0)
    return;
  jbuf_reset(b);
  write_error(b, &err);
}

void sieve_serve_request(const cJSON *request, const char *name, const sieve_rule *rule,
                         unsigned options, jbuf *out) {
  backend target = {NULL, rule, options};
  jbuf_reset(out);
  answer_request(request, name, &target, out);
}

/* Answers one line into `b`; returns 1 when the line was a bye. */
static int answer_line(const char *line, size_t len, long lineno, const char *profile,
                       const backend *target, jbuf *b) {
  req_error err;
  const char *end = NULL;
  cJSON *req = NULL;
  int stop = 0;
  if (len > SIEVE_SERVE_MAX_LINE)
    req_fail(&err, SIEVE_KIND_REQUEST, "", "line %ld is %zu bytes, over the limit of %zu", lineno,
             len, SIEVE_SERVE_MAX_LINE);
  else if (!(req = cJSON_ParseWithLengthOpts(line, len, &end, 0)) ||
           strspn(end, " \t\r\n") != len - (size_t)(end - line))
    req_fail(&err, SIEVE_KIND_REQUEST, "", "line %ld is not one JSON value", lineno);
  else if (!cJSON_IsObject(req))
    req_fail(&err, SIEVE_KIND_REQUEST, "", "line %ld is not a JSON object", lineno);
  else if ((stop = is_bye(req)))
    jbuf_raw(b, "{\"bye\":true}");
  else
    answer_request(req, profile, target, b);
  if (b->len == 0) /* nothing answered: the line was not a request */
    write_error(b, &err);
  cJSON_Delete(req);
  return stop;
}

static int is_blank(const char *line, size_t len) { return strspn(line, " \t\r\n") == len; }

static int serve_loop(FILE *in, FILE *out, const char *profile, const backend *target) {
  char *line = NULL;
  size_t cap = 0;
  ssize_t n;
  long lineno = 0;
  int stop = 0, rc = 0;
  jbuf b = {0};
  while (!stop && (n = getline(&line, &cap, in)) >= 0) {
    lineno++;
    if (is_blank(line, (size_t)n))
      continue;
    jbuf_reset(&b);
    stop = answer_line(line, (size_t)n, lineno, profile, target, &b);
    if (b.failed) {
      jbuf_reset(&b);
      jbuf_raw(&b, "{\"error\":{\"kind\":\"invalid_request\",\"field\":\"\","
                   "\"message\":\"out of memory while writing the response\"}}");
    }
    if (fputs(b.data, out) == EOF || fputc('\n', out) == EOF || fflush(out) == EOF) {
      rc = 1;
      break;
    }
  }
  free(line);
  jbuf_free(&b);
  return rc;
}

int sieve_serve(FILE *in, FILE *out, const char *name, const sieve_rule *rule,
                unsigned options) {
  backend target = {NULL, rule, options};
  return serve_loop(in, out, name, &target);
}

int sieve_serve_impl(FILE *in, FILE *out, const sieve_impl *impl) {
  backend target = {impl, NULL, 0u};
  return serve_loop(in, out, "", &target);
}
