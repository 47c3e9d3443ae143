/*
 * The rows of `sieve fuzz` (rows.h; README.md, "Rows"). A family draws the logits; the
 * parameters are then drawn near the decisions those logits make: a top_p at (or one step
 * beside) the mass before a rank, a top_k at a tie run or at the vocabulary's size, a
 * temperature anywhere in the accepted range and at its edges.
 */
#define _POSIX_C_SOURCE 200809L
#include "rows.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sieve.h"

static const char *const family_names[] = {
#define FUZZ__FAMILY_NAME(id, name, what) name,
    FUZZ_FAMILIES(FUZZ__FAMILY_NAME)
#undef FUZZ__FAMILY_NAME
};
static const char *const family_whats[] = {
#define FUZZ__FAMILY_WHAT(id, name, what) what,
    FUZZ_FAMILIES(FUZZ__FAMILY_WHAT)
#undef FUZZ__FAMILY_WHAT
};

const char *fuzz_family_name(int f) {
  return f >= 0 && f < FUZZ_FAMILY_COUNT ? family_names[f] : "?";
}
const char *fuzz_family_what(int f) {
  return f >= 0 && f < FUZZ_FAMILY_COUNT ? family_whats[f] : "?";
}

int fuzz_family_parse(const char *name) {
  for (int f = 0; f < FUZZ_FAMILY_COUNT; f++)
    if (strcmp(family_names[f], name) == 0)
      return f;
  return -1;
}

const size_t fuzz_default_vocabs[] = {1,    2,    3,    5,    8,     17,    31,     32,     33,
                                      64,   100,  127,  128,  129,   255,   256,    257,    1000,
                                      1023, 1024, 1025, 4095, 32000, 50257, 128256, 151936, 262144};
const size_t fuzz_default_n_vocabs = sizeof fuzz_default_vocabs / sizeof fuzz_default_vocabs[0];

uint64_t fuzz_next(fuzz_rng *r) {
  r->state += 0x9E3779B97F4A7C15ull;
  return sieve_mix64(r->state);
}

uint64_t fuzz_below(fuzz_rng *r, uint64_t n) { return n ? fuzz_next(r) % n : 0; }

double fuzz_unit(fuzz_rng *r) { return (double)(fuzz_next(r) >> 11) * 0x1p-53; }

static double normal(fuzz_rng *r) {
  const double u = fuzz_unit(r) + 0x1p-54, v = fuzz_unit(r);
  return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* x rounded to `bits` significant bits, as bfloat16 (8) and float16 (11) keep them. */
static float round_bits(double x, int bits, double max) {
  if (x == 0.0)
    return 0.0f;
  int e;
  const double m = frexp(x, &e);
  const double y = ldexp(nearbyint(ldexp(m, bits)), e - bits);
  return (float)(fabs(y) > max ? copysign(max, y) : y);
}

/* ----------------------------------------------------------------------------- families */

static void peaked(fuzz_rng *r, float *x, size_t v) {
  const double sigma = 0.5 + 3.5 * fuzz_unit(r);
  for (size_t i = 0; i < v; i++)
    x[i] = (float)(sigma * normal(r));
  for (uint64_t k = 1 + fuzz_below(r, 8); k > 0; k--)
    x[fuzz_below(r, v)] += (float)(5.0 + 25.0 * fuzz_unit(r));
}

static void levels(fuzz_rng *r, float *x, size_t v) {
  float level[8];
  const uint64_t n = 2 + fuzz_below(r, 7);
  for (uint64_t l = 0; l < n; l++)
    level[l] = (float)(nearbyint(160.0 * fuzz_unit(r) - 80.0) / 8.0);
  for (size_t i = 0; i < v; i++)
    x[i] = level[fuzz_below(r, 1 + fuzz_below(r, n))];
}

static void quantized(fuzz_rng *r, float *x, size_t v, int bits, double max) {
  const double sigma = 1.0 + 3.0 * fuzz_unit(r);
  for (size_t i = 0; i < v; i++)
    x[i] = round_bits(sigma * normal(r), bits, max);
}

static void holes(fuzz_rng *r, float *x, size_t v) {
  peaked(r, x, v);
  const double q = 0.5 + 0.49 * fuzz_unit(r);
  const size_t keep = (size_t)fuzz_below(r, v);
  for (size_t i = 0; i < v; i++)
    if (i != keep && fuzz_unit(r) < q)
      x[i] = -INFINITY;
}

/* n tokens (at most v) at random places take the values of `group` in turn (g of them, near
 * `top`), over a tail masked or at least `gap` below `top`. */
static void over_far_tail(fuzz_rng *r, float *x, size_t v, size_t n, const float *group, size_t g,
                          double top, double gap) {
  n = n > v ? v : n;
  const int masked = (int)fuzz_below(r, 2);
  for (size_t i = 0; i < v; i++)
    x[i] = masked ? -INFINITY : (float)(top - gap - 100.0 * fuzz_unit(r));
  for (size_t k = 0; k < n; k++) {
    size_t i = (size_t)fuzz_below(r, v);
    while (x[i] > top - gap / 2)
      i = (i + 1) % v;
    x[i] = group[k % g];
  }
}

/* 2^k equal logits; the rest so far below that even their float64 probabilities are 0, or
 * masked, so the masses before the first 2^k ranks are exact multiples of 2^-k. */
static void dyadic(fuzz_rng *r, float *x, size_t v) {
  const float c = (float)nearbyint(40.0 * fuzz_unit(r) - 20.0);
  over_far_tail(r, x, v, (size_t)1 << fuzz_below(r, 7), &c, 1, c, 800.0);
}

/* Float32 values beside x0 that x * inv (float32) maps where x0 * inv goes, those that the
 * float32 division by t keeps apart first; how many into *n (at most 8). */
static void collisions(float x0, float inv, float t, float *out, size_t *n) {
  const float at = x0 * inv;
  float y = x0;
  *n = 0;
  for (int k = 0; k < 8; k++)
    y = nextafterf(y, -INFINITY);
  for (int k = 0; k < 17 && *n < 8; k++, y = nextafterf(y, INFINITY))
    if (y * inv == at)
      out[(*n)++] = y;
  for (size_t k = 1; k < *n; k++)
    if (out[k] / t != out[0] / t) {
      const float first = out[1];
      out[1] = out[k], out[k] = first;
      return;
    }
  *n = *n ? 1 : 0; /* no two that the division keeps apart */
}

/* 2^k logits (2 to 8) that differ as written but tie once multiplied by the float32 1/T, at a
 * T above 1 (the temperature in *t), over a tail far enough below that its float64
 * probabilities are 0: an exact tie and exact top-p boundaries that dividing by T would not
 * make. */
static void collide(fuzz_rng *r, float *x, size_t v, double *t) {
  static const double ts[] = {1.1, 1.25, 1.5, 2.5, 3.0, 7.0};
  float group[8];
  size_t g = 0;
  *t = ts[fuzz_below(r, sizeof ts / sizeof ts[0])];
  const float inv = (float)(1.0 / *t), x0 = (float)(8.0 * normal(r));
  collisions(x0, inv, (float)*t, group, &g);
  if (g == 0)
    group[g++] = x0;
  over_far_tail(r, x, v, (size_t)2 << fuzz_below(r, 3), group, g, x0, 8000.0);
}

/* Gaps of 80 to 400 below the largest: float32 probabilities underflow to 0 and tie, float64
 * ones do not (the row of issue 24: 0, -200, -300, -250). */
static void underflow(fuzz_rng *r, float *x, size_t v) {
  for (size_t i = 0; i < v; i++)
    x[i] = (float)-(80.0 + 320.0 * fuzz_unit(r));
  x[fuzz_below(r, v)] = 0.0f;
}

static void extremes(fuzz_rng *r, float *x, size_t v) {
  static const float kinds[] = {1e-40f, -1e-40f, 1e-45f, 0.0f, -0.0f, 3e38f, -3e38f, 1e30f, -1e30f};
  peaked(r, x, v);
  for (size_t i = 0; i < v; i++)
    if (fuzz_below(r, 4) == 0) {
      /* Scaled up to twice, but kept finite: a +inf logit would make the row an error. */
      const double y = kinds[fuzz_below(r, sizeof kinds / sizeof kinds[0])] * (1.0 + fuzz_unit(r));
      x[i] = (float)(fabs(y) > FLT_MAX ? copysign(FLT_MAX, y) : y);
    }
}

/* The row's logits; a family that needs its own temperature sets *t (else it stays 0). */
static void draw_logits(fuzz_rng *r, int family, float *x, size_t v, double *t) {
  *t = 0.0;
  switch (family) {
  case FUZZ_FAMILY_COLLIDE:
    collide(r, x, v, t);
    break;
  case FUZZ_FAMILY_PEAKED:
    peaked(r, x, v);
    break;
  case FUZZ_FAMILY_LEVELS:
    levels(r, x, v);
    break;
  case FUZZ_FAMILY_BF16:
    quantized(r, x, v, 8, 3e38);
    break;
  case FUZZ_FAMILY_FP16:
    quantized(r, x, v, 11, 65504.0);
    break;
  case FUZZ_FAMILY_HOLES:
    holes(r, x, v);
    break;
  case FUZZ_FAMILY_DYADIC:
    dyadic(r, x, v);
    *t = ldexp(1.0, -(int)fuzz_below(r, 3)); /* its tail's probabilities stay 0 at T <= 1 */
    break;
  case FUZZ_FAMILY_UNDERFLOW:
    underflow(r, x, v);
    break;
  default:
    extremes(r, x, v);
    break;
  }
}

/* ----------------------------------------------------------------------------- parameters */

static double draw_temperature(fuzz_rng *r) {
  static const double edges[] = {
      0.0, 1e-5, 1e-5 * (1 - 0x1p-20), 1e-5 * (1 + 0x1p-20), 1e-6, 0.25, 0.5, 2.0, 1e4};
  const uint64_t k = fuzz_below(r, 10);
  if (k < 4)
    return 1.0;
  if (k < 7)
    return exp(log(0.05) + fuzz_unit(r) * log(100.0)); /* 0.05 to 5 */
  if (k < 9)
    return edges[fuzz_below(r, sizeof edges / sizeof edges[0])];
  return exp(fuzz_unit(r) * log(1e4)); /* 1 to 1e4 */
}

int fuzz_by_rank(const void *a, const void *b) {
  const fuzz_ranked *x = a, *y = b;
  return x->p != y->p ? (x->p < y->p ? 1 : -1) : (x->id > y->id) - (x->id < y->id);
}

/* The float64 probabilities of the row scaled as DeepInfer scales it, in rank order; the count
 * of finite tokens in *n. NULL when out of memory. */
static fuzz_ranked *rank_row(const float *x, size_t v, double t, size_t *n) {
  fuzz_ranked *out = malloc(v * sizeof *out);
  if (!out)
    return NULL;
  const float inv_t = (float)(1.0 / (t < 1e-5 ? 1e-5 : t));
  double m = -INFINITY, sum = 0.0;
  *n = 0;
  for (size_t i = 0; i < v; i++) {
    const float s = x[i] * inv_t;
    if (isfinite(s))
      out[(*n)++] = (fuzz_ranked){s, 0.0, i}, m = s > m ? s : m;
  }
  for (size_t k = 0; k < *n; k++)
    sum += out[k].p = exp(out[k].p - m);
  for (size_t k = 0; k < *n; k++)
    out[k].p /= sum;
  qsort(out, *n, sizeof *out, fuzz_by_rank);
  return out;
}

/* A top_p at the float64 mass before a rank, or a step beside it, or anywhere. */
static double draw_top_p(fuzz_rng *r, const fuzz_ranked *rk, size_t n) {
  const uint64_t k = fuzz_below(r, 10);
  if (k < 3 || n < 2)
    return 0.01 + 0.99 * fuzz_unit(r);
  const size_t rank = 1 + (size_t)fuzz_below(r, n - 1);
  double before = 0.0;
  for (size_t i = 0; i < rank; i++)
    before += rk[i].p;
  if (before <= 0.0 || before >= 1.0)
    return 0.5;
  if (k < 6)
    return before;
  if (k < 8)
    return nextafter(before, k & 1 ? 2.0 : 0.0);
  return before * (1.0 + (k & 1 ? 1e-6 : -1e-6));
}

/* A top_k at a tie run (the rank whose token ties with the next), the vocabulary's size, or
 * anywhere. */
static int64_t draw_top_k(fuzz_rng *r, const fuzz_ranked *rk, size_t n, size_t v) {
  const uint64_t k = fuzz_below(r, 10);
  if (k < 3) {
    const size_t from = (size_t)fuzz_below(r, n ? n : 1);
    for (size_t i = from; i + 1 < n; i++)
      if (rk[i].p == rk[i + 1].p)
        return (int64_t)i + 1;
  }
  if (k < 6) {
    const int64_t near = (int64_t)v - 1 + (int64_t)fuzz_below(r, 3);
    return near > 0 ? near : 1;
  }
  return 1 + (int64_t)fuzz_below(r, v < 64 ? v : 64);
}

/* A parameter the rule rejects, now and then: the errors are checked too. */
static void draw_invalid(fuzz_rng *r, cJSON *params) {
  switch (fuzz_below(r, 4)) {
  case 0:
    cJSON_ReplaceItemInObject(params, "temperature", cJSON_CreateNumber(-0.5));
    break;
  case 1:
    cJSON_ReplaceItemInObject(params, "top_p", cJSON_CreateNumber(0.0));
    break;
  case 2:
    cJSON_ReplaceItemInObject(params, "top_k", cJSON_CreateNumber(0.0));
    break;
  default:
    cJSON_ReplaceItemInObject(params, "top_p", cJSON_CreateNumber(1.5));
    break;
  }
}

/* The parameters; the temperature is the family's own `t` when it has one. */
static cJSON *draw_params(fuzz_rng *r, double family_t, const float *x, size_t v) {
  cJSON *params = cJSON_CreateObject();
  const double t = family_t > 0.0 ? family_t : draw_temperature(r);
  size_t n = 0;
  fuzz_ranked *rk = rank_row(x, v, t, &n);
  if (!params || !rk)
    goto fail;
  cJSON_AddNumberToObject(params, "temperature", t);
  cJSON_AddNumberToObject(params, "top_p", fuzz_below(r, 20) < 13 ? draw_top_p(r, rk, n) : 1.0);
  cJSON_AddNumberToObject(params, "top_k",
                          fuzz_below(r, 10) < 6 ? (double)draw_top_k(r, rk, n, v) : -1.0);
  if (fuzz_below(r, 40) == 0)
    draw_invalid(r, params);
  free(rk);
  return params;
fail:
  free(rk);
  cJSON_Delete(params);
  return NULL;
}

/* Parameters at DeepInfer's defaults are left out, as the fixtures leave them: an engine may
 * reject an explicit top_k -1 or top_p 1 (top_k_minus_one, explicit_top_p_one). */
static void drop_defaults(cJSON *params) {
  static const struct {
    const char *name;
    double value;
  } defaults[] = {{"temperature", 1.0}, {"top_p", 1.0}, {"top_k", -1.0}};
  for (size_t i = 0; i < 3; i++) {
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(params, defaults[i].name);
    if (p && p->valuedouble == defaults[i].value)
      cJSON_DeleteItemFromObjectCaseSensitive(params, defaults[i].name);
  }
}

static cJSON *logits_array(const float *x, size_t v) {
  cJSON *a = cJSON_CreateArray();
  for (size_t i = 0; a && i < v; i++) {
    cJSON *n = isinf(x[i]) && x[i] < 0 ? cJSON_CreateNull() : cJSON_CreateNumber((double)x[i]);
    if (!n || !cJSON_AddItemToArray(a, n)) {
      cJSON_Delete(n);
      cJSON_Delete(a);
      return NULL;
    }
  }
  return a;
}

static int draw_family(fuzz_rng *r, uint32_t families) {
  int f;
  do
    f = (int)fuzz_below(r, FUZZ_FAMILY_COUNT);
  while (!(families >> f & 1));
  return f;
}

cJSON *fuzz_row(fuzz_rng *r, const fuzz_space *space, size_t vocab, int *family) {
  float *x = malloc(vocab * sizeof *x);
  cJSON *row = cJSON_CreateObject(), *params = NULL, *logits = NULL;
  if (!x || !row)
    goto fail;
  double t;
  *family = draw_family(r, space->families);
  draw_logits(r, *family, x, vocab, &t);
  if (!(params = draw_params(r, t, x, vocab)) || !(logits = logits_array(x, vocab)))
    goto fail;
  drop_defaults(params);
  if (!cJSON_AddItemToObject(row, "logits", logits))
    goto fail;
  logits = NULL;
  if (!cJSON_AddItemToObject(row, "params", params))
    goto fail;
  free(x);
  return row;
fail:
  cJSON_Delete(params);
  cJSON_Delete(logits);
  cJSON_Delete(row);
  free(x);
  return NULL;
}

size_t fuzz_vocab(fuzz_rng *r, const fuzz_space *space, size_t max) {
  for (int tries = 0; tries < 16; tries++) {
    const size_t v = space->vocabs[fuzz_below(r, space->n_vocabs)];
    if (v <= max)
      return v;
  }
  size_t smallest = space->vocabs[0];
  for (size_t i = 1; i < space->n_vocabs; i++)
    smallest = space->vocabs[i] < smallest ? space->vocabs[i] : smallest;
  return smallest;
}

/* force_topk, a blacklist, or both (their order matters where a blacklisted token is among
 * the N largest). */
cJSON *fuzz_engine(fuzz_rng *r, const fuzz_space *space, size_t vocab) {
  cJSON *engine = cJSON_CreateObject();
  if (!engine || !space->engine_options || fuzz_below(r, 8) != 0)
    return engine;
  const uint64_t which = 1 + fuzz_below(r, 3); /* bit 0: force_topk, bit 1: blacklist */
  if (which & 1)
    cJSON_AddNumberToObject(engine, "force_topk", (double)(1 + fuzz_below(r, vocab + 1)));
  cJSON *list = which & 2 ? cJSON_AddArrayToObject(engine, "blacklist") : NULL;
  for (uint64_t k = list ? 1 + fuzz_below(r, 4) : 0; k > 0; k--)
    cJSON_AddItemToArray(list, cJSON_CreateNumber((double)fuzz_below(r, vocab)));
  return engine;
}
