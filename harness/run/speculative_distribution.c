/* The speculative-distribution suite; see speculative_distribution.h and STATISTICS.md. */
#include "speculative_distribution.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/jbuf.h"
#include "protocol/request.h"
#include "sieve.h"
#include "statistics.h"

#define VOCAB 8              /* the largest row of a case */
#define CHAIN 2              /* the longest chain of a case */
#define MIN_COUNT 5          /* a cell expected fewer times leaves a commit test unasked */
#define DESIGN_MIN_COUNT 100 /* every cell of every test of the rule, at full reach */

typedef struct specdist_case {
  const char *name, *seed_ref, *built_for;
  size_t vocab, n_draft;
  float target[CHAIN + 1][VOCAB], draft[CHAIN][VOCAB];
  sieve_params target_params, draft_params;
  int given;             /* the drafts are given (the decisions p = 0, q = 0 and an empty */
  int64_t drafts[CHAIN]; /* residual force), not drawn by the implementation */
} specdist_case;

#define MATFLOOR                                                                                   \
  { 2.0f, 1.5f, 1.0f, 0.3f, -0.2f, -1.5f }
static const specdist_case cases[SPECDIST_MAX_CASES] = {
    {.name = "draft-top-k-3-t0.5-against-its-raw-softmax",
     .seed_ref = "000:52",
     .built_for = "spec-q-raw",
     .vocab = 6,
     .n_draft = 1,
     .target = {MATFLOOR, MATFLOOR},
     .draft = {{1.0f, 2.0f, 1.5f, 0.5f, 0.0f, -1.0f}},
     .target_params = {1.0, 1.0, 5},
     .draft_params = {0.5, 1.0, 3}},
    {.name = "draft-logits-near-100-that-bfloat16-rounds-apart",
     .seed_ref = "000:52",
     .built_for = "spec-draft-bf16",
     .vocab = 4,
     .n_draft = 1,
     .target = {{0.0f, 1.0f, 0.5f, 0.25f}, {0.0f, 1.0f, 0.5f, 0.25f}},
     .draft = {{100.26f, 100.24f, 99.76f, 99.74f}},
     .target_params = {1.0, 1.0, -1},
     .draft_params = {1.0, 1.0, -1}},
    {.name = "near-equal-flat-rows-chain-of-2-with-bonus",
     .seed_ref = "000:52",
     .built_for = "spec-token-match,spec-no-bonus",
     .vocab = 4,
     .n_draft = 2,
     .target = {{0.2f, 0.0f, 0.1f, -0.1f}, {0.0f, 0.2f, -0.1f, 0.1f}, {0.1f, 0.1f, 0.0f, 0.0f}},
     .draft = {{0.0f, 0.2f, -0.1f, 0.1f}, {0.2f, 0.0f, 0.1f, -0.1f}},
     .target_params = {1.0, 1.0, -1},
     .draft_params = {1.0, 1.0, -1}},
    {.name = "filters-on-both-sides-chain-of-2",
     .seed_ref = "000:52,000:57",
     .built_for = "spec-q-raw,spec-token-match",
     .vocab = 6,
     .n_draft = 2,
     .target = {MATFLOOR, {1.5f, 2.0f, 1.0f, 0.8f, 0.0f, -1.0f}, MATFLOOR},
     .draft = {{1.8f, 1.6f, 0.6f, 1.2f, -0.5f, 0.0f}, {1.0f, 1.8f, 1.4f, 0.2f, 0.9f, -2.0f}},
     .target_params = {1.0, 0.95, 5},
     .draft_params = {1.3, 1.0, 4}},
    {.name = "mat-floor-top-p-0.8-with-a-top-k-2-draft",
     .seed_ref = "000:21-23,000:52",
     .built_for = "spec-q-raw",
     .vocab = 6,
     .n_draft = 1,
     .target = {MATFLOOR, MATFLOOR},
     .draft = {{1.5f, 2.0f, 1.0f, 0.3f, -0.2f, -1.5f}},
     .target_params = {1.0, 0.8, -1},
     .draft_params = {1.0, 1.0, 2}},
    {.name = "a-given-draft-the-target-removes-is-always-rejected",
     .seed_ref = "000:52",
     .built_for = "the accept test at p = 0",
     .vocab = 6,
     .n_draft = 1,
     .target = {MATFLOOR, MATFLOOR},
     .draft = {MATFLOOR},
     .target_params = {1.0, 1.0, 2},
     .draft_params = {1.0, 1.0, -1},
     .given = 1,
     .drafts = {3}},
    {.name = "a-given-draft-its-own-row-removes-is-always-accepted",
     .seed_ref = "000:52",
     .built_for = "spec-q-zero-rejects",
     .vocab = 6,
     .n_draft = 1,
     .target = {MATFLOOR, MATFLOOR},
     .draft = {MATFLOOR},
     .target_params = {1.0, 1.0, -1},
     .draft_params = {1.0, 1.0, 2},
     .given = 1,
     .drafts = {2}},
    {.name = "a-given-draft-both-remove-is-replaced-from-p",
     .seed_ref = "000:52",
     .built_for = "spec_empty_residual=first_token,spec_empty_residual=last_token",
     .vocab = 6,
     .n_draft = 1,
     .target = {{-3.0f, 2.0f, 1.5f, 1.0f, 0.3f, -2.0f}, {-3.0f, 2.0f, 1.5f, 1.0f, 0.3f, -2.0f}},
     .draft = {{-3.0f, 2.0f, 1.5f, 1.0f, 0.3f, -2.0f}},
     .target_params = {1.0, 1.0, 3},
     .draft_params = {1.0, 1.0, 3},
     .given = 1,
     .drafts = {4}},
};

/* The known bugs the cases are built to detect; the rule comes first. */
#define SPECDIST_VARIANTS(X)                                                                       \
  X(RULE, "rule", "the rule (oracle/SPEC.md, \"Speculative decoding\")")                           \
  X(Q_RAW, "spec-q-raw",                                                                           \
    "the accept test and the residual use the draft row's raw softmax (T = 1, no filters), not "   \
    "the q the draft was drawn from (transformers#47932)")                                         \
  X(DRAFT_BF16, "spec-draft-bf16",                                                                 \
    "the drafts are drawn from bfloat16-rounded draft logits, the accept test uses the float32 "   \
    "ones (DeepSpec#31)")                                                                          \
  X(TOKEN_MATCH, "spec-token-match",                                                               \
    "a draft is accepted only when it equals the target's own sample, committed otherwise "        \
    "(mlx-swift-lm#459): the tokens still follow p, but drafts are accepted with probability "     \
    "sum p q, not sum min(p, q)")                                                                  \
  X(NO_BONUS, "spec-no-bonus", "no bonus token after every draft is accepted")                     \
  X(Q_ZERO_REJECTS, "spec-q-zero-rejects",                                                         \
    "a draft its own row removed (q = 0) is rejected, as vLLM's draft_prob > 0 guard does")        \
  X(EMPTY_FIRST, "spec_empty_residual=first_token",                                                \
    "an all-zero max(p - q, 0) gives token 0 (vLLM's argmax over zeros)")                          \
  X(EMPTY_LAST, "spec_empty_residual=last_token",                                                  \
    "an all-zero max(p - q, 0) gives the last token (SGLang's fallback)")

#define VARIANT_ENUM(id, name, what) VARIANT_##id,
typedef enum variant { SPECDIST_VARIANTS(VARIANT_ENUM) VARIANT_COUNT } variant;
#define VARIANT_NAME(id, name, what) name,
static const char *const variant_names[] = {SPECDIST_VARIANTS(VARIANT_NAME)};
#define VARIANT_WHAT(id, name, what) what,
static const char *const variant_whats[] = {SPECDIST_VARIANTS(VARIANT_WHAT)};

/* The distributions a variant gives a case. */
typedef struct model {
  double p[CHAIN + 1][VOCAB];      /* the target's processed rows */
  double q[CHAIN][VOCAB];          /* the draft's processed rows, as the rule reads them */
  double q_draw[CHAIN][VOCAB];     /* what the drafts are drawn from */
  double q_test[CHAIN][VOCAB];     /* what the accept test and the residual use */
  double q_raw[CHAIN][VOCAB];      /* the draft row's softmax at T = 1, no filters */
  double commit[CHAIN + 1][VOCAB]; /* the token committed at j by a chain that reaches j */
  double accepted[CHAIN + 1];      /* P(accepted = m) */
  double reach[CHAIN + 1];         /* P(the chain reaches position j) */
} model;

/* What the answers showed. */
typedef struct counts {
  size_t draft[CHAIN][VOCAB], accepted[CHAIN + 1], commit[CHAIN + 1][VOCAB], reached[CHAIN + 1];
  size_t no_bonus;  /* answers that accepted every draft and committed no more */
  int given_drafts; /* the implementation verifies given drafts only: the harness draws them */
  char step_problem[300]; /* the first answer whose steps contradict it or the rule, if any */
  char step_cause[40];    /* the known bug that answer's ratio is, if one */
} counts;

/* One chi-square test of a case: the cells, what the variant expects and what was seen. */
typedef enum test_kind { TEST_DRAFT, TEST_ACCEPTED, TEST_COMMIT } test_kind;
typedef struct test {
  test_kind kind;
  size_t j, cells;
} test;

static size_t tests_of(const specdist_case *c, test *out) {
  size_t n = 0;
  for (size_t j = 0; j < c->n_draft; j++)
    out[n++] = (test){TEST_DRAFT, j, c->vocab};
  out[n++] = (test){TEST_ACCEPTED, 0, c->n_draft + 1};
  for (size_t j = 0; j <= c->n_draft; j++)
    out[n++] = (test){TEST_COMMIT, j, c->vocab};
  return n;
}

static size_t suite_tests(void) {
  test t[2 * CHAIN + 2];
  size_t n = 0;
  for (size_t i = 0; i < SPECDIST_MAX_CASES; i++)
    n += tests_of(&cases[i], t);
  return n;
}

static double test_alpha(void) { return SPECDIST_ALPHA / (double)suite_tests(); }

/* ----------------------------------------------------------------------------- the models */

static float bfloat16(float x) {
  uint32_t bits;
  memcpy(&bits, &x, sizeof bits);
  bits = (bits + 0x7FFFu + ((bits >> 16) & 1u)) & 0xFFFF0000u; /* nearest, ties to even */
  memcpy(&x, &bits, sizeof x);
  return x;
}

static int probs(const float *row, size_t vocab, const sieve_params *params, double *out) {
  double lp[VOCAB];
  int rc = sieve_filter(row, vocab, params, NULL, lp, NULL);
  for (size_t t = 0; rc == 0 && t < vocab; t++)
    out[t] = isinf(lp[t]) ? 0.0 : exp(lp[t]);
  return rc;
}

static int draft_rows(const specdist_case *c, variant v, size_t j, model *m) {
  static const sieve_params raw = {1.0, 1.0, -1, 0.0, NULL};
  float rounded[VOCAB];
  for (size_t t = 0; t < c->vocab; t++)
    rounded[t] = bfloat16(c->draft[j][t]);
  int rc = probs(c->draft[j], c->vocab, &c->draft_params, m->q[j]);
  if (rc == 0)
    rc = probs(c->draft[j], c->vocab, &raw, m->q_raw[j]);
  memcpy(m->q_draw[j], m->q[j], sizeof m->q[j]);
  memcpy(m->q_test[j], m->q[j], sizeof m->q[j]);
  if (c->given) { /* a given draft is drawn from nothing: it is itself */
    memset(m->q_draw[j], 0, sizeof m->q_draw[j]);
    m->q_draw[j][c->drafts[j]] = 1.0;
  }
  if (rc == 0 && v == VARIANT_Q_RAW)
    memcpy(m->q_test[j], m->q_raw[j], sizeof m->q_raw[j]);
  if (rc == 0 && v == VARIANT_DRAFT_BF16 && !c->given)
    rc = probs(rounded, c->vocab, &c->draft_params, m->q_draw[j]);
  return rc;
}

/* P(accept) and the committed token's distribution at one position (Leviathan et al. 2023). */
static double position_model(const model *m, size_t j, size_t vocab, variant v, double *commit) {
  const double *p = m->p[j], *qd = m->q_draw[j], *qt = m->q_test[j];
  double accept = 0.0, residual[VOCAB], empty[VOCAB] = {0}, mass = 0.0;
  int token_match = v == VARIANT_TOKEN_MATCH;
  for (size_t t = 0; t < vocab; t++) {
    double keep =
        qt[t] == 0.0 ? (p[t] > 0.0 && v != VARIANT_Q_ZERO_REJECTS) : fmin(1.0, p[t] / qt[t]);
    commit[t] = token_match ? qd[t] * p[t] : qd[t] * keep;
    accept += commit[t];
    residual[t] = fmax(p[t] - qt[t], 0.0);
    mass += residual[t];
  }
  /* What an all-zero residual gives: p, or token 0 or the last token under those readings. */
  if (v == VARIANT_EMPTY_FIRST || v == VARIANT_EMPTY_LAST)
    empty[v == VARIANT_EMPTY_FIRST ? 0 : vocab - 1] = 1.0;
  else
    memcpy(empty, p, vocab * sizeof *p);
  for (size_t t = 0; t < vocab; t++)
    commit[t] = token_match
                    ? p[t]
                    : commit[t] + (1.0 - accept) * (mass > 0.0 ? residual[t] / mass : empty[t]);
  return accept;
}

static int build_model(const specdist_case *c, variant v, model *m) {
  memset(m, 0, sizeof *m);
  int rc = 0;
  for (size_t j = 0; rc == 0 && j <= c->n_draft; j++)
    rc = probs(c->target[j], c->vocab, &c->target_params, m->p[j]);
  for (size_t j = 0; rc == 0 && j < c->n_draft; j++)
    rc = draft_rows(c, v, j, m);
  if (rc != 0)
    return rc;
  m->reach[0] = 1.0;
  for (size_t j = 0; j < c->n_draft; j++) {
    double a = position_model(m, j, c->vocab, v, m->commit[j]);
    m->accepted[j] = m->reach[j] * (1.0 - a);
    m->reach[j + 1] = m->reach[j] * a;
  }
  m->accepted[c->n_draft] = m->reach[c->n_draft];
  memcpy(m->commit[c->n_draft], m->p[c->n_draft], sizeof m->p[0]);
  return 0;
}

/* The cells a test expects (probabilities), the cells seen, and how many answers it covers. */
static const double *expected_of(const model *m, const test *t) {
  return t->kind == TEST_DRAFT      ? m->q_draw[t->j]
         : t->kind == TEST_ACCEPTED ? m->accepted
                                    : m->commit[t->j];
}

static const size_t *seen_of(const counts *k, const test *t) {
  return t->kind == TEST_DRAFT      ? k->draft[t->j]
         : t->kind == TEST_ACCEPTED ? k->accepted
                                    : k->commit[t->j];
}

static size_t answers_of(const counts *k, const test *t) {
  return t->kind == TEST_COMMIT ? k->reached[t->j] : SPECDIST_RUNS;
}

static void test_name(const test *t, char *out, size_t len) {
  if (t->kind == TEST_DRAFT)
    snprintf(out, len, "draft token %zu", t->j);
  else if (t->kind == TEST_ACCEPTED)
    snprintf(out, len, "accepted count");
  else
    snprintf(out, len, "committed token %zu", t->j);
}

/* ----------------------------------------------------------------------------- statistics */

/* One test of the case under a variant. A cell expected fewer than MIN_COUNT times leaves the
 * test unasked (p = 1): too few chains reached it. */
static chi_square test_statistic(const model *m, const counts *k, const test *t) {
  return stat_chi_square(expected_of(m, t), seen_of(k, t), t->cells, answers_of(k, t), MIN_COUNT);
}

/* Whether every test of the case passes with the variant's distributions. */
static int fits(const model *m, const counts *k, const test *tests, size_t n_tests) {
  for (size_t i = 0; i < n_tests; i++)
    if (test_statistic(m, k, &tests[i]).p < test_alpha())
      return 0;
  return 1;
}

/* ----------------------------------------------------------------------------- the requests */

static void write_rows(jbuf *b, const float (*rows)[VOCAB], size_t n, size_t vocab) {
  jbuf_raw(b, "\"rows\":[");
  for (size_t j = 0; j < n; j++) {
    if (j)
      jbuf_char(b, ',');
    jbuf_floats(b, rows[j], vocab);
  }
  jbuf_char(b, ']');
}

static uint64_t seed_of(size_t run) { return 0x5EED5BEC00000000ULL + run; }
static uint64_t position_of(size_t run) { return 100 * (uint64_t)run; }

/* The drafts of a run as the oracle draws them (tag mtp), for an implementation that verifies
 * given drafts only. */
static int harness_drafts(const specdist_case *c, size_t run, int64_t *drafts) {
  float rows[CHAIN * VOCAB];
  for (size_t j = 0; j < c->n_draft; j++)
    memcpy(rows + j * c->vocab, c->draft[j], c->vocab * sizeof *rows);
  sieve_speculation s = {.target_logits = rows,
                         .draft_logits = rows,
                         .n_draft = c->n_draft,
                         .vocab = c->vocab,
                         .target_params = c->target_params,
                         .draft_params = c->draft_params,
                         .seed = seed_of(run),
                         .position = position_of(run)};
  return sieve_speculate_draft(NULL, &s, NULL, drafts);
}

/* Run `run`'s request: the drafts left to the implementation, or `given`. */
static char *request(const specdist_case *c, size_t run, const int64_t *given, size_t *len) {
  jbuf b = {0};
  jbuf_raw(&b, "{\"op\":\"speculate\",\"seed\":");
  jbuf_u64_str(&b, seed_of(run));
  jbuf_raw(&b, ",\"position\":");
  jbuf_int(&b, (int64_t)position_of(run));
  jbuf_raw(&b, ",\"target\":{");
  write_rows(&b, c->target, c->n_draft + 1, c->vocab);
  jbuf_raw(&b, ",\"params\":");
  jbuf_params(&b, &c->target_params, 1);
  jbuf_raw(&b, "},\"draft\":{");
  if (given) {
    jbuf_raw(&b, "\"tokens\":[");
    for (size_t j = 0; j < c->n_draft; j++) {
      if (j)
        jbuf_char(&b, ',');
      jbuf_int(&b, given[j]);
    }
    jbuf_raw(&b, "],");
  }
  write_rows(&b, c->draft, c->n_draft, c->vocab);
  jbuf_raw(&b, ",\"params\":");
  jbuf_params(&b, &c->draft_params, 1);
  jbuf_raw(&b, "}}");
  *len = b.len;
  return b.data;
}

/* Reads an array of exactly `n` token ids in [0, vocab) into out; 0, or -1 with `why` saying
 * what was received instead. */
static int token_array(const cJSON *a, size_t vocab, size_t n, int64_t *out, char *why,
                       size_t len) {
  if (!cJSON_IsArray(a))
    return snprintf(why, len, "%s", a ? "not an array" : "missing"), -1;
  if ((size_t)cJSON_GetArraySize(a) != n)
    return snprintf(why, len, "%d ids", cJSON_GetArraySize(a)), -1;
  size_t i = 0;
  for (const cJSON *x = a->child; x; x = x->next, i++) {
    double t = cJSON_IsNumber(x) ? x->valuedouble : -1;
    if (!(t >= 0 && t < (double)vocab && t == floor(t))) {
      char *text = cJSON_PrintUnformatted(x);
      snprintf(why, len, "entry %zu is %.40s, not a token id in [0, %zu)", i, text ? text : "?",
               vocab);
      free(text);
      return -1;
    }
    out[i] = (int64_t)t;
  }
  return 0;
}

/* Within float32 reach of the rule's ratio (both infinite or both 0 count as equal). */
static int close_ratio(double got, double want) {
  if (isinf(want) || want == 0.0)
    return got == want;
  return fabs(got - want) <= 1e-4 * want;
}

/* The first contradiction of step j: its fields, its outcome against the answer's count, its
 * ratio against the rule's p / q, or its outcome against u < ratio (beyond float reach). */
static void check_step(const cJSON *st, size_t j, size_t accepted, const model *rule, int64_t x,
                       size_t run, counts *k) {
  const cJSON *acc = cJSON_GetObjectItemCaseSensitive(st, "accepted");
  double u, ratio, p = rule->p[j][x], q = rule->q[j][x];
  double want = p == 0.0 ? 0.0 : q == 0.0 ? INFINITY : p / q;
  char *out = k->step_problem;
  size_t len = sizeof k->step_problem;
  if (!cJSON_IsBool(acc) ||
      req_number(cJSON_GetObjectItemCaseSensitive(st, "u"), REQ_NULL_REFUSED, &u) != 0 ||
      req_number(cJSON_GetObjectItemCaseSensitive(st, "ratio"), REQ_NULL_REFUSED, &ratio) != 0)
    snprintf(out, len, "run %zu: steps[%zu] needs accepted, u and ratio (PROTOCOL.md)", run, j);
  else if (cJSON_IsTrue(acc) != (j < accepted))
    snprintf(out, len, "run %zu: steps[%zu].accepted is %s, but the answer accepted %zu drafts",
             run, j, cJSON_IsTrue(acc) ? "true" : "false", accepted);
  else if (!close_ratio(ratio, want)) {
    if (rule->q_raw[j][x] > 0.0 && close_ratio(ratio, p / rule->q_raw[j][x]))
      snprintf(k->step_cause, sizeof k->step_cause, "spec-q-raw");
    snprintf(out, len,
             "run %zu: steps[%zu].ratio is %.6g, but p / q of draft %lld is %.6g (p %.6g over the "
             "draft's processed q %.6g)",
             run, j, ratio, (long long)x, want, p, q);
  } else if (!(u >= 0.0 && u < 1.0) ||
             ((u < ratio) != cJSON_IsTrue(acc) && fabs(u - ratio) > 1e-6 * fmax(1.0, ratio)))
    snprintf(out, len,
             "run %zu: steps[%zu] is %s with u %.9g and ratio %.9g; the test is u < p / q", run, j,
             cJSON_IsTrue(acc) ? "accepted" : "rejected", u, ratio);
}

/* The steps: one per test run, each consistent (check_step); the first problem is kept. */
static void check_steps(const specdist_case *c, const cJSON *answer, size_t accepted,
                        const int64_t *drafts, const model *rule, size_t run, counts *k) {
  const cJSON *steps = cJSON_GetObjectItemCaseSensitive(answer, "steps");
  const cJSON *bonus = cJSON_GetObjectItemCaseSensitive(answer, "bonus");
  size_t want = accepted < c->n_draft ? accepted + 1 : c->n_draft, j = 0;
  if (k->step_problem[0])
    return;
  if (!cJSON_IsArray(steps) || (size_t)cJSON_GetArraySize(steps) != want)
    snprintf(k->step_problem, sizeof k->step_problem,
             "run %zu: accepted %zu of %zu drafts, so steps has %zu entries, not %d", run, accepted,
             c->n_draft, want, cJSON_IsArray(steps) ? cJSON_GetArraySize(steps) : 0);
  else if (bonus && cJSON_IsTrue(bonus) != (accepted == c->n_draft))
    snprintf(k->step_problem, sizeof k->step_problem,
             "run %zu: bonus is %s, but %zu of %zu drafts were accepted", run,
             cJSON_IsTrue(bonus) ? "true" : "false", accepted, c->n_draft);
  for (const cJSON *st = cJSON_IsArray(steps) ? steps->child : NULL;
       st && !k->step_problem[0] && j < want; st = st->next, j++)
    check_step(st, j, accepted, rule, drafts[j], run, k);
}

/* Adds answer `i` to the counts; -1 with `detail` when it is not a speculative answer. */
static int tally(const specdist_case *c, const model *rule, const cJSON *answer, size_t i,
                 const int64_t *given, counts *k, char *detail, size_t len) {
  const cJSON *accepted = cJSON_GetObjectItemCaseSensitive(answer, "accepted");
  int64_t tokens[CHAIN + 1], drafts[CHAIN];
  char why[120];
  double a = cJSON_IsNumber(accepted) ? accepted->valuedouble : -1;
  if (!(a >= 0 && a <= (double)c->n_draft && a == floor(a)))
    return snprintf(detail, len, "run %zu: accepted is not a count from 0 to %zu", i, c->n_draft),
           -1;
  if (given)
    memcpy(drafts, given, c->n_draft * sizeof *drafts);
  else if (token_array(cJSON_GetObjectItemCaseSensitive(answer, "draft_tokens"), c->vocab,
                       c->n_draft, drafts, why, sizeof why) != 0)
    return snprintf(detail, len,
                    "run %zu: draft_tokens must hold %zu token ids in [0, %zu), the drafts drawn "
                    "(the suite leaves draft.tokens out); got %s",
                    i, c->n_draft, c->vocab, why),
           -1;
  size_t m = (size_t)a;
  const cJSON *committed = cJSON_GetObjectItemCaseSensitive(answer, "tokens");
  int no_bonus = m == c->n_draft && cJSON_GetArraySize(committed) == (int)m;
  if (token_array(committed, c->vocab, no_bonus ? m : m + 1, tokens, why, sizeof why) != 0)
    return snprintf(detail, len,
                    "run %zu: accepted %zu drafts, so tokens holds %zu token ids in [0, %zu); "
                    "got %s",
                    i, m, m + 1, c->vocab, why),
           -1;
  for (size_t j = 0; j < m; j++)
    if (tokens[j] != drafts[j])
      return snprintf(detail, len,
                      "run %zu: committed token %zu is %lld, not the accepted draft %lld", i, j,
                      (long long)tokens[j], (long long)drafts[j]),
             -1;
  check_steps(c, answer, m, drafts, rule, i, k);
  k->no_bonus += (size_t)no_bonus;
  for (size_t j = 0; j < c->n_draft; j++)
    k->draft[j][drafts[j]]++;
  k->accepted[m]++;
  for (size_t j = 0; j < m + !no_bonus; j++) {
    k->reached[j]++;
    k->commit[j][tokens[j]]++;
  }
  return 0;
}

/* ----------------------------------------------------------------------------- the verdict */

static const specdist_case *find(const char *id) {
  const char *prefix = SPECDIST_SUITE "/";
  if (strncmp(id, prefix, strlen(prefix)) != 0)
    return NULL;
  for (size_t i = 0; i < SPECDIST_MAX_CASES; i++)
    if (strcmp(id + strlen(prefix), cases[i].name) == 0)
      return &cases[i];
  return NULL;
}

int specdist_is_case(const char *id) { return find(id) != NULL; }

size_t specdist_cases(case_result *out) {
  for (size_t i = 0; i < SPECDIST_MAX_CASES; i++) {
    case_result *r = &out[i];
    memset(r, 0, sizeof *r);
    snprintf(r->id, sizeof r->id, SPECDIST_SUITE "/%s", cases[i].name);
    r->suite = SPECDIST_SUITE;
    r->family = SPECDIST_SUITE;
    r->seed_ref = cases[i].seed_ref;
  }
  return SPECDIST_MAX_CASES;
}

/* The known bugs whose distributions the counts fit (into r->causes), or that they rule out
 * (into r->ruled_out) when the case passed. */
static void weigh_bugs(case_result *r, const specdist_case *c, const counts *k, const test *tests,
                       size_t n_tests) {
  char *list = r->outcome == OUTCOME_PASS ? r->ruled_out : r->causes;
  size_t size = r->outcome == OUTCOME_PASS ? sizeof r->ruled_out : sizeof r->causes, used = 0;
  for (int v = VARIANT_RULE + 1; v < VARIANT_COUNT; v++) {
    model m;
    /* A missing bonus shows only where a chain accepted every draft. */
    int unseen = v == VARIANT_NO_BONUS && k->no_bonus == 0 && k->accepted[c->n_draft] == 0;
    int fit = k->no_bonus > 0;
    if (v != VARIANT_NO_BONUS && build_model(c, (variant)v, &m) == 0)
      fit = k->no_bonus == 0 && fits(&m, k, tests, n_tests);
    if (!unseen && fit == (r->outcome != OUTCOME_PASS) && used < size)
      used += (size_t)snprintf(list + used, size - used, "%s%s", used ? "," : "", variant_names[v]);
  }
}

/* The first failing test of the rule, into r->detail; 0 when all pass. */
static int first_failure(case_result *r, const model *m, const counts *k, const test *tests,
                         size_t n_tests) {
  double alpha = test_alpha();
  for (size_t i = 0; i < n_tests; i++) {
    chi_square v = test_statistic(m, k, &tests[i]);
    char name[40];
    test_name(&tests[i], name, sizeof name);
    if (v.impossible >= 0)
      return snprintf(r->detail, sizeof r->detail,
                      "%s: %zu of %zu answers give %s %ld, which the rule never does", name,
                      seen_of(k, &tests[i])[v.impossible], answers_of(k, &tests[i]),
                      tests[i].kind == TEST_ACCEPTED ? "count" : "token", v.impossible),
             1;
    if (v.p < alpha)
      return snprintf(r->detail, sizeof r->detail,
                      "%s: chi-square %.1f on %d degrees of freedom over %zu answers, p = %.3g "
                      "(fails below %.3g)",
                      name, v.statistic, v.df, answers_of(k, &tests[i]), v.p, alpha),
             1;
  }
  return 0;
}

static void judge(case_result *r, const specdist_case *c, const counts *k) {
  model m;
  test tests[2 * CHAIN + 2];
  size_t n_tests = tests_of(c, tests);
  build_model(c, VARIANT_RULE, &m);
  r->outcome = OUTCOME_FAIL;
  if (k->no_bonus > 0)
    snprintf(r->detail, sizeof r->detail,
             "%zu of %d runs accepted every draft (%zu) and committed no bonus token", k->no_bonus,
             SPECDIST_RUNS, c->n_draft);
  else if (!first_failure(r, &m, k, tests, n_tests) && k->step_problem[0]) {
    /* The counts pass, but an answer's own steps contradict it or the rule. */
    snprintf(r->causes, sizeof r->causes, "%s", k->step_cause);
    snprintf(r->detail, sizeof r->detail, "%s%s%s%s", k->step_problem,
             k->step_cause[0] ? "; that is p over its raw softmax [" : "", k->step_cause,
             k->step_cause[0] ? "]" : "");
    return;
  } else if (!r->detail[0]) {
    r->outcome = OUTCOME_PASS;
    snprintf(r->detail, sizeof r->detail,
             "%zu chi-square tests pass at %.3g each over %d runs (%zu accepted the first draft)",
             n_tests, test_alpha(), SPECDIST_RUNS, SPECDIST_RUNS - k->accepted[0]);
  }
  weigh_bugs(r, c, k, tests, n_tests);
  size_t used = strlen(r->detail);
  if (r->outcome == OUTCOME_PASS && r->ruled_out[0])
    used += (size_t)snprintf(r->detail + used, sizeof r->detail - used, "; they rule out [%s]",
                             r->ruled_out);
  if (r->outcome == OUTCOME_FAIL && r->causes[0])
    used += (size_t)snprintf(r->detail + used, sizeof r->detail - used, "; the counts fit [%s]",
                             r->causes);
  if (k->given_drafts && used < sizeof r->detail)
    snprintf(r->detail + used, sizeof r->detail - used,
             "; the harness drew the drafts (the implementation verifies given ones only)");
}

/* Whether the rule's every cell is expected DESIGN_MIN_COUNT times at least (the chi-square
 * approximation is sound there); a case that is not is the harness's fault. */
static int well_built(const specdist_case *c) {
  model m;
  if (build_model(c, VARIANT_RULE, &m) != 0)
    return 0;
  test tests[2 * CHAIN + 2];
  size_t n_tests = tests_of(c, tests);
  for (size_t i = 0; i < n_tests; i++) {
    const double *e = expected_of(&m, &tests[i]);
    double n = tests[i].kind == TEST_COMMIT ? SPECDIST_RUNS * m.reach[tests[i].j] : SPECDIST_RUNS;
    for (size_t t = 0; n > 0.0 && t < tests[i].cells; t++) /* a position never reached: none */
      if (e[t] > 0.0 && n * e[t] < DESIGN_MIN_COUNT)
        return 0;
  }
  return 1;
}

static int verifies_given_drafts_only(const cJSON *answer) {
  const cJSON *error = cJSON_GetObjectItemCaseSensitive(answer, "error");
  const cJSON *field = cJSON_GetObjectItemCaseSensitive(error, "field");
  return cJSON_IsString(field) && strcmp(field->valuestring, "draft.tokens") == 0;
}

/* Asks run `run` and counts its answer; 0, or the outcome with `detail` filled. */
static outcome ask_run(const specdist_case *c, const model *rule, size_t run, counts *k,
                       exchange_fn ex, void *ctx, char *detail, size_t len) {
  int64_t drafts[CHAIN];
  const int64_t *given = c->given ? c->drafts : k->given_drafts ? drafts : NULL;
  if (given == drafts && harness_drafts(c, run, drafts) != 0)
    return snprintf(detail, len, "the harness cannot draw the drafts of run %zu", run),
           OUTCOME_CRASH;
  size_t n;
  char *req = request(c, run, given, &n);
  cJSON *answer = req ? ex(ctx, req, n, detail, len) : NULL;
  free(req);
  if (run == 0 && !given && verifies_given_drafts_only(answer)) {
    cJSON_Delete(answer);
    k->given_drafts = 1;
    return ask_run(c, rule, run, k, ex, ctx, detail, len);
  }
  const cJSON *error = cJSON_GetObjectItemCaseSensitive(answer, "error");
  const cJSON *message = cJSON_GetObjectItemCaseSensitive(error, "message");
  outcome o = !answer                                                   ? OUTCOME_CRASH
              : error                                                   ? OUTCOME_ERROR
              : tally(c, rule, answer, run, given, k, detail, len) != 0 ? OUTCOME_FAIL
                                                                        : OUTCOME_PASS;
  if (error)
    snprintf(detail, len, "run %zu: the answer is an error: %.300s", run,
             cJSON_IsString(message) ? message->valuestring : "(no message)");
  cJSON_Delete(answer);
  return o;
}

void specdist_run(case_result *r, exchange_fn ex, void *ctx) {
  const specdist_case *c = find(r->id);
  counts *k = calloc(1, sizeof *k);
  model rule;
  outcome o = c && k && well_built(c) && build_model(c, VARIANT_RULE, &rule) == 0 ? OUTCOME_PASS
                                                                                  : OUTCOME_CRASH;
  char detail[400] = "the harness cannot build this case";
  for (size_t run = 0; o == OUTCOME_PASS && run < SPECDIST_RUNS; run++)
    o = ask_run(c, &rule, run, k, ex, ctx, detail, sizeof detail);
  if (o == OUTCOME_PASS)
    judge(r, c, k);
  else {
    r->outcome = o;
    snprintf(r->detail, sizeof r->detail, "%s", detail);
  }
  free(k);
}

/* ----------------------------------------------------------------------------- power */

/* The chi-square quantile: the x with Q(df / 2, x / 2) = alpha, by bisection. */
static double critical_value(int df, double alpha) {
  double lo = 0.0, hi = 10000.0;
  for (int i = 0; i < 200; i++) {
    double mid = (lo + hi) / 2;
    if (stat_gamma_q(df / 2.0, mid / 2.0) > alpha)
      lo = mid;
    else
      hi = mid;
  }
  return hi;
}

/* P(X > x) for X noncentral chi-square (df, lambda): a Poisson mixture of central ones. */
static double noncentral_tail(int df, double lambda, double x) {
  double mean = df + lambda, sd = sqrt(2.0 * (df + 2.0 * lambda));
  if ((x - mean) / sd < -12.0)
    return 1.0;
  double mu = lambda / 2.0, total = 0.0;
  double lo = floor(fmax(0.0, mu - 12.0 * sqrt(mu) - 12.0)), hi = mu + 12.0 * sqrt(mu) + 12.0;
  for (double i = lo; i <= hi; i++) {
    double w = i == 0.0 && mu == 0.0 ? 1.0 : exp(-mu + i * log(mu) - lgamma(i + 1.0));
    total += w * stat_gamma_q((df + 2.0 * i) / 2.0, x / 2.0);
  }
  return fmin(total, 1.0);
}

/* The power of one test against a variant: Pearson's statistic is close to noncentral
 * chi-square with lambda = n sum (e_bug - e_rule)^2 / e_rule; mass where the rule has none
 * fails at once. */
static double test_power(const model *rule, const model *bug, const test *t) {
  const double *er = expected_of(rule, t), *eb = expected_of(bug, t);
  double n = t->kind == TEST_COMMIT ? SPECDIST_RUNS * bug->reach[t->j] : SPECDIST_RUNS;
  double lambda = 0.0, outside = 0.0;
  int df = -1;
  for (size_t i = 0; i < t->cells; i++) {
    if (er[i] > 0.0) {
      lambda += n * (eb[i] - er[i]) * (eb[i] - er[i]) / er[i];
      df++;
    } else
      outside += eb[i];
  }
  double at_once = 1.0 - pow(1.0 - outside, n);
  double tail = df > 0 ? noncentral_tail(df, lambda, critical_value(df, test_alpha())) : 0.0;
  return 1.0 - (1.0 - at_once) * (1.0 - tail);
}

static void print_power(FILE *out, double power) {
  if (power >= 0.9999)
    fprintf(out, power >= 1.0 - 1e-15 ? "1 - <1e-15" : "1 - %.0e", 1.0 - power);
  else
    fprintf(out, "%.4f", power);
}

/* The case's power against a variant: the largest of its tests' (a lower bound). */
static double case_power(const specdist_case *c, variant v, const test *tests, size_t n_tests) {
  model rule, bug;
  build_model(c, VARIANT_RULE, &rule);
  build_model(c, v == VARIANT_NO_BONUS ? VARIANT_RULE : v, &bug);
  if (v == VARIANT_NO_BONUS)
    return 1.0 - pow(1.0 - rule.reach[c->n_draft], SPECDIST_RUNS);
  double best = 0.0;
  for (size_t i = 0; i < n_tests; i++)
    best = fmax(best, test_power(&rule, &bug, &tests[i]));
  return best;
}

static void print_row(FILE *out, const double *x, size_t n) {
  for (size_t t = 0; t < n; t++)
    fprintf(out, "%s%.4f", t ? " " : "", x[t]);
}

static void explain_case(FILE *out, const specdist_case *c) {
  model m;
  test tests[2 * CHAIN + 2];
  size_t n_tests = tests_of(c, tests);
  build_model(c, VARIANT_RULE, &m);
  fprintf(out, "%s/%s (seed %s), built to detect %s\n", SPECDIST_SUITE, c->name, c->seed_ref,
          c->built_for);
  fprintf(
      out,
      "  target T %g top_p %g top_k %lld; draft T %g top_p %g top_k %lld (-1: off); %zu drafts\n",
      c->target_params.temperature, c->target_params.top_p, (long long)c->target_params.top_k,
      c->draft_params.temperature, c->draft_params.top_p, (long long)c->draft_params.top_k,
      c->n_draft);
  for (size_t j = 0; j <= c->n_draft; j++) {
    fprintf(out, "  p%zu: ", j);
    print_row(out, m.p[j], c->vocab);
    if (j < c->n_draft) {
      fprintf(out, "   q%zu: ", j);
      print_row(out, m.q[j], c->vocab);
    }
    fprintf(out, "   reached by %.4f\n", m.reach[j]);
  }
  fprintf(out, "  accepted 0..%zu: ", c->n_draft);
  print_row(out, m.accepted, c->n_draft + 1);
  fprintf(out, "\n  power over %d runs, each test at %.3g (the largest test's):\n", SPECDIST_RUNS,
          test_alpha());
  for (int v = VARIANT_RULE + 1; v < VARIANT_COUNT; v++) {
    fprintf(out, "    %-18s ", variant_names[v]);
    print_power(out, case_power(c, (variant)v, tests, n_tests));
    fputc('\n', out);
  }
}

static void explain_table(FILE *out) {
  test tests[2 * CHAIN + 2];
  fprintf(out, "| case |");
  for (int v = VARIANT_RULE + 1; v < VARIANT_COUNT; v++)
    fprintf(out, " `%s` |", variant_names[v]);
  fprintf(out, "\n|---|");
  for (int v = VARIANT_RULE + 1; v < VARIANT_COUNT; v++)
    fprintf(out, "---:|");
  fputc('\n', out);
  for (size_t i = 0; i < SPECDIST_MAX_CASES; i++) {
    size_t n_tests = tests_of(&cases[i], tests);
    fprintf(out, "| `%s` |", cases[i].name);
    for (int v = VARIANT_RULE + 1; v < VARIANT_COUNT; v++) {
      fputc(' ', out);
      print_power(out, case_power(&cases[i], (variant)v, tests, n_tests));
      fprintf(out, " |");
    }
    fputc('\n', out);
  }
  fprintf(out, "\nThe bugs:\n\n");
  for (int v = VARIANT_RULE + 1; v < VARIANT_COUNT; v++)
    fprintf(out, "- `%s`: %s.\n", variant_names[v], variant_whats[v]);
}

int specdist_explain(FILE *out, const char *id, int markdown) {
  if (markdown) {
    explain_table(out);
    return 0;
  }
  for (size_t i = 0; i < SPECDIST_MAX_CASES; i++)
    if (!id || find(id) == &cases[i])
      explain_case(out, &cases[i]);
  return 0;
}
