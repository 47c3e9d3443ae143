/*
 * The fit (fit.h; harness/run/README.md, "The fit"). A case agrees with a rule when the
 * implementation's answer is the answer the oracle gives under that rule: judged by the fixture
 * itself where the rule answers as DeepInfer does, by the fixture's recorded reading where the
 * rule departs on one axis the answer read, and otherwise by the case's own matchers with the
 * rule's values put in (tolerances, precision and error fields as the fixture states them). The
 * oracle records the axes an answer read (sieve_rule.consulted), so an answer is computed once
 * for every rule that agrees on those axes. The search climbs one axis value at a time from
 * DeepInfer's rule and from the profile the failures point at, adds the misreadings a port's
 * own bugs need, then climbs two axes at a time where one alone gains nothing.
 */
#define _POSIX_C_SOURCE 200809L
#include "fit.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture.h"
#include "protocol/jbuf.h"
#include "protocol/recipe.h"
#include "protocol/request.h"
#include "protocol/serve.h"
#include "runner.h"
#include "suites.h"

/* The readings tried as misreadings in a round: those most failures give. */
#define FIT_CANDIDATES 4
/* A case whose recipes describe this many logits or more is a large one. */
#define FIT_LARGE_ROWS 4096

typedef struct memo_entry {
  uint32_t consulted;
  int values[SIEVE_AXIS_COUNT];
  signed char agrees;
  signed char as_spec;  /* the rule answers this case as DeepInfer does */
  signed char close;    /* ... or within the fixture's bounds of it: 1, 0, or -1 not yet known */
  signed char is_error; /* the answer is an error, or has a row that is */
  uint64_t answer;      /* a hash of the answer's text, to tell answers apart */
} memo_entry;

typedef struct fit_case {
  case_result *result;
  cJSON *request;  /* recipes kept: the oracle reads them */
  cJSON *have;     /* the implementation's answer, parsed when first needed */
  char *spec;      /* the oracle's answer under DeepInfer's rule */
  int large;       /* rows of many logits (recipes): weighed only once the search is near */
  int unchecked;   /* DeepInfer rejects its logits and the implementation answers (unweighed) */
  int refused;     /* an invalid_request error the rule does not give: not posed (unweighed) */
  char *readings;  /* ",a,b,": the readings whose recorded answer the first pass matched */
  char *separates; /* ",a,b,": those its answer rules out (recorded with another answer) */
  char *rules;     /* ",axis=value,": the axis values among the readings */
  int hit;         /* one of them is among the fit's misreadings */
  memo_entry *memo;
  size_t n_memo, cap_memo;
} fit_case;

typedef struct fitter {
  fit_case *cases;
  size_t n;
  int precision;
  jbuf buf;
  uint32_t searched;                              /* the axes the search may change */
  int all;                                        /* weigh the cases of large rows too */
  char misreadings[FIT_MISREADINGS_MAX * 48 + 2]; /* ",a,b,": readings the fit adds */
  char *axis_readings; /* ",a,b,": the readings that are axis values (the search covers them) */
  char contradicted[FIT_MISREADINGS_MAX * 48 + 2]; /* ",a,b,": misreadings the residual */
} fitter;                                          /* tells apart (mark_contradicted) */

/* ",a,b," from "a,b", for lookups of ",name,". */
static char *listed(const char *names) {
  size_t n = strlen(names);
  char *out = malloc(n + 3);
  if (out)
    snprintf(out, n + 3, ",%s,", names);
  return out;
}

/* A string into a buffer of `len`, cut to fit. */
static void copy_text(char *out, size_t len, const char *text) {
  size_t n = strlen(text);
  n = n < len ? n : len - 1;
  memcpy(out, text, n);
  out[n] = '\0';
}

static int in_list(const char *list, const char *name) {
  char key[80];
  snprintf(key, sizeof key, ",%.64s,", name);
  return strstr(list, key) != NULL;
}

/* ----------------------------------------------------------------------------- agreement */

static cJSON *substitute(const cJSON *t, const cJSON *r);

/* A matcher with the rule's value in place of the fixture's, its tolerances kept. */
static cJSON *matcher_with(const cJSON *t, const char *key, const cJSON *r) {
  cJSON *m = cJSON_CreateObject();
  cJSON_AddItemToObject(m, key, cJSON_Duplicate(r, 1));
  const cJSON *tol = cJSON_GetObjectItemCaseSensitive(t, "$sparse");
  tol = tol ? tol : t;
  for (const cJSON *f = tol->child; f; f = f->next)
    if (!strcmp(f->string, "abs") || !strcmp(f->string, "rel") || !strcmp(f->string, "f32_abs") ||
        !strcmp(f->string, "p_abs") || !strcmp(f->string, "f32_p_abs"))
      cJSON_AddItemToObject(m, f->string, cJSON_Duplicate(f, 0));
  return m;
}

static cJSON *substitute_object(const cJSON *t, const cJSON *r) {
  cJSON *out = cJSON_CreateObject();
  for (const cJSON *k = t->child; out && k; k = k->next) {
    cJSON *v = substitute(k, cJSON_GetObjectItemCaseSensitive(r, k->string));
    if (!v) {
      cJSON_Delete(out);
      return NULL;
    }
    cJSON_AddItemToObject(out, k->string, v);
  }
  return out;
}

static cJSON *substitute_array(const cJSON *t, const cJSON *r) {
  const int nt = cJSON_GetArraySize(t);
  cJSON *out = cJSON_CreateArray();
  int i = 0;
  for (const cJSON *x = r->child; x; x = x->next, i++) {
    cJSON *v =
        nt ? substitute(cJSON_GetArrayItem(t, i < nt ? i : nt - 1), x) : cJSON_Duplicate(x, 1);
    if (!v) {
      cJSON_Delete(out);
      return NULL;
    }
    cJSON_AddItemToArray(out, v);
  }
  return out;
}

/* The fixture's expectation `t` with the rule's answer `r` put in; NULL when they differ in
 * shape. */
static cJSON *substitute(const cJSON *t, const cJSON *r) {
  if (!r)
    return NULL;
  const cJSON *any = cJSON_GetObjectItemCaseSensitive(t, "$any_of");
  if (cJSON_IsArray(any))
    return substitute(any->child, r);
  if (cJSON_GetObjectItemCaseSensitive(t, "$exact"))
    return matcher_with(t, "$exact", r);
  if (cJSON_GetObjectItemCaseSensitive(t, "$approx"))
    return matcher_with(t, "$approx", r);
  if (cJSON_GetObjectItemCaseSensitive(t, "$approx_array") ||
      cJSON_GetObjectItemCaseSensitive(t, "$sparse"))
    return cJSON_IsArray(r) ? matcher_with(t, "$approx_array", r) : NULL;
  if (cJSON_IsObject(t))
    return cJSON_IsObject(r) && !cJSON_GetObjectItemCaseSensitive(r, "error")
               ? substitute_object(t, r)
               : NULL;
  if (cJSON_IsArray(t))
    return cJSON_IsArray(r) ? substitute_array(t, r) : NULL;
  return cJSON_Duplicate(r, 1);
}

/* The oracle's own extra answers (harness/protocol/PROTOCOL.md): an implementation need not
 * give them. "u" is one beside a drawn token. */
static int extra_key(const cJSON *parent, const char *key) {
  if (sieve_serve_is_extra(key))
    return 1;
  return !strcmp(key, "u") && (cJSON_GetObjectItemCaseSensitive(parent, "token") ||
                               cJSON_GetObjectItemCaseSensitive(parent, "tokens"));
}

cJSON *fit_expectation(const cJSON *r) {
  if (cJSON_IsNumber(r) || cJSON_IsNull(r) ||
      (cJSON_IsArray(r) && (cJSON_IsNumber(r->child) || cJSON_IsNull(r->child)))) {
    cJSON *m = cJSON_CreateObject();
    cJSON_AddItemToObject(m, cJSON_IsArray(r) ? "$approx_array" : "$approx", cJSON_Duplicate(r, 1));
    cJSON_AddNumberToObject(m, "abs", 1e-9);
    cJSON_AddNumberToObject(m, "rel", 1e-9);
    cJSON_AddNumberToObject(m, "f32_abs", 1e-6);
    return m;
  }
  if (!cJSON_IsObject(r) && !cJSON_IsArray(r))
    return cJSON_Duplicate(r, 1);
  cJSON *out = cJSON_IsObject(r) ? cJSON_CreateObject() : cJSON_CreateArray();
  for (const cJSON *x = r->child; x; x = x->next)
    if (cJSON_IsArray(r))
      cJSON_AddItemToArray(out, fit_expectation(x));
    else if (!extra_key(r, x->string) && strcmp(x->string, "message") != 0)
      cJSON_AddItemToObject(out, x->string, fit_expectation(x));
  return out;
}

/* What the rule answers, as an expectation: errors by kind, field and code (error members of
 * rows included), values through the fixture's matchers; NULL when the shapes differ. */
static cJSON *rule_expectation(const cJSON *expect, cJSON *r) {
  const cJSON *error = cJSON_GetObjectItemCaseSensitive(r, "error");
  if (error) {
    cJSON *e = cJSON_CreateObject(), *inner = cJSON_Duplicate(error, 1);
    cJSON_DeleteItemFromObjectCaseSensitive(inner, "message");
    cJSON_AddItemToObject(e, "error", inner);
    return e;
  }
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(r, "rows");
  for (cJSON *row = rows ? rows->child : NULL; row; row = row->next)
    if (cJSON_GetObjectItemCaseSensitive(row, "error")) /* such rows compare as errors */
      cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(row, "error"),
                                              "message");
  const cJSON *want_rows = cJSON_GetObjectItemCaseSensitive(expect, "rows");
  if (want_rows && rows) { /* a row the rule rejects keeps its error as the expectation */
    cJSON *out = cJSON_CreateObject(), *list = cJSON_AddArrayToObject(out, "rows");
    int i = 0, nt = cJSON_GetArraySize(want_rows);
    for (const cJSON *row = rows->child; row; row = row->next, i++) {
      const cJSON *t = cJSON_GetArrayItem(want_rows, i < nt ? i : nt - 1);
      cJSON *v = cJSON_GetObjectItemCaseSensitive(row, "error") ? cJSON_Duplicate(row, 1)
                                                                : substitute(t, row);
      if (!v) {
        cJSON_Delete(out);
        return NULL;
      }
      cJSON_AddItemToArray(list, v);
    }
    return out;
  }
  return substitute(expect, r);
}

/* The implementation's answer, parsed once; NULL when out of memory. */
static const cJSON *have(fit_case *fc) {
  if (!fc->have)
    fc->have = cJSON_Parse(fc->result->answer);
  return fc->have;
}

/* Whether the implementation's answer is `r`, the rule's. */
/* A row's tie classes: tokens a sort may order either way whatever the arithmetic, those of
 * one input logit; ranked by probability, also those whose float64 probability is one subnormal
 * number, or 0 (their logits differ, their probabilities do not). */
typedef struct tie_token {
  uint64_t tie_class;
  double value; /* its logprob; -inf where removed */
  size_t id;
} tie_token;

static int by_class(const void *x, const void *y) {
  const tie_token *a = x, *b = y;
  if (a->tie_class != b->tie_class)
    return a->tie_class < b->tie_class ? -1 : 1;
  return (a->id > b->id) - (a->id < b->id);
}

static int by_value(const void *x, const void *y) {
  const tie_token *a = x, *b = y;
  return (a->value < b->value) - (a->value > b->value);
}

/* The class of tokens a cut ties: equal logits, or, ranked by probability, equal float64
 * probabilities (logits a denormal apart share one, and all those that underflow share one). */
static uint64_t tie_class(float scaled, float max, int by_probability) {
  uint32_t bits;
  memcpy(&bits, &scaled, sizeof bits);
  if (by_probability && isfinite(scaled)) {
    const double p = exp((double)scaled - max);
    uint64_t p_bits;
    memcpy(&p_bits, &p, sizeof p_bits);
    return p < DBL_MIN ? p_bits | 1ULL << 63 : p_bits;
  }
  return bits;
}

/* The logits of a request row, explicit or a recipe, malloc'd; NULL when neither. */
static float *row_logits(const cJSON *row, size_t *vocab) {
  const cJSON *logits = cJSON_GetObjectItemCaseSensitive(row, "logits");
  char err[8];
  if (sieve_recipe_of(logits))
    return sieve_recipe_logits(sieve_recipe_of(logits), vocab, err, sizeof err);
  int n = cJSON_GetArraySize(logits), i = 0;
  float *out = cJSON_IsArray(logits) && n > 0 ? malloc((size_t)n * sizeof *out) : NULL;
  for (const cJSON *x = out ? logits->child : NULL; x; x = x->next, i++)
    out[i] = cJSON_IsNumber(x) ? (float)x->valuedouble : -INFINITY;
  *vocab = (size_t)n;
  return out;
}

/* The logprobs `holder` has under `key`, each tie class's values put highest first on its ids
 * in order: the answer without which of a class's tokens it kept. */
static void order_ties(cJSON *holder, const char *key, const float *logits, size_t vocab,
                       int by_probability) {
  cJSON *list = cJSON_GetObjectItemCaseSensitive(holder, key);
  tie_token *t = (size_t)cJSON_GetArraySize(list) == vocab ? malloc(vocab * sizeof *t) : NULL;
  cJSON *ordered = t ? cJSON_CreateArray() : NULL;
  float max = -INFINITY;
  for (size_t i = 0; ordered && i < vocab; i++)
    max = logits[i] > max ? logits[i] : max;
  size_t i = 0;
  for (const cJSON *x = ordered ? list->child : NULL; x; x = x->next, i++) {
    t[i] = (tie_token){tie_class(logits[i], max, by_probability),
                       cJSON_IsNumber(x) ? x->valuedouble : -INFINITY, i};
    /* A class of one probability but many logits: which of them stay is free, and so are the
     * values they bring (each its own logit's); only how many stay is compared. */
    if (t[i].tie_class >> 63 && isfinite(t[i].value))
      t[i].value = -DBL_MAX;
  }
  if (ordered) {
    qsort(t, vocab, sizeof *t, by_class);
    for (size_t from = 0, to; from < vocab; from = to) {
      for (to = from + 1; to < vocab && t[to].tie_class == t[from].tie_class;)
        to++;
      double *ids = malloc((to - from) * sizeof *ids);
      for (size_t k = from; ids && k < to; k++)
        ids[k - from] = (double)t[k].id;
      qsort(t + from, to - from, sizeof *t, by_value); /* the values, highest first, */
      for (size_t k = from; ids && k < to; k++)        /* on the class's ids in order */
        t[k].id = (size_t)ids[k - from];
      free(ids);
    }
    double *values = malloc(vocab * sizeof *values);
    for (size_t k = 0; values && k < vocab; k++)
      values[t[k].id] = t[k].value;
    for (size_t k = 0; values && k < vocab; k++)
      cJSON_AddItemToArray(ordered,
                           isinf(values[k]) ? cJSON_CreateNull() : cJSON_CreateNumber(values[k]));
    if (values)
      cJSON_ReplaceItemInObjectCaseSensitive(holder, key, ordered);
    else
      cJSON_Delete(ordered);
    free(values);
  }
  free(t);
}

/* A row as the rule's cuts compare it: scaled in float32 as the rule scales (times 1/T, divided
 * by T, or shifted by the largest first), at T = 1 where temperature comes after the filters, so
 * that a tie the scaling makes is a tie. */
static void scale_for_cuts(float *logits, size_t vocab, double temperature,
                           const sieve_rule *rule) {
  const int op = sieve_rule_get(rule, SIEVE_AXIS_TEMPERATURE_OP);
  const double t = !(temperature > 0) || sieve_rule_get(rule, SIEVE_AXIS_TEMPERATURE_AT) ==
                                             SIEVE_TEMPERATURE_AT_AFTER
                       ? 1.0
                       : fmax(temperature, SIEVE_SAMPLING_EPS);
  float largest = -INFINITY;
  for (size_t i = 0; i < vocab; i++)
    largest = logits[i] > largest ? logits[i] : largest;
  for (size_t i = 0; i < vocab; i++)
    if (isfinite(logits[i]))
      logits[i] = op == SIEVE_TEMPERATURE_OP_SHIFTED  ? (logits[i] - largest) * (float)(1.0 / t)
                  : op == SIEVE_TEMPERATURE_OP_DIVIDE ? logits[i] / (float)t
                                                      : logits[i] * (float)(1.0 / t);
}

/* Every filter row of an answer or an expectation with its ties ordered (order_ties). */
static void order_rows(cJSON *answer, const cJSON *request, const sieve_rule *rule) {
  const int by_probability =
      sieve_rule_get(rule, SIEVE_AXIS_RANK_KEY) == SIEVE_RANK_KEY_PROBABILITY;
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(answer, "rows");
  const cJSON *asked = cJSON_GetObjectItemCaseSensitive(request, "rows");
  const cJSON *q = asked ? asked->child : NULL;
  for (cJSON *row = rows ? rows->child : NULL; row && q; row = row->next, q = q->next) {
    size_t vocab = 0;
    float *logits = row_logits(q, &vocab);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(q, "params"),
                                                      "temperature");
    if (logits)
      scale_for_cuts(logits, vocab, cJSON_IsNumber(t) ? t->valuedouble : 1.0, rule);
    cJSON *lp = cJSON_GetObjectItemCaseSensitive(row, "logprobs");
    if (logits && cJSON_GetObjectItemCaseSensitive(lp, "$approx_array"))
      order_ties(lp, "$approx_array", logits, vocab, by_probability);
    else if (logits)
      order_ties(row, "logprobs", logits, vocab, by_probability);
    free(logits);
  }
}

/* Whether value v of axis a leaves the order of tied tokens to the sort ("unspecified"). */
static int is_any_order(int a, int v) {
  return (a == SIEVE_AXIS_TOPP_TIES && v == SIEVE_TOPP_TIES_UNSPECIFIED) ||
         (a == SIEVE_AXIS_TOPK_TIES && v == SIEVE_TOPK_TIES_UNSPECIFIED);
}

/* Whether the rule leaves the order of tied tokens to the sort on a tie axis the answer read:
 * then any tied tokens may stay, as many as the rule keeps. */
static int any_tie_order(const sieve_rule *rule, uint32_t consulted) {
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
    if ((consulted >> a & 1) && is_any_order(a, sieve_rule_get(rule, a)))
      return 1;
  return 0;
}

/* Whether the answer read the rule's float32 tail (topp_one=float32_tail): where a float32
 * cumulative sum passes 1 depends on the order of its additions, which the oracle's variant
 * fixes as eight lanes and an engine's kernel as its own. */
static int float32_tail(const sieve_rule *rule, uint32_t consulted) {
  return (consulted >> SIEVE_AXIS_TOPP_ONE & 1) &&
         sieve_rule_get(rule, SIEVE_AXIS_TOPP_ONE) == SIEVE_TOPP_ONE_FLOAT32_TAIL;
}

/* A kept token of a row in the rule's rank order: by probability (tokens whose float64
 * probabilities are equal, as those that underflow, in token order) or by logit. */
typedef struct ranked_token {
  double key, logprob;
  size_t id;
} ranked_token;

static int by_rank(const void *x, const void *y) {
  const ranked_token *a = x, *b = y;
  if (a->key != b->key)
    return a->key < b->key ? 1 : -1;
  return (a->id > b->id) - (a->id < b->id);
}

/* The kept row cut to its best `keep` tokens, renormalized, when a float32 sum of the kept
 * probabilities in rank order, added in any order, could pass 1 there: the exact mass before
 * the cut is within (n + 1) float32 roundings of 1 (n the tokens kept). */
static int recut_row(cJSON *lp, size_t keep, int by_probability) {
  const size_t vocab = (size_t)cJSON_GetArraySize(lp);
  ranked_token *t = malloc((vocab ? vocab : 1) * sizeof *t);
  int *stays = calloc(vocab ? vocab : 1, sizeof *stays);
  size_t n = 0, i = 0;
  for (const cJSON *x = t && stays ? lp->child : NULL; x; x = x->next, i++)
    if (cJSON_IsNumber(x))
      t[n++] =
          (ranked_token){by_probability ? exp(x->valuedouble) : x->valuedouble, x->valuedouble, i};
  double before = 0.0;
  if (t && stays && keep > 0 && keep < n) {
    qsort(t, n, sizeof *t, by_rank);
    for (size_t r = 0; r < keep; r++) {
      before += exp(t[r].logprob);
      stays[t[r].id] = 1;
    }
  }
  /* A float32 running sum does not move across a token of probability 0, so no cut falls right
   * after one: the last token kept has a probability float32 holds. Before is 0 when keep >= n. */
  const int cut = before >= 1.0 - (double)(n + 1) * 0x1p-24 && (float)exp(t[keep - 1].logprob) > 0;
  if (cut) {
    const double shift = log(before);
    i = 0;
    for (cJSON *x = lp->child, *next; x; x = next, i++) {
      next = x->next;
      if (stays[i])
        cJSON_SetNumberValue(x, x->valuedouble - shift);
      else if (cJSON_IsNumber(x))
        cJSON_ReplaceItemViaPointer(lp, x, cJSON_CreateNull());
    }
  }
  free(t);
  free(stays);
  return cut;
}

/* Every filter row of `r`, an answer without the tail cut, cut where the implementation's
 * row was, as far as recut_row allows; how many rows were cut. */
static int recut_tails(cJSON *r, const cJSON *got, int by_probability) {
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(got, "rows");
  const cJSON *g = rows ? rows->child : NULL;
  cJSON *mine = cJSON_GetObjectItemCaseSensitive(r, "rows");
  int cut = 0;
  for (cJSON *row = mine ? mine->child : NULL; row && g; row = row->next, g = g->next) {
    cJSON *lp = cJSON_GetObjectItemCaseSensitive(row, "logprobs");
    const cJSON *theirs = cJSON_GetObjectItemCaseSensitive(g, "logprobs");
    size_t keep = 0;
    for (const cJSON *x = cJSON_IsArray(theirs) ? theirs->child : NULL; x; x = x->next)
      keep += cJSON_IsNumber(x) ? 1 : 0;
    if (cJSON_IsArray(lp) && cJSON_GetArraySize(lp) == cJSON_GetArraySize(theirs))
      cut += recut_row(lp, keep, by_probability);
  }
  return cut;
}

/* Whether the implementation's answer is `r`, the rule's; where the rule leaves the order of
 * tied tokens to the sort (any_tie_order), up to which tokens of each tie class it kept. With
 * `tail`, r is the rule's answer without its float32 tail, cut where the implementation's is;
 * one that cuts no row's tail does not agree (that is the rule without the float32 tail). */
static int agrees_with(fit_case *fc, const char *r_text, int precision, const sieve_rule *rule,
                       int any_order, int tail) {
  cJSON *r = cJSON_Parse(r_text);
  const int by_p = sieve_rule_get(rule, SIEVE_AXIS_RANK_KEY) == SIEVE_RANK_KEY_PROBABILITY;
  if (r && tail && !(have(fc) && recut_tails(r, have(fc), by_p))) {
    cJSON_Delete(r); /* an answer that cuts no tail is the rule without it */
    return 0;
  }
  const cJSON *expect = cJSON_GetObjectItemCaseSensitive(fc->result->fixture, "expect");
  cJSON *want = r ? rule_expectation(expect, r) : NULL;
  if (r && !want)
    want = fit_expectation(r);
  cJSON *got = any_order && have(fc) ? cJSON_Duplicate(have(fc), 1) : NULL;
  if (got) {
    order_rows(want, fc->request, rule);
    order_rows(got, fc->request, rule);
  }
  char why[8];
  int yes = want && have(fc) &&
            sieve_check_at(want, got ? got : have(fc), precision, why, sizeof why, NULL);
  cJSON_Delete(got);
  cJSON_Delete(want);
  cJSON_Delete(r);
  return yes;
}

/* Whether the rule departs from DeepInfer's on one axis the answer read, and the case records
 * that axis value as a reading whose answer the first pass matched: the fixture's own
 * expectation of it, with every outcome a close float32 decision allows. */
static int recorded_reading(const fit_case *fc, const sieve_rule *rule, uint32_t consulted) {
  int axis = -1;
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
    if ((consulted >> a & 1) && sieve_rule_get(rule, a) != 0) {
      if (axis >= 0)
        return 0;
      axis = a;
    }
  char key[96];
  if (axis < 0)
    return 0;
  snprintf(key, sizeof key, "%s=%s", sieve_axis_name(axis),
           sieve_axis_value_name(axis, sieve_rule_get(rule, axis)));
  return in_list(fc->rules, key);
}

/* The oracle's answer under `rule` into f->buf, and the axes it read. */
static uint32_t answer_under(fitter *f, const fit_case *fc, const sieve_rule *rule) {
  uint32_t consulted = 0;
  sieve_rule traced = *rule;
  traced.consulted = &consulted;
  sieve_serve_request(fc->request, "fit", &traced, REQ_OPTIONS_ALL, &f->buf);
  return consulted;
}

static memo_entry *memo_find(const fit_case *fc, const sieve_rule *rule) {
  int values[SIEVE_AXIS_COUNT];
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
    values[a] = sieve_rule_get(rule, a);
  for (size_t i = 0; i < fc->n_memo; i++) {
    memo_entry *e = &fc->memo[i];
    int same = 1;
    for (int a = 0; same && a < SIEVE_AXIS_COUNT; a++)
      same = !(e->consulted >> a & 1) || e->values[a] == values[a];
    if (same)
      return e;
  }
  return NULL;
}

/* A hash of an answer's text, eight bytes at a time (a large row's answer is 100 kB of text,
 * hashed once for each rule it is evaluated under), and whether it holds an error. */
static uint64_t text_hash(const char *text) {
  const size_t n = strlen(text);
  uint64_t h = n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t chunk;
    memcpy(&chunk, text + i, 8);
    h = sieve_mix64(h ^ chunk);
  }
  uint64_t rest = 0;
  memcpy(&rest, text + i, n - i);
  return sieve_mix64(h ^ rest);
}

static void note_answer(memo_entry *e, const char *text) {
  e->answer = text_hash(text);
  e->is_error = strstr(text, "\"error\"") != NULL;
}

static memo_entry *memo_add(fit_case *fc, const sieve_rule *rule, uint32_t consulted, int agrees,
                            int as_spec) {
  if (fc->n_memo == fc->cap_memo) {
    size_t cap = fc->cap_memo ? 2 * fc->cap_memo : 8;
    memo_entry *m = realloc(fc->memo, cap * sizeof *m);
    if (!m)
      return NULL;
    fc->memo = m;
    fc->cap_memo = cap;
  }
  memo_entry *e = &fc->memo[fc->n_memo++];
  e->consulted = consulted;
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
    e->values[a] = sieve_rule_get(rule, a);
  e->agrees = (signed char)agrees;
  e->as_spec = (signed char)as_spec;
  e->close = (signed char)(as_spec ? 1 : -1);
  e->is_error = 0;
  e->answer = 0;
  return e;
}

/* Under the float32 tail, whether the answer is the rule's cut where float32 additions in
 * another order pass 1: the rule's answer without the tail cut, cut at the implementation's
 * count (recut_tails). */
static int agrees_elsewhere_in_tail(const fitter *f, fit_case *fc, const sieve_rule *rule,
                                    int any_order) {
  sieve_rule untailed = *rule;
  untailed.consulted = NULL;
  sieve_rule_set(&untailed, SIEVE_AXIS_TOPP_ONE, SIEVE_TOPP_ONE_OFF);
  jbuf answer = {0};
  sieve_serve_request(fc->request, "fit", &untailed, REQ_OPTIONS_ALL, &answer);
  const int yes = !answer.failed && answer.data &&
                  agrees_with(fc, answer.data, f->precision, rule, any_order, 1);
  jbuf_free(&answer);
  return yes;
}

/* The memo entry of a case under a rule, computed when no earlier answer covers it; NULL when
 * out of memory. */
/* A large case's answer under DeepInfer's rule, computed when another rule first needs it: the
 * entry loaded for it claimed every axis (memo entry 0), and now claims those the answer read. */
static int spec_answer(fitter *f, fit_case *fc) {
  static const sieve_rule deepinfer = SIEVE_RULE_DEEPINFER;
  uint32_t consulted = answer_under(f, fc, &deepinfer);
  if (f->buf.failed || !(fc->spec = strdup(f->buf.data)))
    return -1;
  fc->memo[0].consulted = consulted;
  note_answer(&fc->memo[0], fc->spec);
  return 0;
}

static memo_entry *evaluate(fitter *f, fit_case *fc, const sieve_rule *rule) {
  memo_entry *e = memo_find(fc, rule);
  if (e)
    return e;
  if (!fc->spec && (spec_answer(f, fc) != 0 || (e = memo_find(fc, rule)) != NULL))
    return e;
  uint32_t consulted = answer_under(f, fc, rule);
  if (f->buf.failed)
    return NULL;
  int as_spec = strcmp(f->buf.data, fc->spec) == 0;
  /* DeepInfer's answer agrees as the fixture judged it; a rule that leaves tied tokens to the
   * sort may also give any other choice of them. */
  const int any_order = any_tie_order(rule, consulted);
  int agrees = as_spec && fc->result->alone == OUTCOME_PASS;
  if (!agrees && (!as_spec || any_order || float32_tail(rule, consulted)))
    agrees = strcmp(f->buf.data, fc->result->answer) == 0 ||
             recorded_reading(fc, rule, consulted) ||
             agrees_with(fc, f->buf.data, f->precision, rule, any_order, 0) ||
             (float32_tail(rule, consulted) && agrees_elsewhere_in_tail(f, fc, rule, any_order));
  memo_entry *added = memo_add(fc, rule, consulted, agrees, as_spec);
  if (added)
    note_answer(added, f->buf.data);
  return added;
}

static int agrees(fitter *f, size_t i, const sieve_rule *rule) {
  const memo_entry *e = evaluate(f, &f->cases[i], rule);
  return e && e->agrees;
}

/* Whether the rule, with the fit's misreadings, explains a case's answer: the rule gives it,
 * or the rule answers as DeepInfer does and a misreading's recorded answer is this one (the
 * fixtures record each reading's answer against DeepInfer's). */
static int entry_explains(const fit_case *fc, const memo_entry *e) {
  return e && (e->agrees || (e->as_spec && fc->hit));
}

static int explains(fitter *f, size_t i, const sieve_rule *rule) {
  return entry_explains(&f->cases[i], evaluate(f, &f->cases[i], rule));
}

/* Cases the search weighs: all of them, or only those of small rows while `all` is 0. Never one
 * whose logits DeepInfer rejects and the implementation answers, unless another value of an axis
 * the case is about answers it (penalty_overflow's minus_inf): any engine that checks no logit
 * answers it, whatever its rule (most do), so it tells no axis value from another. */
static int weighed(const fitter *f, size_t i) {
  return !f->cases[i].unchecked && !f->cases[i].refused && (f->all || !f->cases[i].large);
}

static size_t score(fitter *f, const sieve_rule *rule) {
  size_t n = 0;
  for (size_t i = 0; i < f->n; i++)
    n += weighed(f, i) && explains(f, i, rule);
  return n;
}

/* ----------------------------------------------------------------------------- search */

/* The departures from DeepInfer's rule, an order left to the sort weighing more than all the
 * others: it explains a tie by allowing any, so a rule that explains it by a choice is better. */
static int departures(const sieve_rule *r) {
  int n = 0;
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++) {
    const int v = sieve_rule_get(r, a);
    n += v == 0 ? 0 : is_any_order(a, v) ? SIEVE_AXIS_COUNT : 1;
  }
  return n;
}

/* Better: more cases agree, then fewer departures from DeepInfer's rule (those weighed). */
static int better(size_t s, const sieve_rule *r, size_t best_s, const sieve_rule *best) {
  return s > best_s || (s == best_s && departures(r) < departures(best));
}

typedef struct climber {
  sieve_rule at, best;
  size_t at_s, best_s;
  size_t *against;     /* the weighed cases that disagree with `at`: only they can gain */
  uint32_t *consulted; /* the axes each of them read under `at` */
  size_t n_against;
} climber;

/* The axes on which two rules differ. */
static uint32_t differing(const sieve_rule *x, const sieve_rule *y) {
  uint32_t d = 0;
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
    d |= (uint32_t)(sieve_rule_get(x, a) != sieve_rule_get(y, a)) << a;
  return d;
}

/* The score of a rule where it reaches `need`, or a number below need: the small cases first,
 * then the large ones (the costly answers) only while they could still lift it to need. */
static size_t score_from(fitter *f, const sieve_rule *rule, size_t need) {
  size_t s = 0, large = 0;
  for (size_t i = 0; i < f->n; i++) {
    if (weighed(f, i) && f->cases[i].large)
      large++;
    else if (weighed(f, i))
      s += (size_t)explains(f, i, rule);
  }
  for (size_t i = 0; i < f->n && large > 0; i++) {
    if (!weighed(f, i) || !f->cases[i].large)
      continue;
    if (s + large < need)
      return s;
    s += (size_t)explains(f, i, rule);
    large--;
  }
  return s;
}

/* Tries rule d against the best so far. The cases that agree with `at` can only be lost, so d
 * can reach at most at_s plus its gains among the others (a case whose answer under `at` read
 * none of the axes d changes keeps it); the full score is taken only then. */
static void try_rule(fitter *f, climber *c, const sieve_rule *d) {
  size_t gains = 0;
  const uint32_t changed = differing(d, &c->at);
  for (size_t k = 0; k < c->n_against; k++)
    gains += (c->consulted[k] & changed) && explains(f, c->against[k], d);
  if (!better(c->at_s + gains, d, c->best_s, &c->best))
    return;
  /* better() than the best: more cases, or as many with fewer departures */
  size_t s = score_from(f, d, c->best_s + (departures(d) < departures(&c->best) ? 0 : 1));
  if (better(s, d, c->best_s, &c->best))
    c->best = *d, c->best_s = s;
}

/* Every rule one or two axis values away from c->at. */
static void neighbours(fitter *f, climber *c, int pairs) {
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
    for (int v = 0; (f->searched >> a & 1) && v < sieve_axis_values(a); v++) {
      sieve_rule one = c->at;
      if (v == sieve_rule_get(&c->at, a) || sieve_rule_set(&one, a, v) != 0)
        continue;
      if (!pairs)
        try_rule(f, c, &one);
      for (int b = a + 1; pairs && b < SIEVE_AXIS_COUNT; b++)
        for (int w = 0; (f->searched >> b & 1) && w < sieve_axis_values(b); w++) {
          sieve_rule two = one;
          if (w != sieve_rule_get(&c->at, b) && sieve_rule_set(&two, b, w) == 0)
            try_rule(f, c, &two);
        }
    }
}

/* The weighed small cases that disagree with c->at, and the axes their answers read. */
static void gather_against(fitter *f, climber *c) {
  c->n_against = 0;
  for (size_t i = 0; i < f->n; i++) {
    /* A large case weighs in the score but does not pull the rule: trying every move on it
     * would cost more than the rest of the search. */
    const memo_entry *e =
        weighed(f, i) && !f->cases[i].large ? evaluate(f, &f->cases[i], &c->at) : NULL;
    if (e && !entry_explains(&f->cases[i], e)) {
      c->consulted[c->n_against] = e->consulted;
      c->against[c->n_against++] = i;
    }
  }
}

/* Climbs from r, one axis value at a time, and two at a time where `pairs` and no single
 * change gains, to where nothing gains; *s is its score. */
static int climb(fitter *f, sieve_rule *r, size_t *s, int pairs) {
  climber c = {.at = *r,
               .against = malloc((f->n + 1) * sizeof(size_t)),
               .consulted = malloc((f->n + 1) * sizeof(uint32_t))};
  int rc = -1;
  if (!c.against || !c.consulted)
    goto fail;
  c.at_s = score(f, &c.at);
  for (int moved = 1; moved;) {
    c.best = c.at;
    c.best_s = c.at_s;
    gather_against(f, &c);
    for (int two = 0; two <= pairs && !memcmp(&c.best, &c.at, sizeof c.at); two++)
      neighbours(f, &c, two);
    moved = memcmp(&c.best, &c.at, sizeof c.at) != 0;
    c.at = c.best;
    c.at_s = c.best_s;
  }
  *r = c.at;
  *s = c.at_s;
  rc = 0;
fail:
  free(c.against);
  free(c.consulted);
  return rc;
}

/* How far the first pass's failures point at a profile: its departures from DeepInfer's rule
 * that some failure's answer gives alone (a reading "axis=value"), less those none gives. */
static int pointed_at(fitter *f, const sieve_rule *r) {
  int n = 0;
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++) {
    int v = sieve_rule_get(r, a), named = 0;
    char key[96];
    snprintf(key, sizeof key, "%s=%s", sieve_axis_name(a), sieve_axis_value_name(a, v));
    for (size_t i = 0; v != 0 && (f->searched >> a & 1) && i < f->n && !named; i++)
      named = in_list(f->cases[i].rules, key);
    n += v == 0 || !(f->searched >> a & 1) ? 0 : named ? 1 : -1;
  }
  return n;
}

/* The profile the failures point at most, its axes outside the search as in base; 0 when none
 * is pointed at (no start is then worth its cost). */
static int best_start(fitter *f, const fit_start *starts, size_t n_starts, const sieve_rule *base,
                      sieve_rule *out) {
  int best = 0;
  for (size_t i = 0; i < n_starts; i++) {
    sieve_rule r = starts[i].rule;
    for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
      if (!(f->searched >> a & 1))
        sieve_rule_set(&r, a, sieve_rule_get(base, a));
    r.consulted = NULL;
    int n = pointed_at(f, &r);
    if (n > best)
      best = n, *out = r;
  }
  return best > 0;
}

/* Climbs over the small cases from DeepInfer's rule and from the profile nearest the answers,
 * then from the better of the two over all cases (the large rows cost the most to answer and
 * seldom decide an axis alone), one axis at a time. */
static int search(fitter *f, const fit_start *starts, size_t n_starts, const sieve_rule *base,
                  fit_result *fit) {
  sieve_rule best = *base, from_profile;
  size_t best_s, s;
  f->all = 0;
  if (climb(f, &best, &best_s, 0) != 0)
    return -1;
  if (best_start(f, starts, n_starts, base, &from_profile)) {
    if (climb(f, &from_profile, &s, 0) != 0)
      return -1;
    if (better(s, &from_profile, best_s, &best))
      best = from_profile, best_s = s;
  }
  f->all = 1;
  if (climb(f, &best, &best_s, 0) != 0)
    return -1;
  fit->rule = best;
  fit->agreed = best_s;
  return 0;
}

/* Two axes at a time where one does not gain (two departures that each alone explain nothing,
 * such as >= with the highest tied ids), after the misreadings have taken what is theirs. */
static int search_pairs(fitter *f, fit_result *fit) {
  return climb(f, &fit->rule, &fit->agreed, 1);
}

/* ----------------------------------------------------------------------------- misreadings */

/* Marks the cases whose first pass matched one of the misreadings `set` (",a,b,"). */
static void set_misreadings(fitter *f, const char *set) {
  snprintf(f->misreadings, sizeof f->misreadings, "%s", set);
  for (size_t i = 0; i < f->n; i++) {
    fit_case *fc = &f->cases[i];
    fc->hit = 0;
    for (const char *p = set + 1; *p && !fc->hit; p += strcspn(p, ",") + 1) {
      char name[64];
      snprintf(name, sizeof name, "%.*s", (int)strcspn(p, ","), p);
      fc->hit = in_list(fc->readings, name);
    }
  }
}

/* Whether the rule answers a case as DeepInfer does, or within the fixture's bounds of it (a
 * quotient by T an ulp from the product by 1/T): where a reading's answer, recorded against
 * DeepInfer's, still applies. */
static int close_to_spec(fitter *f, fit_case *fc, const sieve_rule *rule) {
  memo_entry *e = evaluate(f, fc, rule);
  if (!e || e->close >= 0)
    return e && e->close;
  answer_under(f, fc, rule);
  cJSON *answer = f->buf.failed ? NULL : cJSON_Parse(f->buf.data);
  const cJSON *expect = cJSON_GetObjectItemCaseSensitive(fc->result->fixture, "expect");
  char why[8];
  e->close =
      (signed char)(answer && sieve_check_at(expect, answer, f->precision, why, sizeof why, NULL));
  cJSON_Delete(answer);
  return e->close;
}

/* Whether the run's evidence supports a reading under the rule: among the cases the rule
 * answers as DeepInfer does, or within their bounds (close_to_spec), more failures give its
 * answer than other cases rule it out (a pass, or a failure with another answer than the one
 * the reading records there). A passing case may pass for a reason of its own (a library's host
 * rejecting a value first), so one does not outweigh many failures. */
static int supported(fitter *f, const sieve_rule *rule, const char *name) {
  long support = 0;
  for (size_t i = 0; i < f->n; i++) {
    int gives = in_list(f->cases[i].readings, name), against = in_list(f->cases[i].separates, name);
    if ((gives || against) && close_to_spec(f, &f->cases[i], rule))
      support += gives - against;
  }
  return support > 0;
}

/* How many failures of the first pass give a reading's answer. */
static size_t failures_giving(const fitter *f, const char *name) {
  size_t n = 0;
  for (size_t i = 0; i < f->n; i++)
    n += (size_t)in_list(f->cases[i].readings, name);
  return n;
}

/* The readings some failure matched that are no axis value (the rule covers those) and not
 * float32 arithmetic (a precision, not a reading), not yet taken, and supported against
 * DeepInfer's rule (the one their answers are recorded against): the FIT_CANDIDATES that most
 * failures give, into `out` (",a,b,"). */
static void misreading_candidates(fitter *f, char *out, size_t len) {
  static const sieve_rule deepinfer = SIEVE_RULE_DEEPINFER;
  char seen[FIT_CANDIDATES * 64 + 2] = ",";
  snprintf(out, len, ",");
  for (int k = 0; k < FIT_CANDIDATES; k++) {
    char best[64] = "";
    size_t best_n = 0;
    for (size_t i = 0; i < f->n; i++)
      for (const char *p = f->cases[i].readings + 1; *p; p += strcspn(p, ",") + 1) {
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(p, ","), p);
        size_t n = name[0] && !in_list(f->axis_readings, name) &&
                           strcmp(name, SIEVE_CAUSE_FLOAT32) != 0 && !in_list(seen, name) &&
                           !in_list(f->misreadings, name)
                       ? failures_giving(f, name)
                       : 0;
        if (n > best_n)
          best_n = n, snprintf(best, sizeof best, "%s", name);
      }
    if (!best[0])
      break;
    size_t at = strlen(seen);
    snprintf(seen + at, sizeof seen - at, "%s,", best);
    at = strlen(out);
    if (supported(f, &deepinfer, best))
      snprintf(out + at, len - at, "%s,", best);
  }
}

/* Adds, one at a time, the reading no engine chooses (a mutant's: fixtures/README.md,
 * "Readings") that explains the most further failures, refitting the rule with it: a port
 * with a bug of its own is told its bug, not an engine's choice that happens to cover some of
 * its failures. Each must explain more cases than the fit without it. */
static int add_misreadings(fitter *f, fit_result *fit) {
  char candidates[FIT_CANDIDATES * 64 + 2], kept[sizeof f->misreadings];
  set_misreadings(f, ",");
  for (int round = 0; round < FIT_MISREADINGS_MAX; round++) {
    sieve_rule best = fit->rule;
    size_t best_s = fit->agreed;
    char best_set[sizeof f->misreadings] = "";
    snprintf(kept, sizeof kept, "%s", f->misreadings);
    misreading_candidates(f, candidates, sizeof candidates);
    for (const char *p = candidates + 1; *p; p += strcspn(p, ",") + 1) {
      char set[sizeof f->misreadings + 80];
      snprintf(set, sizeof set, "%s%.*s,", kept, (int)strcspn(p, ","), p);
      if (strlen(set) >= sizeof f->misreadings)
        continue;
      set_misreadings(f, set);
      sieve_rule r = fit->rule;
      size_t s;
      if (climb(f, &r, &s, 0) != 0)
        return -1;
      if (s > best_s || (s == best_s && best_set[0] && departures(&r) < departures(&best)))
        best = r, best_s = s, copy_text(best_set, sizeof best_set, set);
    }
    set_misreadings(f, best_set[0] ? best_set : kept);
    if (!best_set[0] || best_s <= fit->agreed)
      break;
    fit->rule = best;
    fit->agreed = best_s;
  }
  return 0;
}

/* Drops each misreading the fit no longer needs (the pairs may explain its cases) or the
 * evidence no longer supports under the final rule, and writes the rest into the result. */
static void keep_needed_misreadings(fitter *f, fit_result *fit) {
  char kept[sizeof f->misreadings];
  snprintf(kept, sizeof kept, "%s", f->misreadings);
  for (const char *p = kept + 1; *p; p += strcspn(p, ",") + 1) {
    char without[sizeof f->misreadings], name[64];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(p, ","), p);
    snprintf(without, sizeof without, "%s", f->misreadings);
    char *at = strstr(without, name) - 1; /* ",name," is in it */
    memmove(at, at + strlen(name) + 1, strlen(at + strlen(name) + 1) + 1);
    set_misreadings(f, without);
    if (score_from(f, &fit->rule, fit->agreed) < fit->agreed && supported(f, &fit->rule, name))
      set_misreadings(f, kept);
    else
      snprintf(kept, sizeof kept, "%s", f->misreadings);
  }
  set_misreadings(f, kept);
  snprintf(fit->misreadings, sizeof fit->misreadings, "%.*s", kept[1] ? (int)strlen(kept) - 2 : 0,
           kept + 1);
}

/* ----------------------------------------------------------------------------- what it says */

static void append(char *out, size_t len, const char *sep, const char *text) {
  size_t at = strlen(out);
  if (at < len)
    snprintf(out + at, len - at, "%s%s", at ? sep : "", text);
}

/* Whether case i, which the fit explains, is lost when axis a takes value v. */
static int lost_at(fitter *f, size_t i, const fit_result *fit, int a, int v) {
  sieve_rule c = fit->rule;
  return sieve_rule_set(&c, a, v) == 0 && !explains(f, i, &c);
}

/* Whether value v of axis a explains as many weighed cases as the fitted value. The fit is a
 * local best, so v ties only if it gains where the fit fails as much as it loses elsewhere; a
 * value that gains nothing ties only if it loses nothing, which the first loss settles. */
static int ties_fit(fitter *f, const fit_result *fit, const uint32_t *reads, int a, int v) {
  size_t gains = 0;
  sieve_rule c = fit->rule;
  sieve_rule_set(&c, a, v);
  for (size_t i = 0; i < f->n; i++)
    gains +=
        weighed(f, i) && (reads[i] >> a & 1) && !explains(f, i, &fit->rule) && explains(f, i, &c);
  if (gains > 0) {
    const size_t at = score(f, &fit->rule);
    return score_from(f, &c, at) == at;
  }
  for (size_t i = 0; i < f->n; i++)
    if (weighed(f, i) && (reads[i] >> a & 1) && explains(f, i, &fit->rule) && !explains(f, i, &c))
      return 0;
  return 1;
}

/* "unspecified" (any tie order) explains whatever a specific order does, so the evidence never
 * rules it out: a specific order that explains as much is the reading, unspecified only the
 * one no specific order fits. */
static uint32_t prefer_specific_order(int a, uint32_t values) {
  for (int v = 0; v < sieve_axis_values(a); v++)
    if (is_any_order(a, v) && (values & ~(1u << v)))
      return values & ~(1u << v);
  return values;
}

/* Whether rule c, a specific tie order on axis a, explains `at` cases, or does once the other
 * axes climb from it (into c): "unspecified" explains ties another scaling of the temperature
 * makes, so the true order may need the true scaling, and the rank key, moved with it. */
static int specific_order_fits(fitter *f, sieve_rule *c, int a, size_t at) {
  size_t s;
  if (score_from(f, c, at) >= at)
    return 1;
  sieve_rule climbed = *c;
  const uint32_t searched = f->searched;
  f->searched &= ~(1u << a); /* the order stays the one tried */
  const int rc = climb(f, &climbed, &s, 0);
  f->searched = searched;
  if (rc != 0 || s < at)
    return 0;
  *c = climbed;
  return 1;
}

/* The fitted rule with a specific tie order where one explains as many cases as
 * "unspecified" (prefer_specific_order). */
static void specific_orders(fitter *f, fit_result *fit) {
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++) {
    if (!is_any_order(a, sieve_rule_get(&fit->rule, a)))
      continue;
    const size_t at = score(f, &fit->rule);
    for (int v = 0; v < sieve_axis_values(a); v++) {
      sieve_rule c = fit->rule;
      if (!is_any_order(a, v) && sieve_rule_set(&c, a, v) == 0 &&
          specific_order_fits(f, &c, a, at)) {
        fit->rule = c;
        break;
      }
    }
  }
}

/* An axis over the weighed cases: the values that explain as many, and the first cases that
 * decide it (the fit's rule gives their answers and another value does not). A case explained
 * by a misreading decides no axis: its recorded answer is the reading's under DeepInfer's other
 * values, and an implementation may add it to another value of the axis just as well. */
static void weigh_axis(fitter *f, fit_result *fit, const uint32_t *reads, int a) {
  fit_axis *x = &fit->axes[a];
  x->value = sieve_rule_get(&fit->rule, a);
  x->candidates = 1u << x->value;
  x->n_deciding = 0;
  x->deciding[0] = '\0';
  for (int v = 0; (f->searched >> a & 1) && v < sieve_axis_values(a); v++)
    if (v != x->value && ties_fit(f, fit, reads, a, v))
      x->candidates |= 1u << v;
  x->split = 0;
  for (size_t i = 0; (f->searched >> a & 1) && i < f->n && x->n_deciding < FIT_DECIDING; i++) {
    int decides = 0;
    const int explained = weighed(f, i) && (reads[i] >> a & 1) && agrees(f, i, &fit->rule);
    for (int v = 0; explained && v < sieve_axis_values(a) && !decides; v++) {
      decides = v != x->value && lost_at(f, i, fit, a, v);
      x->split |= decides && (x->candidates >> v & 1);
    }
    if (decides && x->n_deciding++ < FIT_DECIDING)
      append(x->deciding, sizeof x->deciding, ",", f->cases[i].result->id);
  }
}

/* The first weighed cases that record a reading of axis `a`'s values, or fingerprint probes that
 * ask it (they separate its values at DeepInfer's other values), for an axis no case decides:
 * the rest of the fit hides it there. */
static void find_masked(const fitter *f, fit_axis *x, int a) {
  char key[64];
  snprintf(key, sizeof key, ",%s=", sieve_axis_name(a));
  for (size_t i = 0, n = 0; x->n_deciding == 0 && i < f->n && n < 2; i++) {
    const fit_case *fc = &f->cases[i];
    const int separates =
        (fc->result->probed_axes >> a & 1) || (fc->rules && strstr(fc->rules, key));
    if (weighed(f, i) && separates) {
      append(x->masked, sizeof x->masked, ",", fc->result->id);
      n++;
    }
  }
}

/* Each axis over the small cases, and over all where they leave it open. */
static int describe_axes(fitter *f, fit_result *fit) {
  uint32_t *reads = malloc((f->n + 1) * sizeof *reads); /* the axes each case's answer read */
  if (!reads)
    return -1;
  for (size_t i = 0; i < f->n; i++) {
    const memo_entry *e = evaluate(f, &f->cases[i], &fit->rule);
    reads[i] = e ? e->consulted : ~0u;
  }
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++) {
    fit_axis *x = &fit->axes[a];
    f->all = 0;
    weigh_axis(f, fit, reads, a);
    if (x->candidates != (1u << x->value) || x->n_deciding == 0) {
      f->all = 1;
      weigh_axis(f, fit, reads, a);
    }
    for (int v = 0; x->n_deciding == 0 && (f->searched >> a & 1) && v < sieve_axis_values(a);
         v++) { /* only cases a misreading explains separate its values: they decide no axis */
      sieve_rule c = fit->rule;
      x->candidates |= (uint32_t)(sieve_rule_set(&c, a, v) == 0) << v;
    }
    x->candidates = prefer_specific_order(a, x->candidates);
    if (x->candidates != (1u << x->value))
      x->value = -1;
    if (x->value < 0 && (f->searched >> a & 1))
      find_masked(f, x, a);
  }
  f->all = 1;
  free(reads);
  return 0;
}

/* A departure a reading no engine chooses explains as well: DeepInfer's value on the axis with
 * that reading added gives as many answers. The evidence does not tell them apart, so the axis
 * is undetermined and the reading named beside it (a real engine's choice sieve has no axis
 * value for can look like either). */
static void misreading_alternatives(fitter *f, fit_result *fit) {
  char candidates[FIT_CANDIDATES * 64 + 2], kept[sizeof f->misreadings];
  snprintf(kept, sizeof kept, "%s", f->misreadings);
  misreading_candidates(f, candidates, sizeof candidates);
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++) {
    fit_axis *x = &fit->axes[a];
    sieve_rule spec_value = fit->rule;
    if (x->value <= 0 || x->from_hello || sieve_rule_set(&spec_value, a, 0) != 0)
      continue;
    for (const char *p = candidates + 1; *p && !x->alternative[0]; p += strcspn(p, ",") + 1) {
      char set[sizeof f->misreadings + 80];
      snprintf(set, sizeof set, "%s%.*s,", kept, (int)strcspn(p, ","), p);
      if (strlen(set) >= sizeof f->misreadings)
        continue;
      set_misreadings(f, set);
      if (score_from(f, &spec_value, fit->agreed) >= fit->agreed) {
        snprintf(x->alternative, sizeof x->alternative, "%.*s", (int)strcspn(p, ","), p);
        x->candidates |= 1u;
        x->value = -1;
      }
    }
  }
  set_misreadings(f, kept);
}

void fit_rule_text(const fit_result *fit, char *out, size_t len) {
  out[0] = '\0';
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++) {
    int v = fit->axes[a].value;
    if (v <= 0)
      continue;
    char one[96];
    snprintf(one, sizeof one, "%s=%s", sieve_axis_name(a), sieve_axis_value_name(a, v));
    append(out, len, " + ", one);
  }
  if (!out[0])
    snprintf(out, len, "deepinfer");
}

/* "axis=value" of the fitted rule; where the run leaves the axis undetermined, every value that
 * gives case i's answer with the rest of the rule, "t0_below=nonpositive or below_1e-7". */
static void undetermined_values(fitter *f, size_t i, const fit_result *fit, int a, char *out,
                                size_t len) {
  const int fitted = sieve_rule_get(&fit->rule, a);
  snprintf(out, len, "%s=%s", sieve_axis_name(a), sieve_axis_value_name(a, fitted));
  for (int v = 0; fit->axes[a].value < 0 && v < sieve_axis_values(a); v++) {
    sieve_rule other = fit->rule;
    if (v != fitted && sieve_rule_set(&other, a, v) == 0 && agrees(f, i, &other))
      append(out, len, " or ", sieve_axis_value_name(a, v));
  }
}

/* The departures of the fit failure i needs, each one whose undoing loses the agreement: into
 * explained_by ("a=x + b=y"), into causes those of axes some value fits ("a=x,b=y"), and into
 * `shown` with the values an undetermined axis allows besides and a note on an unfit one.
 * Returns how many of them are on axes no value fits. */
static int explanation(fitter *f, size_t i, const fit_result *fit, char *shown, size_t shown_len) {
  case_result *r = f->cases[i].result;
  int unfit = 0;
  const memo_entry *e = evaluate(f, &f->cases[i], &fit->rule);
  r->explained_by[0] = r->causes[0] = shown[0] = '\0';
  for (int pass = 0; pass < 2 && !r->explained_by[0]; pass++)
    for (int a = 0; a < SIEVE_AXIS_COUNT; a++) {
      int v = sieve_rule_get(&fit->rule, a);
      sieve_rule c = fit->rule;
      sieve_rule_set(&c, a, 0);
      if (v == 0 || !e || !(e->consulted >> a & 1) || (pass == 0 && agrees(f, i, &c)))
        continue;
      char one[160];
      snprintf(one, sizeof one, "%s=%s", sieve_axis_name(a), sieve_axis_value_name(a, v));
      append(r->explained_by, sizeof r->explained_by, " + ", one);
      if (!fit->axes[a].unfit) {
        append(r->causes, sizeof r->causes, ",", one);
        undetermined_values(f, i, fit, a, one, sizeof one);
      }
      append(shown, shown_len, " + ", one);
      if (fit->axes[a].unfit && ++unfit)
        append(shown, shown_len, " ", "(the nearest value of an axis no value fits on every case)");
    }
  return unfit;
}

/* What differs between the implementation's answer and the rule's, in a few words. */
static void difference(fit_case *fc, const cJSON *r, char *out, size_t len) {
  const cJSON *r_rows = cJSON_GetObjectItemCaseSensitive(r, "rows");
  const cJSON *h_rows = cJSON_GetObjectItemCaseSensitive(have(fc), "rows");
  const cJSON *re = cJSON_GetObjectItemCaseSensitive(r, "error");
  const cJSON *he = cJSON_GetObjectItemCaseSensitive(have(fc), "error");
  const cJSON *rr = cJSON_GetArrayItem(r_rows, 0), *hr = cJSON_GetArrayItem(h_rows, 0);
  re = re ? re : cJSON_GetObjectItemCaseSensitive(rr, "error");
  he = he ? he : cJSON_GetObjectItemCaseSensitive(hr, "error");
  const char *hk = sieve_case_str(he, "kind"), *hf = sieve_case_str(he, "field");
  if (he && !re)
    snprintf(out, len, "an error (%s, field '%s') where the rule answers", hk, hf);
  else if (re && !he)
    snprintf(out, len, "an answer where the rule's is an error (%s, field '%s')",
             sieve_case_str(re, "kind"), sieve_case_str(re, "field"));
  else if (re)
    snprintf(out, len, "an error (%s, field '%s') where the rule's is (%s, field '%s')", hk, hf,
             sieve_case_str(re, "kind"), sieve_case_str(re, "field"));
  else {
    const cJSON *rl = cJSON_GetObjectItemCaseSensitive(rr, "logprobs");
    const cJSON *hl = cJSON_GetObjectItemCaseSensitive(hr, "logprobs");
    int r_kept = 0, h_kept = 0, other = 0, nan = 0;
    for (const cJSON *x = rl ? rl->child : NULL, *y = hl ? hl->child : NULL; x && y;
         x = x->next, y = y->next) {
      r_kept += !cJSON_IsNull(x);
      h_kept += !cJSON_IsNull(y);
      other |= cJSON_IsNull(x) != cJSON_IsNull(y);
      nan |= sieve_answer_is_nan(y) && !sieve_answer_is_nan(x);
    }
    const cJSON *rt = cJSON_GetObjectItemCaseSensitive(rr, "token");
    const cJSON *ht = cJSON_GetObjectItemCaseSensitive(hr, "token");
    if (nan)
      snprintf(out, len, "NaN logprobs where the rule's are not");
    else if (other)
      snprintf(out, len, "%s tokens than the rule keeps",
               h_kept > r_kept   ? "keeps more"
               : h_kept < r_kept ? "keeps fewer"
                                 : "keeps as many but other");
    else if (cJSON_IsNumber(rt) && cJSON_IsNumber(ht) && rt->valuedouble != ht->valuedouble)
      snprintf(out, len, "draws another token than the rule");
    else
      snprintf(out, len, "values outside the bounds of the rule's");
  }
}

/* "top_p = 1" when every case of a group gives a parameter the same value, "" otherwise. */
static void shared_params(fitter *f, const size_t *members, size_t n, char *out, size_t len) {
  static const char *const names[] = {"temperature", "top_p", "top_k"};
  out[0] = '\0';
  for (size_t k = 0; k < 3; k++) {
    const cJSON *first = NULL;
    int same = 1;
    for (size_t m = 0; same && m < n; m++) {
      const cJSON *req = f->cases[members[m]].request;
      const cJSON *rows = cJSON_GetObjectItemCaseSensitive(req, "rows");
      const cJSON *params =
          cJSON_GetObjectItemCaseSensitive(rows ? cJSON_GetArrayItem(rows, 0) : req, "params");
      if (!params)
        params = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(req, "target"),
                                                  "params");
      const cJSON *v = cJSON_GetObjectItemCaseSensitive(params, names[k]);
      same =
          v && (!first ||
                (cJSON_Compare(v, first, 1) &&
                 (!cJSON_IsNumber(v) || signbit(v->valuedouble) == signbit(first->valuedouble))));
      first = first ? first : v;
    }
    if (same && first) {
      char *text = cJSON_PrintUnformatted(first);
      char one[96];
      snprintf(one, sizeof one, "%s = %s", names[k], text ? text : "?");
      free(text);
      append(out, len, ", ", one);
    }
  }
}

typedef struct residual {
  size_t index;
  char key[200]; /* op and difference */
} residual;

static int by_key(const void *a, const void *b) {
  return strcmp(((const residual *)a)->key, ((const residual *)b)->key);
}

static int by_count(const void *a, const void *b) {
  const fit_group *x = a, *y = b;
  return (y->count > x->count) - (y->count < x->count);
}

/* The failures the fit leaves, grouped by op and what differs, largest groups first. */
static int group_residual(fitter *f, fit_result *fit, const residual *res, size_t n) {
  size_t *members = malloc((n + 1) * sizeof *members);
  fit_group all[FIT_GROUPS_MAX * 4];
  size_t n_all = 0;
  if (!members)
    return -1;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && !strcmp(res[j].key, res[i].key))
      members[j - i] = res[j].index, j++;
    if (n_all < sizeof all / sizeof all[0]) {
      fit_group *g = &all[n_all++];
      char shared[160];
      shared_params(f, members, j - i, shared, sizeof shared);
      snprintf(g->kind, sizeof g->kind, "%.180s", res[i].key);
      snprintf(g->description, sizeof g->description, "%.180s%s%.100s", res[i].key,
               shared[0] ? "; every one with " : "", shared);
      g->count = j - i;
      g->cases[0] = '\0';
      for (size_t m = 0; m < j - i && m < 6; m++)
        append(g->cases, sizeof g->cases, ",", f->cases[members[m]].result->id);
    } else
      fit->grouped_rest += j - i;
    i = j;
  }
  qsort(all, n_all, sizeof all[0], by_count);
  for (size_t g = 0; g < n_all; g++)
    if (g < FIT_GROUPS_MAX)
      fit->groups[fit->n_groups++] = all[g];
    else
      fit->grouped_rest += all[g].count;
  free(members);
  return 0;
}

/* A failure the fit leaves: its difference from the fitted rule's answer, and the readings of
 * the case, only where the fitted rule answers it as DeepInfer does (the readings' answers are
 * DeepInfer's with one change) and no passing case of the same kind rules them out. */
static void residual_detail(fitter *f, size_t i, const fit_result *fit, const char *excluded,
                            const char *why, residual *out) {
  fit_case *fc = &f->cases[i];
  case_result *c = fc->result;
  const memo_entry *e = evaluate(f, fc, &fit->rule);
  answer_under(f, fc, &fit->rule);
  cJSON *r = cJSON_Parse(f->buf.data);
  char diff[160] = "", found[240];
  if (r)
    difference(fc, r, diff, sizeof diff);
  cJSON_Delete(r);
  out->index = i;
  snprintf(out->key, sizeof out->key, "%s: %s",
           sieve_case_str(cJSON_GetObjectItemCaseSensitive(c->fixture, "request"), "op"), diff);
  if (e && e->as_spec) {
    sieve_case_detail(c->fixture, have(fc), f->precision, why, excluded, c->detail,
                      sizeof c->detail, c->causes, sizeof c->causes);
    if (c->causes[0]) { /* the readings it gives are what the group shares */
      size_t at = strlen(out->key);
      if (strcmp(c->causes, SIEVE_CAUSE_FLOAT32) == 0)
        snprintf(out->key + at, sizeof out->key - at, "; within the float32 bounds");
      else
        snprintf(out->key + at, sizeof out->key - at, "; the answer of [%s]", c->causes);
    }
    return;
  }
  c->causes[0] = '\0';
  snprintf(found, sizeof found, "no known choice explains this (%s)", diff);
  sieve_case_detail_found(c->fixture, have(fc), found, why, c->detail, sizeof c->detail);
}

/* The axes a case is about: the one its fixture says it discriminates (fixtures/README.md,
 * "axis"; the mass top-p compares is the boundary's statement), or those whose fingerprint
 * probes asked it. */
static uint32_t declared_axes(const fit_case *fc) {
  if (fc->result->probed_axes)
    return fc->result->probed_axes;
  const char *axis = sieve_case_str(fc->result->fixture, "axis");
  axis = strcmp(axis, "topp_mass") == 0 ? "boundary" : axis;
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
    if (strcmp(sieve_axis_name(a), axis) == 0)
      return 1u << a;
  return 0;
}

/* Whether an unexplained failure turns on axis a: the case is about it, and another value of
 * it changes the oracle's answer there into one of the implementation's kind: an error where the
 * implementation answered an error, an answer where it answered (a value that makes the case an
 * error does not move toward an answer whose values differ). Then the value the search kept is
 * no more than the nearest: the
 * implementation follows no value of the axis on every case (a choice sieve has no value for).
 * A fingerprint probe is about its axes alone, so its failure turns on them whatever the other
 * values answer, as the joint reading (read_probes) has it. A failure in a case about another
 * axis names none: it stays in the residual. */
static int turns_on(fitter *f, size_t i, const fit_result *fit, int a) {
  if (f->cases[i].refused)
    return 0;
  fit_case *fc = &f->cases[i];
  if (!(declared_axes(fc) >> a & 1))
    return 0;
  if (fc->result->probed_axes) /* a probe asks its axis: as read_probes, no value gives it */
    return 1;
  const memo_entry *at = evaluate(f, fc, &fit->rule);
  const cJSON *h = have(fc), *rows = cJSON_GetObjectItemCaseSensitive(h, "rows");
  const int impl_error = cJSON_GetObjectItemCaseSensitive(h, "error") ||
                         cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(rows, 0), "error");
  if (!at || !(at->consulted >> a & 1))
    return 0;
  for (int v = 0; v < sieve_axis_values(a); v++) {
    sieve_rule other = fit->rule;
    if (v == sieve_rule_get(&fit->rule, a) || sieve_rule_set(&other, a, v) != 0)
      continue;
    const memo_entry *e = evaluate(f, fc, &other);
    if (e && e->answer != at->answer && e->is_error == impl_error)
      return 1;
  }
  return 0;
}

/* Whether unexplained failure k turns on no axis at all: the implementation departs in a way
 * sieve has no value for, and that departure may be what fails the cases about an axis too. */
static int stray(fitter *f, const fit_result *fit, const residual *res, size_t k) {
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
    if (turns_on(f, res[k].index, fit, a))
      return 0;
  return 1;
}

/* Marks the axes no value of which fits every case (turns_on), with the first such failures;
 * an undetermined axis too, at the value the search kept. Where other unexplained failures turn
 * on no axis, the cause may be theirs rather than the axis's (fit_axis.elsewhere). */
static void mark_unfit(fitter *f, fit_result *fit, const residual *res, size_t n_res) {
  int strays = 0;
  for (size_t k = 0; k < n_res && !strays; k++)
    strays = stray(f, fit, res, k);
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++) {
    fit_axis *x = &fit->axes[a];
    for (size_t k = 0; !x->from_hello && k < n_res; k++) {
      if (!turns_on(f, res[k].index, fit, a))
        continue;
      if (!x->unfit++)
        x->nearest = sieve_rule_get(&fit->rule, a);
      if (x->unfit <= FIT_DECIDING)
        append(x->unfit_cases, sizeof x->unfit_cases, ",", f->cases[res[k].index].result->id);
    }
    if (x->unfit) {
      x->value = -1;
      x->elsewhere = strays;
    }
  }
}

/* The fingerprint's joint reading: each axis's probe rows read under the values the fit found
 * on every other axis. */
static void read_probes(fitter *f, fit_result *fit) {
  uint32_t probed = 0;
  for (size_t i = 0; i < f->n; i++)
    probed |= f->cases[i].result->probed_axes;
  for (int a = 0; probed && a < SIEVE_AXIS_COUNT; a++) {
    fit->axes[a].probed = 0;
    for (int v = 0; v < sieve_axis_values(a); v++) {
      sieve_rule r = fit->rule;
      int all = sieve_rule_set(&r, a, v) == 0;
      for (size_t i = 0; all && i < f->n; i++)
        if (f->cases[i].result->probed_axes >> a & 1)
          all = explains(f, i, &r);
      fit->axes[a].probed |= (uint32_t)all << v;
    }
    fit->axes[a].probed = prefer_specific_order(a, fit->axes[a].probed);
  }
}

/* The passing cases the fitted rule answers otherwise: the implementation answers them as
 * DeepInfer does where the rule would not, so the rule is not all of its behaviour. */
static void passes_otherwise(fitter *f, fit_result *fit) {
  for (size_t i = 0; i < f->n; i++)
    if (weighed(f, i) && f->cases[i].result->alone == OUTCOME_PASS && !explains(f, i, &fit->rule) &&
        fit->passes_otherwise++ < FIT_DECIDING)
      append(fit->passes_otherwise_ids, sizeof fit->passes_otherwise_ids, ",",
             f->cases[i].result->id);
}

/* Every profile within one determined axis of the nearest; a value the profile could not
 * confirm contradicts no determined value (as in the fingerprint). */
static uint32_t differs(const fit_result *fit, const fit_start *start) {
  uint32_t out = 0;
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
    out |= (uint32_t)(fit->axes[a].value >= 0 && !(start->unconfirmed >> a & 1) &&
                      sieve_rule_get(&start->rule, a) != fit->axes[a].value)
           << a;
  return out;
}

static void nearest_profiles(fit_result *fit, const fit_start *starts, size_t n_starts) {
  int best = SIEVE_AXIS_COUNT;
  int dist[64];
  for (size_t i = 0; i < n_starts && i < 64; i++) {
    dist[i] = __builtin_popcount(differs(fit, &starts[i]));
    best = dist[i] < best ? dist[i] : best;
  }
  for (int d = best; d <= best + 1; d++)
    for (size_t i = 0; i < n_starts && i < 64 && fit->n_nearest < FIT_NEAREST_MAX; i++) {
      if (dist[i] != d)
        continue;
      fit_nearest *n = &fit->nearest[fit->n_nearest++];
      n->name = starts[i].name;
      n->rule = starts[i].rule;
      n->distance = d;
      n->differs = differs(fit, &starts[i]);
      n->unconfirmed = 0;
      for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
        n->unconfirmed |= (uint32_t)(fit->axes[a].value >= 0 && (starts[i].unconfirmed >> a & 1))
                          << a;
    }
}

/* The readings the run's evidence does not support under the fit, ",a,b,"; a passing case
 * rules a reading out only where the fitted rule answers it as DeepInfer does. */
static char *unsupported(fitter *f, const fit_result *fit) {
  size_t cap = 2;
  for (size_t i = 0; i < f->n; i++)
    cap += strlen(f->cases[i].readings) + strlen(f->cases[i].separates);
  char *out = malloc(cap);
  if (!out)
    return NULL;
  strcpy(out, ",");
  for (size_t i = 0; i < f->n; i++) {
    case_result *r = f->cases[i].result;
    const memo_entry *e = evaluate(f, &f->cases[i], &fit->rule);
    if (r->alone == OUTCOME_PASS && e && !e->as_spec)
      r->ruled_out[0] = '\0';
    for (const char *lists[] = {f->cases[i].readings, f->cases[i].separates, NULL}, **l = lists; *l;
         l++)
      for (const char *p = *l + 1; *p; p += strcspn(p, ",") + 1) {
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)strcspn(p, ","), p);
        if (name[0] && !in_list(out, name) && !supported(f, &fit->rule, name))
          strcat(strcat(out, name), ",");
      }
  }
  return out;
}

/* ", or by the reading [r] ..." for the first departure of `departures` ("axis=value + ...") that a
 * reading explains as well (misreading_alternatives); "" when none does. */
static void alternatives_of(const fit_result *fit, const char *departures, char *out, size_t len) {
  out[0] = '\0';
  for (int a = 0; a < SIEVE_AXIS_COUNT && !out[0]; a++) {
    char key[64];
    snprintf(key, sizeof key, "%s=", sieve_axis_name(a));
    if (fit->axes[a].alternative[0] && strstr(departures, key))
      snprintf(out, len, ", or by the reading [%s] with DeepInfer's %s", fit->axes[a].alternative,
               sieve_axis_name(a));
  }
}

/* The fit's misreadings whose answer case i gave, "a,b", without those the residual contradicts
 * when `trusted`. */
static void misreading_of(fitter *f, size_t i, int trusted, char *out, size_t len) {
  out[0] = '\0';
  for (const char *p = f->misreadings + 1; *p; p += strcspn(p, ",") + 1) {
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(p, ","), p);
    if (in_list(f->cases[i].readings, name) && !(trusted && in_list(f->contradicted, name)))
      append(out, len, ",", name);
  }
}

/* The hint of a case's reading called `name` (the first of a list), "" when it has none. */
static const char *reading_hint(const cJSON *c, const char *names) {
  const cJSON *readings = cJSON_GetObjectItemCaseSensitive(c, "readings");
  size_t n = strcspn(names, ",");
  for (const cJSON *r = readings ? readings->child : NULL; r; r = r->next) {
    const char *name = sieve_case_str(r, "name");
    if (strlen(name) == n && !strncmp(name, names, n))
      return sieve_case_str(r, "hint");
  }
  return "";
}

/* Case i, a failure the fitted rule gives: its detail names the departures it needs. */
static void explained_by_fit(fitter *f, size_t i, fit_result *fit, const char *why) {
  case_result *r = f->cases[i].result;
  char or_reading[128], shown[600], found[900];
  const int unfit = explanation(f, i, fit, shown, sizeof shown);
  alternatives_of(fit, r->explained_by, or_reading, sizeof or_reading);
  snprintf(found, sizeof found, "%s: %s%s",
           unfit ? "the fitted rule gives this answer, but no known choice explains it all"
                 : "explained by the fitted rule",
           shown, or_reading);
  sieve_case_detail_found(r->fixture, have(&f->cases[i]), found, why, r->detail, sizeof r->detail);
}

/* Case i, a failure the fit's misreadings give: its detail names them with their hint, and
 * doubts them where the residual contradicts every one. */
static void explained_by_misreadings(fitter *f, size_t i, const char *why) {
  case_result *r = f->cases[i].result;
  char found[700], names[sizeof r->causes];
  misreading_of(f, i, 1, r->causes, sizeof r->causes);
  misreading_of(f, i, 0, names, sizeof names);
  copy_text(r->explained_by, sizeof r->explained_by, names);
  snprintf(found, sizeof found, "%s%s [%.150s]: %.400s%s",
           r->causes[0] ? "explained by the misreading" : "the answer of the misreading",
           strchr(names, ',') ? "s" : "", names, reading_hint(r->fixture, names),
           r->causes[0] ? ""
                        : "; but unexplained failures that tell it apart give another answer, so "
                          "no known choice explains this for certain");
  sieve_case_detail_found(r->fixture, have(&f->cases[i]), found, why, r->detail, sizeof r->detail);
}

/* The fit's misreadings an unexplained failure tells apart where the fitted rule answers as
 * DeepInfer does (so the reading's recorded answer applies there) and whose answer it does not
 * give: such a reading gives some of the implementation's answers, not its rule. */
static void mark_contradicted(fitter *f, fit_result *fit, const residual *res, size_t n_res) {
  snprintf(f->contradicted, sizeof f->contradicted, ",");
  for (const char *p = f->misreadings + 1; *p; p += strcspn(p, ",") + 1) {
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(p, ","), p);
    for (size_t k = 0; k < n_res; k++) {
      fit_case *fc = &f->cases[res[k].index];
      if (in_list(fc->separates, name) && close_to_spec(f, fc, &fit->rule)) {
        append(fit->contradicted, sizeof fit->contradicted, ",", name);
        strcat(strcat(f->contradicted, name), ",");
        break;
      }
    }
  }
}

/* Each failure of the first pass: explained by the fit's departures or its misreadings, or left
 * to the residual. The residual first marks the axes no value fits and the misreadings it
 * contradicts, so that no detail names such an axis value or misreading as a cause. */
static int rewrite_cases(fitter *f, fit_result *fit, residual *res, size_t *n_res) {
  char *excluded = unsupported(f, fit);
  if (!excluded)
    return -1;
  for (size_t i = 0; i < f->n; i++) {
    const memo_entry *e = evaluate(f, &f->cases[i], &fit->rule);
    if (f->cases[i].result->alone != OUTCOME_PASS && !(e && e->agrees) &&
        !entry_explains(&f->cases[i], e))
      res[(*n_res)++].index = i;
  }
  mark_unfit(f, fit, res, *n_res);
  mark_contradicted(f, fit, res, *n_res);
  for (size_t i = 0, k = 0; i < f->n; i++) {
    case_result *r = f->cases[i].result;
    const memo_entry *e = evaluate(f, &f->cases[i], &fit->rule);
    if (r->alone == OUTCOME_PASS)
      continue;
    fit->failures++;
    fit->explained += k >= *n_res || res[k].index != i;
    if (k < *n_res && res[k].index == i)
      residual_detail(f, i, fit, excluded, r->why, &res[k++]);
    else if (e && e->agrees)
      explained_by_fit(f, i, fit, r->why);
    else
      explained_by_misreadings(f, i, r->why);
  }
  free(excluded);
  return 0;
}

/* ----------------------------------------------------------------------------- the run */

/* ",axis=value,..." of the readings named in `names` (",a,b,") that are axis values. */
static char *rules_of(const cJSON *c, const char *names) {
  const cJSON *readings = cJSON_GetObjectItemCaseSensitive(c, "readings");
  size_t cap = 2;
  for (const cJSON *r = readings ? readings->child : NULL; r; r = r->next)
    cap += strlen(sieve_case_str(r, "rule")) + 1;
  char *out = malloc(cap);
  if (out)
    strcpy(out, ",");
  for (const cJSON *r = readings ? readings->child : NULL; out && names && r; r = r->next)
    if (*sieve_case_str(r, "rule") && in_list(names, sieve_case_str(r, "name")))
      strcat(strcat(out, sieve_case_str(r, "rule")), ",");
  return out;
}

/* Whether DeepInfer's answer to a case is an invalid_logits error, of the request or a row. */
static int expects_kind(const cJSON *fixture, const char *kind) {
  const cJSON *expect = cJSON_GetObjectItemCaseSensitive(fixture, "expect");
  const cJSON *error = cJSON_GetObjectItemCaseSensitive(expect, "error");
  int found = !strcmp(sieve_case_str(error, "kind"), kind);
  const cJSON *row;
  cJSON_ArrayForEach(row, cJSON_GetObjectItemCaseSensitive(expect, "rows")) {
    error = cJSON_GetObjectItemCaseSensitive(row, "error");
    found |= !strcmp(sieve_case_str(error, "kind"), kind);
  }
  return found;
}

static int rejects_logits(const cJSON *fixture) { return expects_kind(fixture, "invalid_logits"); }

/* Whether another value of an axis the case is about answers it where DeepInfer's rejects it: the
 * case then tells that value from the others, and is weighed. */
static int answered_at_another_value(fitter *f, const fit_case *fc) {
  const uint32_t about = declared_axes(fc);
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
    for (int v = 1; (about >> a & 1) && v < sieve_axis_values(a); v++) {
      sieve_rule rule = SIEVE_RULE_DEEPINFER;
      if (sieve_rule_set(&rule, a, v) != 0)
        continue;
      answer_under(f, fc, &rule);
      if (!f->buf.failed && !strstr(f->buf.data, "\"error\""))
        return 1;
    }
  return 0;
}

/* The readings a failure rules out, ",a,b,": those it separates whose recorded answer is not its
 * own (NULL when out of memory). */
static char *contradicted(const case_result *r, int precision) {
  char separated[400], out[400] = "";
  sieve_case_separations(r->fixture, precision, separated, sizeof separated);
  char *causes = listed(r->causes);
  for (const char *p = separated; causes && *p; p += strcspn(p, ","), p += *p == ',') {
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(p, ","), p);
    if (!in_list(causes, name) && strlen(out) + strlen(name) + 2 < sizeof out)
      strcat(strcat(out, out[0] ? "," : ""), name);
  }
  const int ok = causes != NULL;
  free(causes);
  return ok ? listed(out) : NULL;
}

/* Appends to f->axis_readings the names of a case's readings that are axis values. */
static int note_axis_readings(fitter *f, const cJSON *c) {
  const cJSON *readings = cJSON_GetObjectItemCaseSensitive(c, "readings");
  for (const cJSON *r = readings ? readings->child : NULL; r; r = r->next) {
    const char *name = sieve_case_str(r, "name");
    if (!*sieve_case_str(r, "rule") || in_list(f->axis_readings, name))
      continue;
    size_t n = strlen(f->axis_readings);
    char *grown = realloc(f->axis_readings, n + strlen(name) + 2);
    if (!grown)
      return -1;
    f->axis_readings = grown;
    snprintf(grown + n, strlen(name) + 2, "%s,", name);
  }
  return 0;
}

static int load_cases(fitter *f, run_report *report) {
  f->cases = calloc(report->n_cases + 1, sizeof *f->cases);
  f->axis_readings = strdup(",");
  if (!f->cases || !f->axis_readings)
    return -1;
  for (size_t i = 0; i < report->n_cases; i++) {
    case_result *r = &report->cases[i];
    if (!r->fixture || !r->answer ||
        (r->alone != OUTCOME_PASS && r->alone != OUTCOME_FAIL && r->alone != OUTCOME_ERROR))
      continue;
    char err[8];
    fit_case *fc = &f->cases[f->n];
    fc->result = r;
    fc->request = sieve_case_request_compact(r->fixture, err, sizeof err);
    if (!fc->request)
      continue;
    fc->large = sieve_recipe_size(fc->request) >= FIT_LARGE_ROWS;
    fc->unchecked = rejects_logits(r->fixture) && !strstr(r->answer, "\"error\"") &&
                    !answered_at_another_value(f, fc);
    fc->refused =
        strstr(r->answer, "\"invalid_request\"") && !expects_kind(r->fixture, "invalid_request");
    /* DeepInfer's answer is the one the first pass judged (its fast path says which axes the
     * spec path would read). A large row's is written only once another rule needs it: until
     * then its entry claims every axis. */
    static const sieve_rule deepinfer = SIEVE_RULE_DEEPINFER;
    uint32_t consulted = ~0u;
    if (!fc->large) {
      consulted = answer_under(f, fc, &deepinfer);
      fc->spec = f->buf.failed ? NULL : strdup(f->buf.data);
    }
    fc->readings = listed(r->alone == OUTCOME_PASS ? "" : r->causes);
    fc->separates = r->alone == OUTCOME_PASS ? listed(r->ruled_out) : contradicted(r, f->precision);
    fc->rules = rules_of(r->fixture, fc->readings);
    if (note_axis_readings(f, r->fixture) != 0)
      return -1;
    f->n++;
    memo_entry *e = NULL;
    if ((!fc->large && !fc->spec) || !fc->readings || !fc->separates || !fc->rules ||
        !(e = memo_add(fc, &deepinfer, consulted, r->alone == OUTCOME_PASS, 1)))
      return -1;
    if (fc->spec)
      note_answer(e, fc->spec);
  }
  return 0;
}

static void free_cases(fitter *f) {
  for (size_t i = 0; i < f->n; i++) {
    cJSON_Delete(f->cases[i].request);
    cJSON_Delete(f->cases[i].have);
    free(f->cases[i].spec);
    free(f->cases[i].memo);
    free(f->cases[i].readings);
    free(f->cases[i].separates);
    free(f->cases[i].rules);
  }
  free(f->cases);
  free(f->axis_readings);
  jbuf_free(&f->buf);
}

int sieve_fit(run_report *report, const fit_start *starts, size_t n_starts) {
  fitter f = {.precision = report->precision, .searched = (1u << SIEVE_AXIS_COUNT) - 1};
  fit_result *fit = &report->fit;
  sieve_rule base = SIEVE_RULE_DEEPINFER;
  residual *res = NULL;
  int rc = -1;
  memset(fit, 0, sizeof *fit);
  if (report->own_rng) { /* the draw is the implementation's own: hello says so */
    base.draw = SIEVE_DRAW_OWN;
    f.searched &= ~(1u << SIEVE_AXIS_DRAW);
    fit->axes[SIEVE_AXIS_DRAW].from_hello = 1;
  }
  /* How the parameters are read, where validate showed it: filter rows alone may not, and
   * some values coincide under it (divide_float64 is the float32 division where T is read as a
   * float32). */
  if (report->read_param_precision > 0) {
    base.param_precision = report->read_param_precision - 1;
    f.searched &= ~(1u << SIEVE_AXIS_PARAM_PRECISION);
    fit->axes[SIEVE_AXIS_PARAM_PRECISION].from_hello = 1;
  }
  if (load_cases(&f, report) != 0)
    goto fail;
  rc = 0;
  if (f.n == 0)
    goto fail;
  rc = -1;
  if (search(&f, starts, n_starts, &base, fit) != 0 || add_misreadings(&f, fit) != 0 ||
      search_pairs(&f, fit) != 0)
    goto fail;
  keep_needed_misreadings(&f, fit);
  specific_orders(&f, fit);
  if (describe_axes(&f, fit) != 0)
    goto fail;
  misreading_alternatives(&f, fit);
  res = malloc((f.n + 1) * sizeof *res);
  size_t n_res = 0;
  rc = -1;
  if (!res)
    goto fail;
  if (rewrite_cases(&f, fit, res, &n_res) != 0)
    goto fail;
  read_probes(&f, fit);
  nearest_profiles(fit, starts, n_starts);
  qsort(res, n_res, sizeof *res, by_key);
  rc = group_residual(&f, fit, res, n_res);
  f.all = 1;
  for (size_t i = 0; i < f.n; i++)
    fit->considered += (size_t)weighed(&f, i);
  passes_otherwise(&f, fit);
  fit->made = rc == 0;
fail:
  free(res);
  free_cases(&f);
  return rc;
}
