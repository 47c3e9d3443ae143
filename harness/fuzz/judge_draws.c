/*
 * The verdicts on draws (judge.h; README.md, "Judging"): a sample row's token and logprob, a
 * speculative chain's committed tokens, and the uniforms and positions the hash and the
 * position rule give, which are exact.
 *
 * A sample's token is the rule's, except where a decision the precision could flip lies on its
 * way: a draw within the band of the token's cdf step that fixtures/README.md ("Close
 * decisions") derives (1e-6 of the total, and at float32 twice the logprob bound plus (n + 2) u
 * more, n the kept tokens), or a filter within float reach (fuzz_filter_close), where any token
 * of probability above 0 in the full distribution may come back, its logprob not held to the
 * rule's.
 */
#define _POSIX_C_SOURCE 200809L
#include "judge.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "protocol/jbuf.h"
#include "protocol/request.h"
#include "protocol/serve.h"
#include "run/check.h"

static const cJSON *member(const cJSON *x, const char *name) {
  return cJSON_GetObjectItemCaseSensitive(x, name);
}

/* ----------------------------------------------------------------------------- the oracle */

cJSON *fuzz_oracle_answer(const fuzz_judge *j, const cJSON *request, size_t row) {
  const cJSON *rows = member(request, "rows"), *x;
  cJSON *alone = cJSON_CreateObject(), *root = NULL, *out = NULL;
  jbuf answer = {0};
  int ok = alone != NULL;
  cJSON_ArrayForEach(x, request) if (ok && strcmp(x->string, "rows") != 0) ok =
      cJSON_AddItemReferenceToObject(alone, x->string, (cJSON *)x);
  cJSON *one = ok && rows ? cJSON_AddArrayToObject(alone, "rows") : NULL;
  if (ok && rows)
    ok = one && cJSON_AddItemReferenceToArray(one, cJSON_GetArrayItem(rows, (int)row));
  if (ok) {
    sieve_serve_request(alone, j->name, j->rule, REQ_OPTIONS_ALL, &answer); /* fuzz sets none */
    root = answer.failed || !answer.data ? NULL : cJSON_Parse(answer.data);
  }
  cJSON *got = rows ? cJSON_GetObjectItemCaseSensitive(root, "rows") : NULL;
  out = !rows                                                ? root
        : cJSON_IsArray(got) && cJSON_GetArraySize(got) == 1 ? cJSON_DetachItemFromArray(got, 0)
        : root                                               ? cJSON_Duplicate(root, 1)
                                                             : NULL;
  if (out != root)
    cJSON_Delete(root);
  cJSON_Delete(alone);
  jbuf_free(&answer);
  return out;
}

/* ----------------------------------------------------------------------------- sample */

/* The drawn token and its logprob (null for -inf, a token of probability 0); -1 when they are
 * not an id below v and a number or -inf. */
static int read_draw(const cJSON *answer, size_t v, size_t *token, double *logprob) {
  const cJSON *t = member(answer, "token"), *lp = member(answer, "logprob");
  if (!cJSON_IsNumber(t) || !(t->valuedouble >= 0) || t->valuedouble >= (double)v ||
      t->valuedouble != floor(t->valuedouble) ||
      !(cJSON_IsNull(lp) ||
        (cJSON_IsNumber(lp) && !isnan(lp->valuedouble) && lp->valuedouble != INFINITY)))
    return -1;
  *token = (size_t)t->valuedouble;
  *logprob = cJSON_IsNull(lp) ? -INFINITY : lp->valuedouble;
  return 0;
}

/* What a sample's filter decides: the oracle's answer and the bound of its kept set. Whether
 * it is within float reach is asked only where the token or its logprob is not the rule's. */
typedef struct sample_filter {
  cJSON *row, *answer; /* the row as a filter row (logits and params), and the oracle's answer */
  const cJSON *engine;
  double bound; /* the logprob bound of its kept set */
  double kept;  /* its kept count */
} sample_filter;

static int filter_of(const fuzz_judge *j, const cJSON *row, const cJSON *engine,
                     sample_filter *out) {
  out->engine = engine;
  if (!(out->row = fuzz_filter_row(member(row, "logits"), member(row, "params"))))
    return -1;
  if (!(out->answer = fuzz_oracle_row(j, out->row, engine)))
    return -1;
  const cJSON *kept = member(out->answer, "kept");
  out->kept = cJSON_IsNumber(kept) ? kept->valuedouble : 0.0;
  out->bound =
      j->precision == SIEVE_PRECISION_FLOAT32 ? fuzz_f32_bound(out->row, out->answer) : 1e-9;
  return 0;
}

/* The band of the draw's cdf steps within which a token on either side may come back, as a
 * fraction of the total. */
static double draw_band(const fuzz_judge *j, const sample_filter *f) {
  return 1e-6 +
         (j->precision == SIEVE_PRECISION_FLOAT32 ? 2 * f->bound + (f->kept + 2) * 0x1p-24 : 0.0);
}

/* Whether token t's step of the rule's cdf (its kept set in token order) lies within `band` of
 * u (generators/fixture_format.py draw_tokens): the precision's draw may take it, also at u = 0,
 * where a first token whose probability underflows is skipped. */
static int near_draw(const sample_filter *f, size_t t, double u, double band) {
  const cJSON *lp = member(f->answer, "logprobs"), *x;
  double total = 0.0, below = 0.0, p = 0.0;
  size_t i = 0;
  cJSON_ArrayForEach(x, lp) {
    const double q = cJSON_IsNumber(x) ? exp(x->valuedouble) : 0.0;
    total += q;
    below += i < t ? q : 0.0;
    p = i++ == t ? q : p;
  }
  const double target = u * total, width = band * total;
  return p > 0.0 && below <= target + width && below + p >= target - width;
}

static void judge_token(const fuzz_judge *j, const cJSON *row, const cJSON *want, size_t wt,
                        size_t gt, double got_logprob, const sample_filter *f,
                        fuzz_judgement *out) {
  const cJSON *margin = member(want, "draw_margin"), *u = member(want, "u");
  const double m = cJSON_IsNumber(margin) ? margin->valuedouble : 0.0;
  int close = 0, possible = 0;
  if (cJSON_IsNumber(u) && near_draw(f, gt, u->valuedouble, draw_band(j, f))) {
    *out = (fuzz_judgement){FUZZ_REACH, ""};
    return;
  }
  if (got_logprob != -INFINITY && fuzz_filter_close(j, f->row, f->engine, &close) == 0 && close &&
      fuzz_token_possible(j, row, f->engine, gt, &possible) == 0 && possible) {
    *out = (fuzz_judgement){FUZZ_REACH, ""};
    return;
  }
  out->verdict = FUZZ_TOKEN;
  snprintf(out->why, sizeof out->why,
           "token %zu where the rule draws %zu (u %.17g over %.0f kept tokens, %.3g from the "
           "nearer cdf step)",
           gt, wt, cJSON_IsNumber(u) ? u->valuedouble : NAN, f->kept, m);
}

static void judge_logprob(const fuzz_judge *j, const sample_filter *f, double want, double got,
                          fuzz_judgement *out) {
  const double off = fabs(got - want), bound = f->bound + 1e-9 * fabs(want);
  int close = 0;
  if (off <= bound)
    return;
  if (isfinite(got) && fuzz_filter_close(j, f->row, f->engine, &close) == 0 && close) {
    out->verdict = FUZZ_REACH;
    return;
  }
  out->verdict = FUZZ_VALUE;
  snprintf(out->why, sizeof out->why,
           "the drawn token's logprob is %.17g, %.17g expected, off by %.3g beyond the "
           "bound %.3g",
           got, want, off, bound);
}

static int judge_sample(const fuzz_judge *j, const cJSON *request, size_t row, const cJSON *got,
                        fuzz_judgement *out) {
  const cJSON *r = cJSON_GetArrayItem(member(request, "rows"), (int)row);
  const size_t v = (size_t)cJSON_GetArraySize(member(r, "logits"));
  cJSON *want = fuzz_oracle_answer(j, request, row);
  sample_filter f = {0};
  size_t wt = 0, gt = 0;
  double wlp = 0.0, glp = 0.0;
  int rc = want ? 0 : -1;
  if (!want)
    goto done;
  if (cJSON_HasObjectItem(want, "error") || cJSON_HasObjectItem(got, "error"))
    fuzz_judge_errors(want, got, out);
  else if (read_draw(want, v, &wt, &wlp) != 0 || read_draw(got, v, &gt, &glp) != 0)
    *out = (fuzz_judgement){FUZZ_MALFORMED, "not a token below V with a finite logprob"};
  else if ((rc = filter_of(j, r, member(request, "engine"), &f)) == 0) {
    if (gt != wt)
      judge_token(j, r, want, wt, gt, glp, &f, out);
    else
      judge_logprob(j, &f, wlp, glp, out);
  }
done:
  cJSON_Delete(want);
  cJSON_Delete(f.row);
  cJSON_Delete(f.answer);
  return rc;
}

/* ----------------------------------------------------------------------------- speculate */

/* Row j of one side of a chain as a filter row: {"logits": ..., "params": ...}; NULL when the
 * side has no such row (greedy drafts) or out of memory. */
static cJSON *chain_row(const cJSON *request, const char *name, size_t j) {
  const cJSON *s = member(request, name), *logits = cJSON_GetArrayItem(member(s, "rows"), (int)j);
  return logits ? fuzz_filter_row(logits, member(s, "params")) : NULL;
}

/* The logprob bound of a chain row's kept set (0 for a greedy draft), and whether its filter is
 * within float reach; -1 when out of memory. */
static int chain_filter(const fuzz_judge *j, const cJSON *request, const char *name, size_t at,
                        double *bound, int *close) {
  cJSON *row = chain_row(request, name, at), *answer = NULL;
  *bound = 0.0, *close = 0;
  if (!row)
    return cJSON_GetArrayItem(member(member(request, name), "rows"), (int)at) ? -1 : 0;
  int rc = fuzz_filter_close(j, row, member(request, "engine"), close);
  if (rc == 0 && !(answer = fuzz_oracle_row(j, row, member(request, "engine"))))
    rc = -1;
  if (rc == 0)
    *bound = j->precision == SIEVE_PRECISION_FLOAT32 ? fuzz_f32_bound(row, answer) : 1e-9;
  cJSON_Delete(answer);
  cJSON_Delete(row);
  return rc;
}

static double number_of(const cJSON *x, const char *name) {
  const cJSON *n = member(x, name);
  return cJSON_IsNumber(n) ? n->valuedouble : cJSON_IsString(n) ? INFINITY : NAN;
}

/* Whether accept test `at` (a step of the rule's answer) is within float reach of its u, as
 * generators/fixture_format.py speculate_expect has it: p and q each off by their bounds. */
static int test_close(const fuzz_judge *j, const cJSON *step, double bp, double bq) {
  const double p = number_of(step, "p"), q = number_of(step, "q");
  const double ratio = number_of(step, "ratio"), margin = number_of(step, "margin");
  const double tiny = j->precision == SIEVE_PRECISION_FLOAT32 ? FLT_MIN : 0.0;
  if ((p > 0.0 && p < tiny) || (q > 0.0 && q < tiny))
    return 1; /* the precision may round it to 0 or apart from the other */
  if (p == 0.0 || q == 0.0 || p == q)
    return 0; /* decided in any arithmetic */
  const double u = j->precision == SIEVE_PRECISION_FLOAT32 ? 0x1p-24 : 0x1p-53;
  return margin <= ratio * (1.01 * (bp + bq) + 4 * u) + 2 * u;
}

/* Whether the chain's last draw (the residual's or the bonus's) is within float reach. */
static int last_draw_close(const fuzz_judge *j, const cJSON *want, size_t v, double bp, double bq) {
  const double margin = number_of(want, "draw_margin"), mass = number_of(want, "residual_mass");
  const double u = j->precision == SIEVE_PRECISION_FLOAT32 ? 0x1p-24 : 0.0;
  if (cJSON_IsTrue(member(want, "bonus")))
    return margin <= 1e-6 + (u ? 2 * bp + ((double)v + 2) * u : 0.0);
  const double width = (bp + bq + ((double)v + 2) * u) / (mass > 0 ? mass : 1.0);
  return margin <= (width > 1e-6 ? width : 1e-6) * (mass > 0 ? mass : 1.0);
}

/* Whether any decision on the rule's way through the chain is within float reach: a filter of
 * a row it reads, an accept test, or its last draw. -1 when out of memory. */
static int chain_close(const fuzz_judge *j, const cJSON *request, const cJSON *want, int *close) {
  const cJSON *steps = member(want, "steps");
  const size_t n = (size_t)cJSON_GetArraySize(steps);
  const size_t v =
      (size_t)cJSON_GetArraySize(cJSON_GetArrayItem(member(member(request, "target"), "rows"), 0));
  double bp = 0.0, bq = 0.0;
  int pc = 0, qc = 0;
  *close = 0;
  for (size_t at = 0; at < n && !*close; at++) {
    if (chain_filter(j, request, "target", at, &bp, &pc) ||
        chain_filter(j, request, "draft", at, &bq, &qc))
      return -1;
    *close = pc || qc || test_close(j, cJSON_GetArrayItem(steps, (int)at), bp, bq);
  }
  const double mass = number_of(want, "residual_mass");
  if (!*close && cJSON_IsTrue(member(want, "bonus"))) {
    if (chain_filter(j, request, "target", n, &bp, &pc))
      return -1;
    *close = pc || last_draw_close(j, want, v, bp, 0.0);
  } else if (!*close)
    *close = mass == 0.0 || last_draw_close(j, want, v, bp, bq);
  return 0;
}

/* The committed chain: accepted, tokens and bonus, as one line; -1 when it is not one. */
static int chain_text(const cJSON *answer, char *out, size_t len) {
  const cJSON *accepted = member(answer, "accepted"), *tokens = member(answer, "tokens"), *x;
  if (!cJSON_IsNumber(accepted) || accepted->valuedouble != floor(accepted->valuedouble) ||
      !cJSON_IsArray(tokens) || !cJSON_IsBool(member(answer, "bonus")))
    return -1;
  size_t at = (size_t)snprintf(out, len, "%d accepted, tokens", accepted->valueint);
  cJSON_ArrayForEach(x, tokens) {
    if (!cJSON_IsNumber(x) || x->valuedouble != floor(x->valuedouble))
      return -1;
    if (at < len)
      at += (size_t)snprintf(out + at, len - at, " %.0f", x->valuedouble);
  }
  if (at < len)
    snprintf(out + at, len - at, "%s", cJSON_IsTrue(member(answer, "bonus")) ? ", a bonus" : "");
  return 0;
}

static int judge_speculate(const fuzz_judge *j, const cJSON *request, const cJSON *got,
                           fuzz_judgement *out) {
  cJSON *want = fuzz_oracle_answer(j, request, 0);
  char w[120], g[120];
  int close = 0, rc = want ? 0 : -1;
  if (!want)
    return -1;
  if (cJSON_HasObjectItem(want, "error") || cJSON_HasObjectItem(got, "error"))
    fuzz_judge_errors(want, got, out);
  else if (chain_text(want, w, sizeof w) != 0 || chain_text(got, g, sizeof g) != 0)
    *out = (fuzz_judgement){FUZZ_MALFORMED, "not a chain: accepted, tokens and bonus"};
  else if (strcmp(w, g) != 0 && (rc = chain_close(j, request, want, &close)) == 0) {
    out->verdict = close ? FUZZ_REACH : FUZZ_TOKEN;
    if (!close)
      snprintf(out->why, sizeof out->why, "%s where the rule commits %s", g, w);
  }
  cJSON_Delete(want);
  return rc;
}

/* ----------------------------------------------------------------------------- exact keys */

static void judge_u(const cJSON *want, const cJSON *got, fuzz_judgement *out) {
  const cJSON *w = member(want, "u"), *g = member(got, "u");
  const int n = cJSON_GetArraySize(w);
  if (!cJSON_IsArray(g) || cJSON_GetArraySize(g) != n) {
    *out = (fuzz_judgement){FUZZ_MALFORMED, "not one u per item asked"};
    return;
  }
  for (int i = 0; i < n; i++) {
    const cJSON *a = cJSON_GetArrayItem(w, i), *b = cJSON_GetArrayItem(g, i);
    if (cJSON_IsNumber(b) && b->valuedouble == a->valuedouble)
      continue;
    out->verdict = cJSON_IsNumber(b) ? FUZZ_KEY : FUZZ_MALFORMED;
    snprintf(out->why, sizeof out->why, "u of item %d is %.17g where the hash gives %.17g", i,
             cJSON_IsNumber(b) ? b->valuedouble : NAN, a->valuedouble);
    return;
  }
}

static void judge_position(const cJSON *want, const cJSON *got, fuzz_judgement *out) {
  const cJSON *w = member(want, "position"), *g = member(got, "position");
  if (cJSON_IsNumber(g) && g->valuedouble == w->valuedouble)
    return;
  out->verdict = cJSON_IsNumber(g) ? FUZZ_KEY : FUZZ_MALFORMED;
  snprintf(out->why, sizeof out->why, "position %.17g where the rule gives %.17g",
           cJSON_IsNumber(g) ? g->valuedouble : NAN, w->valuedouble);
}

static int judge_key(const fuzz_judge *j, const cJSON *request, const cJSON *got, int uniform,
                     fuzz_judgement *out) {
  cJSON *want = fuzz_oracle_answer(j, request, 0);
  if (!want)
    return -1;
  if (cJSON_HasObjectItem(want, "error") || cJSON_HasObjectItem(got, "error"))
    fuzz_judge_errors(want, got, out);
  else if (uniform)
    judge_u(want, got, out);
  else
    judge_position(want, got, out);
  cJSON_Delete(want);
  return 0;
}

int fuzz_judge_answer(const fuzz_judge *j, const cJSON *request, size_t row, const cJSON *got,
                      fuzz_judgement *out) {
  const cJSON *op = member(request, "op");
  const char *name = cJSON_IsString(op) ? op->valuestring : "filter";
  *out = (fuzz_judgement){FUZZ_PASS, ""};
  if (!strcmp(name, "sample"))
    return judge_sample(j, request, row, got, out);
  if (!strcmp(name, "speculate"))
    return judge_speculate(j, request, got, out);
  if (!strcmp(name, "uniform") || !strcmp(name, "position"))
    return judge_key(j, request, got, !strcmp(name, "uniform"), out);
  return fuzz_judge_row(j, cJSON_GetArrayItem(member(request, "rows"), (int)row),
                        member(request, "engine"), got, out);
}
