/*
 * `sieve explain CASE_ID | --logits X,Y,... [options]`: the steps of the rule on one row
 * (explain/explain.h); `sieve explain speculative-distribution[/CASE] [--markdown]`: the
 * statistical cases of speculation and their power (run/speculative_distribution.h).
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "explain/explain.h"
#include "impl.h"
#include "options.h"
#include "run/fixture.h"
#include "run/speculative_distribution.h"

typedef struct explain_options {
  const char *case_id, *logits, *temperature, *top_p, *top_k, *seed, *position, *profile, *impl,
      *svg;
  int markdown;
} explain_options;

/* --logits: numbers separated by commas, malloc'd into the row; -1 when it is not that. */
static int parse_logits(const char *text, row_input *in) {
  size_t cap = 16;
  in->logits = malloc(cap * sizeof *in->logits);
  for (const char *p = text; in->logits && *p;) {
    char *end;
    double x = strtod(p, &end);
    if (end == p || (*end && *end != ',') || (*end == ',' && !end[1]))
      return -1;
    if (in->vocab == cap) {
      float *more = realloc(in->logits, (cap *= 2) * sizeof *in->logits);
      if (!more)
        return -1;
      in->logits = more;
    }
    in->logits[in->vocab++] = (float)x;
    p = *end == ',' ? end + 1 : end;
  }
  return in->logits && in->vocab ? 0 : -1;
}

/* The row of --logits with its parameters and draw key; 0, or the exit status of a usage error. */
static int given_row(const cli_command *self, const explain_options *o, row_input *in) {
  long long top_k = SIEVE_TOP_K_UNSET;
  unsigned long long seed = 0, position = 0;
  in->params = (sieve_params){1.0, SIEVE_TOP_P_UNSET, SIEVE_TOP_K_UNSET, 0.0, NULL};
  if (parse_logits(o->logits, in) != 0)
    return cli_usage_error(self, "--logits must be numbers separated by commas, not", o->logits);
  if (o->temperature && cli_number(o->temperature, &in->params.temperature) != 0)
    return cli_usage_error(self, "--temperature must be a number, not", o->temperature);
  if (o->top_p && cli_number(o->top_p, &in->params.top_p) != 0)
    return cli_usage_error(self, "--top-p must be a number, not", o->top_p);
  if (o->top_k && cli_integer(o->top_k, INT64_MIN, INT64_MAX, &top_k) != 0)
    return cli_usage_error(self, "--top-k must be a whole number that fits 64 bits, not", o->top_k);
  in->params.top_k = (int64_t)top_k;
  if (!o->seed != !o->position)
    return cli_usage_error(self, "--seed and --position go together", NULL);
  if (o->seed && (cli_unsigned(o->seed, &seed) != 0 || cli_unsigned(o->position, &position) != 0))
    return cli_usage_error(self, "--seed and --position are whole numbers in [0, 2^64 - 1]", NULL);
  in->key = (sieve_draw_key){(uint64_t)seed, (uint64_t)position, 0, 0};
  in->has_key = o->seed != NULL;
  return 0;
}

/* Whether the options fit together: a case, a row or the speculative-distribution table; 0, or
 * the exit status of a usage error. */
static int checked(const cli_command *self, const explain_options *o) {
  int row_options = o->temperature || o->top_p || o->top_k || o->seed || o->position;
  if (o->case_id && (!strcmp(o->case_id, SPECDIST_SUITE) || specdist_is_case(o->case_id))) {
    if (o->svg || o->impl || o->profile || o->logits || row_options)
      return cli_usage_error(self,
                             "a speculative-distribution case takes no other option (to run one "
                             "on an implementation: sieve run --impl IMPL --case ID):",
                             o->case_id);
    return 0;
  }
  if (o->markdown)
    return cli_usage_error(self, "--markdown is for speculative-distribution", NULL);
  if (!o->case_id && !o->logits)
    return cli_usage_error(self, "give a case id or --logits", NULL);
  if (o->case_id && o->logits)
    return cli_usage_error(self, "give a case id or --logits, not both", NULL);
  if (o->case_id && row_options)
    return cli_usage_error(self, "a case has its own parameters; --logits takes them", NULL);
  if (o->impl && !o->case_id)
    return cli_usage_error(self, "--impl needs a case id", NULL);
  return 0;
}

static int explain_main(const cli_command *self, int argc, char **argv) {
  static impl_command cmd;
  explain_options o = {0};
  const cli_option options[] = {
      {"--logits", CLI_VALUE, &o.logits},   {"--temperature", CLI_VALUE, &o.temperature},
      {"--top-p", CLI_VALUE, &o.top_p},     {"--top-k", CLI_VALUE, &o.top_k},
      {"--seed", CLI_VALUE, &o.seed},       {"--position", CLI_VALUE, &o.position},
      {"--profile", CLI_VALUE, &o.profile}, {"--impl", CLI_VALUE, &o.impl},
      {"--svg", CLI_VALUE, &o.svg},         {"--markdown", CLI_FLAG, &o.markdown}};
  explain_request rq = {0};
  char err[512], path[PATH_MAX + 64];
  int rc =
      cli_parse(self, options, sizeof options / sizeof options[0], argc, argv, &o.case_id, 1, NULL);
  if (rc != 0 || (rc = checked(self, &o)) != 0)
    return rc;
  if (o.case_id && (!strcmp(o.case_id, SPECDIST_SUITE) || specdist_is_case(o.case_id)))
    return specdist_explain(stdout, specdist_is_case(o.case_id) ? o.case_id : NULL, o.markdown);
  if (o.profile && !(rq.profile = impl_profile(o.profile, err, sizeof err)))
    return cli_usage_error(self, err, NULL);
  if (o.impl && impl_command_parse(&cmd, o.impl, err, sizeof err) != 0)
    return cli_usage_error(self, err, NULL);
  rq.impl_arg = o.impl;
  rq.impl = o.impl ? &cmd.target : NULL;
  rq.svg = o.svg;
  if (o.logits) {
    rc = given_row(self, &o, &rq.row);
    rc = rc != 0 ? rc : sieve_explain(&rq);
    free(rq.row.logits);
    return rc;
  }
  sieve_fixtures fx;
  if (sieve_fixtures_load(sieve_default_fixtures(path, sizeof path), &fx, err, sizeof err) != 0)
    return fprintf(stderr, "sieve explain: %s\n", err), 2;
  rq.fixture_case = sieve_fixtures_find(&fx, o.case_id);
  rc = rq.fixture_case ? sieve_explain(&rq) : cli_usage_error(self, "no fixture case", o.case_id);
  sieve_fixtures_free(&fx);
  return rc;
}

const cli_command cli_explain = {
    "explain", "CASE_ID | --logits X,Y,... | speculative-distribution [options]",
    "the steps of the rule on one row",
    "usage: sieve explain CASE_ID [--profile NAME] [--impl IMPL] [--svg FILE]\n"
    "       sieve explain --logits X,Y,... [--temperature T] [--top-p P] [--top-k K]\n"
    "                     [--seed S --position N] [--profile NAME] [--svg FILE]\n"
    "The steps of the rule on one row (a fixture case's, or the logits given), beside another\n"
    "profile's with --profile; --svg writes them as a picture. With --impl, the case's request\n"
    "goes to that implementation too, and its answer is judged as sieve run judges it; the\n"
    "picture then has a panel of the tokens its answer kept, beside the rule's.\n"
    "       sieve explain speculative-distribution[/CASE] [--markdown]\n"
    "The statistical cases of speculative verification: their rows, the rule's distributions,\n"
    "and each case's power against each known bug (harness/run/STATISTICS.md).\n"
    "Exit status: 0 whatever an implementation's verdict (sieve run gates); 2 a usage error, a\n"
    "case that cannot be explained, or an implementation that does not answer hello.\n",
    explain_main};
