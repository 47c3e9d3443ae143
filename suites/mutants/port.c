/*
 * A compact port of the rule as a shared library (harness/protocol/sieve_impl.h),
 * written separately from oracle/. Built as is, it is the control: it must
 * pass every fixture. Built with -DMUTANT_<NAME>, it carries one bug a real
 * port could have; catalogue.json names the cases each mutant must fail.
 * Built with -DPORT_FLOAT32, the softmax, the masses and the log-softmax are
 * float32, as real engines compute them (expf, logf, sequential float sums);
 * that build must pass every fixture at precision float32.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/sieve_impl.h"

#ifndef MUTANT_NAME
#define MUTANT_NAME "port-faithful"
#endif

#define EPS 1e-5

/* An engine step moved after temperature or the softmax: those then see `before`, the row
 * without that step. */
#if defined(MUTANT_FORCE_TOPK_AFTER_TEMPERATURE) || defined(MUTANT_FORCE_TOPK_AFTER_SOFTMAX)
#define MOVED_FORCE_TOPK
#endif
#if defined(MUTANT_BLACKLIST_AFTER_TEMPERATURE) || defined(MUTANT_BLACKLIST_AFTER_SOFTMAX)
#define MOVED_BLACKLIST
#endif
#if defined(MUTANT_FORCE_TOPK_AFTER_SOFTMAX) || defined(MUTANT_BLACKLIST_AFTER_SOFTMAX)
#define SOFTMAX_BEFORE_ENGINE_STEP
#endif

#ifdef PORT_FLOAT32
typedef float real;
#define EXP expf
#define LOG logf
#else
typedef double real;
#define EXP exp
#define LOG log
#endif

static int validate(const sieve_params *in, sieve_params *out) {
  double t = in->temperature, p = in->top_p;
  int64_t k = in->top_k;
#ifdef MUTANT_VALIDATION_AFTER_CLAMP
  if (t >= 0 && t < EPS) {
    t = EPS;
    p = 1.0;
    k = -1;
  }
#endif
  if (isnan(t) || isinf(t) || t < 0)
    return SIEVE_ETEMPERATURE;
#ifdef MUTANT_TOP_P_ZERO_IS_OFF
  if (p == 0)
    p = 1.0;
#endif
  if (isnan(p) || !(p > 0) || p > 1)
    return SIEVE_ETOPP;
#ifdef MUTANT_TOPK_ZERO_IS_OFF
  if (k == 0)
    k = -1;
#endif
  if (!(k == -1 || (k >= 1 && k <= 2147483647)))
    return SIEVE_ETOPK;
  if (!(in->min_p >= 0 && in->min_p <= 1))
    return SIEVE_EMINP;
  const sieve_penalties *pen = in->penalties;
  if (pen && !(pen->frequency >= -2 && pen->frequency <= 2))
    return SIEVE_EFREQUENCY;
  if (pen && !(pen->presence >= -2 && pen->presence <= 2))
    return SIEVE_EPRESENCE;
  if (pen && !(pen->repetition > 0 && pen->repetition <= 2))
    return SIEVE_EREPETITION;
  if (pen && pen->last_n < -1)
    return SIEVE_EPENALTYWINDOW;
  if (t < EPS) {
    t = EPS;
#ifndef MUTANT_T0_CLAMP_KEEPS_FILTERS
    p = 1.0;
    k = -1;
#endif
  }
  *out = (sieve_params){t, p, k, in->min_p, in->penalties};
  return 0;
}

typedef struct item {
  double p;
  int64_t id;
} item;

static int by_p(const void *a, const void *b) {
  const item *x = a, *y = b;
  if (x->p != y->p)
    return x->p > y->p ? -1 : 1;
#ifdef MUTANT_REVERSED_TIES
  return (x->id < y->id) - (x->id > y->id);
#else
  return (x->id > y->id) - (x->id < y->id);
#endif
}

static int by_value(const void *a, const void *b) {
  const item *x = a, *y = b;
  if (x->p != y->p)
    return x->p > y->p ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

/* Values with their ids, largest first, ties by id; NULL when out of memory. */
static item *sorted_items(const double *x, size_t v) {
  item *order = malloc(v * sizeof *order);
  for (size_t i = 0; order && i < v; i++)
    order[i] = (item){x[i], (int64_t)i};
  if (order)
    qsort(order, v, sizeof *order, by_value);
  return order;
}

static float scale(float x, double t) {
#if defined(MUTANT_DIVIDE_BY_TEMPERATURE)
  return x / (float)t;
#elif defined(MUTANT_MULTIPLY_BY_TEMPERATURE)
  return x * (float)t;
#else
  return x * (float)(1.0 / t);
#endif
}

/* The engine options on x (temperature t); `before` gets the row temperature scales. */
static int apply_engine(const sieve_engine *e, float *x, size_t v, item *tmp, double t,
                        float *before) {
  memcpy(before, x, v * sizeof *x);
  if (!e)
    return 0;
  if (e->force_topk < 0)
    return SIEVE_EFORCETOPK;
  for (size_t i = 0; i < e->blacklist_len; i++) {
    if (e->blacklist[i] < 0 || (size_t)e->blacklist[i] >= v)
      return SIEVE_EBLACKLIST;
#if defined(MUTANT_BLACKLIST_TO_LOWEST_FLOAT)
    x[e->blacklist[i]] = -FLT_MAX;
#elif !defined(MUTANT_BLACKLIST_AFTER_FORCE_TOPK) && !defined(MOVED_BLACKLIST)
    x[e->blacklist[i]] = -INFINITY;
#endif
  }
#ifdef MOVED_FORCE_TOPK
  memcpy(before, x, v * sizeof *x);
#endif
  if (e->force_topk > 0 && (size_t)e->force_topk < v) {
    for (size_t i = 0; i < v; i++)
#ifdef MUTANT_FORCE_TOPK_AFTER_TEMPERATURE
      tmp[i] = (item){scale(x[i], t), (int64_t)i};
#else
      tmp[i] = (item){x[i], (int64_t)i};
#endif
    qsort(tmp, v, sizeof *tmp, by_value);
    for (size_t r = (size_t)e->force_topk; r < v; r++)
      x[tmp[r].id] = -INFINITY;
  }
  (void)t;
#ifdef MOVED_BLACKLIST
  memcpy(before, x, v * sizeof *x);
#endif
#if defined(MUTANT_BLACKLIST_AFTER_FORCE_TOPK) || defined(MOVED_BLACKLIST)
  for (size_t i = 0; i < e->blacklist_len; i++)
    x[e->blacklist[i]] = -INFINITY;
#endif
#if !defined(MOVED_FORCE_TOPK) && !defined(MOVED_BLACKLIST)
  memcpy(before, x, v * sizeof *x);
#endif
  return 0;
}

/* A finite logit counted c > 0 times, penalized: it loses c * frequency + presence, then is
 * divided by repetition, or multiplied by it when negative; +-inf when that overflows. */
static float penalized(float x, uint32_t c, const sieve_penalties *pen) {
#ifdef MUTANT_PRESENCE_PER_OCCURRENCE
  double y = (float)((double)x - (c * pen->frequency + c * pen->presence));
#else
  double y = (float)((double)x - (c * pen->frequency + pen->presence));
#endif
#ifdef MUTANT_REPETITION_DIVIDES_NEGATIVE
  return (float)(y / pen->repetition);
#else
  return (float)(y < 0 ? y * pen->repetition : y / pen->repetition);
#endif
}

/* The penalties on the rows x and `before` (the row temperature scales): each token counted in
 * the last last_n output tokens (the prompt is not counted). counts[] is scratch of v entries. */
static int penalize(const sieve_penalties *pen, float *x, float *before, size_t v,
                    uint32_t *counts) {
  if (!pen)
    return 0;
#ifndef MUTANT_PENALTY_IDS_IGNORED
  for (size_t i = 0; i < pen->n_output; i++)
    if (pen->output[i] < 0 || (uint64_t)pen->output[i] >= v)
      return SIEVE_EOUTPUTTOKEN;
  for (size_t i = 0; i < pen->n_prompt; i++)
    if (pen->prompt[i] < 0 || (uint64_t)pen->prompt[i] >= v)
      return SIEVE_EPROMPTTOKEN;
#endif
  size_t n = pen->n_output;
  size_t from = pen->last_n < 0 || (uint64_t)pen->last_n >= n ? 0 : n - (size_t)pen->last_n;
#ifdef MUTANT_PENALTY_WINDOW_IGNORED
  from = 0;
#endif
  memset(counts, 0, v * sizeof *counts);
  for (size_t i = from; i < n; i++)
    if (pen->output[i] >= 0 && (uint64_t)pen->output[i] < v)
      counts[pen->output[i]]++;
  for (size_t i = 0; i < v; i++) {
    if (counts[i] && !isinf(x[i]) && isinf(x[i] = penalized(x[i], counts[i], pen)))
      return SIEVE_EOVERFLOW;
    if (counts[i] && !isinf(before[i]))
      before[i] = penalized(before[i], counts[i], pen);
  }
  return 0;
}

/* How many of the ranked tokens min-p leaves: those of probability at least min_p times the
 * largest (ranked by probability, they lead). */
static size_t min_p_count(const item *ranked, size_t n, double min_p) {
#ifdef MUTANT_MIN_P_ABSOLUTE
  const double bar = min_p;
#else
  const double bar = min_p * ranked[0].p;
#endif
  size_t kept = 1; /* the first rank's p is the largest: min_p <= 1 keeps it */
  while (kept < n && ranked[kept].p >= bar)
    kept++;
  return kept;
}

/* How many of the ranked tokens survive top-p and top-k. */
static size_t keep_count(const item *ranked, size_t n, const sieve_params *p) {
  size_t kept = n;
#ifdef MUTANT_TOPK_FIRST_RENORMALIZED
  size_t k = p->top_k == -1 || (size_t)p->top_k > n ? n : (size_t)p->top_k;
  real total = 0, mass = 0;
  for (size_t r = 0; r < k; r++)
    total += (real)ranked[r].p;
  for (kept = 1; kept < k && p->top_p < 1.0; kept++) {
    mass += (real)ranked[kept - 1].p / total;
    if (mass > p->top_p)
      break;
  }
  return p->top_p < 1.0 ? kept : k;
#else
  real mass = 0;
  if (p->top_p < 1.0)
    for (size_t r = 0; r < n; r++) {
#if defined(MUTANT_GE_BOUNDARY)
      if (r > 0 && mass >= p->top_p) {
#elif defined(MUTANT_TOPP_INCLUSIVE_CUMSUM)
      if (r > 0 && mass + ranked[r].p > p->top_p) {
#else
      if (r > 0 && mass > p->top_p) {
#endif
        kept = r;
        break;
      }
      mass += (real)ranked[r].p;
    }
  if (p->top_k != -1 && (size_t)p->top_k < kept) {
#ifdef MUTANT_TOPK_OFF_BY_ONE
    size_t k = (size_t)p->top_k + 1;
#else
    size_t k = (size_t)p->top_k;
#endif
#ifdef MUTANT_TOPK_KEEPS_TIES
    while (k < kept && ranked[k].p == ranked[k - 1].p)
      k++;
#endif
    kept = k;
  }
  return kept;
#endif
}

/* Ranks the finite tokens of x (scaled at temperature t) by their probability in the softmax
 * over the finite tokens of `over`. */
static size_t rank(const float *x, const float *over, size_t v, double t, item *ranked) {
  real m = -INFINITY, total = 0;
  for (size_t i = 0; i < v; i++)
    if (!isinf(over[i]) && scale(over[i], t) > m)
      m = scale(over[i], t);
  for (size_t i = 0; i < v; i++)
    total += isinf(over[i]) ? 0 : EXP((real)scale(over[i], t) - m);
  size_t n = 0;
  for (size_t i = 0; i < v; i++)
    if (!isinf(x[i]))
      ranked[n++] = (item){EXP((real)scale(x[i], t) - m) / total, (int64_t)i};
  qsort(ranked, n, sizeof *ranked, by_p);
  return n;
}

static int filter_checked(const float *logits, size_t v, const sieve_params *params,
                          double raw_temperature, const sieve_engine *e, double *lp, float *x,
                          item *ranked, uint32_t *counts) {
  sieve_params q = *params, *p = &q;
  for (size_t i = 0; i < v; i++)
    if (isnan(logits[i]))
      return SIEVE_ENAN;
  for (size_t i = 0; i < v; i++)
    if (isinf(logits[i]) && logits[i] > 0)
      return SIEVE_EPOSINF;
#ifdef MUTANT_TOPK_ABOVE_VOCAB_ERRORS
  if (p->top_k > 0 && (uint64_t)p->top_k > v)
    return SIEVE_ETOPK;
#endif
  memcpy(x, logits, v * sizeof *x);
  float *before = x + v;
  int rc = apply_engine(e, x, v, ranked, p->temperature, before);
#ifndef MUTANT_PENALTY_AFTER_TEMPERATURE
  rc = rc ? rc : penalize(p->penalties, x, before, v, counts);
#endif
  if (rc)
    return rc;
  int finite = 0;
  for (size_t i = 0; i < v; i++)
    finite |= !isinf(x[i]);
  if (!finite)
    return SIEVE_ENOFINITE;
  for (size_t i = 0; i < v; i++)
    if (!isinf(before[i]) && isinf(scale(before[i], p->temperature)))
      return SIEVE_EOVERFLOW;
#ifdef MUTANT_PENALTY_AFTER_TEMPERATURE /* scaled here, then penalized; T is 1 from now on */
  for (size_t i = 0; i < v; i++) {
    x[i] = isinf(x[i]) ? x[i] : scale(x[i], p->temperature);
    before[i] = isinf(before[i]) ? before[i] : scale(before[i], p->temperature);
  }
  p->temperature = 1.0;
  if ((rc = penalize(p->penalties, x, before, v, counts)) != 0)
    return rc;
#endif
#ifdef SOFTMAX_BEFORE_ENGINE_STEP
  const float *over = before;
#else
  const float *over = x;
#endif
#ifdef MUTANT_TEMPERATURE_AFTER_FILTERS
  size_t n = rank(x, over, v, 1.0, ranked);
#else
  size_t n = rank(x, over, v, p->temperature, ranked);
#endif
  size_t kept = keep_count(ranked, n, p);
  if (p->min_p > 0 && min_p_count(ranked, n, p->min_p) < kept)
    kept = min_p_count(ranked, n, p->min_p);
#ifdef MUTANT_T0_ARGMAX
  if (raw_temperature < EPS)
    kept = 1;
#else
  (void)raw_temperature;
#endif
  real m = -INFINITY, total = 0;
#ifdef MUTANT_UNRENORMALIZED_LOGPROBS
  size_t normalized = n; /* the log-softmax over every ranked token, not the kept ones */
#else
  size_t normalized = kept;
#endif
  for (size_t i = 0; i < v; i++)
    lp[i] = -INFINITY;
  for (size_t r = 0; r < normalized; r++)
    if ((real)scale(x[ranked[r].id], p->temperature) > m)
      m = (real)scale(x[ranked[r].id], p->temperature);
  for (size_t r = 0; r < normalized; r++)
    total += EXP((real)scale(x[ranked[r].id], p->temperature) - m);
  for (size_t r = 0; r < kept; r++)
    lp[ranked[r].id] = 0.0;
  for (size_t i = 0; i < v; i++)
    if (lp[i] == 0.0)
      lp[i] = (double)(((real)scale(x[i], p->temperature) - m) - LOG(total));
  return 0;
}

static int filter(const float *logits, size_t v, const sieve_params *params, const sieve_engine *e,
                  double *lp) {
  sieve_params p;
  int rc = validate(params, &p);
  if (rc)
    return rc;
  if (v == 0 || v > 2147483647)
    return SIEVE_EVOCAB;
  float *x = malloc(2 * v * sizeof *x); /* the row, then the row temperature scales */
  item *ranked = malloc(v * sizeof *ranked);
  uint32_t *counts = malloc(v * sizeof *counts);
  rc = x && ranked && counts
           ? filter_checked(logits, v, &p, params->temperature, e, lp, x, ranked, counts)
           : SIEVE_ENOMEM;
  free(x);
  free(ranked);
  free(counts);
  return rc;
}

static uint64_t shr(uint64_t z, int s) {
#ifdef MUTANT_ARITHMETIC_SHIFTS
  return (uint64_t)((int64_t)z >> s);
#else
  return z >> s;
#endif
}

static uint64_t mix(uint64_t z) {
#ifdef MUTANT_MIX_WITH_INCREMENT
  z += 0x9E3779B97F4A7C15ULL;
#endif
  z = (z ^ shr(z, 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ shr(z, 27)) * 0x94D049BB133111EBULL;
  return z ^ shr(z, 31);
}

static int uniform(const sieve_draw_key *key, double *u) {
  if (key->sample_case < 0 || key->sample_case > 2)
    return SIEVE_ECASE;
  if (key->tag != SIEVE_TAG_MAIN && key->tag != SIEVE_TAG_MTP)
    return SIEVE_ETAG;
  uint64_t seed = key->seed, position = key->position;
#ifdef MUTANT_SEED_LOW_32_BITS
  seed &= 0xFFFFFFFFULL;
#endif
#ifdef MUTANT_POSITION_IGNORED
  position = 0;
#endif
#ifndef MUTANT_MTP_OFFSET_FORGOTTEN
  if (key->tag == SIEVE_TAG_MTP)
    seed += 1000000007ULL;
#endif
  uint64_t seq = (position * 3 + (uint64_t)key->sample_case) * 0x9E3779B97F4A7C15ULL;
  *u = (double)(mix(seed + (seq ^ (seq << 13))) >> 11) * 0x1p-53;
  return 0;
}

static int pick(const double *probs, size_t v, double u, int64_t *token) {
  double total = 0;
  for (size_t i = 0; i < v; i++) {
    if (!(probs[i] >= 0) || isinf(probs[i]))
      return SIEVE_EPROBS;
    total += probs[i];
  }
  if (isinf(total))
    return SIEVE_EPROBS;
  if (total == 0)
    return SIEVE_EZEROMASS;
  double cdf = 0, target = u * total;
#ifdef MUTANT_CDF_PROBABILITY_ORDER
  item *order = sorted_items(probs, v);
  if (!order)
    return SIEVE_ENOMEM;
  for (size_t r = 0; r < v; r++)
    if ((cdf += order[r].p) > target) {
      *token = order[r].id;
      free(order);
      return 0;
    }
  free(order);
#else
  for (size_t i = 0; i < v; i++)
#ifdef MUTANT_DRAW_GE
    if ((cdf += probs[i]) >= target) {
#else
    if ((cdf += probs[i]) > target) {
#endif
      *token = (int64_t)i;
      return 0;
    }
#endif
  *token = (int64_t)v - 1;
  return 0;
}

static int draw(const double *probs, size_t v, const sieve_draw_key *key, int64_t *token) {
  double u;
  if (v == 0 || v > 2147483647)
    return SIEVE_EVOCAB;
  int rc = uniform(key, &u);
  return rc ? rc : pick(probs, v, u, token);
}

static int top_entries(const double *lp, size_t v, size_t n, sieve_top_entry *top) {
  item *order = sorted_items(lp, v);
  if (!order)
    return SIEVE_ENOMEM;
  for (size_t r = 0; r < n; r++)
    top[r] = (sieve_top_entry){order[r].id, order[r].p};
  free(order);
  return 0;
}

static int sample_row(const float *logits, size_t v, const sieve_params *p, const sieve_engine *e,
                      const sieve_draw_key *key, size_t n_top, sieve_top_entry *top, int64_t *token,
                      double *logprob, double *lp, double *probs) {
  int rc = filter(logits, v, p, e, lp);
  if (rc == 0 && n_top > v)
    rc = SIEVE_ETOPLOGPROBS;
  for (size_t i = 0; rc == 0 && i < v; i++)
    probs[i] = exp(lp[i]);
  if (rc == 0)
    rc = draw(probs, v, key, token);
  if (rc == 0)
    rc = top_entries(lp, v, n_top, top);
  if (rc == 0)
    *logprob = lp[*token];
#ifdef MUTANT_RAW_LOGPROBS
  sieve_params raw = {p->temperature, 1.0, -1, 0.0, NULL};
  if (rc == 0 && filter(logits, v, &raw, e, lp) == 0)
    *logprob = lp[*token];
#endif
  return rc;
}

static int sample(const float *logits, size_t v, const sieve_params *params, const sieve_engine *e,
                  const sieve_draw_key *key, size_t n_top, sieve_top_entry *top, int64_t *token,
                  double *logprob) {
  sieve_params p;
  int rc = validate(params, &p);
  if (rc)
    return rc;
  if (v == 0 || v > 2147483647)
    return SIEVE_EVOCAB;
  double *lp = malloc(v * sizeof *lp), *probs = malloc(v * sizeof *probs);
  rc = lp && probs ? sample_row(logits, v, params, e, key, n_top, top, token, logprob, lp, probs)
                   : SIEVE_ENOMEM;
  free(lp);
  free(probs);
  return rc;
}

/* ----------------------------------------------------------- speculative verification */

/* A row's processed distribution: exp of its processed logprobs, 0 where removed. */
static int probs_of(const float *row, size_t v, const sieve_params *p, const sieve_engine *e,
                    double *out) {
  int rc = filter(row, v, p, e, out);
  for (size_t i = 0; rc == 0 && i < v; i++)
    out[i] = isinf(out[i]) ? 0.0 : exp(out[i]);
  return rc;
}

/* The chain's length, both sides' parameters, every row, then the draft tokens. */
static int check_speculation(const sieve_speculation *s, const sieve_engine *e, double *scratch) {
  size_t v = s->vocab;
  sieve_params p;
  if (s->n_draft == 0 || s->n_draft > 64)
    return SIEVE_EDRAFT;
  int rc = validate(&s->target_params, &p);
  if (rc == 0 && s->draft_logits)
    rc = validate(&s->draft_params, &p);
  if (rc == 0 && (v == 0 || v > 2147483647))
    rc = SIEVE_EVOCAB;
#ifndef MUTANT_SPEC_UNREACHED_ROWS_UNCHECKED /* then each row is checked when it is reached */
  for (size_t j = 0; rc == 0 && j <= s->n_draft; j++)
    rc = filter(s->target_logits + j * v, v, &s->target_params, e, scratch);
  for (size_t j = 0; rc == 0 && s->draft_logits && j < s->n_draft; j++)
    rc = filter(s->draft_logits + j * v, v, &s->draft_params, e, scratch);
#else
  (void)e;
  (void)scratch;
#endif
  for (size_t j = 0; rc == 0 && j < s->n_draft; j++)
    if (s->draft_tokens[j] < 0 || (uint64_t)s->draft_tokens[j] >= v)
      rc = SIEVE_EDRAFTTOKEN;
  return rc;
}

static int accepts(double u, double p, double q) {
#ifdef MUTANT_SPEC_Q_ZERO_REJECTS
  if (q == 0)
    return 0;
#endif
#ifdef MUTANT_SPEC_ACCEPT_LE
  return q == 0 ? p > 0 : u <= p / q; /* the division engines write: NaN at p = q = 0 rejects */
#else
  return u * q < p;
#endif
}

static double spec_uniform(const sieve_speculation *s, size_t j, int sample_case) {
  sieve_draw_key key = {s->seed, s->position + j, sample_case, SIEVE_TAG_MAIN};
  double u = 0;
  uniform(&key, &u);
  return u;
}

/* The replacement of rejected draft j: a draw from max(p - q, 0), written over q. */
static int replacement(const sieve_speculation *s, size_t j, double *p, double *q, int64_t *token) {
  size_t x = (size_t)s->draft_tokens[j];
  double total = 0, cdf = 0; /* total: the clamped residual's, the draw's scale */
  for (size_t i = 0; i < s->vocab; i++) {
    double qi = s->draft_logits ? q[i] : (double)(i == x);
    total += p[i] > qi ? p[i] - qi : 0.0;
#ifdef MUTANT_SPEC_RESIDUAL_UNCLAMPED
    q[i] = p[i] - qi;
#elif defined(MUTANT_SPEC_RESIDUAL_FROM_P)
    q[i] = p[i];
#else
    q[i] = p[i] > qi ? p[i] - qi : 0.0;
#endif
  }
#ifdef MUTANT_SPEC_RESIDUAL_FROM_P
  total = 0; /* p's own total */
  for (size_t i = 0; i < s->vocab; i++)
    total += p[i];
#endif
#ifdef MUTANT_SPEC_RESAMPLE_CASE_0
  double u = spec_uniform(s, j, SIEVE_CASE_SAMPLE);
#else
  double u = spec_uniform(s, j, SIEVE_CASE_RESAMPLE);
#endif
  if (total == 0)
    return pick(p, s->vocab, u, token);
  for (size_t i = 0; i < s->vocab; i++)
    if ((cdf += q[i]) > u * total) {
      *token = (int64_t)i;
      return 0;
    }
  *token = (int64_t)s->vocab - 1;
  return 0;
}

/* The accept test of draft j on its rows: p into p, q into q. */
static int test_draft(const sieve_speculation *s, const sieve_engine *e, size_t j, double *p,
                      double *q, sieve_speculate_step *step) {
  size_t v = s->vocab, x = (size_t)s->draft_tokens[j];
#ifdef MUTANT_SPEC_Q_RAW
  const sieve_params draft = {1.0, 1.0, -1, 0.0, NULL};
#else
  const sieve_params draft = s->draft_params;
#endif
  int rc = probs_of(s->target_logits + j * v, v, &s->target_params, e, p);
  if (rc == 0 && s->draft_logits)
    rc = probs_of(s->draft_logits + j * v, v, &draft, e, q);
#ifdef MUTANT_SPEC_ACCEPT_CASE_0
  step->u = spec_uniform(s, j, SIEVE_CASE_SAMPLE);
#else
  step->u = spec_uniform(s, j, SIEVE_CASE_ACCEPT);
#endif
  step->p = p[x];
  step->q = s->draft_logits ? q[x] : 1.0;
  step->ratio = step->p == 0 ? 0 : step->q == 0 ? INFINITY : step->p / step->q;
  step->margin = step->q == 0 || step->p == 0 ? INFINITY : fabs(step->u - step->ratio);
  step->accepted = accepts(step->u, step->p, step->q);
  return rc;
}

static int verify(const sieve_speculation *s, const sieve_engine *e, sieve_speculate_step *steps,
                  int64_t *tokens, sieve_speculate_result *r, double *p, double *q) {
  size_t n = s->n_draft, v = s->vocab;
  int rc = 0, stopped = 0;
  r->accepted = r->n_tokens = r->n_steps = 0;
  for (size_t j = 0; rc == 0 && j < n && !stopped; j++) {
    rc = test_draft(s, e, j, p, q, &steps[j]);
    r->n_steps++;
    if (rc == 0 && steps[j].accepted) {
      r->accepted++;
      tokens[r->n_tokens++] = s->draft_tokens[j];
    } else if (rc == 0) {
      rc = replacement(s, j, p, q, &tokens[r->n_tokens++]);
#ifndef MUTANT_SPEC_CHAIN_NOT_STOPPED
      stopped = 1;
#endif
    }
  }
  r->bonus = rc == 0 && steps[n - 1].accepted && r->n_tokens == n;
#ifdef MUTANT_SPEC_NO_BONUS
  r->bonus = 0;
#endif
  if (r->bonus) {
    sieve_draw_key key = {s->seed, s->position + n, SIEVE_CASE_SAMPLE, SIEVE_TAG_MAIN};
    rc = probs_of(s->target_logits + n * v, v, &s->target_params, e, p);
    if (rc == 0)
      rc = draw(p, v, &key, &tokens[r->n_tokens++]);
  }
  return rc;
}

static int speculate(const sieve_speculation *s, const sieve_engine *e, sieve_speculate_step *steps,
                     int64_t *tokens, sieve_speculate_result *r) {
  if (s->vocab == 0 || s->vocab > 2147483647)
    return check_speculation(s, e, NULL); /* an error before any row is read */
  double *p = malloc((s->vocab ? s->vocab : 1) * sizeof *p);
  double *q = malloc((s->vocab ? s->vocab : 1) * sizeof *q);
  int rc = p && q ? check_speculation(s, e, p) : SIEVE_ENOMEM;
  if (rc == 0)
    rc = verify(s, e, steps, tokens, r, p, q);
  free(p);
  free(q);
  return rc;
}

static int position(int mode, int64_t q, int64_t k, int64_t row, int64_t *out) {
  if (q < 1 || k < q || row < 0 || (mode == SIEVE_PREFILL && row != 0) || row >= q)
    return SIEVE_EPOSITION;
  if (mode == SIEVE_PREFILL) {
    *out = k;
    return 0;
  }
#ifdef MUTANT_DECODE_MISSING_PLUS_ONE
  *out = k - q + row;
#else
  *out = k - q + 1 + row;
#endif
  return 0;
}

static const sieve_impl port = {
    SIEVE_IMPL_ABI,
    MUTANT_NAME,
    "1",
    validate,
    filter,
    uniform,
    draw,
    sample,
    position,
    speculate,
    "min_p,frequency_penalty,presence_penalty,repetition_penalty,penalty_last_n"};

const sieve_impl *sieve_impl_get(void) { return &port; }
