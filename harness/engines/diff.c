/*
 * `sieve diff A B [--suite NAME]... [--format text|markdown|json]`: the
 * fixture cases on which two implementations answer differently, keyed by
 * stable case id and grouped by the axis each case discriminates (its "axis",
 * fixtures/README.md), with both answers.
 * Numbers agree within 1e-9 + 1e-9 relative when both declare float64; when
 * either computes in float32 (hello's "precision"), within twice the case's
 * derived float32 bound (f32_abs) plus that, since each may be that far from
 * the exact value (a few float32 roundings of a value the case has no bound for, where it
 * expects an error both sides answered). Two answers that both meet the case's expectation at their
 * precisions (a decision float32 can flip, recorded with all its outcomes)
 * do not differ. Messages, error codes and the oracle's extra answers
 * (margins, u) are not compared. Both are asked hello first, and a case of an
 * op either does not offer is skipped and counted; a crash, hang or garbage
 * is that case's answer, and the implementation is restarted.
 * Exit status: 0 no difference, 1 differences, 2 usage or no answer to hello.
 */
#define _GNU_SOURCE
#include "diff.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiles.h"
#include "protocol/conn.h"
#include "protocol/jbuf.h"
#include "protocol/request.h"
#include "protocol/serve.h"
#include "report/render.h"
#include "run/check.h"
#include "run/fixture.h"
#include "run/runner.h"
#include "run/suites.h"

typedef struct difference {
  char id[192];
  char axis[32];
  const char *kind; /* see kind_of */
  char a[160], b[160];
} difference;

/* Whether a member of object `obj` is one sieve diff leaves out: messages, names and the
 * oracle's extras (PROTOCOL.md). A speculate step's u (its object has a ratio) is compared. */
static int ignored(const cJSON *obj, const char *key) {
  static const char *const keys[] = {"message", "code", "u", "name", "version", "profile", NULL};
  if (key && strcmp(key, "u") == 0 && cJSON_GetObjectItemCaseSensitive(obj, "ratio"))
    return 0;
  if (sieve_serve_is_extra(key))
    return 1;
  for (int i = 0; key && keys[i]; i++)
    if (strcmp(key, keys[i]) == 0)
      return 1;
  return 0;
}

/* The expectation's float32 bound at this point of the answer: a matcher's f32_abs (a sparse
 * matcher keeps it inside), the largest of $any_of's, or 0. */
static double f32_bound(const cJSON *m) {
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(m, "f32_abs");
  double most = cJSON_IsNumber(b) ? b->valuedouble : 0.0;
  const cJSON *sparse = cJSON_GetObjectItemCaseSensitive(m, "$sparse");
  if (sparse)
    most = fmax(most, f32_bound(sparse));
  const cJSON *alternatives = cJSON_GetObjectItemCaseSensitive(m, "$any_of");
  for (const cJSON *x = alternatives ? alternatives->child : NULL; x; x = x->next)
    most = fmax(most, f32_bound(x));
  return most;
}

/* The largest float32 bound anywhere in an expectation. */
static double f32_bound_within(const cJSON *m) {
  double most = f32_bound(m);
  for (const cJSON *x = m ? m->child : NULL; x; x = x->next)
    most = fmax(most, f32_bound_within(x));
  return most;
}

/* The expectation under a key or index of the answer, or the matcher itself (a matcher, or a
 * choice of outcomes, covers the whole value it stands for). */
static const cJSON *below(const cJSON *m, const cJSON *parent, const cJSON *x, int index) {
  if (!m || f32_bound(m) > 0 || cJSON_GetObjectItemCaseSensitive(m, "$any_of"))
    return m;
  return cJSON_IsObject(parent) ? cJSON_GetObjectItemCaseSensitive(m, x->string)
                                : cJSON_GetArrayItem(m, index);
}

static int same_number(double x, double y, const cJSON *m, int f32) {
  if (isnan(x) || isnan(y) || isinf(x) || isinf(y))
    return (isnan(x) && isnan(y)) || x == y;
  /* Whole numbers (token ids) are compared exactly; other values within the bound. */
  if (x == floor(x) && y == floor(y) && fabs(x) >= 1 && fabs(y) >= 1)
    return x == y;
  if (!f32)
    return fabs(x - y) <= 1e-9 + 1e-9 * fabs(y);
  /* Where the case states no float32 bound (it expects an error both sides answered), a few
   * float32 roundings of the value's size. */
  const double bound = f32_bound_within(m);
  return fabs(x - y) <=
         1e-9 + 1e-9 * fabs(y) + (bound > 0 ? 2 * bound : 8 * FLT_EPSILON * (1 + fabs(y)));
}

/* Whether every member of object b that is compared is also a member of a. */
static int no_extra_keys(const cJSON *a, const cJSON *b) {
  for (const cJSON *y = b->child; y; y = y->next)
    if (!ignored(b, y->string) && !cJSON_GetObjectItemCaseSensitive(a, y->string))
      return 0;
  return 1;
}

/* Whether two answers agree; `m` is the case's expectation at the same place, and `f32` says
 * whether either side computes in float32. */
static int same(const cJSON *a, const cJSON *b, const cJSON *m, int f32) {
  double x, y;
  if (req_number(a, REQ_NULL_MINUS_INF, &x) == 0 && req_number(b, REQ_NULL_MINUS_INF, &y) == 0)
    return same_number(x, y, m, f32);
  if ((a->type & 0xFF) != (b->type & 0xFF))
    return 0;
  if (cJSON_IsString(a))
    return strcmp(a->valuestring, b->valuestring) == 0;
  if (cJSON_IsArray(a) && cJSON_GetArraySize(a) != cJSON_GetArraySize(b))
    return 0;
  if (cJSON_IsObject(a) && !no_extra_keys(a, b))
    return 0;
  const cJSON *other = b->child;
  int i = 0;
  for (const cJSON *item = a->child; item;
       item = item->next, other = other ? other->next : NULL, i++) {
    if (cJSON_IsObject(a)) {
      if (ignored(a, item->string))
        continue;
      other = cJSON_GetObjectItemCaseSensitive(b, item->string);
    }
    if (!other || !same(item, other, below(m, a, item, i), f32))
      return 0;
  }
  return 1;
}

/* A short account of an answer: kept ids, token, error, parameters or the first value. */
static void summary(const cJSON *answer, char *out, size_t len) {
  const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(answer, "rows"), 0);
  const cJSON *error = cJSON_GetObjectItemCaseSensitive(row ? row : answer, "error");
  const cJSON *lp = cJSON_GetObjectItemCaseSensitive(row, "logprobs");
  const cJSON *token = cJSON_GetObjectItemCaseSensitive(row, "token");
  if (!answer) {
    snprintf(out, len, "no answer");
  } else if (error) {
    snprintf(out, len, "error %s/%s", sieve_case_str(error, "kind"),
             sieve_case_str(error, "field"));
  } else if (cJSON_IsArray(lp)) {
    size_t at = (size_t)snprintf(out, len, "kept {");
    int i = 0, n = 0;
    for (const cJSON *x = lp->child; x && at < len; x = x->next, i++)
      if (!cJSON_IsNull(x) && n++ < 12)
        at += (size_t)snprintf(out + at, len - at, "%s%d", n > 1 ? "," : "", i);
    if (at < len)
      snprintf(out + at, len - at, "%s}", n > 12 ? ",..." : "");
  } else if (cJSON_IsNumber(token)) {
    const cJSON *logprob = cJSON_GetObjectItemCaseSensitive(row, "logprob");
    snprintf(out, len, "token %d, logprob %.6g", token->valueint,
             cJSON_IsNumber(logprob) ? logprob->valuedouble : NAN);
  } else {
    jbuf b = {0};
    jbuf_json(&b, answer);
    snprintf(out, len, "%.150s", b.data ? b.data : "");
    jbuf_free(&b);
  }
}

typedef struct side {
  conn c;
  const impl_target *target; /* what runs it */
  cJSON *hello;              /* its answer to hello, with the ops it offers */
  int precision;             /* hello's "precision"; float32 when absent */
  size_t crashes, answered;
  size_t in_a_row; /* requests in a row without an answer; at CONN_GIVE_UP none is sent any more */
  run_report fitted; /* its answers as sieve run judges them, and the fit of its rule */
  size_t cap_results;
} side;

typedef struct differ {
  side a, b;
  difference *found;
  size_t n, cap, compared, skipped, both_accepted, unlisted;
  char accepted_ids[240]; /* the first of the both_accepted cases, comma-separated */
  char skip_reason[240];  /* the last case's reason to be skipped */
  int fit;               /* keep the answers for the fit of each side's rule */
} differ;

/* An answer, or NULL after a crash, a hang or garbage, which restarts the implementation; the
 * summary then says what happened. */
static cJSON *ask(side *s, const cJSON *request, char *crash, size_t crash_len) {
  if (s->in_a_row >= CONN_GIVE_UP) {
    snprintf(crash, crash_len, "not asked: %d requests in a row got no answer", CONN_GIVE_UP);
    s->crashes++;
    return NULL;
  }
  cJSON *answer = conn_ask_json(&s->c, request, crash, crash_len);
  s->crashes += answer == NULL;
  s->answered += answer != NULL;
  s->in_a_row = answer ? 0 : s->in_a_row + 1;
  return answer;
}

/* Whether both sides can be asked the case (hello: ops, engine options, rng); the last reason
 * one cannot is kept for the report. */
static int both_offer(differ *d, const cJSON *request) {
  char why[200];
  int a = sieve_case_not_offered(request, d->a.hello, why, sizeof why);
  int skip = a || sieve_case_not_offered(request, d->b.hello, why, sizeof why);
  if (skip)
    snprintf(d->skip_reason, sizeof d->skip_reason, "%s: %.200s", a ? "A" : "B", why);
  d->skipped += skip != 0;
  return !skip;
}

/* Whether both answers meet the case's expectation, each at its own precision. */
static int both_accepted(const differ *d, const cJSON *expect, const cJSON *x, const cJSON *y) {
  char why[8];
  return expect && sieve_check_at(expect, x, d->a.precision, why, sizeof why, NULL) &&
         sieve_check_at(expect, y, d->b.precision, why, sizeof why, NULL);
}

static int agree(differ *d, const char *id, const cJSON *expect, const cJSON *x, const cJSON *y) {
  int f32 = d->a.precision == SIEVE_PRECISION_FLOAT32 || d->b.precision == SIEVE_PRECISION_FLOAT32;
  if (!x || !y)
    return !x && !y;
  if (same(x, y, expect, f32))
    return 1;
  if (!both_accepted(d, expect, x, y))
    return 0;
  size_t at = strlen(d->accepted_ids);
  if (d->both_accepted++ < 3)
    snprintf(d->accepted_ids + at, sizeof d->accepted_ids - at, "%s%s", at ? "," : "", id);
  return 1;
}

/* The first place two answers differ, as "rows[0].logprobs[3]", with the two values printed;
 * 0 when none is found. */
static int first_difference(const cJSON *a, const cJSON *b, const cJSON *m, int f32, char *path,
                            size_t len, char *va, char *vb, size_t vlen) {
  double x, y;
  if (!b ||
      (req_number(a, REQ_NULL_MINUS_INF, &x) == 0 && req_number(b, REQ_NULL_MINUS_INF, &y) == 0 &&
       !same_number(x, y, m, f32)) ||
      (!cJSON_IsArray(a) && !cJSON_IsObject(a) && !same(a, b, m, f32))) {
    char *ta = cJSON_PrintUnformatted(a), *tb = b ? cJSON_PrintUnformatted(b) : NULL;
    snprintf(va, vlen, "%.40s", ta ? ta : "");
    snprintf(vb, vlen, "%.40s", tb ? tb : "(missing)");
    free(ta);
    free(tb);
    return 1;
  }
  int i = 0;
  for (const cJSON *item = a->child; item; item = item->next, i++) {
    const cJSON *other = cJSON_IsObject(a) ? cJSON_GetObjectItemCaseSensitive(b, item->string)
                                           : cJSON_GetArrayItem(b, i);
    if (cJSON_IsObject(a) && ignored(a, item->string))
      continue;
    size_t at = strlen(path);
    if (cJSON_IsObject(a))
      snprintf(path + at, len - at, "%s%s", at ? "." : "", item->string);
    else
      snprintf(path + at, len - at, "[%d]", i);
    if (first_difference(item, other, below(m, a, item, i), f32, path, len, va, vb, vlen))
      return 1;
    path[at] = '\0';
  }
  return 0;
}

static int has_error(const cJSON *answer) {
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(answer, "rows");
  for (const cJSON *r = rows ? rows->child : NULL; r; r = r->next)
    if (cJSON_GetObjectItemCaseSensitive(r, "error"))
      return 1;
  return cJSON_GetObjectItemCaseSensitive(answer, "error") != NULL;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The finite values of a logprobs array, sorted, malloc'd; their count in *n. */
static double *kept_values(const cJSON *lp, size_t *n) {
  double *v = malloc(((size_t)cJSON_GetArraySize(lp) + 1) * sizeof *v);
  *n = 0;
  for (const cJSON *x = lp ? lp->child : NULL; v && x; x = x->next)
    if (cJSON_IsNumber(x))
      v[(*n)++] = x->valuedouble;
  if (v)
    qsort(v, *n, sizeof *v, by_value);
  return v;
}

/* Whether two filter rows keep as many tokens with the same values, so that they differ only
 * in which of the tied tokens stayed. */
static int same_but_tied_ids(const cJSON *x, const cJSON *y, const cJSON *m, int f32) {
  size_t nx, ny;
  double *vx = kept_values(cJSON_GetObjectItemCaseSensitive(x, "logprobs"), &nx);
  double *vy = kept_values(cJSON_GetObjectItemCaseSensitive(y, "logprobs"), &ny);
  double tol = f32 ? 2 * f32_bound_within(m) : 0.0;
  int same_values = vx && vy && nx == ny && nx > 0;
  for (size_t i = 0; same_values && i < nx; i++)
    same_values = fabs(vx[i] - vy[i]) <= 1e-9 + 1e-9 * fabs(vy[i]) + tol;
  free(vx);
  free(vy);
  return same_values;
}

/* Whether `id` is among the ids of `list` (an array of numbers, or absent). */
static int listed_id(const cJSON *list, int id) {
  for (const cJSON *x = list ? list->child : NULL; x; x = x->next)
    if (cJSON_IsNumber(x) && x->valuedouble == id)
      return 1;
  return 0;
}

/* Whether the tokens two filter rows keep apart (one keeps, the other does not) share one logit
 * in the request's row and none is counted by a penalty or blacklisted: then only which of the
 * tied tokens stay differs. A row given by a recipe has no logits to read: its values decide. */
static int apart_are_tied(const cJSON *a, const cJSON *b, const cJSON *row, const cJSON *engine) {
  const cJSON *logits = cJSON_GetObjectItemCaseSensitive(row, "logits"), *first = NULL;
  const cJSON *la = cJSON_GetObjectItemCaseSensitive(a, "logprobs");
  const cJSON *lb = cJSON_GetObjectItemCaseSensitive(b, "logprobs");
  if (!cJSON_IsArray(logits))
    return 1;
  int i = 0;
  for (const cJSON *x = la ? la->child : NULL, *y = lb ? lb->child : NULL; x && y;
       x = x->next, y = y->next, i++) {
    if (cJSON_IsNull(x) == cJSON_IsNull(y))
      continue;
    const cJSON *l = cJSON_GetArrayItem(logits, i);
    if ((first && !cJSON_Compare(l, first, 1)) ||
        listed_id(cJSON_GetObjectItemCaseSensitive(row, "output_ids"), i) ||
        listed_id(cJSON_GetObjectItemCaseSensitive(row, "prompt_ids"), i) ||
        listed_id(cJSON_GetObjectItemCaseSensitive(engine, "blacklist"), i))
      return 0;
    first = first ? first : l;
  }
  return 1;
}

/* What kind of difference two answers show: "no answer" (a crash, hang or garbage), "error"
 * (one side rejects what the other answers), "error kind" (both reject, differently), "tied
 * ids" (filter rows keeping as many tokens with the same logprobs, the tokens kept apart tied
 * in the request: only which tied tokens stay differs), or "values". */
static const char *kind_of(const cJSON *x, const cJSON *y, const cJSON *expect,
                           const cJSON *request, int f32) {
  if (!x || !y)
    return "no answer";
  if (has_error(x) != has_error(y))
    return "error";
  if (has_error(x))
    return "error kind";
  const cJSON *rx = cJSON_GetObjectItemCaseSensitive(x, "rows");
  const cJSON *ry = cJSON_GetObjectItemCaseSensitive(y, "rows");
  const cJSON *rm = cJSON_GetObjectItemCaseSensitive(expect, "rows");
  const cJSON *rq = cJSON_GetObjectItemCaseSensitive(request, "rows");
  const cJSON *engine = cJSON_GetObjectItemCaseSensitive(request, "engine");
  int tied = cJSON_IsArray(rx) && cJSON_GetArraySize(rx) == cJSON_GetArraySize(ry);
  for (int i = 0; tied && i < cJSON_GetArraySize(rx); i++) {
    const cJSON *a = cJSON_GetArrayItem(rx, i), *b = cJSON_GetArrayItem(ry, i);
    tied = same(a, b, cJSON_GetArrayItem(rm, i), f32) ||
           (same_but_tied_ids(a, b, cJSON_GetArrayItem(rm, i), f32) &&
            apart_are_tied(a, b, cJSON_GetArrayItem(rq, i), engine));
  }
  return tied ? "tied ids" : "values";
}

/* Keeps a side's answer to a case for the fit of its rule, judged as sieve run judges it (a
 * crash is not weighed); the answer loses its error messages. Out of memory, the fit has one
 * case less. */
static void keep(side *s, const cJSON *c, cJSON *answer) {
  run_report *r = &s->fitted;
  if (!answer)
    return;
  if (r->n_cases == s->cap_results) {
    size_t cap = s->cap_results ? 2 * s->cap_results : 64;
    case_result *grown = realloc(r->cases, cap * sizeof *grown);
    if (!grown)
      return;
    r->cases = grown;
    s->cap_results = cap;
  }
  case_result *one = &r->cases[r->n_cases];
  sieve_case_of(one, c);
  sieve_case_judge(one, answer, s->precision);
  if ((one->answer = sieve_answer_text(answer)) != NULL)
    r->n_cases++;
}

static void compare(differ *d, const cJSON *c, const char *id, const char *axis,
                    const cJSON *expect, const cJSON *request) {
  char crash_a[300] = "", crash_b[300] = "";
  if (!both_offer(d, request))
    return;
  cJSON *x = ask(&d->a, request, crash_a, sizeof crash_a);
  cJSON *y = ask(&d->b, request, crash_b, sizeof crash_b);
  d->compared++;
  if (!agree(d, id, expect, x, y)) {
    if (d->n == d->cap) {
      size_t cap = d->cap ? d->cap * 2 : 64;
      difference *grown = realloc(d->found, cap * sizeof *d->found);
      if (!grown) { /* out of memory: the case is counted as compared, not listed */
        d->unlisted++;
        goto done;
      }
      d->found = grown;
      d->cap = cap;
    }
    difference *f = &d->found[d->n++];
    int f32 =
        d->a.precision == SIEVE_PRECISION_FLOAT32 || d->b.precision == SIEVE_PRECISION_FLOAT32;
    f->kind = kind_of(x, y, expect, request, f32);
    snprintf(f->id, sizeof f->id, "%s", id);
    snprintf(f->axis, sizeof f->axis, "%s", *axis ? axis : "none");
    if (x)
      summary(x, f->a, sizeof f->a);
    else
      snprintf(f->a, sizeof f->a, "crash: %.150s", crash_a);
    if (y)
      summary(y, f->b, sizeof f->b);
    else
      snprintf(f->b, sizeof f->b, "crash: %.150s", crash_b);
    char path[96] = "", va[48], vb[48];
    if (x && y && strcmp(f->kind, "values") == 0 &&
        first_difference(x, y, expect, f32, path, sizeof path, va, vb, sizeof va)) {
      size_t la = strlen(f->a), lb = strlen(f->b);
      snprintf(f->a + la, sizeof f->a - la, "; %s %s", path, va);
      snprintf(f->b + lb, sizeof f->b - lb, "; %s %s", path, vb);
    }
  }
done:
  if (d->fit) {
    keep(&d->a, c, x);
    keep(&d->b, c, y);
  }
  cJSON_Delete(x);
  cJSON_Delete(y);
}

static int wanted(const char *const *suites, const cJSON *c) {
  if (!suites || !suites[0])
    return 1;
  for (const char *const *s = suites; *s; s++)
    if (strcmp(*s, suite_of_case(c)) == 0)
      return 1;
  return 0;
}

static void compare_fixtures(differ *d, const sieve_fixtures *fx, const char *const *suites) {
  size_t total = 0, done = 0;
  for (const cJSON *c = fx->cases->child; c; c = c->next)
    total += (size_t)wanted(suites, c);
  for (const cJSON *c = fx->cases->child; c; c = c->next) {
    char err[256];
    if (!wanted(suites, c))
      continue;
    if (++done % 50 == 0 || done == total)
      fprintf(stderr, "sieve diff: %zu of %zu cases\n", done, total);
    cJSON *request = sieve_case_request_compact(c, err, sizeof err);
    if (request)
      compare(d, c, sieve_case_str(c, "id"), sieve_case_str(c, "axis"),
              cJSON_GetObjectItemCaseSensitive(c, "expect"), request);
    cJSON_Delete(request);
  }
}

static int axis_seen_before(const differ *d, size_t i) {
  for (size_t j = 0; j < i; j++)
    if (strcmp(d->found[j].axis, d->found[i].axis) == 0)
      return 1;
  return 0;
}

/* An axis's fitted value for the report, "undetermined" or "no value fits". */
static const char *fitted_value(const fit_axis *x, int a) {
  return x->value >= 0 ? sieve_axis_value_name(a, x->value)
         : x->unfit    ? "no value fits"
                       : "undetermined";
}

/* Whether the two fits determine different values on an axis. */
static int fits_differ(const differ *d, int a) {
  const fit_axis *x = &d->a.fitted.fit.axes[a], *y = &d->b.fitted.fit.axes[a];
  return x->value >= 0 && y->value >= 0 && x->value != y->value;
}

/* The fitted rule, the misreadings the fit added to it (sieve run's "explained by the
 * misreading"), then the axes it leaves open or no value fits, as sieve run says them:
 * "deepinfer + the misreading [topk-off-by-one]; no value fits: penalty_tokens". */
static void rule_with_misreadings(const fit_result *fit, char *out, size_t len) {
  char whole[900];
  report_rule_text(fit, whole, sizeof whole);
  fit_rule_text(fit, out, len);
  const size_t rule_len = strlen(out);
  if (fit->misreadings[0]) {
    size_t at = strlen(out);
    snprintf(out + at, len - at, " + the misreading%s [%s]",
             strchr(fit->misreadings, ',') ? "s" : "", fit->misreadings);
  }
  size_t at = strlen(out);
  if (strlen(whole) > rule_len && at + 1 < len)
    snprintf(out + at, len - at, "%s", whole + rule_len);
}

/* The rule each side's answers follow, as sieve run fits it over these cases, and the axes
 * on which the two fits determine different values. */
static void print_fits(const differ *d, const char *a, const char *b, int markdown) {
  char ra[1200], rb[1200];
  if (!d->a.fitted.fit.made || !d->b.fitted.fit.made)
    return;
  rule_with_misreadings(&d->a.fitted.fit, ra, sizeof ra);
  rule_with_misreadings(&d->b.fitted.fit, rb, sizeof rb);
  printf(markdown ? "\nThe rules their answers follow (the fit of `sieve run` over these cases): "
                    "`%s` follows `%s`; `%s` follows `%s`.\n"
                  : "the rules their answers follow (the fit of sieve run over these cases):\n"
                    "  %s: %s\n  %s: %s\n",
         a, ra, b, rb);
  int any = 0;
  for (int ax = 0; ax < SIEVE_AXIS_COUNT; ax++)
    if (fits_differ(d, ax))
      printf("%s%s (%s %s, %s %s)",
             any++      ? ", "
             : markdown ? "\nThey differ on "
                        : "  they differ on ",
             sieve_axis_name(ax), a, fitted_value(&d->a.fitted.fit.axes[ax], ax), b,
             fitted_value(&d->b.fitted.fit.axes[ax], ax));
  printf("%s", any ? "\n" : "");
}

/* The differences grouped by axis, the axes in the order they first differ (the probes', then
 * the fixtures' axes, as each case names its own). */
static void print(const differ *d, const char *a, const char *b, int markdown) {
  if (markdown)
    printf("## sieve diff\n\n`%s` and `%s` differ on %zu of %zu cases.\n", a, b, d->n + d->unlisted,
           d->compared);
  else
    printf("sieve diff: %s and %s differ on %zu of %zu cases\n", a, b, d->n + d->unlisted,
           d->compared);
  printf("%scompared at the precision each side declares in hello (float32 when it declares "
         "none): A %s, B %s\n",
         markdown ? "\n" : "", sieve_precision_name(d->a.precision),
         sieve_precision_name(d->b.precision));
  if (d->both_accepted)
    printf("%s%zu case%s answered differently, each answer within the fixture's expectation (its "
           "bounds, or an outcome it records as acceptable): not counted (%s%s)\n",
           markdown ? "\n" : "", d->both_accepted, d->both_accepted == 1 ? "" : "s",
           d->accepted_ids, d->both_accepted > 3 ? ",..." : "");
  if (d->unlisted)
    printf("%s%zu more case%s differ, not listed: out of memory\n", markdown ? "\n" : "",
           d->unlisted, d->unlisted == 1 ? "" : "s");
  if (d->skipped)
    printf("%s%zu case%s skipped: hello says one side cannot be asked them (the last: %s)\n",
           markdown ? "\n" : "", d->skipped, d->skipped == 1 ? "" : "s", d->skip_reason);
  if (d->a.crashes || d->b.crashes)
    printf("%scrashes, hangs or garbage (each time restarted): %s %zu, %s %zu\n",
           markdown ? "\n" : "", a, d->a.crashes, b, d->b.crashes);
  print_fits(d, a, b, markdown);
  if (d->n)
    printf(markdown ? "\nThe cases that differ, by the axis each case is about (its cause may be "
                      "another: the fit above names where the rules differ).\n"
                    : "the cases that differ, by the axis each case is about (its cause may be "
                      "another: the fit above names where the rules differ):\n");
  for (size_t k = 0; k < d->n; k++) {
    const char *axis = d->found[k].axis;
    size_t n = 0;
    if (axis_seen_before(d, k))
      continue;
    for (size_t i = 0; i < d->n; i++)
      n += strcmp(d->found[i].axis, axis) == 0;
    /* A case whose fixture names no axis is about a statement no engine varies. */
    const char *about = strcmp(axis, "none") == 0 ? "no axis" : axis;
    if (markdown)
      printf("\n### Cases about %s (%zu)\n\n| case | %s | %s |\n|---|---|---|\n", about, n, a, b);
    else
      printf("\ncases about %s (%zu)\n", about, n);
    for (size_t i = 0; i < d->n; i++)
      if (strcmp(d->found[i].axis, axis) == 0)
        printf(markdown ? "| `%s` (%s) | %s | %s |\n" : "  %s (%s): %s | %s\n", d->found[i].id,
               d->found[i].kind, d->found[i].a, d->found[i].b);
  }
}

static void print_json(const differ *d, const char *a, const char *b) {
  cJSON *out = cJSON_CreateObject(), *cases = cJSON_CreateArray();
  cJSON_AddStringToObject(out, "a", a);
  cJSON_AddStringToObject(out, "b", b);
  cJSON_AddStringToObject(out, "precision_a", sieve_precision_name(d->a.precision));
  cJSON_AddStringToObject(out, "precision_b", sieve_precision_name(d->b.precision));
  cJSON_AddNumberToObject(out, "compared", (double)d->compared);
  cJSON_AddNumberToObject(out, "differ", (double)(d->n + d->unlisted));
  cJSON_AddNumberToObject(out, "both_accepted", (double)d->both_accepted);
  cJSON_AddNumberToObject(out, "skipped", (double)d->skipped);
  cJSON_AddNumberToObject(out, "crashes_a", (double)d->a.crashes);
  cJSON_AddNumberToObject(out, "crashes_b", (double)d->b.crashes);
  for (size_t i = 0; i < d->n; i++) {
    cJSON *c = cJSON_CreateObject();
    cJSON_AddStringToObject(c, "id", d->found[i].id);
    cJSON_AddStringToObject(c, "axis", d->found[i].axis);
    cJSON_AddStringToObject(c, "kind", d->found[i].kind);
    cJSON_AddStringToObject(c, "a", d->found[i].a);
    cJSON_AddStringToObject(c, "b", d->found[i].b);
    cJSON_AddItemToArray(cases, c);
  }
  cJSON_AddItemToObject(out, "cases", cases);
  for (int k = 0; k < 2; k++) {
    const fit_result *fit = k ? &d->b.fitted.fit : &d->a.fitted.fit;
    cJSON *rule = fit->made ? cJSON_AddObjectToObject(out, k ? "fit_b" : "fit_a")
                            : cJSON_AddNullToObject(out, k ? "fit_b" : "fit_a");
    for (int ax = 0; fit->made && ax < SIEVE_AXIS_COUNT; ax++)
      if (fit->axes[ax].value >= 0)
        cJSON_AddStringToObject(rule, sieve_axis_name(ax),
                                sieve_axis_value_name(ax, fit->axes[ax].value));
      else
        cJSON_AddNullToObject(rule, sieve_axis_name(ax));
  }
  char *text = cJSON_PrintUnformatted(out);
  printf("%s\n", text ? text : "{}");
  free(text);
  cJSON_Delete(out);
}

/* The fit of each side's rule over the cases both answered (run/fit.h). */
static void fit_sides(differ *d) {
  fit_start starts[64];
  size_t n = profiles_fit_starts(starts, sizeof starts / sizeof starts[0]);
  side *const sides[2] = {&d->a, &d->b};
  for (int k = 0; k < 2; k++) {
    side *s = sides[k];
    s->fitted.precision = s->precision;
    s->fitted.own_rng = !strcmp(sieve_case_str(s->hello, "rng"), "own");
    if (sieve_fit(&s->fitted, starts, n) != 0)
      fprintf(stderr, "sieve diff: out of memory: no fit of the rules\n");
  }
}

/* Starts an implementation and asks hello; -1, saying why, when it does not answer with ops. */
static int greet(side *s, const char *name, int timeout_ms) {
  char crash[300] = "";
  conn_start(&s->c, s->target, timeout_ms);
  s->hello = conn_hello(&s->c, crash, sizeof crash);
  const cJSON *precision = cJSON_GetObjectItemCaseSensitive(s->hello, "precision");
  s->precision = cJSON_IsString(precision) ? sieve_precision_parse(precision->valuestring)
                                           : SIEVE_PRECISION_FLOAT32;
  if (s->precision < 0) {
    fprintf(stderr, "sieve diff: %s: hello: \"precision\" must be \"float32\" or \"float64\"\n",
            name);
    return -1;
  }
  char why[400];
  if (sieve_hello_check(s->hello, crash, why, sizeof why) == 0)
    return 0;
  fprintf(stderr, "sieve diff: %s: %s\n", name, why);
  return -1;
}

static void stop(differ *d) {
  conn_stop(&d->a.c, NULL, 0);
  conn_stop(&d->b.c, NULL, 0);
  cJSON_Delete(d->a.hello);
  cJSON_Delete(d->b.hello);
}

int sieve_diff(const diff_request *rq) {
  static differ d;
  memset(&d, 0, sizeof d);
  d.a.target = rq->targets[0];
  d.b.target = rq->targets[1];
  if (greet(&d.a, rq->names[0], rq->timeout_ms) != 0 ||
      greet(&d.b, rq->names[1], rq->timeout_ms) != 0) {
    stop(&d);
    return 2;
  }
  d.fit = rq->fit;
  compare_fixtures(&d, rq->fixtures, rq->suites);
  if (d.fit)
    fit_sides(&d);
  if (rq->format == DIFF_JSON)
    print_json(&d, rq->names[0], rq->names[1]);
  else
    print(&d, rq->names[0], rq->names[1], rq->format == DIFF_MARKDOWN);
  /* A side that answered nothing after hello gave no answers to compare, and no case compared
   * is no agreement: no verdict either way. */
  const side *silent = d.compared && !d.a.answered   ? &d.a
                       : d.compared && !d.b.answered ? &d.b
                                                     : NULL;
  if (silent)
    fprintf(stderr,
            "sieve diff: %s answered none of the %zu requests: the differences are its "
            "crashes, not its choices\n",
            silent == &d.a ? rq->names[0] : rq->names[1], d.compared);
  if (!d.compared)
    fprintf(stderr,
            "sieve diff: no case was compared (%zu skipped: one side or the other does not "
            "offer what they ask)\n",
            d.skipped);
  stop(&d);
  free(d.found);
  side *const sides[2] = {&d.a, &d.b};
  for (int k = 0; k < 2; k++) {
    const side *s = sides[k];
    for (size_t i = 0; i < s->fitted.n_cases; i++)
      free(s->fitted.cases[i].answer);
    free(s->fitted.cases);
  }
  return silent || !d.compared ? 2 : d.n + d.unlisted ? 1 : 0;
}
