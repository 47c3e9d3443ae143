/*
 * `sieve explain`: the steps of the rule on one row, as the figure panels of
 * seed 000 show them (000:21-23, 000:57): tokens sorted by probability, the
 * mass before each, where top-p and top-k cut, the kept distribution, and
 * the draw (u and the cdf). With --profile, another engine's rule on the same
 * row in a column beside it; with --svg FILE, the same as a picture (explain_svg.c).
 *
 *   sieve explain CASE_ID [--profile NAME] [--svg FILE]
 *   sieve explain --logits 2,1.5,1 [--temperature T] [--top-p P] [--top-k K]
 *                 [--seed S --position N] [--profile NAME] [--svg FILE]
 */
#define _GNU_SOURCE
#include "explain.h"
#include "explain_speculate.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "explain_svg.h"
#include "fixture.h"
#include "impl.h"
#include "jbuf.h"
#include "proc.h"
#include "profiles.h"
#include "speculative_distribution.h"
#include "suites.h"

#define SHOWN 24 /* rows of the table; larger vocabularies show their best tokens */

static void run_rule(const row_input *in, explained *e) {
  sieve_params all = {in->params.temperature, 1.0, -1};
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

/* The first row of a fixture case: logits (recipes expanded), params, seed and position. */
static int from_case(const char *id, row_input *in, char *err, size_t len) {
  char path[PATH_MAX + 64];
  sieve_fixtures fx;
  if (sieve_fixtures_load(sieve_default_fixtures(path, sizeof path), &fx, err, len) != 0)
    return -1;
  const cJSON *c = fx.cases->child;
  while (c && strcmp(sieve_case_str(c, "id"), id) != 0)
    c = c->next;
  cJSON *request = c ? sieve_case_request(c, err, len) : NULL;
  const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(request, "rows"), 0);
  const cJSON *logits = cJSON_GetObjectItemCaseSensitive(row, "logits");
  int rc = -1;
  if (!c)
    snprintf(err, len, "no fixture case %s", id);
  else if (!cJSON_IsArray(logits))
    snprintf(err, len, "case %s has no logits to explain", id);
  else
    rc = 0;
  in->vocab = rc == 0 ? (size_t)cJSON_GetArraySize(logits) : 0;
  in->logits = calloc(in->vocab ? in->vocab : 1, sizeof *in->logits);
  size_t i = 0;
  for (const cJSON *x = rc == 0 ? logits->child : NULL; x; x = x->next, i++)
    in->logits[i] = cJSON_IsNumber(x) ? (float)x->valuedouble : -INFINITY;
  const cJSON *params = cJSON_GetObjectItemCaseSensitive(row, "params");
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(params, "temperature");
  const cJSON *p = cJSON_GetObjectItemCaseSensitive(params, "top_p");
  const cJSON *k = cJSON_GetObjectItemCaseSensitive(params, "top_k");
  in->params = (sieve_params){cJSON_IsNumber(t) ? t->valuedouble : 1.0,
                              cJSON_IsNumber(p) ? p->valuedouble : 1.0,
                              cJSON_IsNumber(k) ? (int64_t)k->valuedouble : SIEVE_TOP_K_UNSET};
  const cJSON *seed = cJSON_GetObjectItemCaseSensitive(row, "seed");
  const cJSON *position = cJSON_GetObjectItemCaseSensitive(row, "position");
  in->has_key = cJSON_IsString(seed) && cJSON_IsNumber(position);
  if (in->has_key)
    in->key = (sieve_draw_key){strtoull(seed->valuestring, NULL, 10),
                               (uint64_t)position->valuedouble, 0, 0};
  cJSON_Delete(request);
  sieve_fixtures_free(&fx);
  return rc;
}

static int parse_logits(const char *text, row_input *in) {
  size_t cap = 16;
  in->logits = malloc(cap * sizeof *in->logits);
  for (const char *p = text; in->logits && *p;) {
    char *end;
    double x = strtod(p, &end);
    if (end == p)
      return -1;
    if (in->vocab == cap)
      in->logits = realloc(in->logits, (cap *= 2) * sizeof *in->logits);
    in->logits[in->vocab++] = (float)x;
    p = *end == ',' ? end + 1 : end;
    if (*end && *end != ',')
      return -1;
  }
  return in->vocab ? 0 : -1;
}

static int explain_usage(const char *why, const char *what) {
  return sieve_usage_error("explain", why, what, sieve_explain_usage);
}

/* The answer of an implementation to a case's request, its verdict at the implementation's
 * precision and, for a failure, the detail sieve run gives (with the hint of a reading). */
static int ask_impl(const cJSON *c, const cJSON *request, const char *impl) {
  static impl_command cmd;
  char err[512], why[512] = "", detail[1200], causes[600];
  proc p;
  if (impl_command_parse(&cmd, impl, err, sizeof err) != 0)
    return fprintf(stderr, "sieve explain: %s\n", err), 2;
  proc_start(&p, cmd.argv, 30000);
  static const char greeting[] = "{\"op\":\"hello\",\"protocol\":1}";
  cJSON *hello = proc_ask(&p, greeting, sizeof greeting - 1, err, sizeof err);
  const char *declared = sieve_case_str(hello, "precision");
  int precision = *declared ? sieve_precision_parse(declared) : SIEVE_PRECISION_FLOAT32;
  int rc = sieve_hello_check(hello, err, why, sizeof why) != 0 || precision < 0 ? 2 : 0;
  if (rc != 0)
    fprintf(stderr, "sieve explain: %s: %s\n", impl, precision < 0 ? "unknown precision" : why);
  else if (sieve_case_not_offered(request, hello, why, sizeof why))
    printf("\n%s: not asked: %s\n", impl, why);
  jbuf b = {0};
  jbuf_json(&b, request);
  cJSON *answer = rc == 0 && !*why ? proc_ask(&p, b.data, b.len, err, sizeof err) : NULL;
  const cJSON *expect = cJSON_GetObjectItemCaseSensitive(c, "expect");
  char *text = answer ? cJSON_PrintUnformatted(answer) : NULL;
  if (rc == 0 && !*why && !answer)
    printf("\n%s: no answer: %s\n", impl, err);
  else if (answer && sieve_check_at(expect, answer, precision, why, sizeof why, NULL))
    printf("\n%s answers %.300s\npass at %s\n", impl, text, sieve_precision_name(precision));
  else if (answer) {
    sieve_case_detail(c, answer, precision, why, detail, sizeof detail, causes, sizeof causes);
    printf("\n%s answers %.300s\nfail at %s: %s\n", impl, text, sieve_precision_name(precision),
           detail);
  }
  free(text);
  jbuf_free(&b);
  cJSON_Delete(answer);
  cJSON_Delete(hello);
  proc_stop(&p, NULL, 0);
  return rc;
}

/* --impl: the case's request to an implementation. */
static int explain_impl(const char *case_id, const char *impl) {
  char path[PATH_MAX + 64], err[512];
  sieve_fixtures fx;
  if (sieve_fixtures_load(sieve_default_fixtures(path, sizeof path), &fx, err, sizeof err) != 0)
    return fprintf(stderr, "sieve explain: %s\n", err), 2;
  const cJSON *c = sieve_fixtures_find(&fx, case_id);
  cJSON *request = c ? sieve_case_request(c, err, sizeof err) : NULL;
  int rc = request ? ask_impl(c, request, impl) : 2;
  if (!request)
    fprintf(stderr, "sieve explain: %s\n", err);
  cJSON_Delete(request);
  sieve_fixtures_free(&fx);
  return rc;
}

/* A speculative case: its chain step by step under each rule, then --impl's answer. */
static int explain_speculative_case(const char *case_id, const engine_profile *profile,
                                    const char *impl, int *handled) {
  char path[PATH_MAX + 64], err[512];
  sieve_fixtures fx;
  *handled = 0;
  if (sieve_fixtures_load(sieve_default_fixtures(path, sizeof path), &fx, err, sizeof err) != 0)
    return 0; /* from_case says why */
  const cJSON *c = sieve_fixtures_find(&fx, case_id);
  cJSON *request = c ? sieve_case_request(c, err, sizeof err) : NULL;
  *handled = request && strcmp(sieve_case_str(request, "op"), "speculate") == 0;
  if (*handled) {
    printf("sieve explain %s: %s\n", case_id, sieve_case_str(c, "description"));
    explain_speculative(stdout, request, "deepinfer", &profiles[0].rule);
    if (profile)
      explain_speculative(stdout, request, profile->name, &profile->rule);
  }
  cJSON_Delete(request);
  sieve_fixtures_free(&fx);
  return *handled && impl ? explain_impl(case_id, impl) : 0;
}

const char sieve_explain_usage[] =
    "usage: sieve explain CASE_ID [--profile NAME] [--impl IMPL] [--svg FILE]\n"
    "       sieve explain --logits X,Y,... [--temperature T] [--top-p P] [--top-k K]\n"
    "                     [--seed S --position N] [--profile NAME] [--svg FILE]\n"
    "The steps of the rule on one row (a fixture case's, or the logits given), beside another\n"
    "profile's with --profile; --svg writes them as a picture. With --impl, the case's request\n"
    "goes to that implementation too, and its answer is judged as sieve run judges it.\n"
    "       sieve explain speculative-distribution[/CASE] [--markdown]\n"
    "The statistical cases of speculative verification: their rows, the rule's distributions,\n"
    "and each case's power against each known bug (harness/STATISTICS.md).\n";

int sieve_explain_main(int argc, char **argv) {
  row_input in = {.params = {1.0, 1.0, SIEVE_TOP_K_UNSET}};
  const char *svg = NULL, *other = NULL, *case_id = NULL, *seed = NULL, *position = NULL;
  const char *impl = NULL;
  int rc = 0, markdown = 0;
  for (int i = 0; i < argc && rc == 0; i++) {
    const char *flag = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
    if (flag[0] != '-' && !case_id) {
      case_id = flag;
      continue;
    }
    if (!strcmp(flag, "--markdown")) {
      markdown = 1;
      continue;
    }
    if (!value)
      return explain_usage("an option lacks its value:", flag);
    i++;
    if (!strcmp(flag, "--logits"))
      rc = parse_logits(value, &in);
    else if (!strcmp(flag, "--temperature"))
      in.params.temperature = strtod(value, NULL);
    else if (!strcmp(flag, "--top-p"))
      in.params.top_p = strtod(value, NULL);
    else if (!strcmp(flag, "--top-k"))
      in.params.top_k = strtoll(value, NULL, 10);
    else if (!strcmp(flag, "--seed"))
      seed = value;
    else if (!strcmp(flag, "--position"))
      position = value;
    else if (!strcmp(flag, "--profile"))
      other = value;
    else if (!strcmp(flag, "--svg"))
      svg = value;
    else if (!strcmp(flag, "--impl"))
      impl = value;
    else
      return explain_usage("unknown option", flag);
  }
  char err[256];
  if (rc != 0)
    return explain_usage("--logits must be numbers separated by commas", NULL);
  const engine_profile *profile = other ? profile_find(other) : NULL;
  if (other && !profile)
    return explain_usage("unknown profile (sieve profiles lists them):", other);
  if (case_id && (!strcmp(case_id, SPECDIST_SUITE) || specdist_is_case(case_id))) {
    if (svg || impl || other || in.vocab)
      return explain_usage("a speculative-distribution case takes no other option (to run one "
                           "on an implementation: sieve run --impl IMPL --case ID):",
                           case_id);
    return specdist_explain(stdout, specdist_is_case(case_id) ? case_id : NULL, markdown);
  }
  if (markdown)
    return explain_usage("--markdown is for speculative-distribution", NULL);
  int speculative = 0;
  if (case_id && !in.vocab) {
    int status = explain_speculative_case(case_id, profile, impl, &speculative);
    if (speculative && svg)
      fprintf(stderr,
              "sieve explain: --svg draws the rows of a filter or sample case; %s is "
              "speculative, so %s was not written\n",
              case_id, svg);
    if (speculative)
      return svg ? 2 : status;
  }
  if (case_id && from_case(case_id, &in, err, sizeof err) != 0)
    return explain_usage(err, NULL);
  if (!in.vocab)
    return explain_usage("give a case id or --logits", NULL);
  if (impl && !case_id)
    return explain_usage("--impl needs a case id", NULL);
  if (seed && position) {
    in.key = (sieve_draw_key){strtoull(seed, NULL, 10), strtoull(position, NULL, 10), 0, 0};
    in.has_key = 1;
  }
  explained e[2] = {{.name = "deepinfer", .rule = &profiles[0].rule}};
  size_t n_rules = profile ? 2 : 1;
  if (profile)
    e[1] = (explained){.name = profile->name, .rule = &profile->rule};
  for (size_t r = 0; r < n_rules; r++)
    run_rule(&in, &e[r]);
  char top_k[32] = "off";
  if (in.params.top_k != SIEVE_TOP_K_UNSET)
    snprintf(top_k, sizeof top_k, "%lld", (long long)in.params.top_k);
  printf("sieve explain: %s%zu logits, T %g, top_p %g, top_k %s\n", case_id ? "" : "a row of ",
         in.vocab, in.params.temperature, in.params.top_p, top_k);
  if (e[0].rc == 0)
    print_table(stdout, &in, e, n_rules);
  for (size_t r = 0; r < n_rules; r++)
    print_rule(stdout, &in, &e[r]);
  if (svg && e[0].rc == 0 && explain_write_svg(svg, case_id, &in, e, n_rules) != 0)
    fprintf(stderr, "sieve explain: cannot write %s\n", svg);
  for (size_t r = 0; r < n_rules; r++) {
    free(e[r].full);
    free(e[r].processed);
  }
  free(in.logits);
  return impl ? explain_impl(case_id, impl) : 0;
}
