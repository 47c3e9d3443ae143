/*
 * Judging a fuzz row (judge.h; README.md, "Judging"). The oracle answers the row under the
 * rule. An answer that keeps the same tokens is held to the logprob bound of its precision
 * (fixtures/README.md, "Precision"). One that keeps others passes only when every token it
 * moves is one the precision's arithmetic could move: a top-p decision within the mass width
 * of the cut, an order between probabilities within the gap width of each other, or an order
 * among tokens whose probabilities underflow at that precision (generators/float32.py gives
 * the widths; oracle/SPEC.md, "Tolerances", derives them). Its logprobs are then held to the
 * log-softmax of the set it kept.
 */
#define _POSIX_C_SOURCE 200809L
#include "judge.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/jbuf.h"
#include "protocol/serve.h"
#include "rows.h"
#include "run/check.h"

static const char *const verdict_names[] = {
#define FUZZ__VERDICT_NAME(id, name, what) name,
    FUZZ_VERDICTS(FUZZ__VERDICT_NAME)
#undef FUZZ__VERDICT_NAME
};
static const char *const verdict_whats[] = {
#define FUZZ__VERDICT_WHAT(id, name, what) what,
    FUZZ_VERDICTS(FUZZ__VERDICT_WHAT)
#undef FUZZ__VERDICT_WHAT
};

const char *fuzz_verdict_name(int v) {
  return v >= 0 && v < FUZZ_VERDICT_COUNT ? verdict_names[v] : "?";
}
const char *fuzz_verdict_what(int v) {
  return v >= 0 && v < FUZZ_VERDICT_COUNT ? verdict_whats[v] : "?";
}

/* The unit roundoff and the log below which exp underflows, at each precision. */
static double unit_roundoff(int precision) {
  return precision == SIEVE_PRECISION_FLOAT32 ? 0x1p-24 : 0x1p-53;
}
static double underflow_log(int precision) {
  return precision == SIEVE_PRECISION_FLOAT32 ? -87.0 : -708.0;
}

/* ----------------------------------------------------------------------------- the oracle */

/* A row sharing `row`'s logits, with its parameters changed: top_p set to `top_p` (or left out
 * when it is 1 or more), and with `full`, top_p and top_k both left out. */
static cJSON *row_with(const cJSON *row, double top_p, int full) {
  cJSON *out = cJSON_CreateObject(), *params = cJSON_GetObjectItemCaseSensitive(row, "params");
  cJSON *p = params ? cJSON_Duplicate(params, 1) : cJSON_CreateObject();
  if (!out || !p) {
    cJSON_Delete(out);
    cJSON_Delete(p);
    return NULL;
  }
  cJSON_AddItemReferenceToObject(out, "logits", cJSON_GetObjectItemCaseSensitive(row, "logits"));
  cJSON_DeleteItemFromObjectCaseSensitive(p, "top_p");
  if (full)
    cJSON_DeleteItemFromObjectCaseSensitive(p, "top_k");
  if (!full && top_p < 1.0 && !cJSON_AddNumberToObject(p, "top_p", top_p))
    p = (cJSON_Delete(p), NULL);
  if (!p || !cJSON_AddItemToObject(out, "params", p)) {
    cJSON_Delete(p);
    cJSON_Delete(out);
    return NULL;
  }
  return out;
}

cJSON *fuzz_filter_row(const cJSON *logits, const cJSON *params) {
  cJSON *row = cJSON_CreateObject();
  if (row && (!cJSON_AddItemReferenceToObject(row, "logits", (cJSON *)logits) ||
              (params && !cJSON_AddItemReferenceToObject(row, "params", (cJSON *)params))))
    return cJSON_Delete(row), NULL;
  return row;
}

cJSON *fuzz_oracle_row(const fuzz_judge *j, const cJSON *row, const cJSON *engine) {
  cJSON *req = cJSON_CreateObject(), *rows = cJSON_AddArrayToObject(req, "rows"), *out = NULL;
  if (req && rows && cJSON_AddStringToObject(req, "op", "filter") &&
      (!engine || cJSON_AddItemReferenceToObject(req, "engine", (cJSON *)engine)) &&
      cJSON_AddItemReferenceToArray(rows, (cJSON *)row))
    out = fuzz_oracle_answer(j, req, 0);
  cJSON_Delete(req);
  return out;
}

static cJSON *oracle_with(const fuzz_judge *j, const cJSON *row, const cJSON *engine, double top_p,
                          int full) {
  cJSON *changed = row_with(row, top_p, full);
  cJSON *out = changed ? fuzz_oracle_row(j, changed, engine) : NULL;
  cJSON_Delete(changed);
  return out;
}

int fuzz_token_possible(const fuzz_judge *j, const cJSON *row, const cJSON *engine, size_t token,
                        int *possible) {
  cJSON *full = oracle_with(j, row, engine, 1.0, 1);
  const cJSON *lp =
      cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(full, "logprobs"), (int)token);
  const int rc = full ? 0 : -1;
  *possible = cJSON_IsNumber(lp) && lp->valuedouble != -INFINITY;
  cJSON_Delete(full);
  return rc;
}

/* ----------------------------------------------------------------------------- reading rows */

static int protocol_number(const cJSON *x, double *out) {
  if (cJSON_IsNull(x))
    return *out = -INFINITY, 0;
  if (cJSON_IsNumber(x))
    return *out = x->valuedouble, 0;
  if (cJSON_IsString(x) && (!strcmp(x->valuestring, "nan") || !strcmp(x->valuestring, "inf") ||
                            !strcmp(x->valuestring, "-inf")))
    return *out = strtod(x->valuestring, NULL), 0;
  return -1;
}

/* A row's logprobs into `lp` (V of them); -1 when it has another length or a non-number. */
static int read_logprobs(const cJSON *row, size_t v, double *lp) {
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(row, "logprobs");
  if (!cJSON_IsArray(a) || (size_t)cJSON_GetArraySize(a) != v)
    return -1;
  size_t i = 0;
  const cJSON *x;
  cJSON_ArrayForEach(x, a) {
    if (protocol_number(x, &lp[i]) != 0 || isnan(lp[i]) || lp[i] == INFINITY)
      return -1;
    i++;
  }
  return 0;
}

/* A kept token whose probability is below the smallest number of the precision may come back
 * removed or as a coarse logprob (harness/run/check.c, underflows_alike; the joint reading's
 * p_abs). When an answer fails as it is, it is judged again with both sides of every such token
 * read as removed, unless the answer shows a logprob below the log of that number, which only
 * an answer in logit space can; at float32 a logprob beyond -FLT_MAX is -inf even there.
 * Returns how many tokens it read so. */
static size_t forgive_underflow(double *want, double *got, size_t v, int precision) {
  const int f32 = precision == SIEVE_PRECISION_FLOAT32;
  const double bound = 2 * DBL_TRUE_MIN + (f32 ? 2 * FLT_TRUE_MIN : 0);
  const double smallest = log(f32 ? FLT_TRUE_MIN : DBL_TRUE_MIN);
  int shows_tails = 0;
  size_t changed = 0;
  for (size_t i = 0; i < v; i++)
    shows_tails |= got[i] != -INFINITY && got[i] < smallest;
  for (size_t i = 0; i < v; i++)
    if (want[i] != -INFINITY && ((!shows_tails && exp(want[i]) <= bound && exp(got[i]) <= bound) ||
                                 (f32 && want[i] < -FLT_MAX && got[i] == -INFINITY))) {
      want[i] = got[i] = -INFINITY;
      changed++;
    }
  return changed;
}

static size_t kept_count(const double *lp, size_t v) {
  size_t n = 0;
  for (size_t i = 0; i < v; i++)
    n += lp[i] != -INFINITY;
  return n;
}

/* ----------------------------------------------------------------------------- the bounds */

/* The row's logits scaled as DeepInfer scales them (a float32 multiply by 1/T, T clamped at
 * 1e-5): the magnitudes the bounds are derived from. */
static float *scaled_row(const cJSON *row, size_t *v) {
  const cJSON *logits = cJSON_GetObjectItemCaseSensitive(row, "logits");
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(row, "params"),
                                                    "temperature");
  const double temperature = !cJSON_IsNumber(t)      ? 1.0
                             : t->valuedouble > 1e-5 ? t->valuedouble
                                                     : 1e-5;
  *v = (size_t)cJSON_GetArraySize(logits);
  float *s = malloc((*v ? *v : 1) * sizeof *s);
  const float inv_t = (float)(1.0 / temperature);
  size_t i = 0;
  const cJSON *x;
  cJSON_ArrayForEach(x, logits) {
    double d = 0.0;
    if (s && i < *v)
      s[i] = protocol_number(x, &d) == 0 ? (float)d * inv_t : NAN;
    i++;
  }
  return s;
}

/* The float32 logprob bound of each kept token (fixtures/README.md, "Precision"):
 * u (2 (|s_i| + |m| + |lp_i| + ln S) + 1.5 n + 4) over the kept set; 1e-9 + 1e-9 |lp| at float64.
 */
typedef struct kept_stats {
  double m, ln_s;
  size_t n;
} kept_stats;

static kept_stats stats_of(const double *want, const float *s, size_t v) {
  kept_stats k = {-INFINITY, 0.0, 0};
  for (size_t i = 0; i < v; i++)
    if (want[i] != -INFINITY)
      k.m = s[i] > k.m ? s[i] : k.m, k.n++;
  for (size_t i = 0; i < v; i++)
    if (want[i] != -INFINITY && (s[i] - k.m) - want[i] > k.ln_s)
      k.ln_s = (s[i] - k.m) - want[i];
  return k;
}

static double bound_at(const kept_stats *k, double s, double want, int precision) {
  return precision == SIEVE_PRECISION_FLOAT32
             ? 0x1p-24 *
                   (2 * (fabs(s) + fabs(k->m) + fabs(want) + k->ln_s) + 1.5 * (double)k->n + 4)
             : 1e-9 + 1e-9 * fabs(want);
}

/* The index of the first value outside its bound, or -1. */
static long value_outside(const double *want, const double *got, const float *s, size_t v,
                          int precision, double *bound) {
  const kept_stats k = stats_of(want, s, v);
  for (size_t i = 0; i < v; i++) {
    if (want[i] == -INFINITY)
      continue;
    *bound = bound_at(&k, s[i], want[i], precision);
    if (!(fabs(got[i] - want[i]) <= *bound))
      return (long)i;
  }
  return -1;
}

/* generators/float32.py mass_width: how far a float mass before rank r may be off. */
static double mass_width(double u, size_t rank, double mass, double top_p, size_t finite) {
  const double at = mass > top_p ? mass : top_p;
  return u * (((double)rank + 1.4 * (double)finite + 6) * at + 0.4 * (double)rank);
}

/* generators/float32.py gap_width: the relative gap below which two probabilities may swap. */
static double gap_width(double u, double s_a, double s_b, double m) {
  const double lse = fabs(m) + 64;
  return u * (2 * (fabs(s_a) + fabs(s_b) + 2 * lse) + fabs(s_a - m) + fabs(s_b - m) + 16);
}

/* ----------------------------------------------------------------------------- reach */

/* What one row's judging needs beyond the answers: the full distribution under the rule in
 * rank order, and the answers at the edges of the top-p decision's reach. */
typedef struct reach {
  const fuzz_judge *j;
  const float *s;
  double m; /* the largest scaled logit */
  fuzz_ranked *ranks;
  size_t n;
  const double *refs[3]; /* the rule's answer, and those at top_p -/+ the mass width */
  size_t ref_kept[3];
  size_t n_refs;
  size_t masked; /* -inf tokens: a float32 ranking ties them with probabilities that are 0 */
} reach;

/* Tokens the precision cannot order: both probabilities are subnormal or 0 there (below e^-87
 * at float32, however large the total that normalizes them), or they are apart by less than
 * the gap width. Equal probabilities are ordered by the rule. */
static int indistinct(const reach *r, const fuzz_ranked *a, const fuzz_ranked *b) {
  const double floor = underflow_log(r->j->precision);
  if (a->lp < floor && b->lp < floor)
    return 1;
  const double u = unit_roundoff(r->j->precision);
  return a->p != b->p && fabs(a->p - b->p) <= gap_width(u, r->s[a->id], r->s[b->id], r->m) * a->p;
}

/* Masses that are exact in every binary precision: the tokens of nonzero float64 probability
 * are 2^k with one logprob. */
static int exact_masses(const reach *r) {
  size_t k = 0;
  while (k < r->n && r->ranks[k].p > 0.0 && r->ranks[k].lp == r->ranks[0].lp)
    k++;
  return (k == r->n || r->ranks[k].p == 0.0) && (k & (k - 1)) == 0;
}

/* Whether the tokens `got` keeps in ranks [from, to), a class the rule orders by equal
 * probabilities only, are those an answer of the rule keeping as many tokens keeps; any are,
 * where the rule leaves tied tokens in an order of the sort's own (topp_ties or topk_ties
 * unspecified: it does not say which cut a tie meets). */
static int tie_order_allowed(const reach *r, const double *got, size_t kept, size_t from,
                             size_t to) {
  static const sieve_rule deepinfer = SIEVE_RULE_DEEPINFER;
  const sieve_rule *rule = r->j->rule ? r->j->rule : &deepinfer;
  if (sieve_rule_get(rule, SIEVE_AXIS_TOPP_TIES) == SIEVE_TOPP_TIES_UNSPECIFIED ||
      sieve_rule_get(rule, SIEVE_AXIS_TOPK_TIES) == SIEVE_TOPK_TIES_UNSPECIFIED)
    return 1; /* the rule leaves tied tokens to the sort: any of them */
  for (size_t k = 0; k < r->n_refs; k++) {
    if (r->ref_kept[k] != kept)
      continue;
    for (size_t i = from; i < to; i++) {
      const size_t id = r->ranks[i].id;
      if ((got[id] != -INFINITY) != (r->refs[k][id] != -INFINITY))
        return 0;
    }
    return 1;
  }
  return 1; /* no answer of the rule keeps that many: any order of the tie */
}

/* Whether `got`'s kept set is a prefix of the rank order up to what the precision cannot
 * order, class by class; the first class out of place in `why`. */
static int ranks_allowed(const reach *r, const double *got, size_t kept, char *why, size_t len) {
  size_t from = 0;
  while (from < r->n) {
    size_t to = from + 1, in = 0;
    int loose = 0;
    while (to < r->n && (r->ranks[to - 1].p == r->ranks[to].p ||
                         (indistinct(r, &r->ranks[to - 1], &r->ranks[to]) && (loose = 1))))
      to++;
    for (size_t i = from; i < to; i++)
      in += got[r->ranks[i].id] != -INFINITY;
    const size_t want = to <= kept ? to - from : from >= kept ? 0 : kept - from;
    if (in != want ||
        (!loose && in && in < to - from && !tie_order_allowed(r, got, kept, from, to))) {
      snprintf(why, len,
               "ranks %zu to %zu (token %zu first, p %.17g): %zu kept where the rule "
               "keeps %zu%s",
               from, to - 1, r->ranks[from].id, r->ranks[from].p, in, want,
               in == want ? ", but other ones of the tied tokens" : "");
      return 0;
    }
    from = to;
  }
  return 1;
}

static double param_of(const cJSON *row, const char *name, double otherwise) {
  const cJSON *x =
      cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(row, "params"), name);
  return cJSON_IsNumber(x) ? x->valuedouble : otherwise;
}

/* Fills the full distribution's ranks from the rule's answer with no top-p and no top-k; -1
 * when out of memory, 1 when that answer is an error. */
static int load_ranks(reach *r, const cJSON *full, size_t v, double *f) {
  if (!full)
    return -1;
  if (read_logprobs(full, v, f) != 0)
    return 1;
  r->ranks = malloc((v ? v : 1) * sizeof *r->ranks);
  if (!r->ranks)
    return -1;
  r->m = -INFINITY;
  for (size_t i = 0; i < v; i++)
    if (f[i] != -INFINITY) {
      r->ranks[r->n++] = (fuzz_ranked){exp(f[i]), f[i], i};
      r->m = r->s[i] > r->m ? r->s[i] : r->m;
    }
  qsort(r->ranks, r->n, sizeof *r->ranks, fuzz_by_rank);
  r->masked = v - r->n;
  return r->n ? 0 : 1;
}

/* The answers at top_p minus and plus the mass width of the rule's cut, where the rule's answer
 * comes within that width of top_p: the kept counts between are all reachable. */
static int load_edges(reach *r, const cJSON *row, const cJSON *engine, const cJSON *answer,
                      size_t v, double *edges, cJSON **held) {
  const double top_p = param_of(row, "top_p", 1.0);
  const cJSON *margin = cJSON_GetObjectItemCaseSensitive(answer, "topp_margin");
  /* Exact masses leave nothing to reach, unless top_p itself rounds at the precision. */
  const int exact_top_p =
      r->j->precision == SIEVE_PRECISION_FLOAT64 || (double)(float)top_p == top_p;
  if (top_p >= 1.0 || !cJSON_IsNumber(margin) || (exact_masses(r) && exact_top_p))
    return 0;
  const double w = mass_width(unit_roundoff(r->j->precision), r->ref_kept[0], top_p, top_p, r->n);
  if (margin->valuedouble > w)
    return 0;
  const double at[2] = {top_p - w > 0 ? top_p - w : top_p / 2, top_p + w};
  for (int k = 0; k < 2; k++) {
    held[k] = oracle_with(r->j, row, engine, at[k], 0);
    if (!held[k])
      return -1;
    if (read_logprobs(held[k], v, edges + (size_t)k * v) == 0) {
      r->refs[r->n_refs] = edges + (size_t)k * v;
      r->ref_kept[r->n_refs++] = kept_count(edges + (size_t)k * v, v);
    }
  }
  return 0;
}

/* The finite tokens whose float32 probability is 0 (below 2^-150). */
static size_t float32_zeros(const reach *r) {
  size_t n = 0;
  for (size_t i = 0; i < r->n; i++)
    n += r->ranks[i].lp < log(0x1p-150);
  return n;
}

/* A kept count the rule gives at the edges of the top-p decision's reach. At float32 a sampler
 * that ranks its float32 probabilities also ranks the -inf tokens, as 0, among the finite ones
 * whose probability is 0, in token order (seed 000's reference sorts the probabilities so), so
 * a top-k cut may take as many fewer of those as there are -inf tokens. */
static int count_allowed(const reach *r, size_t kept) {
  size_t lo = r->ref_kept[0], hi = r->ref_kept[0];
  for (size_t k = 1; k < r->n_refs; k++) {
    lo = r->ref_kept[k] < lo ? r->ref_kept[k] : lo;
    hi = r->ref_kept[k] > hi ? r->ref_kept[k] : hi;
  }
  if (r->j->precision == SIEVE_PRECISION_FLOAT32) {
    const size_t zeros = float32_zeros(r), fewer = zeros < r->masked ? zeros : r->masked;
    lo = lo > fewer ? lo - fewer : 0;
  }
  return kept >= lo && kept <= hi;
}

/* ----------------------------------------------------------------------------- the verdict */

static const char *error_string(const cJSON *answer, const char *key) {
  const cJSON *x =
      cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(answer, "error"), key);
  return cJSON_IsString(x) ? x->valuestring : "";
}

void fuzz_judge_errors(const cJSON *want, const cJSON *got, fuzz_judgement *out) {
  const int want_error = cJSON_HasObjectItem(want, "error"),
            got_error = cJSON_HasObjectItem(got, "error");
  if (want_error && got_error && !strcmp(error_string(want, "kind"), error_string(got, "kind")) &&
      !strcmp(error_string(want, "field"), error_string(got, "field")))
    return;
  out->verdict = FUZZ_ERROR;
  if (!got_error)
    snprintf(out->why, sizeof out->why, "an answer where the rule gives the error %s of %s",
             error_string(want, "kind"), error_string(want, "field"));
  else if (!want_error)
    snprintf(out->why, sizeof out->why, "the error %s of %s where the rule answers (%.200s)",
             error_string(got, "kind"), error_string(got, "field"), error_string(got, "message"));
  else
    snprintf(out->why, sizeof out->why, "the error %s of %s where the rule gives %s of %s",
             error_string(got, "kind"), error_string(got, "field"), error_string(want, "kind"),
             error_string(want, "field"));
}

/* Appends to a bounded text, which stays terminated when it is cut. */
static void put(char *out, size_t len, size_t *at, const char *text) {
  const int n = snprintf(out + *at, len - *at, "%s", text);
  *at = n < 0 || (size_t)n >= len - *at ? len - 1 : *at + (size_t)n;
}

/* "kept where the rule removes: tokens 3 7; removed where the rule keeps: token 2" (a few of
 * each): ids, named as such beside the counts before them. */
static void describe_kept(const double *want, const double *got, size_t v, char *out, size_t len) {
  size_t at = 0;
  char id[24];
  out[0] = '\0';
  for (int side = 0; side < 2; side++) {
    size_t shown = 0;
    size_t count = 0;
    for (size_t i = 0; i < v; i++)
      count += side ? got[i] == -INFINITY && want[i] != -INFINITY
                    : got[i] != -INFINITY && want[i] == -INFINITY;
    put(out, len, &at, side ? "; removed where the rule keeps:" : "kept where the rule removes:");
    put(out, len, &at, count == 1 ? " token" : count ? " tokens" : "");
    for (size_t i = 0; i < v; i++)
      if ((side ? got[i] == -INFINITY && want[i] != -INFINITY
                : got[i] != -INFINITY && want[i] == -INFINITY) &&
          shown++ < 6) {
        snprintf(id, sizeof id, " %zu", i);
        put(out, len, &at, id);
      }
    put(out, len, &at, shown > 6 ? " ..." : shown ? "" : " none");
  }
}

static void judge_values(const fuzz_judge *j, const double *want, const double *got, const float *s,
                         size_t v, fuzz_verdict ok, fuzz_judgement *out) {
  double bound = 0.0;
  const long bad = value_outside(want, got, s, v, j->precision, &bound);
  out->verdict = bad < 0 ? ok : FUZZ_VALUE;
  if (bad >= 0)
    snprintf(out->why, sizeof out->why,
             "logprob %ld is %.17g, %.17g expected, off by %.3g beyond "
             "the bound %.3g",
             bad, got[bad], want[bad], fabs(got[bad] - want[bad]), bound);
}

/* The log-softmax of the full distribution over the tokens `got` keeps. */
static void renormalized(const double *full, const double *got, size_t v, double *out) {
  double m = -INFINITY, sum = 0.0;
  for (size_t i = 0; i < v; i++)
    if (got[i] != -INFINITY && full[i] > m)
      m = full[i];
  for (size_t i = 0; i < v; i++)
    if (got[i] != -INFINITY)
      sum += exp(full[i] - m);
  for (size_t i = 0; i < v; i++)
    out[i] = got[i] == -INFINITY ? -INFINITY : full[i] - m - log(sum);
}

static int judge_kept(const fuzz_judge *j, const cJSON *row, const cJSON *engine,
                      const cJSON *answer, const double *a, const double *g, size_t v,
                      const float *s, fuzz_judgement *out) {
  double *f = malloc(4 * (v ? v : 1) * sizeof *f);
  cJSON *full = NULL, *held[2] = {NULL, NULL};
  reach r = {.j = j, .s = s, .refs = {a}, .ref_kept = {kept_count(a, v)}, .n_refs = 1};
  int rc = -1, loaded = -1;
  char detail[200];
  if (f)
    loaded = load_ranks(&r, full = oracle_with(j, row, engine, 1.0, 1), v, f);
  if (loaded < 0 || (loaded == 0 && load_edges(&r, row, engine, answer, v, f + v, held) != 0))
    goto done;
  rc = 0;
  out->verdict = FUZZ_KEPT;
  describe_kept(a, g, v, detail, sizeof detail);
  const size_t kept = kept_count(g, v);
  if (loaded)
    snprintf(out->why, sizeof out->why, "%s", detail);
  else if (!count_allowed(&r, kept))
    snprintf(out->why, sizeof out->why, "%zu kept where the rule keeps %zu (%s)", kept,
             r.ref_kept[0], detail);
  else if (ranks_allowed(&r, g, kept, out->why, sizeof out->why)) {
    renormalized(f, g, v, f + 3 * v);
    judge_values(j, f + 3 * v, g, s, v, FUZZ_REACH, out);
  } else
    snprintf(out->why + strlen(out->why), sizeof out->why - strlen(out->why), " (%s)", detail);
done:
  cJSON_Delete(full);
  cJSON_Delete(held[0]);
  cJSON_Delete(held[1]);
  free(r.ranks);
  free(f);
  return rc;
}

/* Whether the cut after the first `kept` ranks falls between tokens the precision cannot order,
 * inside a tie the rule leaves to the sort, or inside a tie a token the precision cannot order
 * apart from it may join, and lead by a lower id (a logit a float32 ulp below, which the float32
 * 1/T scales onto the tie: found by a faithful port's speculative chain, seed 1301). */
static int cut_splits_class(const reach *r, size_t kept) {
  static const sieve_rule deepinfer = SIEVE_RULE_DEEPINFER;
  const sieve_rule *rule = r->j->rule ? r->j->rule : &deepinfer;
  if (kept == 0 || kept >= r->n)
    return 0;
  const fuzz_ranked *a = &r->ranks[kept - 1], *b = &r->ranks[kept];
  if (indistinct(r, a, b))
    return 1;
  if (a->p != b->p)
    return 0;
  if (sieve_rule_get(rule, SIEVE_AXIS_TOPP_TIES) == SIEVE_TOPP_TIES_UNSPECIFIED ||
      sieve_rule_get(rule, SIEVE_AXIS_TOPK_TIES) == SIEVE_TOPK_TIES_UNSPECIFIED)
    return 1;
  size_t from = kept - 1, to = kept + 1;
  while (from > 0 && r->ranks[from - 1].p == a->p)
    from--;
  while (to < r->n && r->ranks[to].p == a->p)
    to++;
  return (from > 0 && indistinct(r, &r->ranks[from - 1], &r->ranks[from])) ||
         (to < r->n && indistinct(r, &r->ranks[to - 1], &r->ranks[to]));
}

int fuzz_filter_close(const fuzz_judge *j, const cJSON *row, const cJSON *engine, int *close) {
  cJSON *answer = fuzz_oracle_row(j, row, engine), *full = NULL, *held[2] = {NULL, NULL};
  size_t v = 0;
  float *s = scaled_row(row, &v);
  double *f = malloc(4 * (v ? v : 1) * sizeof *f);
  reach r = {.j = j, .s = s, .refs = {f}, .n_refs = 1};
  int rc = -1, loaded = 1;
  *close = 0;
  if (!answer || !s || !f)
    goto done;
  rc = 0;
  if (cJSON_HasObjectItem(answer, "error") || read_logprobs(answer, v, f) != 0)
    goto done;
  r.ref_kept[0] = kept_count(f, v);
  loaded = load_ranks(&r, full = oracle_with(j, row, engine, 1.0, 1), v, f + v);
  if (loaded < 0 || (loaded == 0 && load_edges(&r, row, engine, answer, v, f + 2 * v, held) != 0))
    rc = -1;
  else if (loaded == 0)
    *close = (r.ref_kept[0] > 0 && count_allowed(&r, r.ref_kept[0] - 1)) ||
             count_allowed(&r, r.ref_kept[0] + 1) || cut_splits_class(&r, r.ref_kept[0]);
done:
  cJSON_Delete(answer);
  cJSON_Delete(full);
  cJSON_Delete(held[0]);
  cJSON_Delete(held[1]);
  free(r.ranks);
  free(s);
  free(f);
  return rc;
}

static int same_kept(const double *a, const double *b, size_t v) {
  for (size_t i = 0; i < v; i++)
    if ((a[i] == -INFINITY) != (b[i] == -INFINITY))
      return 0;
  return 1;
}

/* The verdict on two rows of logprobs: the same kept set held to the bounds, or another one
 * held to float reach. */
static int judge_sets(const fuzz_judge *j, const cJSON *row, const cJSON *engine,
                      const cJSON *answer, const double *a, const double *g, size_t v,
                      const float *s, fuzz_judgement *out) {
  if (same_kept(a, g, v))
    return judge_values(j, a, g, s, v, FUZZ_PASS, out), 0;
  return judge_kept(j, row, engine, answer, a, g, v, s, out);
}

int fuzz_judge_row(const fuzz_judge *j, const cJSON *row, const cJSON *engine, const cJSON *got,
                   fuzz_judgement *out) {
  *out = (fuzz_judgement){FUZZ_PASS, ""};
  cJSON *answer = fuzz_oracle_row(j, row, engine);
  size_t v = 0;
  float *s = scaled_row(row, &v);
  double *a = malloc(2 * (v ? v : 1) * sizeof *a), *g = a + v;
  fuzz_judgement again;
  int rc = -1;
  if (!answer || !s || !a)
    goto done;
  rc = 0;
  if (cJSON_HasObjectItem(answer, "error") || cJSON_HasObjectItem(got, "error"))
    fuzz_judge_errors(answer, got, out);
  else if (read_logprobs(answer, v, a) != 0 || read_logprobs(got, v, g) != 0)
    *out = (fuzz_judgement){FUZZ_MALFORMED, "not a row of V logprobs (numbers, null for -inf)"};
  else if ((rc = judge_sets(j, row, engine, answer, a, g, v, s, out)) == 0 &&
           out->verdict >= FUZZ_KEPT && forgive_underflow(a, g, v, j->precision) &&
           (rc = judge_sets(j, row, engine, answer, a, g, v, s, &again)) == 0 &&
           again.verdict < FUZZ_KEPT)
    *out = again;
done:
  cJSON_Delete(answer);
  free(s);
  free(a);
  return rc;
}

double fuzz_f32_bound(const cJSON *row, const cJSON *answer) {
  size_t v = 0;
  float *s = scaled_row(row, &v);
  double *lp = malloc((v ? v : 1) * sizeof *lp), most = 0.0;
  if (s && lp && read_logprobs(answer, v, lp) == 0) {
    const kept_stats k = stats_of(lp, s, v);
    for (size_t i = 0; i < v; i++)
      if (lp[i] != -INFINITY && bound_at(&k, s[i], lp[i], SIEVE_PRECISION_FLOAT32) > most)
        most = bound_at(&k, s[i], lp[i], SIEVE_PRECISION_FLOAT32);
  }
  free(s);
  free(lp);
  return most;
}
