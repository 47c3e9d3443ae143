/*
 * `sieve explain`: the steps of the rule on one row, as the figure panels of
 * seed 000 show them (000:21-23, 000:57): tokens sorted by probability, the
 * mass before each, where top-p and top-k cut, the kept distribution, and
 * the draw (u and the cdf). With a profile, another engine's rule on the same
 * row in a column beside it; with an SVG path, the same as a picture (svg.c).
 * A speculative case is shown test by test (speculative.c).
 */
#define _GNU_SOURCE
#include "explain.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines/profiles.h"
#include "protocol/conn.h"
#include "protocol/request.h"
#include "run/check.h"
#include "run/fixture.h"
#include "run/runner.h"
#include "run/suites.h"
#include "speculative.h"

#define SHOWN 24 /* rows of the table; larger vocabularies show their best tokens */

static void run_rule(const row_input *in, explained *e) {
  sieve_params all = {in->params.temperature, 1.0, -1, 0.0, NULL};
  e->full = calloc(in->vocab, sizeof *e->full);
  e->processed = calloc(in->vocab, sizeof *e->processed);
  e->rc = !e->full || !e->processed ? SIEVE_ENOMEM
                                    : sieve_filter_rule(e->rule, in->logits, in->vocab, &in->params,
                                                        NULL, e->processed, &e->info);
  if (e->rc == 0 && sieve_filter_rule(NULL, in->logits, in->vocab, &all, NULL, e->full, NULL))
    memset(e->full, 0, in->vocab * sizeof *e->full);
  for (size_t i = 0; e->rc == 0 && i < in->vocab; i++)
    e->full[i] = exp(e->full[i]);
  e->drew = e->rc == 0 && in->has_key &&
            sieve_sample_rule(e->rule, in->logits, in->vocab, &in->params, NULL, &in->key, 0, NULL,
                              &e->drawn) == 0;
}

static void bar(FILE *out, double p) {
  int n = (int)lround(p * 30);
  for (int i = 0; i < 30; i++)
    fputc(i < n ? '#' : ' ', out);
}

static void print_table(FILE *out, const row_input *in, const explained *e, size_t n_rules) {
  ranked_token *order = explain_rank(e[0].full, in->vocab);
  if (!order)
    return;
  fprintf(out, "\n%4s %7s %10s %9s %11s  %-30s", "rank", "token", "logit", "p", "mass before",
          "p (full softmax, T applied)");
  for (size_t r = 0; r < n_rules; r++)
    fprintf(out, " %12.12s", e[r].name);
  fputc('\n', out);
  double mass = 0;
  for (size_t k = 0; k < in->vocab && k < SHOWN; k++) {
    size_t id = order[k].id;
    fprintf(out, "%4zu %7zu %10.4g %9.4f %11.4f  ", k, id, (double)in->logits[id], order[k].p,
            mass);
    bar(out, order[k].p);
    for (size_t r = 0; r < n_rules; r++) {
      double lp = e[r].processed[id];
      if (e[r].rc != 0)
        fprintf(out, " %12s", "error");
      else if (isinf(lp))
        fprintf(out, " %12s", "removed");
      else
        fprintf(out, " %12.4f", exp(lp));
    }
    fputc('\n', out);
    mass += order[k].p;
  }
  if (in->vocab > SHOWN)
    fprintf(out, "  ... %zu more tokens\n", in->vocab - SHOWN);
  free(order);
}

static void print_rule(FILE *out, const row_input *in, const explained *e) {
  fprintf(out, "\n%s: ", e->name);
  if (e->rc != 0) {
    fprintf(out, "%s (%s)\n", sieve_err_name(e->rc), sieve_strerror(e->rc));
    return;
  }
  fprintf(out, "keeps %zu token%s with full-softmax mass %.4f", e->info.kept,
          e->info.kept == 1 ? "" : "s", e->info.kept_mass);
  if (!isinf(e->info.topp_margin))
    fprintf(out, "; the closest top-p decision is %.3g from top_p", e->info.topp_margin);
  if (!isinf(e->info.cut_gap))
    fprintf(out, "; the cut separates probabilities %.3g apart%s", e->info.cut_gap,
            e->info.cut_gap == 0 ? " (a tie, decided by token id)" : "");
  fputc('\n', out);
  if (e->drew)
    fprintf(out,
            "  draw: u = %.6f; the cdf over the kept tokens in token order first "
            "exceeds u x total at token %lld (logprob %.4f)\n",
            e->drawn.u, (long long)e->drawn.token, e->drawn.logprob);
  (void)in;
}

/* The first row of a fixture case's request: logits, params, seed and position. */
static int from_case(const cJSON *c, row_input *in, char *err, size_t len) {
  cJSON *request = sieve_case_request(c, err, len);
  const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(request, "rows"), 0);
  const cJSON *logits = cJSON_GetObjectItemCaseSensitive(row, "logits");
  int rc = request && cJSON_IsArray(logits) ? 0 : -1;
  const char *unshown = !request ? NULL
                        : cJSON_GetObjectItemCaseSensitive(request, "engine")
                            ? "the engine options"
                            : req_option_missing(request, 0);
  if (request && rc != 0)
    snprintf(err, len, "case %s has no logits to explain", sieve_case_str(c, "id"));
  else if (unshown) /* its steps are not drawn yet: a picture without them would mislead */
    rc = -1, snprintf(err, len,
                      "case %s uses %s, a step sieve explain does not show yet (sieve run "
                      "--case %s checks it)",
                      sieve_case_str(c, "id"), unshown, sieve_case_str(c, "id"));
  in->vocab = rc == 0 ? (size_t)cJSON_GetArraySize(logits) : 0;
  in->logits = calloc(in->vocab ? in->vocab : 1, sizeof *in->logits);
  size_t i = 0;
  for (const cJSON *x = rc == 0 ? logits->child : NULL; x; x = x->next, i++) {
    double v = NAN;
    req_number(x, REQ_NULL_MINUS_INF, &v);
    in->logits[i] = (float)v;
  }
  const cJSON *params = cJSON_GetObjectItemCaseSensitive(row, "params");
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(params, "temperature");
  const cJSON *p = cJSON_GetObjectItemCaseSensitive(params, "top_p");
  const cJSON *k = cJSON_GetObjectItemCaseSensitive(params, "top_k");
  in->params =
      (sieve_params){cJSON_IsNumber(t) ? t->valuedouble : 1.0,
                     cJSON_IsNumber(p) ? p->valuedouble : SIEVE_TOP_P_UNSET,
                     cJSON_IsNumber(k) ? (int64_t)k->valuedouble : SIEVE_TOP_K_UNSET, 0.0, NULL};
  const cJSON *seed = cJSON_GetObjectItemCaseSensitive(row, "seed");
  const cJSON *position = cJSON_GetObjectItemCaseSensitive(row, "position");
  in->has_key = cJSON_IsString(seed) && cJSON_IsNumber(position);
  if (in->has_key)
    in->key = (sieve_draw_key){strtoull(seed->valuestring, NULL, 10),
                               (uint64_t)position->valuedouble, 0, 0};
  cJSON_Delete(request);
  return rc;
}

/* A failure's cause as the fit of sieve run names it (run/fit.h), over this one case: the
 * fewest departures from DeepInfer's rule whose answer is the implementation's. */
static void fit_one(const cJSON *c, const cJSON *answer, int precision) {
  static case_result r;
  fit_start starts[64];
  cJSON *copy = cJSON_Duplicate(answer, 1);
  sieve_case_of(&r, c);
  sieve_case_judge(&r, answer, precision);
  r.answer = copy ? sieve_answer_text(copy) : NULL;
  cJSON_Delete(copy);
  if (!r.answer)
    return;
  char recorded[sizeof r.causes]; /* the readings whose recorded answer this is */
  snprintf(recorded, sizeof recorded, "%s", r.causes);
  run_report one = {.precision = precision, .cases = &r, .n_cases = 1};
  int made = sieve_fit(&one, starts, profiles_fit_starts(starts, 64)) == 0 && one.fit.made;
  free(r.answer);
  if (!made)
    return;
  if (r.explained_by[0] && strchr(recorded, ',')) {
    printf(
        "one case cannot tell apart the departures from DeepInfer's rule that give this answer:");
    for (const char *p = recorded; *p; p += strcspn(p, ","), p += *p == ',')
      printf("%s %.*s", p == recorded ? "" : ",", (int)strcspn(p, ","), p);
    printf(" (sieve run --impl fits the rule over every case)\n");
  } else if (r.explained_by[0])
    printf("explained by %s: the fewest departures from DeepInfer's rule whose answer this is "
           "(one case; sieve run --impl fits the rule over every case)\n",
           r.explained_by);
  else
    printf("no combination of axis values gives this answer: %s\n", r.detail);
}

/* The answer of an implementation to a case's request, its verdict at the implementation's
 * precision and, for a failure, the detail sieve run gives (with the hint of a reading) and the
 * cause the fit names. The answer goes to *kept (NULL when there is none), and the name the
 * implementation gives itself to `name`. */
static int ask_impl(const cJSON *c, const explain_request *rq, cJSON **kept, char *name,
                    size_t name_len) {
  char err[512] = "", why[512] = "", detail[1200], causes[600];
  cJSON *request = sieve_case_request_compact(c, err, sizeof err);
  if (!request)
    return fprintf(stderr, "sieve explain: %s\n", err), 2;
  conn impl;
  conn_start(&impl, rq->impl, 30000);
  cJSON *hello = conn_hello(&impl, err, sizeof err);
  const char *declared = sieve_case_str(hello, "precision");
  int precision = *declared ? sieve_precision_parse(declared) : SIEVE_PRECISION_FLOAT32;
  int rc = sieve_hello_check(hello, err, why, sizeof why) != 0 || precision < 0 ? 2 : 0;
  snprintf(name, name_len, "%s",
           *sieve_case_str(hello, "name") ? sieve_case_str(hello, "name") : rq->impl_arg);
  if (rc != 0)
    fprintf(stderr, "sieve explain: %s: %s\n", rq->impl_arg,
            precision < 0 ? "unknown precision" : why);
  else if (sieve_case_not_offered(request, hello, why, sizeof why))
    printf("\n%s: not asked: %s\n", rq->impl_arg, why);
  cJSON *answer = rc == 0 && !*why ? conn_ask_json(&impl, request, err, sizeof err) : NULL;
  const cJSON *expect = cJSON_GetObjectItemCaseSensitive(c, "expect");
  char *text = answer ? cJSON_PrintUnformatted(answer) : NULL;
  if (rc == 0 && !*why && !answer)
    printf("\n%s: no answer: %s\n", rq->impl_arg, err);
  else if (answer && sieve_check_at(expect, answer, precision, why, sizeof why, NULL))
    printf("\n%s answers %.300s\npass at %s\n", rq->impl_arg, text,
           sieve_precision_name(precision));
  else if (answer) {
    sieve_case_detail(c, answer, precision, why, NULL, detail, sizeof detail, causes,
                      sizeof causes);
    printf("\n%s answers %.300s\nfail at %s: %s\n", rq->impl_arg, text,
           sieve_precision_name(precision), detail);
    fit_one(c, answer, precision);
  }
  free(text);
  *kept = answer;
  cJSON_Delete(hello);
  cJSON_Delete(request);
  conn_stop(&impl, NULL, 0);
  return rc;
}

/* A speculative case: its chain step by step under each rule, then the implementation's
 * answer. An SVG draws rows of filter and sample cases only. */
static int explain_speculative_case(const explain_request *rq, const cJSON *request) {
  const char *id = sieve_case_str(rq->fixture_case, "id");
  printf("sieve explain %s: %s\n", id, sieve_case_str(rq->fixture_case, "description"));
  explain_speculative(stdout, request, "deepinfer", &profiles[0].rule);
  if (rq->profile)
    explain_speculative(stdout, request, rq->profile->name, &rq->profile->rule);
  if (rq->svg) {
    fprintf(stderr,
            "sieve explain: --svg draws the rows of a filter or sample case; %s is "
            "speculative, so %s was not written\n",
            id, rq->svg);
    return 2;
  }
  cJSON *answer = NULL;
  char name[128];
  int rc = rq->impl ? ask_impl(rq->fixture_case, rq, &answer, name, sizeof name) : 0;
  cJSON_Delete(answer);
  return rc;
}

/* Whether a case's request is speculate; NULL when its request cannot be read. */
static cJSON *speculative_request(const cJSON *c) {
  char err[256];
  cJSON *request = sieve_case_request_compact(c, err, sizeof err);
  if (request && strcmp(sieve_case_str(request, "op"), "speculate") == 0)
    return request;
  cJSON_Delete(request);
  return NULL;
}

/* The implementation's answer to the row as a panel of the picture: its first row's logprobs,
 * or the error it answered; -1 when the answer has neither (no panel). */
static int answer_panel(const cJSON *answer, const row_input *in, explained *e, char *error,
                        size_t len) {
  const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(answer, "rows"), 0);
  const cJSON *failed = cJSON_GetObjectItemCaseSensitive(row, "error");
  const cJSON *lp = cJSON_GetObjectItemCaseSensitive(row, "logprobs");
  if (failed) {
    snprintf(error, len, "%s of %s", sieve_case_str(failed, "kind"),
             sieve_case_str(failed, "field"));
    e->error = error;
    e->rc = SIEVE_EARG;
    return 0;
  }
  if (!cJSON_IsArray(lp) || (size_t)cJSON_GetArraySize(lp) != in->vocab ||
      !(e->processed = calloc(in->vocab, sizeof *e->processed)))
    return -1;
  size_t i = 0;
  for (const cJSON *x = lp->child; x; x = x->next, i++) {
    double v = NAN;
    req_number(x, REQ_NULL_MINUS_INF, &v);
    e->processed[i] = isnan(v) ? -INFINITY : v;
    e->info.kept += !isinf(e->processed[i]);
  }
  return 0;
}

/* The row, each rule's steps on it as a table, the implementation's answer, and the SVG: a
 * panel for each rule and one for the answer. */
static int explain_row(const explain_request *rq, row_input *in) {
  explained e[EXPLAIN_PANELS] = {{.name = "deepinfer", .rule = &profiles[0].rule}};
  size_t n_rules = rq->profile ? 2 : 1;
  if (rq->profile)
    e[1] = (explained){.name = rq->profile->name, .rule = &rq->profile->rule};
  for (size_t r = 0; r < n_rules; r++)
    run_rule(in, &e[r]);
  char top_k[32] = "off";
  if (in->params.top_k != SIEVE_TOP_K_UNSET)
    snprintf(top_k, sizeof top_k, "%lld", (long long)in->params.top_k);
  printf("sieve explain: %s%zu logits, T %g, top_p %g, top_k %s\n",
         rq->fixture_case ? "" : "a row of ", in->vocab, in->params.temperature, row_top_p(in),
         top_k);
  if (e[0].rc == 0)
    print_table(stdout, in, e, n_rules);
  for (size_t r = 0; r < n_rules; r++)
    print_rule(stdout, in, &e[r]);
  cJSON *answer = NULL;
  char name[128], error[160];
  int rc = rq->impl ? ask_impl(rq->fixture_case, rq, &answer, name, sizeof name) : 0;
  size_t panels = n_rules;
  e[panels] = (explained){.name = name};
  if (answer && answer_panel(answer, in, &e[panels], error, sizeof error) == 0)
    panels++;
  const char *id = rq->fixture_case ? sieve_case_str(rq->fixture_case, "id") : NULL;
  if (rq->svg && e[0].rc == 0 && explain_write_svg(rq->svg, id, in, e, panels) != 0)
    fprintf(stderr, "sieve explain: cannot write %s\n", rq->svg);
  for (size_t r = 0; r <= n_rules; r++) {
    free(e[r].full);
    free(e[r].processed);
  }
  cJSON_Delete(answer);
  return rc;
}

int explain_case_svg(FILE *out, const cJSON *fixture_case, const char *answer_text,
                     const char *name) {
  cJSON *speculate = speculative_request(fixture_case);
  cJSON_Delete(speculate);
  if (speculate)
    return -1;
  row_input in = {0};
  explained e[2] = {{.name = "deepinfer", .rule = &profiles[0].rule}, {.name = name}};
  char err[512], error[160];
  int rc = from_case(fixture_case, &in, err, sizeof err);
  if (rc == 0)
    run_rule(&in, &e[0]);
  cJSON *answer = rc == 0 && answer_text ? cJSON_Parse(answer_text) : NULL;
  size_t panels = answer && answer_panel(answer, &in, &e[1], error, sizeof error) == 0 ? 2 : 1;
  rc = rc == 0 && e[0].rc == 0
           ? explain_svg(out, 1, sieve_case_str(fixture_case, "id"), &in, e, panels)
           : -1;
  cJSON_Delete(answer);
  for (size_t r = 0; r < 2; r++) {
    free(e[r].full);
    free(e[r].processed);
  }
  free(in.logits);
  return rc;
}

int sieve_explain(const explain_request *rq) {
  if (!rq->fixture_case) {
    row_input in = rq->row;
    return explain_row(rq, &in);
  }
  cJSON *speculate = speculative_request(rq->fixture_case);
  if (speculate) {
    int rc = explain_speculative_case(rq, speculate);
    cJSON_Delete(speculate);
    return rc;
  }
  row_input in = {0};
  char err[512];
  int rc = from_case(rq->fixture_case, &in, err, sizeof err);
  if (rc != 0)
    fprintf(stderr, "sieve explain: %s\n", err);
  else
    rc = explain_row(rq, &in);
  free(in.logits);
  return rc != 0 ? 2 : 0;
}
