/*
 * The probes of `sieve fingerprint`, one per axis of sieve_rule, grouped by the step they look
 * at. Each probe's answers differ by far more than float32 rounding: blocks of equal logits for
 * exact boundaries and ties, and margins of 0.05 or more elsewhere. A probe gives the set of an
 * axis's values its answers fit, and notes the evidence.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fingerprint.h"
#include "prober.h"
#include "protocol/jbuf.h"
#include "run/fixture.h"

/* ------------------------------------------------------------------ ranks */

/* Logits 0 and six far below it: those six have probability 0 in float64 and float32, so
 * ranking by probability ties them (in token order, or the sort's own), and ranking by logit
 * keeps the best three of them, ids 2, 4 and 5. An implementation that answers in probability
 * space shows them all removed; for it, a second row: logits 0 and three near -740, whose
 * float64 probabilities are one subnormal number (a tie that answers show), while logit ranks
 * id 2 first. */
#define SUBNORMAL_ROW "[0,-740.002,-740,-740.003]"

/* What one rank_key row shows: the logit ranking's set, or another set of as many (ties by
 * probability; all of them where a top-k keeps every tied token); token 0 alone is an answer
 * in probability space, where the others underflow, and shows nothing. */
static mask rank_key_of(const row_answer *r, unsigned long by_logit, size_t k) {
  if (r->error || !(r->set & 1))
    return 0;
  if (r->kept == 1)
    return ALL(RANK_KEY);
  if (r->set == by_logit)
    return ONE(RANK_KEY, LOGIT);
  return r->kept >= k ? ONE(RANK_KEY, PROBABILITY) : 0;
}

static mask probe_rank_key(prober *pr) {
  char a[64], b[64];
  row_answer r = pr_filter_row(pr, "[0,-1500,-1000,-1600,-1100,-1200,-1300]", "{\"top_k\":4}");
  row_answer sub = pr_filter_row(pr, SUBNORMAL_ROW, "{\"top_k\":2}");
  if (!r.answered || !sub.answered)
    return ALL(RANK_KEY);
  pr_note(pr, SIEVE_AXIS_RANK_KEY,
          "(0,-1500,-1000,-1600,-1100,-1200,-1300) top_k 4 keeps %s%s; (0,-740.002,-740,-740.003) "
          "top_k 2 keeps %s",
          pr_describe(&r, a, sizeof a), r.set == 0x35 ? "" : " (probabilities 0 tie)",
          pr_describe(&sub, b, sizeof b));
  return rank_key_of(&r, 0x35, 4) & rank_key_of(&sub, 0x5, 2);
}

/* ------------------------------------------------------------------ top-p */

#define ORDER_ROW "[-0.69314718055994529,-1.2039728043259361,-1.6094379124341003]"
#define MAT_ROW "[2,1.5,1,0.3,-0.2,-1.5]"
#define EQUAL4 "[1,1,1,1]"
#define EQUAL8 "[1,1,1,1,1,1,1,1]"
/* 64 equal logits: a block long enough that a sort which is stable on short rows (an
 * insertion sort below 16 elements, as std::sort and torch use) shows its own order. */
#define EQUAL64                                                                                    \
  "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,"    \
  "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]"

static int topp_ignored(const prober *pr) {
  return pr->found[SIEVE_AXIS_TOPP_SCOPE] == ONE(TOPP_SCOPE, IGNORED);
}

/* (0.5, 0.3, 0.2): top_p 0.3 keeps token 0 alone unless top-p is not applied. (0.5, 0.1, then
 * five of 0.08) with top_k 2 and top_p 0.7: the full distribution keeps both (its mass with them
 * is 0.6), the renormalized top 2 (0.833, 0.167) keeps one, whatever mass top-p compares. */
#define SCOPE_ROW                                                                                  \
  "[-0.69314718055994529,-2.3025850929940455,-2.5257286443082556,-2.5257286443082556,"             \
  "-2.5257286443082556,-2.5257286443082556,-2.5257286443082556]"
static mask probe_topp_scope(prober *pr) {
  char a[64], b[64];
  row_answer alone = pr_filter_row(pr, ORDER_ROW, "{\"top_p\":0.3}");
  if (!alone.answered || alone.error)
    return ALL(TOPP_SCOPE);
  if (alone.kept == 3) {
    pr_note(pr, SIEVE_AXIS_TOPP_SCOPE, "top_p 0.3 keeps all of (0.5, 0.3, 0.2)");
    return ONE(TOPP_SCOPE, IGNORED);
  }
  row_answer both = pr_filter_row(pr, SCOPE_ROW, "{\"top_k\":2,\"top_p\":0.7}");
  pr_note(pr, SIEVE_AXIS_TOPP_SCOPE,
          "(0.5, 0.3, 0.2): top_p 0.3 keeps %s; (0.5, 0.1, 0.08 x5) top_k 2, top_p 0.7 keeps %s",
          pr_describe(&alone, a, sizeof a), pr_describe(&both, b, sizeof b));
  if (!both.answered)
    return ALL(TOPP_SCOPE) & ~ONE(TOPP_SCOPE, IGNORED);
  return both.set == 0x3   ? ONE(TOPP_SCOPE, FULL)
         : both.set == 0x1 ? ONE(TOPP_SCOPE, AFTER_TOPK)
                           : 0;
}

/* Blocks of equal logits whose exact masses put the top-p cut inside the block: 4 at top_p 0.5,
 * 8 and 64 at top_p 0.25; > keeps one token more than the mass reaches (3, 3, 17), >= keeps
 * exactly as many (2, 2, 16). */
typedef struct tie_rows {
  row_answer r[3];
  size_t n[3], at_mass[3];
} tie_rows;

static tie_rows topp_tie_rows(prober *pr) {
  tie_rows t = {{pr_filter_row(pr, EQUAL4, "{\"top_p\":0.5}"),
                 pr_filter_row(pr, EQUAL8, "{\"top_p\":0.25}"),
                 pr_filter_row(pr, EQUAL64, "{\"top_p\":0.25}")},
                {4, 8, 64},
                {2, 2, 16}};
  return t;
}

static int tie_rows_answered(const tie_rows *t) {
  return t->r[0].answered && t->r[1].answered && t->r[2].answered;
}

static mask boundary_of(const row_answer *r, size_t n, size_t at_mass) {
  return r->kept == n             ? ALL(BOUNDARY)
         : r->kept == at_mass + 1 ? ONE(BOUNDARY, GT)
         : r->kept == at_mass     ? ONE(BOUNDARY, GE)
                                  : 0;
}

/* Rows whose top_p lies between two masses, where > and >= agree: 4 equal at top_p 0.6 keep 3
 * (all 4 where every tied token stays), (0.5, 0.3, 0.2) at top_p 0.6 keeps 2. A rule that
 * compares another mass (the mass with the token, say) keeps fewer, and fits neither value. */
static int between_masses(prober *pr, char *out, size_t len) {
  char a[64], b[64];
  row_answer equal = pr_filter_row(pr, EQUAL4, "{\"top_p\":0.6}");
  row_answer order = pr_filter_row(pr, ORDER_ROW, "{\"top_p\":0.6}");
  snprintf(out, len, "4 equal at top_p 0.6 keep %s; (0.5, 0.3, 0.2) at top_p 0.6 keeps %s",
           pr_describe(&equal, a, sizeof a), pr_describe(&order, b, sizeof b));
  return !equal.answered || !order.answered ? -1 : equal.kept >= 3 && order.set == 0x3 ? 1 : 0;
}

static mask probe_boundary(prober *pr) {
  char a[64], b[64], between[160];
  if (topp_ignored(pr))
    return pr_note(pr, SIEVE_AXIS_BOUNDARY, "top-p is not applied"), ALL(BOUNDARY);
  tie_rows t = topp_tie_rows(pr);
  int fits = between_masses(pr, between, sizeof between);
  if (!tie_rows_answered(&t) || fits < 0 || t.r[0].error || t.r[1].error || t.r[2].error)
    return ALL(BOUNDARY);
  pr_note(pr, SIEVE_AXIS_BOUNDARY,
          "4 equal at top_p 0.5 keep %s; 8 equal at top_p 0.25 keep %s; 64 equal at top_p 0.25 "
          "keep %zu%s; %s",
          pr_describe(&t.r[0], a, sizeof a), pr_describe(&t.r[1], b, sizeof b), t.r[2].kept,
          t.r[0].kept == 4 && t.r[1].kept == 8 ? " (every tied token stays, so the boundary does "
                                                 "not show)"
                                               : "",
          between);
  mask m = fits ? ALL(BOUNDARY) : 0;
  for (int i = 0; i < 3; i++)
    m &= boundary_of(&t.r[i], t.n[i], t.at_mass[i]);
  return m;
}

/* The lowest (or highest) `c` ids of a block of ids. */
static unsigned long end_of(unsigned long block, size_t c, int highest) {
  unsigned long out = 0;
  for (int i = 0; i < 64 && c > 0; i++) {
    int bit = highest ? 63 - i : i;
    if (block >> bit & 1)
      out |= 1UL << bit, c--;
  }
  return out;
}

/* Which of a block of tied ids a cut kept. */
static mask ties_of(const row_answer *r, unsigned long block) {
  unsigned long kept = r->set & block;
  size_t c = (size_t)__builtin_popcountl(kept), n = (size_t)__builtin_popcountl(block);
  if (r->error || c == 0)
    return 0;
  if (c == n)
    return ONE(TOPP_TIES, ALL);
  if (kept == end_of(block, c, 0))
    return ONE(TOPP_TIES, LOWEST);
  if (kept == end_of(block, c, 1))
    return ONE(TOPP_TIES, HIGHEST);
  return ONE(TOPP_TIES, UNSPECIFIED);
}

/* Two tie probes: the same order on both is that order; lowest ids on one and highest on the
 * other, or any other subset, is an order of the sort's own; "all" on one only fits nothing. */
static mask combine_ties(mask a, mask b) {
  mask order = ONE(TOPP_TIES, LOWEST) | ONE(TOPP_TIES, HIGHEST) | ONE(TOPP_TIES, UNSPECIFIED);
  if (a == b || !a || !b)
    return a & b;
  return (a & order) && (b & order) ? ONE(TOPP_TIES, UNSPECIFIED) : 0;
}

static mask probe_topp_ties(prober *pr) {
  char a[64], b[64];
  if (topp_ignored(pr))
    return pr_note(pr, SIEVE_AXIS_TOPP_TIES, "top-p is not applied"), ALL(TOPP_TIES);
  tie_rows t = topp_tie_rows(pr);
  if (!tie_rows_answered(&t))
    return ALL(TOPP_TIES);
  char c[64];
  pr_note(pr, SIEVE_AXIS_TOPP_TIES,
          "4 equal at top_p 0.5 keep %s; 8 equal at top_p 0.25 keep %s; "
          "64 equal at top_p 0.25 keep %s",
          pr_describe(&t.r[0], a, sizeof a), pr_describe(&t.r[1], b, sizeof b),
          pr_describe_ids(&t.r[2], c, sizeof c));
  return combine_ties(combine_ties(ties_of(&t.r[0], 0xF), ties_of(&t.r[1], 0xFF)),
                      ties_of(&t.r[2], ~0UL));
}

/* ------------------------------------------------------------------ top-k */

/* Rows whose top-k cut falls inside a block of tied logits, with the block and the ids that
 * must stay: ids 1, 3, 4 at 3 with top_k 2; ids 1-6 at 5 with top_k 3; ids 0-2 at 1 behind a 3
 * with top_k 2; and ids 1, 4, 6 at 2 behind three 3s with top_k 4, where a heap that replaces
 * its top on a strictly larger value (std::partial_sort) keeps id 4 (llama.cpp v0.4.0, run). */
static const struct {
  const char *logits, *params, *shown;
  unsigned long block, above;
} topk_rows[] = {
    {"[1,3,1,3,3,0]", "{\"top_k\":2}", "(1,3,1,3,3,0) top_k 2", 0x1A, 0},
    {"[0,5,5,5,5,5,5,1]", "{\"top_k\":3}", "(0,5,5,5,5,5,5,1) top_k 3", 0x7E, 0},
    {"[1,1,1,3]", "{\"top_k\":2}", "(1,1,1,3) top_k 2", 0x7, 0x8},
    {"[3,2,3,0,2,3,2,0,1]", "{\"top_k\":4}", "(3,2,3,0,2,3,2,0,1) top_k 4", 0x52, 0x25},
    {EQUAL64, "{\"top_k\":20}", "64 equal, top_k 20", ~0UL, 0},
};

static mask probe_topk_ties(prober *pr) {
  mask m = ALL(TOPK_TIES);
  size_t at = 0;
  for (size_t i = 0; i < sizeof topk_rows / sizeof topk_rows[0]; i++) {
    char ids[64];
    row_answer r = pr_filter_row(pr, topk_rows[i].logits, topk_rows[i].params);
    if (!r.answered)
      return ALL(TOPK_TIES);
    at += (size_t)snprintf(pr->note[SIEVE_AXIS_TOPK_TIES] + at,
                           at < sizeof pr->note[0] ? sizeof pr->note[0] - at : 0, "%s%s keeps %s",
                           i ? "; " : "", topk_rows[i].shown, pr_describe_ids(&r, ids, sizeof ids));
    unsigned long allowed = topk_rows[i].block | topk_rows[i].above;
    mask here = (r.set & ~allowed) || (r.set & topk_rows[i].above) != topk_rows[i].above
                    ? 0
                    : ties_of(&r, topk_rows[i].block);
    /* topp_ties and topk_ties number their orders alike (oracle/filter.c). */
    m = i ? combine_ties(m, here) : here;
  }
  return m;
}

/* ------------------------------------------------------------ temperature */

/* (2,1.5,1,0.3,-0.2,-1.5) at T 0.25 and top_p 0.8: the scaled row's first token has 0.87 of
 * the mass, so filters that see it keep that token alone, whatever mass top-p compares; at
 * T = 1 the first three stay (masses 0.44, 0.26, 0.16). */
static mask probe_temperature_at(prober *pr) {
  char a[64];
  if (topp_ignored(pr))
    return pr_note(pr, SIEVE_AXIS_TEMPERATURE_AT,
                   "top-p is not applied, and temperature moves no "
                   "other cut"),
           ALL(TEMPERATURE_AT);
  row_answer r = pr_filter_row(pr, MAT_ROW, "{\"temperature\":0.25,\"top_p\":0.8}");
  if (!r.answered)
    return ALL(TEMPERATURE_AT);
  pr_note(pr, SIEVE_AXIS_TEMPERATURE_AT, "(2,1.5,1,0.3,-0.2,-1.5) T 0.25 top_p 0.8 keeps %s",
          pr_describe(&r, a, sizeof a));
  return r.set == 0x1 ? ONE(TEMPERATURE_AT, BEFORE) : r.set == 0x7 ? ONE(TEMPERATURE_AT, AFTER) : 0;
}

/* A logit scaled at T as each value of temperature_op but `shifted` scales it: times the
 * float32 1/T, divided by the float32 T, or divided by T with the quotient rounded to float32. */
static float scaled_as(int op, float x, double t) {
  return op == SIEVE_TEMPERATURE_OP_RECIPROCAL ? x * (float)(1.0 / t)
         : op == SIEVE_TEMPERATURE_OP_DIVIDE   ? x / (float)t
                                               : (float)((double)x / t);
}

/* Two adjacent float32 logits below 512 that operation `op` ties at T and the others of
 * scaled_as keep apart (those that scale as `op` does at this T aside). */
static void pair_tied_by(int op, double t, float *a, float *b) {
  static const int ops[] = {SIEVE_TEMPERATURE_OP_RECIPROCAL, SIEVE_TEMPERATURE_OP_DIVIDE,
                            SIEVE_TEMPERATURE_OP_DIVIDE_FLOAT64};
  for (*b = 512.0f; *b > 256.0f; *b = *a) {
    *a = nextafterf(*b, 0.0f);
    int only = scaled_as(op, *a, t) == scaled_as(op, *b, t);
    for (size_t k = 0; k < 3 && only; k++)
      only = ops[k] == op || (scaled_as(ops[k], *a, t) != scaled_as(ops[k], *b, t)) ||
             (scaled_as(ops[k], *a, t) == scaled_as(op, *a, t) &&
              scaled_as(ops[k], *b, t) == scaled_as(op, *b, t));
    if (only)
      return;
  }
}

/* Whether top_k 2 at T kept anything but 520 and the larger of a pair (ids 1 and 2), asked both
 * ways round: a tie that the scaling made, whatever order the cut keeps tied tokens in. Not
 * top_k 1, which an engine may take as the argmax of the unscaled logits (SGLang, run). */
static int tie_seen(prober *pr, int op, double t, char *shown, size_t len) {
  static const char *const how[] = {"times 1/T", "divided by the float32 T", "", "divided by T"};
  float a, b;
  pair_tied_by(op, t, &a, &b);
  char rows[2][96], params[64], x[32], y[32];
  snprintf(rows[0], sizeof rows[0], "[520,%.9g,%.9g]", (double)a, (double)b);
  snprintf(rows[1], sizeof rows[1], "[520,%.9g,%.9g]", (double)b, (double)a);
  snprintf(params, sizeof params, "{\"temperature\":%.17g,\"top_k\":2}", t);
  row_answer r = pr_filter_row(pr, rows[0], params);
  row_answer s = pr_filter_row(pr, rows[1], params);
  snprintf(shown, len, "%s at T %g (520, %.9g, %.9g) keeps %s, the pair the other way round %s",
           how[op], t, (double)a, (double)b, pr_describe(&r, x, sizeof x),
           pr_describe(&s, y, sizeof y));
  if (!r.answered || !s.answered || r.error || s.error)
    return -1;
  return r.set != 0x5 || s.set != 0x3;
}

/* Pairs behind a larger logit, cut by top_k 2, each tied by one way of scaling only: at T = 1.5
 * (a float32) times the float32 1/T (the rule, 000:11) or divided by T; at T = 1.1 (no float32)
 * divided by the float32 T or by the float64 T. Only the tie its operation makes shows; none shows
 * when the largest is subtracted first (`shifted`: the differences are exact, and far apart in
 * their own ulps) or the cut sees the unscaled logits (temperature after the filters), which
 * the other probes tell apart. */
static mask probe_temperature_op(prober *pr) {
  char by_reciprocal[200], by_division[200], by_f32[200], by_f64[200];
  const int r = tie_seen(pr, SIEVE_TEMPERATURE_OP_RECIPROCAL, 1.5, by_reciprocal, 200);
  const int d = tie_seen(pr, SIEVE_TEMPERATURE_OP_DIVIDE, 1.5, by_division, 200);
  const int f = d > 0 && !r ? tie_seen(pr, SIEVE_TEMPERATURE_OP_DIVIDE, 1.1, by_f32, 200) : 0;
  const int g =
      d > 0 && !r ? tie_seen(pr, SIEVE_TEMPERATURE_OP_DIVIDE_FLOAT64, 1.1, by_f64, 200) : 0;
  pr_note(pr, SIEVE_AXIS_TEMPERATURE_OP, "top_k 2: %s; %s%s%s%s%s%s", by_reciprocal, by_division,
          d > 0 && !r ? "; " : "", d > 0 && !r ? by_f32 : "", d > 0 && !r ? "; " : "",
          d > 0 && !r ? by_f64 : "",
          r == 0 && d == 0 ? " (no tie: the largest is subtracted first, or the cut sees no "
                             "scaled logit)"
                           : "");
  if (r < 0 || d < 0 || f < 0 || g < 0 || (r == 0 && d == 0))
    return ALL(TEMPERATURE_OP);
  if (r && !d)
    return ONE(TEMPERATURE_OP, RECIPROCAL);
  if (!d || r)
    return 0;
  /* The float32 division's tie is also divide_float64's where T is read as a float32
   * (param_precision): the joint fit over every probe tells them apart, or leaves both. */
  return g && !f ? ONE(TEMPERATURE_OP, DIVIDE_FLOAT64)
                 : ONE(TEMPERATURE_OP, DIVIDE) | ONE(TEMPERATURE_OP, DIVIDE_FLOAT64);
}

/* How the row (2, 2, 2 - d) came back at one temperature: the first maximum alone, both maxima
 * alone, an error, or all three at an effective temperature d / (lp0 - lp2). */
typedef struct t_answer {
  row_answer r;
  double t_eff; /* NaN unless all three are kept */
} t_answer;

#define T_ROW "[2,2,1.9999]"

static t_answer at_temperature(prober *pr, const char *t) {
  char params[64];
  snprintf(params, sizeof params, "{\"temperature\":%s}", t);
  t_answer a = {pr_filter_row(pr, T_ROW, params), NAN};
  const double d = 2.0 - (double)1.9999f;
  if (a.r.answered && a.r.kept == 3)
    a.t_eff = d / (a.r.lp[0] - a.r.lp[2]);
  return a;
}

static int near(double x, double y) { return fabs(x - y) <= 0.05 * y; }

static const char *t_text(const t_answer *a, char *out, size_t len) {
  char ids[64];
  if (!isnan(a->t_eff))
    snprintf(out, len, "all, at T %.3g", a->t_eff);
  else
    snprintf(out, len, "%s", pr_describe(&a->r, ids, sizeof ids));
  return out;
}

/* The temperature-0 rule as T = 0 shows it: an error, the first maximum alone (argmax, or
 * top_k 1 at T = 1), both maxima (top_k 1 keeping ties), or the 1e-5 clamp. */
static mask t0_of(const t_answer *zero) {
  if (zero->r.error)
    return ONE(T0, REJECT);
  /* One of the two maxima alone: the first is argmax's, either may be top_k 1's. */
  if (zero->r.kept == 1 && (zero->r.set == 0x1 || zero->r.set == 0x2))
    return zero->r.set == 0x1 ? ONE(T0, ARGMAX) | ONE(T0, TOPK1) : ONE(T0, TOPK1);
  if (zero->r.set == 0x3)
    return ONE(T0, TOPK1);
  return near(zero->t_eff, 1e-5) ? ONE(T0, CLAMP) : 0;
}

/* Whether a temperature got the same answer as T = 0 (the temperature-0 rule applied). */
static int like_zero(const t_answer *a, const t_answer *zero) {
  if (!isnan(zero->t_eff))
    return near(a->t_eff, zero->t_eff);
  return a->r.error == zero->r.error && a->r.set == zero->r.set && a->r.kept == zero->r.kept;
}

typedef struct t_probe {
  t_answer zero, nano, micro, tiny, negative, milli;
} t_probe;

static int t_probe_run(prober *pr, t_probe *t) {
  t->zero = at_temperature(pr, "0");
  t->nano = at_temperature(pr, "5e-8");
  t->micro = at_temperature(pr, "5e-7");
  t->tiny = at_temperature(pr, "5e-6");
  t->negative = at_temperature(pr, "-1");
  t->milli = at_temperature(pr, "0.001");
  return t->zero.r.answered && t->nano.r.answered && t->micro.r.answered && t->tiny.r.answered &&
         t->negative.r.answered && t->milli.r.answered;
}

static void t_note(prober *pr, int axis, const t_probe *t) {
  char a[6][64];
  pr_note(pr, axis, "(2,2,1.9999) at T 0: %s; 5e-8: %s; 5e-7: %s; 5e-6: %s; -1: %s; 0.001: %s",
          t_text(&t->zero, a[0], 64), t_text(&t->nano, a[1], 64), t_text(&t->micro, a[2], 64),
          t_text(&t->tiny, a[3], 64), t_text(&t->negative, a[4], 64), t_text(&t->milli, a[5], 64));
}

/* validate, when offered, tells argmax (T stays 0) from T = 1 with top_k 1. */
static mask t0_by_validate(prober *pr) {
  static const char request[] =
      "{\"op\":\"validate\",\"params\":{\"temperature\":0,\"top_p\":0.3,\"top_k\":5}}";
  if (!sieve_hello_offers(pr->hello, "validate"))
    return ALL(T0);
  cJSON *v = pr_ask(pr, request);
  const cJSON *params = cJSON_GetObjectItemCaseSensitive(v, "params");
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(params, "temperature");
  mask m = !v ? ONE(T0, REJECT) | ONE(T0, ARGMAX) | ONE(T0, TOPK1) | ONE(T0, CLAMP)
           : !cJSON_IsNumber(t)  ? ALL(T0)
           : t->valuedouble == 1 ? ONE(T0, TOPK1)
           : t->valuedouble == 0 ? ONE(T0, ARGMAX)
                                 : ONE(T0, CLAMP);
  cJSON_Delete(v);
  return m;
}

/* T = 0 alone: which temperatures take the rule is t0_below's probe, so an engine's own answer
 * to a negative T is never read as its temperature-0 rule. */
static mask probe_t0(prober *pr) {
  char a[64];
  t_answer zero = at_temperature(pr, "0");
  if (!zero.r.answered)
    return ALL(T0);
  pr_note(pr, SIEVE_AXIS_T0, "(2,2,1.9999) at T 0: %s", t_text(&zero, a, sizeof a));
  mask m = t0_of(&zero);
  if (!(m & ONE(T0, REJECT)))
    pr->also[SIEVE_AXIS_T0] = t0_by_validate(pr);
  return m & pr->also[SIEVE_AXIS_T0];
}

static mask probe_t0_below(prober *pr) {
  t_probe t;
  if (!t_probe_run(pr, &t))
    return ALL(T0_BELOW);
  t_note(pr, SIEVE_AXIS_T0_BELOW, &t);
  if (!t0_of(&t.zero))
    return 0;
  const mask below_micro = ONE(T0_BELOW, EPS) | ONE(T0_BELOW, MICRO);
  const mask below_nano = below_micro | ONE(T0_BELOW, NANO_NEGATIVE);
  mask m = like_zero(&t.tiny, &t.zero) ? ONE(T0_BELOW, EPS) : ALL(T0_BELOW) & ~ONE(T0_BELOW, EPS);
  m &= like_zero(&t.micro, &t.zero) ? below_micro : ALL(T0_BELOW) & ~below_micro;
  m &= like_zero(&t.nano, &t.zero) ? below_nano : ALL(T0_BELOW) & ~below_nano;
  /* T = -1 scaling the row (the third token first) is a negative T accepted as any other;
   * otherwise, under a rule that rejects, T = -1 is an error either way. */
  const mask scales = ONE(T0_BELOW, ZERO_NEGATIVE_SCALES);
  if (t.negative.t_eff < 0)
    return m & scales;
  m &= ~scales;
  if (!t.zero.r.error)
    m &= like_zero(&t.negative, &t.zero)
             ? ONE(T0_BELOW, NONPOSITIVE) | ONE(T0_BELOW, NANO_NEGATIVE)
             : ALL(T0_BELOW) & ~(ONE(T0_BELOW, NONPOSITIVE) | ONE(T0_BELOW, NANO_NEGATIVE));
  return m;
}

/* ------------------------------------------------------------ check order */

/* What a bad parameter came back as: "an answer", or the error and its field. */
static const char *outcome(const row_answer *r, char *out, size_t len) {
  snprintf(out, len, "%s%s%s", r->error ? "an error" : "an answer",
           r->error && r->field[0] ? " for " : "", r->error ? r->field : "");
  return out;
}

static int error_for(const row_answer *r, const char *field) {
  return r->error && strcmp(r->field, field) == 0;
}

/* T = 0 with a bad top_k (-5, bad under every rule) and with top_p 0: checked first, each is
 * its own error; after a temperature-0 rule that rewrites it (DeepInfer's clamp resets both, a
 * top_k 1 rule only top_k), it is answered, or rejected with the temperature. T = 1 with both
 * bad: top_p's error, or top_k's where top_k is checked first. */
static mask probe_check_order(prober *pr) {
  row_answer k = pr_filter_row(pr, MAT_ROW, "{\"temperature\":0,\"top_k\":-5}");
  row_answer p = pr_filter_row(pr, MAT_ROW, "{\"temperature\":0,\"top_p\":0}");
  row_answer both = pr_filter_row(pr, MAT_ROW, "{\"top_p\":0,\"top_k\":-5}");
  if (!k.answered || !p.answered || !both.answered)
    return ALL(CHECK_ORDER);
  char a[48], b[48], c[48];
  pr_note(pr, SIEVE_AXIS_CHECK_ORDER,
          "T 0 with top_k -5: %s; T 0 with top_p 0: %s; top_p 0 with top_k -5: %s",
          outcome(&k, a, sizeof a), outcome(&p, b, sizeof b), outcome(&both, c, sizeof c));
  const mask t0_first = ONE(CHECK_ORDER, T0_RULE_FIRST) | ONE(CHECK_ORDER, T0_RULE_TOP_K_FIRST);
  mask m = error_for(&k, "top_k") ? ONE(CHECK_ORDER, CHECKS_FIRST) : t0_first;
  if (!both.error)
    return 0; /* top_p 0 and top_k -5 accepted: no order of checks says that */
  if (error_for(&both, "top_k"))
    return m & ONE(CHECK_ORDER, T0_RULE_TOP_K_FIRST);
  return error_for(&both, "top_p") ? m & ~ONE(CHECK_ORDER, T0_RULE_TOP_K_FIRST) : m;
}

static mask probe_temperature_floor(prober *pr) {
  t_answer milli = at_temperature(pr, "0.001");
  char a[64];
  if (!milli.r.answered)
    return ALL(TEMPERATURE_FLOOR);
  pr_note(pr, SIEVE_AXIS_TEMPERATURE_FLOOR, "(2,2,1.9999) at T 0.001 keeps %s",
          t_text(&milli, a, sizeof a));
  return near(milli.t_eff, 0.001)  ? ONE(TEMPERATURE_FLOOR, NONE)
         : near(milli.t_eff, 0.01) ? ONE(TEMPERATURE_FLOOR, CENTI)
                                   : 0;
}

/* ----------------------------------------------------------- top_k values */

static mask off_or_error(prober *pr, int axis, const char *params, mask off, mask error) {
  char a[64];
  row_answer r = pr_filter_row(pr, MAT_ROW, params);
  if (r.refused)
    pr_note(pr, axis, "%s is refused as a request the implementation cannot pose", params);
  if (!r.answered)
    return off | error;
  pr_note(pr, axis, "%s %s %s", params, r.error ? "is" : "keeps", pr_describe(&r, a, sizeof a));
  return r.error ? error : r.kept == 6 ? off : 0;
}

static mask probe_top_k_zero(prober *pr) {
  return off_or_error(pr, SIEVE_AXIS_TOP_K_ZERO, "{\"top_k\":0}", ONE(TOP_K_ZERO, OFF),
                      ONE(TOP_K_ZERO, ERROR));
}

static mask probe_top_k_minus_one(prober *pr) {
  return off_or_error(pr, SIEVE_AXIS_TOP_K_MINUS_ONE, "{\"top_k\":-1}", ONE(TOP_K_MINUS_ONE, OFF),
                      ONE(TOP_K_MINUS_ONE, ERROR));
}

static mask probe_explicit_top_p_one(prober *pr) {
  return off_or_error(pr, SIEVE_AXIS_EXPLICIT_TOP_P_ONE, "{\"top_p\":1}",
                      ONE(EXPLICIT_TOP_P_ONE, OFF), ONE(EXPLICIT_TOP_P_ONE, ERROR));
}

/* top_k = 6 on the six-token row: V itself, which an engine that needs top_k < V rejects. */
static mask probe_top_k_vocab(prober *pr) {
  return off_or_error(pr, SIEVE_AXIS_TOP_K_VOCAB, "{\"top_k\":6}", ONE(TOP_K_VOCAB, ALL),
                      ONE(TOP_K_VOCAB, ERROR));
}

/* top_k = 2^31 on the six-token row: an error where the largest is the int32 maximum, all six
 * where there is none (or an error for top_k_vocab, which the joint reading weighs). */
static mask probe_top_k_max(prober *pr) {
  return off_or_error(pr, SIEVE_AXIS_TOP_K_MAX, "{\"top_k\":2147483648}", ONE(TOP_K_MAX, NONE),
                      ONE(TOP_K_MAX, INT32));
}

/* validate, when offered, echoes a temperature of 0.7 as given or rounded to float32
 * (0.699999988): outside the joint reading, as filter rows at float32 cannot tell them apart. */
static mask probe_param_precision(prober *pr) {
  static const char request[] = "{\"op\":\"validate\",\"params\":{\"temperature\":0.7}}";
  if (!sieve_hello_offers(pr->hello, "validate"))
    return pr_note(pr, SIEVE_AXIS_PARAM_PRECISION, "validate is not offered"), ALL(PARAM_PRECISION);
  cJSON *v = pr_ask(pr, request);
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(v, "params"),
                                                    "temperature");
  const mask m = !v                             ? ALL(PARAM_PRECISION)
                 : !cJSON_IsNumber(t)           ? 0
                 : t->valuedouble == 0.7        ? ONE(PARAM_PRECISION, FLOAT64)
                 : t->valuedouble == (float)0.7 ? ONE(PARAM_PRECISION, FLOAT32)
                                                : 0;
  if (cJSON_IsNumber(t))
    pr_note(pr, SIEVE_AXIS_PARAM_PRECISION, "validate echoes temperature 0.7 as %.17g",
            t->valuedouble);
  cJSON_Delete(v);
  pr->also[SIEVE_AXIS_PARAM_PRECISION] = m;
  return m;
}

/* A peaked row, 18 then 1023 logits from 0 down by 1/4096: a float32 softmax loses the tail's
 * terms (about e^-18 each) in its sum, so a float32 cumulative sum passes 1 before the end and
 * top_p = 1 cuts the tail, whether the total is added in 1, 2, 4, 8, 16 or 32 lanes. The tail's
 * logits differ, so a cut that keeps every tied token (topp_ties all) still shows. top_k is
 * 1023, below V, which an engine that needs top_k < V (top_k_vocab error) accepts, and top_p is
 * left out, which an engine that rejects an explicit 1 (explicit_top_p_one error) accepts. */
static mask probe_topp_one(prober *pr) {
  char a[64];
  if (topp_ignored(pr))
    return pr_note(pr, SIEVE_AXIS_TOPP_ONE, "top-p is not applied"), ALL(TOPP_ONE);
  jbuf row = {0};
  jbuf_raw(&row, "[18");
  for (int i = 0; i < 1023; i++) {
    jbuf_char(&row, ',');
    jbuf_num(&row, -i / 4096.0);
  }
  jbuf_raw(&row, "]");
  row_answer r =
      row.data && !row.failed ? pr_filter_row(pr, row.data, "{\"top_k\":1023}") : (row_answer){0};
  jbuf_free(&row);
  if (!r.answered)
    return ALL(TOPP_ONE);
  pr_note(pr, SIEVE_AXIS_TOPP_ONE,
          "(18, then 1023 from 0 by -1/4096) top_p left out, top_k 1023 keeps %s",
          pr_describe(&r, a, sizeof a));
  return r.error ? 0 : r.kept == 1023 ? ONE(TOPP_ONE, OFF) : ONE(TOPP_ONE, FLOAT32_TAIL);
}

/* ------------------------------------------------------------ sample */

/* The drawn token and its logprob for a row at T = 0.5, top_k 2. */
static int sampled(prober *pr, const char *logits, uint64_t seed, int position, int64_t *token,
                   double *logprob) {
  char request[320];
  snprintf(request, sizeof request,
           "{\"op\":\"sample\",\"rows\":[{\"logits\":%s,\"params\":{\"temperature\":0.5,"
           "\"top_k\":2},\"seed\":\"%llu\",\"position\":%d}]}",
           logits, (unsigned long long)seed, position);
  cJSON *answer = sieve_hello_offers(pr->hello, "sample") ? pr_ask(pr, request) : NULL;
  const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(answer, "rows"), 0);
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(row, "token");
  const cJSON *lp = cJSON_GetObjectItemCaseSensitive(row, "logprob");
  int ok = cJSON_IsNumber(t) && cJSON_IsNumber(lp);
  if (answer && !ok)
    pr_garbage(pr, answer, "rows[0].token and logprob");
  if (ok) {
    pr->in_a_row = 0;
    pr_keep(pr, request, answer);
    *token = (int64_t)t->valuedouble;
    *logprob = lp->valuedouble;
  }
  cJSON_Delete(answer);
  return ok ? 0 : -1;
}

static const float mat_row[6] = {2.0f, 1.5f, 1.0f, 0.3f, -0.2f, -1.5f};

/* The drawn token's logprob against the processed, the scaled and the raw row, the three
 * values of the axis in their order. */
_Static_assert(SIEVE_LOGPROBS_COUNT == 3 && SIEVE_LOGPROBS_PROCESSED == 0 &&
                   SIEVE_LOGPROBS_SCALED == 1 && SIEVE_LOGPROBS_RAW == 2,
               "probe_logprobs knows three kinds of logprobs");
static mask probe_logprobs(prober *pr) {
  int64_t token;
  double got, lp[3][6];
  if (sampled(pr, MAT_ROW, 42, 7, &token, &got) != 0 || token < 0 || token > 5)
    return ALL(LOGPROBS);
  const sieve_params params[3] = {
      {0.5, 1.0, 2, 0.0, NULL}, {0.5, 1.0, -1, 0.0, NULL}, {1.0, 1.0, -1, 0.0, NULL}};
  for (int v = 0; v < 3; v++)
    sieve_filter(mat_row, 6, &params[v], NULL, lp[v], NULL);
  pr_note(pr, SIEVE_AXIS_LOGPROBS,
          "T 0.5 top_k 2: token %lld has logprob %.6f (processed %.6f, "
          "scaled %.6f, raw %.6f)",
          (long long)token, got, lp[0][token], lp[1][token], lp[2][token]);
  mask m = 0;
  for (int v = 0; v < 3; v++)
    m |= fabs(lp[v][token] - got) < 1e-5 ? 1u << v : 0;
  return m;
}

/* Token 1 is the most probable, so the cdf in token order is not the cdf in probability order. */
static const float draw_row[6] = {1.5f, 2.0f, 1.0f, 0.3f, -0.2f, -1.5f};

static mask probe_draw(prober *pr) {
  int same = 0, n = 0;
  const sieve_params params = {0.5, 1.0, 2, 0.0, NULL};
  for (int position = 0; position < 24; position++) {
    int64_t token;
    double lp;
    sieve_draw_key key = {1000 + (uint64_t)position, (uint64_t)position, 0, 0};
    sieve_sample_result r;
    if (sampled(pr, "[1.5,2,1,0.3,-0.2,-1.5]", key.seed, position, &token, &lp) != 0)
      return ALL(DRAW);
    sieve_sample(draw_row, 6, &params, NULL, &key, 0, NULL, &r);
    same += token == r.token;
    n++;
  }
  pr_note(pr, SIEVE_AXIS_DRAW, "%d of %d draws match the hash", same, n);
  return same == n ? ONE(DRAW, HASH) : ONE(DRAW, OWN);
}

/* ------------------------------------------------------------ speculate */

/* One speculative step as answered: the first test's outcome, u and ratio, and the first
 * committed token. */
typedef struct spec_answer {
  int accepted;
  double u, ratio;
  int64_t token;
} spec_answer;

/* Asks one chain of one draft (given, with its row); -1 when not offered, not answered or
 * answered without them; an error answer is the axis's note. */
static int speculated(prober *pr, int axis, const char *request, spec_answer *out) {
  pr->last_error[0] = '\0';
  cJSON *answer = sieve_hello_offers(pr->hello, "speculate") ? pr_ask(pr, request) : NULL;
  if (!answer && pr->last_error[0])
    pr_note(pr, axis, "a given draft got an error: %s", pr->last_error);
  const cJSON *step = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(answer, "steps"), 0);
  const cJSON *accepted = cJSON_GetObjectItemCaseSensitive(step, "accepted");
  const cJSON *u = cJSON_GetObjectItemCaseSensitive(step, "u");
  const cJSON *ratio = cJSON_GetObjectItemCaseSensitive(step, "ratio");
  const cJSON *token = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(answer, "tokens"), 0);
  int ok = cJSON_IsBool(accepted) && cJSON_IsNumber(u) && cJSON_IsNumber(token);
  if (answer && !ok)
    pr_garbage(pr, answer, "steps[0].accepted, steps[0].u and tokens[0]");
  if (ok) {
    pr->in_a_row = 0;
    pr_keep(pr, request, answer);
    *out = (spec_answer){cJSON_IsTrue(accepted), u->valuedouble,
                         cJSON_IsNumber(ratio) ? ratio->valuedouble : NAN,
                         (int64_t)token->valuedouble};
  }
  cJSON_Delete(answer);
  return ok ? 0 : -1;
}

/* u = 0 on a draft the target's top_k 3 removes (p = 0 < q = 0.25): 0 * q < 0 rejects,
 * 0 <= 0 / q accepts. Only the hash's u is 0 here; another generator leaves the axis open. */
static mask probe_spec_accept(prober *pr) {
  char request[512];
  snprintf(request, sizeof request,
           "{\"op\":\"speculate\",\"seed\":\"%llu\",\"position\":5,\"target\":{\"rows\":"
           "[[2,1.5,1,-1],[2,1.5,1,-1]],\"params\":{\"temperature\":1,\"top_k\":3}},"
           "\"draft\":{\"tokens\":[3],\"rows\":[[1,1,1,1]],\"params\":{\"temperature\":1}}}",
           (unsigned long long)sieve_seed_of_zero_u(5, SIEVE_CASE_ACCEPT));
  spec_answer a;
  if (speculated(pr, SIEVE_AXIS_SPEC_ACCEPT, request, &a) != 0)
    return ALL(SPEC_ACCEPT);
  pr_note(pr, SIEVE_AXIS_SPEC_ACCEPT, "u %.17g on a draft the target removes (p = 0): %s", a.u,
          a.accepted ? "accepted" : "rejected");
  if (a.u != 0.0)
    return ALL(SPEC_ACCEPT);
  return a.accepted ? ONE(SPEC_ACCEPT, LE) : ONE(SPEC_ACCEPT, LT);
}

/* The draft's top_k 3 removes token 0 (q = 0; its raw q is 0.02 < p = 0.44, so a raw q
 * accepts too, whatever u). */
static mask probe_spec_q_zero(prober *pr) {
  static const char request[] =
      "{\"op\":\"speculate\",\"seed\":\"7\",\"position\":3,\"target\":{\"rows\":"
      "[" MAT_ROW "," MAT_ROW "],\"params\":{\"temperature\":1}},\"draft\":{\"tokens\":[0],"
      "\"rows\":[[-1,2,1.5,1,0.5,0]],\"params\":{\"temperature\":1,\"top_k\":3}}}";
  spec_answer a;
  if (speculated(pr, SIEVE_AXIS_SPEC_Q_ZERO, request, &a) != 0)
    return ALL(SPEC_Q_ZERO);
  pr_note(pr, SIEVE_AXIS_SPEC_Q_ZERO, "a draft its own top_k removes (q = 0, p = 0.44): %s",
          a.accepted ? "accepted" : "rejected");
  /* A finite p / q says the test's q is not the processed row's 0: the axis does not show. */
  if (isfinite(a.ratio)) {
    size_t at = strlen(pr->note[SIEVE_AXIS_SPEC_Q_ZERO]);
    snprintf(pr->note[SIEVE_AXIS_SPEC_Q_ZERO] + at, sizeof pr->note[0] - at,
             ", p / q %.3g (its q is not 0)", a.ratio);
    return ALL(SPEC_Q_ZERO);
  }
  return a.accepted ? ONE(SPEC_Q_ZERO, ACCEPT) : ONE(SPEC_Q_ZERO, REJECT);
}

static const float spec_draft_row[6] = {1.0f, 2.0f, 1.5f, 0.5f, 0.0f, -1.0f};

/* Draft T 0.5 top_k 3: the reported p / q of draft 1 is p over its processed q (0.665) or over
 * its raw softmax. */
static mask probe_spec_q(prober *pr) {
  static const char request[] =
      "{\"op\":\"speculate\",\"seed\":\"7\",\"position\":3,\"target\":{\"rows\":"
      "[" MAT_ROW "," MAT_ROW "],\"params\":{\"temperature\":1}},\"draft\":{\"tokens\":[1],"
      "\"rows\":[[1,2,1.5,0.5,0,-1]],\"params\":{\"temperature\":0.5,\"top_k\":3}}}";
  const sieve_params target = {1.0, 1.0, -1, 0.0, NULL}, draft = {0.5, 1.0, 3, 0.0, NULL},
                     raw = {1.0, 1.0, -1, 0.0, NULL};
  double p[6], q[6], q_raw[6];
  spec_answer a;
  if (speculated(pr, SIEVE_AXIS_SPEC_Q, request, &a) != 0)
    return ALL(SPEC_Q);
  sieve_filter(mat_row, 6, &target, NULL, p, NULL);
  sieve_filter(spec_draft_row, 6, &draft, NULL, q, NULL);
  sieve_filter(spec_draft_row, 6, &raw, NULL, q_raw, NULL);
  double processed = exp(p[1] - q[1]), unfiltered = exp(p[1] - q_raw[1]);
  pr_note(pr, SIEVE_AXIS_SPEC_Q,
          "p / q of a draft at T 0.5 top_k 3: %.6f (processed q %.6f, raw q "
          "%.6f)",
          a.ratio, processed, unfiltered);
  mask m = fabs(a.ratio - processed) <= 1e-4 * processed ? ONE(SPEC_Q, PROCESSED) : 0;
  return m | (fabs(a.ratio - unfiltered) <= 1e-4 * unfiltered ? ONE(SPEC_Q, RAW) : 0);
}

/* Equal rows with top_k 3 on both sides and a draft both remove (p = q = 0): the strict test
 * rejects it and max(p - q, 0) is 0 everywhere; the rule draws from p's {1, 2, 3}. */
static mask probe_spec_empty_residual(prober *pr) {
  static const char request[] =
      "{\"op\":\"speculate\",\"seed\":\"31\",\"position\":31,\"target\":{\"rows\":"
      "[[-3,2,1.5,1,0.3,-2],[-3,2,1.5,1,0.3,-2]],\"params\":{\"temperature\":1,\"top_k\":3}},"
      "\"draft\":{\"tokens\":[4],\"rows\":[[-3,2,1.5,1,0.3,-2]],\"params\":{\"temperature\":1,"
      "\"top_k\":3}}}";
  spec_answer a;
  if (speculated(pr, SIEVE_AXIS_SPEC_EMPTY_RESIDUAL, request, &a) != 0)
    return ALL(SPEC_EMPTY_RESIDUAL);
  pr_note(pr, SIEVE_AXIS_SPEC_EMPTY_RESIDUAL,
          "p = q with the draft removed by both: %s, token %lld%s",
          a.accepted ? "accepted" : "rejected", (long long)a.token,
          pr->found[SIEVE_AXIS_SPEC_Q] & ONE(SPEC_Q, PROCESSED)
              ? ""
              : " (the test's q is not the draft's processed row, so the residual is not empty)");
  if (a.accepted || !(pr->found[SIEVE_AXIS_SPEC_Q] & ONE(SPEC_Q, PROCESSED)))
    return ALL(SPEC_EMPTY_RESIDUAL);
  return a.token == 0                   ? ONE(SPEC_EMPTY_RESIDUAL, FIRST_TOKEN)
         : a.token == 5                 ? ONE(SPEC_EMPTY_RESIDUAL, LAST_TOKEN)
         : a.token >= 1 && a.token <= 3 ? ONE(SPEC_EMPTY_RESIDUAL, TARGET)
                                        : 0;
}

/* -------------------------------------------------------- penalties and min-p */

/* Whether the implementation offers every sampling option of `options`; notes why not. */
static int offered(prober *pr, int axis, const char *options) {
  if (sieve_hello_offers_options(pr->hello, options))
    return 1;
  pr_note(pr, axis, "not offered: hello's sampling_options do not list %s", options);
  return 0;
}

/* The additive penalty the probes use: presence where offered, else frequency, which takes one
 * occurrence alike; NULL when neither is. */
static const char *additive_option(prober *pr) {
  return sieve_hello_offers_options(pr->hello, "presence_penalty")    ? "presence_penalty"
         : sieve_hello_offers_options(pr->hello, "frequency_penalty") ? "frequency_penalty"
                                                                      : NULL;
}

/* top_k 1 on a row whose token 0 (2.0) is penalized: 1 when it still comes first, 0 when
 * token 1 does, -1 when the answer shows neither. */
static int first_stays(const row_answer *r) {
  return !r->answered || r->error || r->kept != 1 ? -1 : r->set == 0x1 ? 1 : r->set == 0x2 ? 0 : -1;
}

#define PENALTY_ROW "[2,1.5,-1]"
#define ORDER_PENALTY_ROW "[2,0.25,-1]"

/* Token 0 of (2, 0.25, -1) counted once, with 1 subtracted and a repetition penalty of 2:
 * (2 - 1) / 2 = 0.5 stays first under top_k 1, 2 / 2 - 1 = 0 goes below token 1. First, the
 * same on (2, 1.5, -1), where both orders put token 1 first: an implementation that keeps
 * token 0 there does not apply these penalties, and shows no order. */
static mask probe_penalty_order(prober *pr) {
  const char *additive = additive_option(pr);
  if (!additive) {
    pr_note(pr, SIEVE_AXIS_PENALTY_ORDER,
            "not offered: hello's sampling_options list neither "
            "presence_penalty nor frequency_penalty");
    return ALL(PENALTY_ORDER);
  }
  if (!offered(pr, SIEVE_AXIS_PENALTY_ORDER, "repetition_penalty"))
    return ALL(PENALTY_ORDER);
  char params[96];
  snprintf(params, sizeof params, "{\"top_k\":1,\"%s\":1,\"repetition_penalty\":2}", additive);
  row_answer applied = pr_filter_row_ids(pr, PENALTY_ROW, params, "\"output_ids\":[0]");
  row_answer order = pr_filter_row_ids(pr, ORDER_PENALTY_ROW, params, "\"output_ids\":[0]");
  char a[64], b[64];
  pr_note(pr, SIEVE_AXIS_PENALTY_ORDER,
          "%s 1 and repetition 2 on token 0, top_k 1: (2, 1.5, -1) keeps %s, (2, 0.25, -1) "
          "keeps %s",
          additive, pr_describe(&applied, a, sizeof a), pr_describe(&order, b, sizeof b));
  if (first_stays(&applied) != 0)
    return ALL(PENALTY_ORDER);
  const int stays = first_stays(&order);
  return stays == 1   ? ONE(PENALTY_ORDER, ADDITIVE_FIRST)
         : stays == 0 ? ONE(PENALTY_ORDER, REPETITION_FIRST)
                      : 0;
}

/* Whether a penalty (its params) on token 0 of (2, 1.5, -1) counted in the prompt alone moves
 * it below token 1 under top_k 1: 1 counted, 0 not, -1 no answer or a penalty that does not
 * move it when the output counts it. */
static int prompt_counted(prober *pr, const char *params, char *note, size_t len) {
  row_answer output = pr_filter_row_ids(pr, PENALTY_ROW, params, "\"output_ids\":[0]");
  row_answer prompt =
      pr_filter_row_ids(pr, PENALTY_ROW, params, "\"output_ids\":[],\"prompt_ids\":[0]");
  char a[64], b[64];
  snprintf(note, len, "%s: counted in the output keeps %s, in the prompt %s", params,
           pr_describe(&output, a, sizeof a), pr_describe(&prompt, b, sizeof b));
  if (first_stays(&output) != 0)
    return -1;
  const int stays = first_stays(&prompt);
  return stays < 0 ? -1 : !stays;
}

/* Token 0 in the prompt alone, under a repetition penalty of 2, then under each additive one
 * of 1 (presence and frequency, each asked, so that one the sampler takes and never applies
 * shows): which of them count it tells output (none), repetition_prompt (the repetition
 * penalty) and prompt (all). A penalty not offered leaves its part open. */
static mask probe_penalty_tokens(prober *pr) {
  static const char *const additive[] = {"presence_penalty", "frequency_penalty"};
  const int repetition = sieve_hello_offers_options(pr->hello, "repetition_penalty");
  if (!additive_option(pr) && !repetition) {
    pr_note(pr, SIEVE_AXIS_PENALTY_TOKENS, "not offered: hello's sampling_options list no penalty");
    return ALL(PENALTY_TOKENS);
  }
  char params[96], one[256], note[800] = "";
  mask m = ALL(PENALTY_TOKENS);
  if (repetition) {
    int counted = prompt_counted(pr, "{\"top_k\":1,\"repetition_penalty\":2}", note,
                                 sizeof note);
    m &= counted == 1   ? ONE(PENALTY_TOKENS, REPETITION_PROMPT) | ONE(PENALTY_TOKENS, PROMPT)
         : counted == 0 ? ONE(PENALTY_TOKENS, OUTPUT)
                        : ALL(PENALTY_TOKENS);
  }
  for (size_t i = 0; i < 2; i++) {
    if (!sieve_hello_offers_options(pr->hello, additive[i]))
      continue;
    snprintf(params, sizeof params, "{\"top_k\":1,\"%s\":1}", additive[i]);
    int counted = prompt_counted(pr, params, one, sizeof one);
    m &= counted == 1   ? ONE(PENALTY_TOKENS, PROMPT)
         : counted == 0 ? ONE(PENALTY_TOKENS, OUTPUT) | ONE(PENALTY_TOKENS, REPETITION_PROMPT)
                        : ALL(PENALTY_TOKENS);
    size_t at = strlen(note);
    snprintf(note + at, sizeof note - at, "%s%s", at ? "; " : "", one);
  }
  pr_note(pr, SIEVE_AXIS_PENALTY_TOKENS, "token 0 of (2, 1.5, -1), top_k 1; %s", note);
  return m;
}

/* (3, 2, 1, 0): p / p_max is 1, 0.37, 0.14, 0.05 at T 1 and 1, 0.61, 0.37, 0.22 at T 2. min_p 0.3
 * keeps {0, 1} at T 1, and at T 2 {0, 1, 2} on the scaled probabilities or {0, 1} on those at
 * T 1. The first row shows that min-p applies at all. */
#define MIN_P_ROW "[3,2,1,0]"
static mask probe_min_p_scale(prober *pr) {
  if (!offered(pr, SIEVE_AXIS_MIN_P_SCALE, "min_p"))
    return ALL(MIN_P_SCALE);
  row_answer cold = pr_filter_row(pr, MIN_P_ROW, "{\"min_p\":0.3}");
  row_answer hot = pr_filter_row(pr, MIN_P_ROW, "{\"temperature\":2,\"min_p\":0.3}");
  char a[64], b[64];
  pr_note(pr, SIEVE_AXIS_MIN_P_SCALE, "(3, 2, 1, 0) min_p 0.3 keeps %s at T 1, %s at T 2",
          pr_describe(&cold, a, sizeof a), pr_describe(&hot, b, sizeof b));
  if (!cold.answered || cold.error || cold.set != 0x3 || !hot.answered)
    return ALL(MIN_P_SCALE);
  return hot.set == 0x7   ? ONE(MIN_P_SCALE, SCALED)
         : hot.set == 0x3 ? ONE(MIN_P_SCALE, UNSCALED)
                          : 0;
}

/* p = 0.45, 0.35 and ten of 0.02: min_p 0.2 keeps the first two (0.8 of the mass). top_p 0.5
 * keeps both where the mass before token 1 is 0.45 of the row, token 0 alone where it is 0.5625
 * of what min-p kept. The first row shows that min-p applies at all. */
#define MIN_P_ORDER_ROW                                                                            \
  "[-0.79850769621777162,-1.0498221244986778,-3.912023005428146,-3.912023005428146,"               \
  "-3.912023005428146,-3.912023005428146,-3.912023005428146,-3.912023005428146,"                   \
  "-3.912023005428146,-3.912023005428146,-3.912023005428146,-3.912023005428146]"
static mask probe_min_p_order(prober *pr) {
  if (!offered(pr, SIEVE_AXIS_MIN_P_ORDER, "min_p"))
    return ALL(MIN_P_ORDER);
  row_answer alone = pr_filter_row(pr, MIN_P_ORDER_ROW, "{\"min_p\":0.2}");
  row_answer both = pr_filter_row(pr, MIN_P_ORDER_ROW, "{\"min_p\":0.2,\"top_p\":0.5}");
  char a[64], b[64];
  pr_note(pr, SIEVE_AXIS_MIN_P_ORDER,
          "(0.45, 0.35, 0.02 x10): min_p 0.2 keeps %s, with top_p 0.5 %s",
          pr_describe(&alone, a, sizeof a), pr_describe(&both, b, sizeof b));
  if (!alone.answered || alone.error || alone.set != 0x3 || !both.answered || topp_ignored(pr))
    return ALL(MIN_P_ORDER);
  return both.set == 0x3   ? ONE(MIN_P_ORDER, WITH_FILTERS)
         : both.set == 0x1 ? ONE(MIN_P_ORDER, FIRST)
                           : 0;
}

/* min_p 1 on (0.5, 2, 2, 1): tokens 1 and 2 are both at the largest p, exactly the bar. First,
 * min_p 0.3 on (3, 2, 1, 0) keeps {0, 1} only where min-p compares p with min_p times the largest
 * (0.37 >= 0.3): a min-p against min_p itself (p 0.24 < 0.3) also keeps one of two equal
 * maxima at min_p 1, and shows no boundary. */
static mask probe_min_p_boundary(prober *pr) {
  if (!offered(pr, SIEVE_AXIS_MIN_P_BOUNDARY, "min_p"))
    return ALL(MIN_P_BOUNDARY);
  row_answer relative = pr_filter_row(pr, MIN_P_ROW, "{\"min_p\":0.3}");
  row_answer r = pr_filter_row(pr, "[0.5,2,2,1]", "{\"min_p\":1}");
  char a[64], b[64];
  pr_note(pr, SIEVE_AXIS_MIN_P_BOUNDARY,
          "(3, 2, 1, 0) min_p 0.3 keeps %s; (0.5, 2, 2, 1) min_p 1 keeps %s",
          pr_describe(&relative, a, sizeof a), pr_describe(&r, b, sizeof b));
  if (!r.answered || r.error || !relative.answered || relative.error || relative.set != 0x3)
    return ALL(MIN_P_BOUNDARY);
  return r.set == 0x6   ? ONE(MIN_P_BOUNDARY, KEEP_EQUAL)
         : r.set == 0x2 ? ONE(MIN_P_BOUNDARY, REMOVE_EQUAL)
                        : 0;
}

/* A value outside the spec's range (params) on token 0 of (2, 1.5, -1), counted once, under
 * top_k 1: 1 accepted (token 1 stays, the penalty applied; for min_p, one token stays), 0 an
 * error naming `field`, -1 any other answer. Its description goes to `note`. */
static int accepts(prober *pr, const char *params, const char *field, char *note, size_t len) {
  row_answer r = pr_filter_row_ids(pr, PENALTY_ROW, params, "\"output_ids\":[0]");
  char a[64];
  size_t at = strlen(note);
  snprintf(note + at, len - at, "%s%s %s %s", at ? "; " : "", params, r.error ? "is" : "keeps",
           pr_describe(&r, a, sizeof a));
  if (!r.answered)
    return -1;
  if (r.error)
    return strcmp(r.field, field) == 0 ? 0 : -1;
  if (strcmp(field, "min_p") == 0)
    return r.kept == 1 ? 1 : -1;
  return first_stays(&r) == 0 ? 1 : -1;
}

/* Repetition 3, then the first of presence 3, frequency 3 and min_p 1.5 offered: the spec
 * rejects both, repetition_unbounded the first only, unchecked neither. */
static mask probe_penalty_range(prober *pr) {
  static const char *const others[][2] = {{"presence_penalty", "3"},
                                          {"frequency_penalty", "3"},
                                          {"min_p", "1.5"}};
  char params[96], note[400] = "";
  mask m = ALL(PENALTY_RANGE);
  int asked = 0;
  if (sieve_hello_offers_options(pr->hello, "repetition_penalty")) {
    const int r = accepts(pr, "{\"top_k\":1,\"repetition_penalty\":3}", "repetition_penalty",
                          note, sizeof note);
    m &= r == 0   ? ONE(PENALTY_RANGE, BOUNDED)
         : r == 1 ? ONE(PENALTY_RANGE, REPETITION_UNBOUNDED) | ONE(PENALTY_RANGE, UNCHECKED)
                  : ALL(PENALTY_RANGE);
    asked = 1;
  }
  for (size_t i = 0; i < 3; i++) {
    if (!sieve_hello_offers_options(pr->hello, others[i][0]))
      continue;
    snprintf(params, sizeof params, "{\"top_k\":1,\"%s\":%s}", others[i][0], others[i][1]);
    const int r = accepts(pr, params, others[i][0], note, sizeof note);
    m &= r == 0   ? ONE(PENALTY_RANGE, BOUNDED) | ONE(PENALTY_RANGE, REPETITION_UNBOUNDED)
         : r == 1 ? ONE(PENALTY_RANGE, UNCHECKED)
                  : ALL(PENALTY_RANGE);
    asked = 1;
    break;
  }
  if (!asked)
    pr_note(pr, SIEVE_AXIS_PENALTY_RANGE, "not offered: hello's sampling_options list none");
  else
    pr_note(pr, SIEVE_AXIS_PENALTY_RANGE, "token 0 of (2, 1.5, -1) counted once: %s", note);
  return m;
}

/* Repetition 2 on token 1 of (1, -3e38, 0.5): -6e38 is past float32's range, an error, or -inf
 * and the token goes. First, repetition 2 on token 1 of (1, -1, -1.5) under top_k 2 keeps {0, 2}
 * only where the penalty multiplies a negative logit (-2): one that divides it (-0.5) keeps
 * {0, 1}, never overflows, and shows no choice here; any other answer is some other departure,
 * and the overflow is not read. */
static mask probe_penalty_overflow(prober *pr) {
  if (!offered(pr, SIEVE_AXIS_PENALTY_OVERFLOW, "repetition_penalty"))
    return ALL(PENALTY_OVERFLOW);
  row_answer sign = pr_filter_row_ids(pr, "[1,-1,-1.5]", "{\"top_k\":2,\"repetition_penalty\":2}",
                                      "\"output_ids\":[1]");
  row_answer r =
      pr_filter_row_ids(pr, "[1,-3e38,0.5]", "{\"repetition_penalty\":2}", "\"output_ids\":[1]");
  char a[64], b[64];
  const int multiplies = sign.answered && !sign.error && sign.set == 0x5;
  const int divides = sign.answered && !sign.error && sign.set == 0x3;
  pr_note(pr, SIEVE_AXIS_PENALTY_OVERFLOW,
          "repetition 2 on token 1 of (1, -1, -1.5), top_k 2, keeps %s%s; of (1, -3e38, 0.5) %s %s",
          pr_describe(&sign, b, sizeof b),
          multiplies ? ""
          : divides  ? " (the penalty divides a negative logit: no overflow shows)"
                     : " (neither {0,2}, a penalty multiplying the negative logit, nor {0,1}, one "
                       "dividing it: the overflow is not read)",
          r.error ? "is" : "keeps", pr_describe(&r, a, sizeof a));
  if (!r.answered || !multiplies)
    return ALL(PENALTY_OVERFLOW);
  if (r.error)
    return strcmp(r.field, "logits") == 0 ? ONE(PENALTY_OVERFLOW, ERROR) : 0;
  return r.set == 0x5 && r.kept == 2 ? ONE(PENALTY_OVERFLOW, MINUS_INF) : 0;
}

/* In axis order: a probe may read the verdicts of the axes before it (top-p not applied). */
mask (*const fingerprint_probes[SIEVE_AXIS_COUNT])(prober *) = {
    [SIEVE_AXIS_RANK_KEY] = probe_rank_key,
    [SIEVE_AXIS_TOPP_SCOPE] = probe_topp_scope,
    [SIEVE_AXIS_BOUNDARY] = probe_boundary,
    [SIEVE_AXIS_TOPP_TIES] = probe_topp_ties,
    [SIEVE_AXIS_TOPK_TIES] = probe_topk_ties,
    [SIEVE_AXIS_TEMPERATURE_AT] = probe_temperature_at,
    [SIEVE_AXIS_TEMPERATURE_OP] = probe_temperature_op,
    [SIEVE_AXIS_T0_BELOW] = probe_t0_below,
    [SIEVE_AXIS_T0] = probe_t0,
    [SIEVE_AXIS_CHECK_ORDER] = probe_check_order,
    [SIEVE_AXIS_TEMPERATURE_FLOOR] = probe_temperature_floor,
    [SIEVE_AXIS_TOP_K_ZERO] = probe_top_k_zero,
    [SIEVE_AXIS_TOP_K_MINUS_ONE] = probe_top_k_minus_one,
    [SIEVE_AXIS_EXPLICIT_TOP_P_ONE] = probe_explicit_top_p_one,
    [SIEVE_AXIS_TOP_K_VOCAB] = probe_top_k_vocab,
    [SIEVE_AXIS_TOP_K_MAX] = probe_top_k_max,
    [SIEVE_AXIS_PARAM_PRECISION] = probe_param_precision,
    [SIEVE_AXIS_TOPP_ONE] = probe_topp_one,
    [SIEVE_AXIS_LOGPROBS] = probe_logprobs,
    [SIEVE_AXIS_DRAW] = probe_draw,
    [SIEVE_AXIS_SPEC_ACCEPT] = probe_spec_accept,
    [SIEVE_AXIS_SPEC_Q_ZERO] = probe_spec_q_zero,
    [SIEVE_AXIS_SPEC_Q] = probe_spec_q,
    [SIEVE_AXIS_SPEC_EMPTY_RESIDUAL] = probe_spec_empty_residual,
    [SIEVE_AXIS_PENALTY_ORDER] = probe_penalty_order,
    [SIEVE_AXIS_PENALTY_TOKENS] = probe_penalty_tokens,
    [SIEVE_AXIS_MIN_P_SCALE] = probe_min_p_scale,
    [SIEVE_AXIS_MIN_P_ORDER] = probe_min_p_order,
    [SIEVE_AXIS_MIN_P_BOUNDARY] = probe_min_p_boundary,
    [SIEVE_AXIS_PENALTY_RANGE] = probe_penalty_range,
    [SIEVE_AXIS_PENALTY_OVERFLOW] = probe_penalty_overflow,
};

int sieve_fingerprint_has_probe(int axis) {
  return axis >= 0 && axis < SIEVE_AXIS_COUNT && fingerprint_probes[axis] != NULL;
}
