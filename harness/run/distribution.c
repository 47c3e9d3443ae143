/* The distribution suite; see distribution.h. */
#include "distribution.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/jbuf.h"
#include "sieve.h"
#include "statistics.h"

#define CHUNK 1000 /* rows per request */

typedef struct dist_case {
  const char *name;
  const char *seed_ref;
  float logits[8];
  size_t vocab;
  double temperature, top_p;
  int64_t top_k;
} dist_case;

static sieve_params params_of(const dist_case *c) {
  return (sieve_params){c->temperature, c->top_p, c->top_k, 0.0, NULL};
}

/* Rows whose kept probabilities are all >= 0.05, so every expected count is >= 500. */
static const dist_case cases[DISTRIBUTION_MAX_CASES] = {
    {"mat-floor-top-p-0.8", "000:21-23", {2.0f, 1.5f, 1.0f, 0.3f, -0.2f, -1.5f}, 6, 1.0, 0.8, -1},
    {"mat-floor-top-k-2", "000:57", {2.0f, 1.5f, 1.0f, 0.3f, -0.2f, -1.5f}, 6, 1.0, 0.8, 2},
    {"order-example", "000:25-28", {-0.6931472f, -1.2039728f, -1.6094379f}, 3, 1.0, 0.55, 2},
    {"four-equal-top-p-0.5", "000:17", {1.0f, 1.0f, 1.0f, 1.0f}, 4, 1.0, 0.5, -1},
    {"four-levels-no-filter", "000:5", {1.0f, 0.5f, 0.0f, -0.5f}, 4, 1.0, 1.0, -1},
    {"four-levels-t2-top-p-0.9", "000:15-17", {1.0f, 0.5f, 0.0f, -0.5f}, 4, 2.0, 0.9, -1},
    {"ties-top-k-3", "000:16,000:18", {2.0f, 2.0f, 1.0f, 1.0f, 0.0f}, 5, 1.0, 1.0, 3},
    {"leader-and-tail-t1.5", "000:17", {3.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f}, 6, 1.5, 0.95, -1},
};

size_t distribution_cases(case_result *out, size_t shard_index, size_t shard_count) {
  size_t n = 0;
  for (size_t i = 0; i < DISTRIBUTION_MAX_CASES; i++) {
    if (i % shard_count != shard_index)
      continue;
    case_result *r = &out[n++];
    memset(r, 0, sizeof *r);
    snprintf(r->id, sizeof r->id, "distribution/%s", cases[i].name);
    r->suite = "distribution";
    r->family = "distribution";
    r->seed_ref = cases[i].seed_ref;
  }
  return n;
}

static const dist_case *find(const char *id) {
  for (size_t i = 0; i < DISTRIBUTION_MAX_CASES; i++)
    if (strcmp(id + strlen("distribution/"), cases[i].name) == 0)
      return &cases[i];
  return NULL;
}

static char *chunk_request(const dist_case *c, size_t first, size_t n, size_t *len) {
  jbuf b = {0};
  jbuf_raw(&b, "{\"op\":\"sample\",\"rows\":[");
  for (size_t i = 0; i < n; i++) {
    jbuf_raw(&b, i ? ",{\"logits\":" : "{\"logits\":");
    jbuf_floats(&b, c->logits, c->vocab);
    jbuf_raw(&b, ",\"params\":");
    const sieve_params p = params_of(c);
    jbuf_params(&b, &p, 1);
    jbuf_raw(&b, ",\"seed\":");
    jbuf_u64_str(&b, 0x5EED0000ULL + first + i);
    jbuf_raw(&b, ",\"position\":");
    jbuf_int(&b, (int64_t)(first + i));
    jbuf_char(&b, '}');
  }
  jbuf_raw(&b, "]}");
  *len = b.len;
  return b.data;
}

/* Adds the tokens of one answered chunk to `counts`; -1 with `detail` on a bad answer. */
static int tally(const cJSON *answer, size_t n, size_t vocab, size_t *counts, char *detail,
                 size_t len) {
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(answer, "rows");
  if (!cJSON_IsArray(rows) || (size_t)cJSON_GetArraySize(rows) != n) {
    snprintf(detail, len, "expected %zu rows in the answer", n);
    return -1;
  }
  for (const cJSON *row = rows->child; row; row = row->next) {
    const cJSON *token = cJSON_GetObjectItemCaseSensitive(row, "token");
    double t = cJSON_IsNumber(token) ? token->valuedouble : -1;
    if (!(t >= 0 && t < (double)vocab && t == floor(t))) {
      snprintf(detail, len, "a row's answer has no token in [0, %zu)", vocab);
      return -1;
    }
    counts[(size_t)t]++;
  }
  return 0;
}

static void verdict(case_result *r, const double *lp, const size_t *counts, size_t vocab) {
  double probs[8];
  for (size_t t = 0; t < vocab; t++)
    probs[t] = exp(lp[t]);
  chi_square v = stat_chi_square(probs, counts, vocab, DISTRIBUTION_DRAWS, 0.0);
  if (v.impossible >= 0) {
    r->outcome = OUTCOME_FAIL;
    snprintf(r->detail, sizeof r->detail, "drew token %ld %zu times, but the rule removes it",
             v.impossible, counts[v.impossible]);
    return;
  }
  double alpha = DISTRIBUTION_ALPHA / DISTRIBUTION_MAX_CASES;
  r->outcome = v.p < alpha ? OUTCOME_FAIL : OUTCOME_PASS;
  snprintf(r->detail, sizeof r->detail,
           "chi-square %.2f on %d degrees of freedom, p = %.3g (fails below %.3g) over %d draws",
           v.statistic, v.df, v.p, alpha, DISTRIBUTION_DRAWS);
}

void distribution_run(case_result *r, exchange_fn ex, void *ctx) {
  const dist_case *c = find(r->id);
  double lp[8];
  size_t counts[8] = {0};
  const sieve_params p = c ? params_of(c) : (sieve_params)SIEVE_PARAMS_DEFAULT;
  if (!c || sieve_filter(c->logits, c->vocab, &p, NULL, lp, NULL) != 0) {
    r->outcome = OUTCOME_CRASH;
    snprintf(r->detail, sizeof r->detail, "the harness cannot build this case");
    return;
  }
  for (size_t first = 0; first < DISTRIBUTION_DRAWS; first += CHUNK) {
    size_t len;
    char *request = chunk_request(c, first, CHUNK, &len);
    char detail[400] = "";
    cJSON *answer = request ? ex(ctx, request, len, detail, sizeof detail) : NULL;
    free(request);
    int bad = !answer || tally(answer, CHUNK, c->vocab, counts, detail, sizeof detail) != 0;
    int error = answer && cJSON_GetObjectItemCaseSensitive(answer, "error") != NULL;
    cJSON_Delete(answer);
    if (bad) {
      r->outcome = error ? OUTCOME_ERROR : answer ? OUTCOME_FAIL : OUTCOME_CRASH;
      snprintf(r->detail, sizeof r->detail, "%s", detail);
      return;
    }
  }
  verdict(r, lp, counts, c->vocab);
}
