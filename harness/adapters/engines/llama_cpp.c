/*
 * A protocol-v1 adapter (harness/protocol/PROTOCOL.md) around llama.cpp's own sampler code, as
 * shipped in the npm package @node-llama-cpp/linux-x64 (`make engines` installs it under
 * build/engines/llama-cpp/). Nothing here samples: the adapter builds llama.cpp's sampler
 * chain, applies it to the row and reads back what the chain left in the candidate array.
 *
 *   llama-cpp-adapter DIR      DIR holds libllama*.so (package/bins/linux-x64); or set
 *                              SIEVE_LLAMA_CPP_DIR. The library is dlopen()ed by absolute
 *                              path; its RUNPATH ($ORIGIN) finds libggml next to it.
 *
 * The chain is the order of llama.cpp's common sampler (common/sampling.cpp,
 * common_sampler_init, and common/common.h's default list): [logit_bias] -> penalties -> top_k
 * -> top_p (min_keep 1) -> min_p (min_keep 1) -> temp, and for `sample` dist last. Parameters
 * go to the engine as they come (top_k and penalty_last_n as int32_t, the others as float);
 * llama.cpp validates none of them, so neither does the adapter.
 *
 * Penalties: llama_sampler_init_penalties(n_vocab, last_n, repeat, freq, present) counts the tokens
 * accepted into the chain. The adapter accepts the row's prompt_ids, then its output_ids, as
 * llama-server does (it replays the prompt into its sampler, then accepts each token drawn),
 * and takes penalty_last_n as llama-server reads a request (tools/server, params_from_json_cmpl):
 * -1, or leaving it out, counts every token accepted (llama-server: n_ctx); below -1 is an error.
 * Ids are passed as llama_token (int32_t); llama.cpp counts one outside the vocabulary and
 * penalizes nothing for it.
 *
 * What the chain leaves: top_k and top_p shrink cur_p.size (and sort cur_p.data, whose order
 * then no longer follows token ids); temp divides the logits in place, or for t <= 0 keeps the
 * first maximum and sets the other logits to -inf (size unchanged); dist sets p and
 * `selected`. The filter answer is the float32 log-softmax (llama_sampler_softmax_impl's
 * arithmetic: expf of logit - max, a float sum) over the candidates still in cur_p at their
 * final logits; tokens outside cur_p, or at -inf, are null.
 *
 * Engine options: a blacklist maps to llama.cpp's logit_bias sampler (bias -INFINITY, first
 * in the chain, as common_sampler_init puts it); llama.cpp has no force_topk, so a request
 * with one gets an invalid_request error on the field "engine".
 *
 * The engine runs in a forked child per request (and per row after a crash), so an abort or
 * a crash inside llama.cpp (an empty row reaches GGML_ASSERT(cur_p->size > 0)) becomes that
 * row's error {"kind":"invalid_request","field":"engine_crash"} and the adapter goes on.
 */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <dlfcn.h>
#include <errno.h>
#include <glob.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the few declarations of llama.h this adapter uses (checked against the library with
 * nm -D and against include/llama.h of llama.cpp) ---- */
typedef int32_t llama_token;
typedef struct llama_token_data {
  llama_token id;
  float logit;
  float p;
} llama_token_data;
typedef struct llama_token_data_array {
  llama_token_data *data;
  size_t size;
  int64_t selected;
  bool sorted;
} llama_token_data_array;
typedef struct llama_sampler_chain_params {
  bool no_perf;
} llama_sampler_chain_params;
typedef struct llama_logit_bias {
  llama_token token;
  float bias;
} llama_logit_bias;
struct llama_sampler;

static struct {
  llama_sampler_chain_params (*chain_default_params)(void);
  struct llama_sampler *(*chain_init)(llama_sampler_chain_params params);
  void (*chain_add)(struct llama_sampler *chain, struct llama_sampler *smpl);
  struct llama_sampler *(*init_logit_bias)(int32_t n_vocab, int32_t n_logit_bias,
                                           const llama_logit_bias *logit_bias);
  struct llama_sampler *(*init_top_k)(int32_t k);
  struct llama_sampler *(*init_top_p)(float p, size_t min_keep);
  struct llama_sampler *(*init_temp)(float t);
  /* The library's form at 5b4ebc5 (common_sampler_init in libllama-common.so passes the
   * vocabulary size first): later llama.h drops n_vocab. */
  struct llama_sampler *(*init_penalties)(int32_t n_vocab, int32_t penalty_last_n,
                                          float penalty_repeat, float penalty_freq,
                                          float penalty_present);
  struct llama_sampler *(*init_min_p)(float p, size_t min_keep);
  void (*accept)(struct llama_sampler *smpl, llama_token token);
  struct llama_sampler *(*init_dist)(uint32_t seed);
  void (*apply)(struct llama_sampler *smpl, llama_token_data_array *cur_p);
  void (*free)(struct llama_sampler *smpl);
} L;

#define LLAMA_DEFAULT_SEED 0xFFFFFFFFu

static char version[512] = "unknown";

/* ---- output buffer ---- */
typedef struct buf {
  char *d;
  size_t n, cap;
} buf;

static void b_put(buf *b, const char *s, size_t n) {
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->n + n + 1)
      cap *= 2;
    char *d = realloc(b->d, cap);
    if (!d) {
      fputs("llama-cpp-adapter: out of memory\n", stderr);
      _exit(3);
    }
    b->d = d;
    b->cap = cap;
  }
  memcpy(b->d + b->n, s, n);
  b->n += n;
  b->d[b->n] = '\0';
}

static void b_str(buf *b, const char *s) { b_put(b, s, strlen(s)); }

static void b_fmt(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void b_fmt(buf *b, const char *fmt, ...) {
  char tmp[128];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0)
    return;
  if ((size_t)n < sizeof tmp) {
    b_put(b, tmp, (size_t)n);
    return;
  }
  char *big = malloc((size_t)n + 1);
  if (!big)
    return;
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b_put(b, big, (size_t)n);
  free(big);
}

/* A number of protocol v1: -inf is null, NaN and +inf are strings. */
static void b_num(buf *b, double x) {
  if (isnan(x))
    b_str(b, "\"nan\"");
  else if (isinf(x))
    b_str(b, x > 0 ? "\"inf\"" : "null");
  else
    b_fmt(b, "%.17g", x);
}

static void b_jstr(buf *b, const char *s) {
  b_put(b, "\"", 1);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
      char esc[2] = {'\\', (char)c};
      b_put(b, esc, 2);
    } else if (c < 0x20) {
      b_fmt(b, "\\u%04x", c);
    } else {
      b_put(b, s, 1);
    }
  }
  b_put(b, "\"", 1);
}

/* ---- errors ---- */
typedef struct err {
  const char *kind;
  char field[64];
  char msg[512];
} err;

static int fail(err *e, const char *kind, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail(err *e, const char *kind, const char *field, const char *fmt, ...) {
  e->kind = kind;
  snprintf(e->field, sizeof e->field, "%s", field);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  va_end(ap);
  return -1;
}

static void b_error(buf *b, const err *e) {
  b_str(b, "{\"error\":{\"kind\":");
  b_jstr(b, e->kind);
  b_str(b, ",\"field\":");
  b_jstr(b, e->field);
  b_str(b, ",\"message\":");
  b_jstr(b, e->msg);
  b_str(b, "}}");
}

/* ---- request reading (protocol v1 "Values") ---- */

/* Unknown or duplicate keys are invalid_request errors naming the key. */
static int check_keys(const cJSON *obj, const char *const *keys, const char *path, err *e) {
  for (const cJSON *c = obj->child; c; c = c->next) {
    const char *k = c->string ? c->string : "";
    bool known = false;
    for (size_t i = 0; keys[i]; i++)
      known = known || strcmp(keys[i], k) == 0;
    if (!known)
      return fail(e, "invalid_request", k, "%s: unknown key \"%.60s\"", path, k);
    for (const cJSON *d = c->next; d; d = d->next)
      if (d->string && strcmp(d->string, k) == 0)
        return fail(e, "invalid_request", k, "%s: duplicate key \"%.60s\"", path, k);
  }
  return 0;
}

static const cJSON *get(const cJSON *obj, const char *key) {
  return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* A number, or one of the strings "nan", "inf", "-inf". */
static int number(const cJSON *item, double *out) {
  if (cJSON_IsNumber(item)) {
    *out = item->valuedouble;
    return 0;
  }
  if (!cJSON_IsString(item))
    return -1;
  if (strcmp(item->valuestring, "nan") == 0)
    *out = NAN;
  else if (strcmp(item->valuestring, "inf") == 0)
    *out = INFINITY;
  else if (strcmp(item->valuestring, "-inf") == 0)
    *out = -INFINITY;
  else
    return -1;
  return 0;
}

static int decimal_u64(const char *s, uint64_t *out) {
  if (!*s || strlen(s) > 20)
    return -1;
  uint64_t v = 0;
  for (; *s; s++) {
    if (*s < '0' || *s > '9')
      return -1;
    unsigned d = (unsigned)(*s - '0');
    if (v > (UINT64_MAX - d) / 10)
      return -1;
    v = v * 10 + d;
  }
  *out = v;
  return 0;
}

/* A JSON integer up to 2^53 or a decimal string up to 2^64-1. */
static int u64_value(const cJSON *item, uint64_t *out) {
  if (cJSON_IsString(item))
    return decimal_u64(item->valuestring, out);
  if (!cJSON_IsNumber(item))
    return -1;
  double d = item->valuedouble;
  if (!(d >= 0 && d <= 9007199254740992.0) || d != floor(d))
    return -1;
  *out = (uint64_t)d;
  return 0;
}

/* An integer that a C caller can pass as int32_t; anything else cannot reach the engine. */
static int int32_value(const cJSON *item, int32_t *out) {
  double d;
  if (number(item, &d) != 0 || !(d >= -2147483648.0 && d <= 2147483647.0) || d != floor(d))
    return -1;
  *out = (int32_t)d;
  return 0;
}

/* The token ids a row's penalties count (prompt_ids or output_ids). */
typedef struct ids {
  llama_token *id;
  size_t n;
} ids;

typedef struct row {
  float *logits;
  size_t vocab;
  float temperature, top_p, min_p;
  float repeat, freq, present; /* llama_sampler_init_penalties' floats */
  int32_t top_k, last_n;
  ids prompt, output;
  uint64_t seed, position;
  int has_top;
  size_t n_top; /* top_logprobs n, 0 when not asked */
  int ok;
  err e;
  char *answer; /* the row's JSON, once computed */
} row;

typedef struct engine_opts {
  llama_logit_bias *bias;
  size_t n_bias;
} engine_opts;

/* A float parameter of the chain, when present; 0, or -1 with the error set. */
static int float_param(const cJSON *params, const char *name, const char *path, float *out,
                       err *e) {
  const cJSON *x = get(params, name);
  double d;
  if (!x)
    return 0;
  if (number(x, &d) != 0)
    return fail(e, "invalid_params", name, "%s.%s must be a number", path, name);
  *out = (float)d;
  return 0;
}

/* min_p and the penalties, as llama.cpp's samplers take them. */
static int read_sampling_options(const cJSON *params, const char *path, row *r, err *e) {
  if (float_param(params, "min_p", path, &r->min_p, e) != 0 ||
      float_param(params, "repetition_penalty", path, &r->repeat, e) != 0 ||
      float_param(params, "frequency_penalty", path, &r->freq, e) != 0 ||
      float_param(params, "presence_penalty", path, &r->present, e) != 0)
    return -1;
  const cJSON *n = get(params, "penalty_last_n");
  if (n && int32_value(n, &r->last_n) != 0)
    return fail(e, "invalid_request", "penalty_last_n",
                "%s.penalty_last_n is not an int32_t: llama_sampler_init_penalties cannot be "
                "given it",
                path);
  if (r->last_n < -1)
    return fail(e, "invalid_params", "penalty_last_n",
                "%s.penalty_last_n must be >= -1 (llama-server's check)", path);
  return 0;
}

static int read_params(const cJSON *params, const char *path, row *r, err *e) {
  r->temperature = 1.0f;
  r->top_p = 1.0f;
  r->top_k = -1;
  r->repeat = 1.0f;
  r->last_n = -1;
  if (!params)
    return 0;
  static const char *const keys[] = {"temperature",
                                     "top_p",
                                     "top_k",
                                     "min_p",
                                     "frequency_penalty",
                                     "presence_penalty",
                                     "repetition_penalty",
                                     "penalty_last_n",
                                     NULL};
  if (!cJSON_IsObject(params))
    return fail(e, "invalid_request", "params", "%s.params must be an object", path);
  char where[48];
  snprintf(where, sizeof where, "%s.params", path);
  if (check_keys(params, keys, where, e) != 0)
    return -1;
  const cJSON *t = get(params, "temperature"), *p = get(params, "top_p"), *k = get(params, "top_k");
  double d;
  if (t) {
    if (number(t, &d) != 0)
      return fail(e, "invalid_params", "temperature", "%s.temperature must be a number", path);
    r->temperature = (float)d; /* llama_sampler_init_temp(float) */
  }
  if (p) {
    if (number(p, &d) != 0)
      return fail(e, "invalid_params", "top_p", "%s.top_p must be a number", path);
    r->top_p = (float)d; /* llama_sampler_init_top_p(float, size_t) */
  }
  if (k && int32_value(k, &r->top_k) != 0)
    return fail(e, "invalid_request", "top_k",
                "%s.top_k is not an int32_t: llama_sampler_init_top_k(int32_t k) cannot be "
                "given it (a type boundary of this adapter, not a check of llama.cpp's)",
                path);
  return read_sampling_options(params, path, r, e);
}

/* A row's prompt_ids or output_ids, as llama_token values. */
static int read_ids(const cJSON *item, const char *path, const char *name, ids *out, err *e) {
  if (!item)
    return 0;
  if (!cJSON_IsArray(item))
    return fail(e, "invalid_request", name, "%s.%s must be an array of token ids", path, name);
  out->n = (size_t)cJSON_GetArraySize(item);
  out->id = malloc((out->n ? out->n : 1) * sizeof *out->id);
  if (!out->id)
    return fail(e, "invalid_request", name, "%s.%s: out of memory", path, name);
  size_t i = 0;
  for (const cJSON *x = item->child; x; x = x->next, i++)
    if (int32_value(x, &out->id[i]) != 0)
      return fail(e, "invalid_request", name,
                  "%s.%s[%zu] is not a llama_token (int32_t): llama_sampler_accept cannot be "
                  "given it",
                  path, name, i);
  return 0;
}

static int read_logits(const cJSON *item, const char *path, row *r, err *e) {
  if (!cJSON_IsArray(item))
    return fail(e, "invalid_logits", "logits", "%s.logits must be an array of numbers", path);
  size_t n = (size_t)cJSON_GetArraySize(item);
  r->logits = malloc((n ? n : 1) * sizeof *r->logits);
  if (!r->logits)
    return fail(e, "invalid_request", "logits", "%s.logits: out of memory", path);
  size_t i = 0;
  for (const cJSON *x = item->child; x; x = x->next, i++) {
    double d;
    if (cJSON_IsNull(x))
      d = -INFINITY;
    else if (number(x, &d) != 0)
      return fail(e, "invalid_logits", "logits", "%s.logits[%zu] must be a number or null", path,
                  i);
    r->logits[i] = (float)d;
    if (isinf(r->logits[i]) && !isinf(d)) /* protocol v1: logits are float32 on input */
      return fail(e, "invalid_logits", "logits",
                  "%s.logits[%zu] = %.17g is outside the float32 range", path, i, d);
  }
  r->vocab = n;
  return 0;
}

static int read_row(const cJSON *item, const char *path, int sample, row *r) {
  static const char *const filter_keys[] = {"logits", "params", "prompt_ids", "output_ids", NULL};
  static const char *const sample_keys[] = {"logits",       "params",     "seed",       "position",
                                            "top_logprobs", "prompt_ids", "output_ids", NULL};
  err *e = &r->e;
  if (!cJSON_IsObject(item))
    return fail(e, "invalid_request", "rows", "%s must be an object", path);
  if (check_keys(item, sample ? sample_keys : filter_keys, path, e) != 0 ||
      read_params(get(item, "params"), path, r, e) != 0 ||
      read_ids(get(item, "prompt_ids"), path, "prompt_ids", &r->prompt, e) != 0 ||
      read_ids(get(item, "output_ids"), path, "output_ids", &r->output, e) != 0)
    return -1;
  if (sample) {
    const cJSON *seed = get(item, "seed"), *pos = get(item, "position"),
                *top = get(item, "top_logprobs");
    if (!cJSON_IsString(seed) || decimal_u64(seed->valuestring, &r->seed) != 0)
      return fail(e, "invalid_request", "seed",
                  "%s.seed must be a decimal string in [0, 18446744073709551615]", path);
    if (u64_value(pos, &r->position) != 0)
      return fail(e, "invalid_request", "position",
                  "%s.position must be an integer in [0, 2^64-1] (a number up to 2^53, or a "
                  "decimal string)",
                  path);
    if (top) {
      uint64_t n;
      if (u64_value(top, &n) != 0)
        return fail(e, "invalid_request", "top_logprobs",
                    "%s.top_logprobs must be a non-negative integer", path);
      r->has_top = 1;
      r->n_top = (size_t)n;
    }
  }
  if (read_logits(get(item, "logits"), path, r, e) != 0)
    return -1;
  if (r->has_top && r->n_top > r->vocab)
    return fail(e, "invalid_request", "top_logprobs",
                "%s.top_logprobs = %zu exceeds the vocabulary (%zu)", path, r->n_top, r->vocab);
  r->ok = 1;
  return 0;
}

/* ---- the engine ---- */

static uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/* The dist sampler's 32-bit seed from the request's 64-bit seed and position.
 * LLAMA_DEFAULT_SEED (0xFFFFFFFF) would make llama.cpp seed from the clock, so it is moved. */
static uint32_t dist_seed(uint64_t seed, uint64_t position) {
  uint32_t s = (uint32_t)(splitmix64(seed ^ splitmix64(position)) >> 32);
  return s == LLAMA_DEFAULT_SEED ? LLAMA_DEFAULT_SEED - 1 : s;
}

typedef struct ranked {
  float lp;
  llama_token id;
} ranked;

static int by_logprob(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  /* best first; NaN after everything; ties by token id */
  int xn = isnan(x->lp), yn = isnan(y->lp);
  if (xn != yn)
    return xn - yn;
  if (!xn && x->lp != y->lp)
    return x->lp > y->lp ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

/* The penalties sampler, with the prompt's tokens and then the output's accepted into it. Only
 * it keeps what is accepted: the others of the chain come after it. */
static void add_penalties(struct llama_sampler *chain, const row *r, size_t vocab) {
  const size_t seen = r->prompt.n + r->output.n;
  const int32_t last_n =
      r->last_n == -1 ? (int32_t)(seen < INT32_MAX ? seen : INT32_MAX) : r->last_n;
  struct llama_sampler *pen =
      L.init_penalties((int32_t)vocab, last_n, r->repeat, r->freq, r->present);
  for (size_t i = 0; i < r->prompt.n; i++)
    L.accept(pen, r->prompt.id[i]);
  for (size_t i = 0; i < r->output.n; i++)
    L.accept(pen, r->output.id[i]);
  L.chain_add(chain, pen);
}

/* Runs llama.cpp's chain on one row and writes the row's answer. */
static void run_row(const row *r, const engine_opts *eo, int sample, buf *out) {
  size_t V = r->vocab;
  llama_token_data *cand = malloc((V ? V : 1) * sizeof *cand);
  float *lp = malloc((V ? V : 1) * sizeof *lp);
  if (!cand || !lp) {
    fputs("llama-cpp-adapter: out of memory\n", stderr);
    _exit(3);
  }
  for (size_t i = 0; i < V; i++) {
    cand[i] = (llama_token_data){(llama_token)i, r->logits[i], 0.0f};
    lp[i] = -INFINITY;
  }
  llama_token_data_array cur = {cand, V, -1, false};

  struct llama_sampler *chain = L.chain_init(L.chain_default_params());
  if (eo->n_bias)
    L.chain_add(chain, L.init_logit_bias((int32_t)V, (int32_t)eo->n_bias, eo->bias));
  add_penalties(chain, r, V);
  L.chain_add(chain, L.init_top_k(r->top_k));
  L.chain_add(chain, L.init_top_p(r->top_p, 1));
  L.chain_add(chain, L.init_min_p(r->min_p, 1));
  L.chain_add(chain, L.init_temp(r->temperature));
  if (sample)
    L.chain_add(chain, L.init_dist(dist_seed(r->seed, r->position)));
  L.apply(chain, &cur);
  L.free(chain);

  /* cur.data may point elsewhere now (llama.h: "this pointer can be modified by the
   * samplers"); the candidates left are cur.data[0 .. cur.size). */
  if (cur.size > 0) {
    float max_l = cur.data[0].logit;
    for (size_t i = 1; i < cur.size; i++)
      max_l = fmaxf(max_l, cur.data[i].logit);
    float sum = 0.0f;
    for (size_t i = 0; i < cur.size; i++)
      sum += expf(cur.data[i].logit - max_l);
    float log_sum = logf(sum);
    for (size_t i = 0; i < cur.size; i++) {
      llama_token id = cur.data[i].id;
      if (id >= 0 && (size_t)id < V)
        lp[id] = cur.data[i].logit - max_l - log_sum;
    }
  }

  if (!sample) {
    b_str(out, "{\"logprobs\":[");
    for (size_t i = 0; i < V; i++) {
      if (i)
        b_put(out, ",", 1);
      b_num(out, lp[i]);
    }
    b_str(out, "]}");
  } else if (cur.selected < 0 || (uint64_t)cur.selected >= cur.size) {
    err e;
    fail(&e, "invalid_request", "engine_crash",
         "llama.cpp's dist sampler selected index %lld of %zu candidates; "
         "llama_sampler_sample would abort here (GGML_ASSERT(cur_p.selected >= 0 && "
         "cur_p.selected < cur_p.size))",
         (long long)cur.selected, cur.size);
    b_error(out, &e);
  } else {
    llama_token tok = cur.data[cur.selected].id;
    b_fmt(out, "{\"token\":%d,\"logprob\":", (int)tok);
    b_num(out, tok >= 0 && (size_t)tok < V ? lp[tok] : NAN);
    /* top_logprobs: the n best of the row the filter answers (best first, ties by token id);
     * the protocol's answer has the list always, empty when n is 0 or not asked */
    b_str(out, ",\"top_logprobs\":[");
    if (r->n_top > 0) {
      ranked *order = malloc((V ? V : 1) * sizeof *order);
      if (!order)
        _exit(3);
      for (size_t i = 0; i < V; i++)
        order[i] = (ranked){lp[i], (llama_token)i};
      qsort(order, V, sizeof *order, by_logprob);
      for (size_t i = 0; i < r->n_top; i++) {
        b_fmt(out, "%s[%d,", i ? "," : "", (int)order[i].id);
        b_num(out, order[i].lp);
        b_put(out, "]", 1);
      }
      free(order);
    }
    b_str(out, "]}");
  }
  free(cand);
  free(lp);
}

/* ---- crash isolation: the engine runs in a forked child ---- */

typedef struct job {
  row *rows;
  size_t n_rows;
  const engine_opts *eo;
  int sample;
} job;

/* Runs rows[first .. first+count) in a child; 0 and each ok row's answer set, or -1 with the
 * child's fate in `why`. */
static int run_isolated(job *j, size_t first, size_t count, char *why, size_t why_len) {
  int fds[2];
  if (pipe(fds) != 0) {
    snprintf(why, why_len, "pipe: %s", strerror(errno));
    return -1;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    snprintf(why, why_len, "fork: %s", strerror(errno));
    return -1;
  }
  if (pid == 0) {
    close(fds[0]);
    buf out = {0};
    for (size_t i = first; i < first + count; i++) {
      if (!j->rows[i].ok)
        continue;
      out.n = 0;
      run_row(&j->rows[i], j->eo, j->sample, &out);
      b_put(&out, "\n", 1);
      for (size_t at = 0; at < out.n;) {
        ssize_t w = write(fds[1], out.d + at, out.n - at);
        if (w < 0 && errno == EINTR)
          continue;
        if (w <= 0)
          _exit(4);
        at += (size_t)w;
      }
    }
    _exit(0);
  }
  close(fds[1]);
  buf in = {0};
  char chunk[65536];
  for (;;) {
    ssize_t n = read(fds[0], chunk, sizeof chunk);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    b_put(&in, chunk, (size_t)n);
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    if (WIFSIGNALED(status))
      snprintf(why, why_len, "llama.cpp crashed: the engine process was killed by signal %d (%s)",
               WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
      snprintf(why, why_len, "the engine process exited with status %d", WEXITSTATUS(status));
    free(in.d);
    return -1;
  }
  char *line = in.d;
  for (size_t i = first; i < first + count; i++) {
    if (!j->rows[i].ok)
      continue;
    char *nl = line ? strchr(line, '\n') : NULL;
    if (!nl) {
      snprintf(why, why_len, "the engine process gave fewer answers than rows");
      free(in.d);
      return -1;
    }
    *nl = '\0';
    j->rows[i].answer = strdup(line);
    line = nl + 1;
  }
  free(in.d);
  return 0;
}

static void run_rows(job *j) {
  char why[300];
  if (run_isolated(j, 0, j->n_rows, why, sizeof why) == 0)
    return;
  for (size_t i = 0; i < j->n_rows; i++) {
    free(j->rows[i].answer);
    j->rows[i].answer = NULL;
  }
  /* One row at a time, so that only the rows that crash the engine get an error. */
  for (size_t i = 0; i < j->n_rows; i++) {
    if (!j->rows[i].ok || run_isolated(j, i, 1, why, sizeof why) == 0)
      continue;
    err e;
    fail(&e, "invalid_request", "engine_crash", "rows[%zu]: %s (its stderr has the reason)", i,
         why);
    buf b = {0};
    b_error(&b, &e);
    j->rows[i].answer = b.d;
  }
}

/* ---- ops ---- */

static int read_engine(const cJSON *item, engine_opts *eo, err *e) {
  static const char *const keys[] = {"force_topk", "blacklist", NULL};
  if (!item)
    return 0;
  if (!cJSON_IsObject(item))
    return fail(e, "invalid_request", "engine", "engine must be an object");
  if (check_keys(item, keys, "engine", e) != 0)
    return -1;
  if (get(item, "force_topk"))
    return fail(e, "invalid_request", "engine",
                "llama.cpp has no force_topk option (its sampler chain has no top-k of the raw "
                "logits ahead of the samplers); only a blacklist maps onto llama.cpp, as a "
                "logit_bias of -inf");
  const cJSON *bl = get(item, "blacklist");
  if (!bl)
    return 0;
  if (!cJSON_IsArray(bl))
    return fail(e, "invalid_request", "blacklist", "engine.blacklist must be an array");
  size_t n = (size_t)cJSON_GetArraySize(bl), i = 0;
  eo->bias = malloc((n ? n : 1) * sizeof *eo->bias);
  if (!eo->bias)
    return fail(e, "invalid_request", "blacklist", "out of memory");
  for (const cJSON *x = bl->child; x; x = x->next, i++) {
    int32_t id;
    if (!cJSON_IsNumber(x) || int32_value(x, &id) != 0)
      return fail(e, "invalid_request", "blacklist",
                  "engine.blacklist[%zu] is not a llama_token (int32_t)", i);
    eo->bias[i] = (llama_logit_bias){id, -INFINITY};
  }
  eo->n_bias = n;
  return 0;
}

static void op_rows(const cJSON *req, int sample, buf *out) {
  static const char *const filter_keys[] = {"op", "rows", "engine", NULL};
  static const char *const sample_keys[] = {"op", "rows", "case", "tag", "engine", NULL};
  err e;
  engine_opts eo = {0};
  if (check_keys(req, sample ? sample_keys : filter_keys, "request", &e) != 0) {
    b_error(out, &e);
    return;
  }
  const cJSON *rows = get(req, "rows");
  if (!cJSON_IsArray(rows)) {
    fail(&e, "invalid_request", "rows", "rows must be an array");
    b_error(out, &e);
    return;
  }
  if (sample) {
    const cJSON *c = get(req, "case"), *t = get(req, "tag");
    uint64_t sc = 0;
    if (c && (u64_value(c, &sc) != 0 || sc > 2)) {
      fail(&e, "invalid_request", "case", "case must be 0, 1 or 2");
      b_error(out, &e);
      return;
    }
    if (sc != 0) {
      fail(&e, "invalid_request", "case",
           "llama.cpp's dist sampler has one draw; it has no resample-after-rejection (case 1) "
           "or accept-test (case 2) draw");
      b_error(out, &e);
      return;
    }
    if (t && (!cJSON_IsString(t) ||
              (strcmp(t->valuestring, "main") != 0 && strcmp(t->valuestring, "mtp") != 0))) {
      fail(&e, "invalid_request", "tag", "tag must be \"main\" or \"mtp\"");
      b_error(out, &e);
      return;
    }
  }
  size_t n = (size_t)cJSON_GetArraySize(rows), i = 0;
  row *r = calloc(n ? n : 1, sizeof *r);
  if (!r) {
    fail(&e, "invalid_request", "rows", "out of memory");
    b_error(out, &e);
    return;
  }
  err engine_err;
  int engine_bad = read_engine(get(req, "engine"), &eo, &engine_err) != 0;
  for (const cJSON *x = rows->child; x; x = x->next, i++) {
    char path[32];
    snprintf(path, sizeof path, "rows[%zu]", i);
    if (engine_bad) {
      r[i].e = engine_err;
      continue;
    }
    read_row(x, path, sample, &r[i]);
  }
  job j = {r, n, &eo, sample};
  run_rows(&j);
  b_str(out, "{\"rows\":[");
  for (i = 0; i < n; i++) {
    if (i)
      b_put(out, ",", 1);
    if (r[i].ok && r[i].answer)
      b_str(out, r[i].answer);
    else
      b_error(out, &r[i].e);
    free(r[i].logits);
    free(r[i].answer);
    free(r[i].prompt.id);
    free(r[i].output.id);
  }
  b_str(out, "]}");
  free(r);
  free(eo.bias);
}

static void answer_line(const char *line, size_t len, buf *out, int *bye) {
  err e;
  cJSON *req = cJSON_ParseWithLength(line, len);
  if (!req || !cJSON_IsObject(req)) {
    fail(&e, "invalid_request", "", "the line is not a JSON object");
    b_error(out, &e);
    cJSON_Delete(req);
    return;
  }
  const cJSON *op = get(req, "op");
  const char *name = cJSON_IsString(op) ? op->valuestring : NULL;
  if (!name) {
    fail(&e, "invalid_request", "op", "op must be a string");
    b_error(out, &e);
  } else if (strcmp(name, "hello") == 0) {
    static const char *const keys[] = {"op", "protocol", NULL};
    if (check_keys(req, keys, "request", &e) != 0) {
      b_error(out, &e);
    } else {
      b_str(out, "{\"protocol\":1,\"name\":\"llama.cpp\",\"version\":");
      b_jstr(out, version);
      b_str(out, ",\"ops\":[\"filter\",\"sample\"],\"engine_options\":[\"blacklist\"],"
                 "\"sampling_options\":[\"min_p\",\"frequency_penalty\",\"presence_penalty\","
                 "\"repetition_penalty\",\"penalty_last_n\"],"
                 "\"precision\":\"float32\",\"rng\":\"own\"}");
    }
  } else if (strcmp(name, "filter") == 0) {
    op_rows(req, 0, out);
  } else if (strcmp(name, "sample") == 0) {
    op_rows(req, 1, out);
  } else if (strcmp(name, "bye") == 0) {
    b_str(out, "{\"bye\":true}");
    *bye = 1;
  } else {
    fail(&e, "unsupported_op", "op", "llama.cpp adapter: no op %.60s", name);
    b_error(out, &e);
  }
  cJSON_Delete(req);
}

/* ---- loading the library ---- */

static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  buf b = {0};
  char chunk[4096];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
    b_put(&b, chunk, n);
  fclose(f);
  return b.d;
}

/* "3.21.1 (llama.cpp v0.4.0, commit 5b4ebc5)": the npm package's version, the llama.cpp
 * release node-llama-cpp recorded in its build metadata, and the commit libllama-common.so
 * was built from. */
static void find_version(const char *dir) {
  char path[8192], release[64] = "", commit[64] = "", pkg[64] = "";
  snprintf(path, sizeof path, "%s/../../package.json", dir);
  char *text = read_file(path);
  cJSON *j = text ? cJSON_Parse(text) : NULL;
  const cJSON *v = get(j, "version");
  if (cJSON_IsString(v))
    snprintf(pkg, sizeof pkg, "%s", v->valuestring);
  cJSON_Delete(j);
  free(text);
  snprintf(path, sizeof path, "%s/_nlcBuildMetadata.json", dir);
  text = read_file(path);
  j = text ? cJSON_Parse(text) : NULL;
  const cJSON *lc = get(get(j, "buildOptions"), "llamaCpp");
  const cJSON *rel = get(lc, "release");
  if (cJSON_IsString(rel))
    snprintf(release, sizeof release, "%s", rel->valuestring);
  cJSON_Delete(j);
  free(text);
  snprintf(path, sizeof path, "%s/libllama-common.so", dir);
  void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
  if (h) {
    const char *const *c = dlsym(h, "LLAMA_COMMIT");
    if (c && *c)
      snprintf(commit, sizeof commit, "%s", *c);
  }
  snprintf(version, sizeof version, "@node-llama-cpp/linux-x64 %s (llama.cpp %s, commit %s)",
           pkg[0] ? pkg : "?", release[0] ? release : "?", commit[0] ? commit : "?");
}

static void *sym(void *h, const char *name) {
  void *p = dlsym(h, name);
  if (!p) {
    fprintf(stderr, "llama-cpp-adapter: libllama has no symbol %s\n", name);
    exit(2);
  }
  return p;
}

#define BIND(field, name)                                                                          \
  do {                                                                                             \
    void *p_ = sym(h, name);                                                                       \
    memcpy(&L.field, &p_, sizeof L.field);                                                         \
  } while (0)

static void load(const char *dir) {
  char pattern[8192], lib[8192] = "";
  const char *const names[] = {"libllama.so", "libllama.v*.so", "libllama.so.*", NULL};
  for (size_t i = 0; names[i] && !lib[0]; i++) {
    glob_t g;
    snprintf(pattern, sizeof pattern, "%s/%s", dir, names[i]);
    if (glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc > 0)
      snprintf(lib, sizeof lib, "%s", g.gl_pathv[0]);
    globfree(&g);
  }
  if (!lib[0]) {
    fprintf(stderr, "llama-cpp-adapter: no libllama*.so in %s (run `make engines`)\n", dir);
    exit(2);
  }
  void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "llama-cpp-adapter: %s\n", dlerror());
    exit(2);
  }
  BIND(chain_default_params, "llama_sampler_chain_default_params");
  BIND(chain_init, "llama_sampler_chain_init");
  BIND(chain_add, "llama_sampler_chain_add");
  BIND(init_logit_bias, "llama_sampler_init_logit_bias");
  BIND(init_top_k, "llama_sampler_init_top_k");
  BIND(init_top_p, "llama_sampler_init_top_p");
  BIND(init_temp, "llama_sampler_init_temp");
  BIND(init_penalties, "llama_sampler_init_penalties");
  BIND(init_min_p, "llama_sampler_init_min_p");
  BIND(accept, "llama_sampler_accept");
  BIND(init_dist, "llama_sampler_init_dist");
  BIND(apply, "llama_sampler_apply");
  BIND(free, "llama_sampler_free");
  find_version(dir);
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : getenv("SIEVE_LLAMA_CPP_DIR");
  if (!dir || !*dir) {
    fprintf(stderr, "usage: %s DIR  (DIR holds libllama*.so; or set SIEVE_LLAMA_CPP_DIR)\n",
            argv[0]);
    return 2;
  }
  char absdir[4096];
  if (!realpath(dir, absdir)) {
    fprintf(stderr, "llama-cpp-adapter: %s: %s\n", dir, strerror(errno));
    return 2;
  }
  /* An abort inside ggml would otherwise attach gdb to print a backtrace (ggml_print_backtrace);
   * the GGML_ASSERT message itself still goes to stderr. */
  setenv("GGML_NO_BACKTRACE", "1", 0);
  load(absdir);
  signal(SIGPIPE, SIG_IGN);
  char *line = NULL;
  size_t cap = 0;
  ssize_t len;
  buf out = {0};
  int bye = 0;
  while (!bye && (len = getline(&line, &cap, stdin)) >= 0) {
    size_t n = (size_t)len;
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
      n--;
    size_t k = 0;
    while (k < n && (line[k] == ' ' || line[k] == '\t'))
      k++;
    if (k == n)
      continue; /* blank lines are skipped */
    out.n = 0;
    answer_line(line, n, &out, &bye);
    b_put(&out, "\n", 1);
    if (fwrite(out.d, 1, out.n, stdout) != out.n || fflush(stdout) != 0)
      break;
  }
  free(line);
  free(out.d);
  return 0;
}
