/*
 * Properties over seeded random rows (seed 000:17-19, 000:30, 000:34). Each
 * property runs ROWS rows for each of 8 seeds: 4000 rows of mixed shapes
 * (normal, peaked, exact ties, -inf holes, flat), sizes and parameters.
 */
#include <criterion/parameterized.h>
#include <string.h>

#include "helpers.h"

#define ROWS 500
#define SUM_TOL 1e-12

static uint64_t seeds[] = {1, 2, 3, 4, 5, 6, 7, 8};
#define PROPERTY(name)                                                                             \
  ParameterizedTestParameters(properties, name) {                                                  \
    return cr_make_param_array(uint64_t, seeds, sizeof seeds / sizeof seeds[0]);                   \
  }                                                                                                \
  static void check_##name(const case_row *c);                                                     \
  ParameterizedTest(uint64_t *seed, properties, name) {                                            \
    rng r = {*seed};                                                                               \
    for (int n = 0; n < ROWS; n++) {                                                               \
      case_row c;                                                                                  \
      make_case(&r, &c);                                                                           \
      check_##name(&c);                                                                            \
    }                                                                                              \
  }                                                                                                \
  static void check_##name(const case_row *c)

typedef struct case_row {
  size_t v;
  float logits[MAX_V];
  sieve_params params, normalized;
  filtered full; /* temperature applied, nothing removed */
  filtered kept; /* the rule */
} case_row;

static void make_case(rng *r, case_row *c) {
  c->v = 1 + (size_t)(rng_next(r) % MAX_V);
  random_row(r, c->logits, c->v);
  c->params = random_params(r, c->v);
  cr_assert_eq(sieve_params_check(&c->params, &c->normalized), 0);
  c->full = run_filter(c->logits, c->v, c->normalized.temperature, 1.0, -1);
  c->kept = run_filter(c->logits, c->v, c->params.temperature, c->params.top_p, c->params.top_k);
  cr_assert_eq(c->full.rc, 0);
  cr_assert_eq(c->kept.rc, 0);
}

/* i comes before j in the stable order: larger probability first, ties by token id. */
static int before(const case_row *c, size_t i, size_t j) {
  double a = c->full.lp[i], b = c->full.lp[j];
  return a > b || (!(a < b) && i < j);
}

static size_t first_token(const case_row *c) {
  size_t first = 0;
  for (size_t i = 1; i < c->v; i++)
    if (before(c, i, first))
      first = i;
  return first;
}

static size_t last_kept(const case_row *c) {
  size_t last = first_token(c);
  for (size_t i = 0; i < c->v; i++)
    if (is_kept(&c->kept, i) && before(c, last, i))
      last = i;
  return last;
}

static double kept_full_mass(const case_row *c) {
  double mass = 0;
  for (size_t i = 0; i < c->v; i++)
    if (is_kept(&c->kept, i))
      mass += exp(c->full.lp[i]);
  return mass;
}

static size_t count(const filtered *f, size_t v) {
  size_t n = 0;
  for (size_t i = 0; i < v; i++)
    n += (size_t)is_kept(f, i);
  return n;
}

PROPERTY(s000_l30_kept_set_is_a_prefix_of_the_stable_order) {
  for (size_t i = 0; i < c->v; i++)
    for (size_t j = 0; j < c->v; j++)
      if (is_kept(&c->kept, i) && !is_kept(&c->kept, j) && is_kept(&c->full, j))
        cr_assert(before(c, i, j), "kept %zu ranks after removed %zu", i, j);
}

PROPERTY(s000_l30_prefix_without_its_last_token_has_mass_at_most_top_p) {
  double without_last = kept_full_mass(c) - exp(c->full.lp[last_kept(c)]);
  cr_assert_leq(without_last, c->normalized.top_p + SUM_TOL);
}

PROPERTY(s000_l17_top_p_removes_only_tokens_whose_mass_before_exceeds_top_p) {
  size_t kept = count(&c->kept, c->v);
  int cut_by_top_k = c->normalized.top_k != -1 && kept == (size_t)c->normalized.top_k;
  if (kept < count(&c->full, c->v) && !cut_by_top_k)
    cr_assert_gt(kept_full_mass(c), c->normalized.top_p - SUM_TOL);
}

PROPERTY(s000_l30_keeps_at_most_k_tokens) {
  if (c->normalized.top_k != -1)
    cr_assert_leq(count(&c->kept, c->v), (size_t)c->normalized.top_k);
  cr_assert_eq(count(&c->kept, c->v), c->kept.info.kept);
}

PROPERTY(s000_l17_keeps_the_first_token_always) { cr_assert(is_kept(&c->kept, first_token(c))); }

PROPERTY(s000_l19_kept_probabilities_sum_to_1) {
  double total = 0;
  for (size_t i = 0; i < c->v; i++)
    total += exp(c->kept.lp[i]);
  cr_assert(fabs(total - 1.0) <= SUM_TOL, "kept probabilities sum to %.17g", total);
}

PROPERTY(s000_l19_removed_tokens_are_minus_inf_and_nothing_is_nan) {
  for (size_t i = 0; i < c->v; i++) {
    double x = c->kept.lp[i];
    cr_assert(!isnan(x) && x <= 0.0);
    cr_assert(is_kept(&c->kept, i) || (isinf(x) && x < 0));
  }
}

/* --- batch invariance ---------------------------------------------------------- */

#define BATCH 24

typedef struct batch_rows {
  float logits[BATCH][MAX_V];
  sieve_top_entry top[BATCH][4];
  sieve_sample_row rows[BATCH];
} batch_rows;

static void make_batch(rng *r, batch_rows *b) {
  for (size_t i = 0; i < BATCH; i++) {
    size_t v = 4 + (size_t)(rng_next(r) % (MAX_V - 4));
    random_row(r, b->logits[i], v);
    sieve_draw_key key = {rng_next(r), rng_next(r) % 100000, (int)(rng_next(r) % 3),
                          (int)(rng_next(r) % 2)};
    b->rows[i] = (sieve_sample_row){b->logits[i], v, random_params(r, v), key, 4, b->top[i]};
  }
}

static int same_result(const sieve_sample_result *a, const sieve_sample_result *b) {
  return a->token == b->token && same_double(a->logprob, b->logprob) && same_double(a->u, b->u) &&
         a->filter.kept == b->filter.kept;
}

ParameterizedTestParameters(properties, s000_l34_results_do_not_depend_on_batch_size_or_order) {
  return cr_make_param_array(uint64_t, seeds, sizeof seeds / sizeof seeds[0]);
}

ParameterizedTest(uint64_t *seed, properties,
                  s000_l34_results_do_not_depend_on_batch_size_or_order) {
  static batch_rows b;
  rng r = {*seed};
  make_batch(&r, &b);
  sieve_sample_result whole[BATCH], single, reversed[BATCH];
  int status[BATCH], one_status;
  cr_assert_eq(sieve_sample_batch(b.rows, BATCH, NULL, whole, status), 0);
  sieve_sample_row backwards[BATCH];
  for (size_t i = 0; i < BATCH; i++)
    backwards[i] = b.rows[BATCH - 1 - i];
  cr_assert_eq(sieve_sample_batch(backwards, BATCH, NULL, reversed, status), 0);
  for (size_t i = 0; i < BATCH; i++) {
    cr_assert_eq(status[i], 0);
    cr_assert_eq(sieve_sample_batch(&b.rows[i], 1, NULL, &single, &one_status), 0);
    cr_assert(same_result(&whole[i], &single), "row %zu alone differs", i);
    cr_assert(same_result(&whole[i], &reversed[BATCH - 1 - i]), "row %zu reversed differs", i);
  }
}
