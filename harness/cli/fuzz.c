/* `sieve fuzz --impl IMPL [options]`: random rows at engine scale (fuzz/fuzz.h). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fuzz/fuzz.h"
#include "impl.h"
#include "options.h"
#include "report/outfile.h"
#include "run/check.h"

typedef struct fuzz_cli {
  const char *impl, *against, *seed, *time, *rows, *repeat, *save, *precision, *timeout,
      *max_logits, *report, *shard, *jobs;
  cli_list vocab, batch, families, ops;
  int first;
  size_t vocabs[CLI_LIST_MAX], batches[CLI_LIST_MAX];
  impl_command cmd, rule;
} fuzz_cli;

/* A list of whole numbers in [1, hi] into `out`; 0, or 2 after the usage error. */
static int sizes(const cli_command *self, const char *option, const cli_list *list, long long hi,
                 size_t *out) {
  for (size_t i = 0; i < list->n; i++) {
    long long x;
    char why[96];
    snprintf(why, sizeof why, "%s takes sizes from 1 to %lld, not", option, hi);
    if (cli_integer(list->items[i], 1, hi, &x) != 0)
      return cli_usage_error(self, why, list->items[i]);
    out[i] = (size_t)x;
  }
  return 0;
}

static int read_space(const cli_command *self, fuzz_cli *c, fuzz_options *o) {
  int rc = sizes(self, "--vocab", &c->vocab, 1 << 20, c->vocabs);
  if (rc == 0)
    rc = sizes(self, "--batch", &c->batch, 1024, c->batches);
  o->space.vocabs = c->vocab.n ? c->vocabs : fuzz_default_vocabs;
  o->space.n_vocabs = c->vocab.n ? c->vocab.n : fuzz_default_n_vocabs;
  o->batches = c->batch.n ? c->batches : fuzz_default_batches;
  o->n_batches = c->batch.n ? c->batch.n : fuzz_default_n_batches;
  o->space.families = c->families.n ? 0 : (1u << FUZZ_FAMILY_COUNT) - 1;
  o->space.engine_options = 1; /* as far as hello lists them */
  for (size_t i = 0; rc == 0 && i < c->families.n; i++) {
    const int f = fuzz_family_parse(c->families.items[i]);
    if (f < 0)
      return cli_usage_error(
          self, "unknown family (sieve fuzz --help lists them):", c->families.items[i]);
    o->space.families |= 1u << f;
  }
  o->ops = c->ops.n ? 0 : (UINT32_C(1) << FUZZ_OP_COUNT) - 1;
  for (size_t i = 0; rc == 0 && i < c->ops.n; i++) {
    const int op = fuzz_op_parse(c->ops.items[i]);
    if (op < 0)
      return cli_usage_error(self, "unknown op (sieve fuzz --help lists them):", c->ops.items[i]);
    o->ops |= UINT32_C(1) << op;
  }
  return rc;
}

/* An option's whole number in [lo, hi] into *out when given; 0, or 2 after a usage error that
 * names the option, its range and the value. */
static int whole(const cli_command *self, const char *option, const char *text, long long lo,
                 long long hi, long long *out) {
  char why[120];
  if (!text || cli_integer(text, lo, hi, out) == 0)
    return 0;
  snprintf(why, sizeof why, "%s takes a whole number from %lld to %lld, not", option, lo, hi);
  return cli_usage_error(self, why, text);
}

static int read_numbers(const cli_command *self, fuzz_cli *c, fuzz_options *o) {
  long long rows = 0, repeat = 1, seconds = 0, logits = 1 << 21, jobs = 0;
  unsigned long long seed = (unsigned long long)time(NULL);
  int rc = 0;
  if (c->seed && cli_unsigned(c->seed, &seed) != 0)
    return cli_usage_error(self, "--seed takes a whole number from 0 to 2^64 - 1, not", c->seed);
  if ((rc = whole(self, "--rows", c->rows, 1, 1LL << 40, &rows)) ||
      (rc = whole(self, "--time", c->time, 1, 1LL << 30, &seconds)) ||
      (rc = whole(self, "--repeat", c->repeat, 1, 100, &repeat)) ||
      (rc = whole(self, "--max-logits", c->max_logits, 1, 1LL << 28, &logits)) ||
      (rc = whole(self, "--jobs", c->jobs, 1, 64, &jobs)))
    return rc;
  if (c->rows && c->time)
    return cli_usage_error(self, "give --rows or --time, not both", NULL);
  o->seed = seed;
  o->rows = (size_t)(c->rows || !c->time ? (rows ? rows : 1000) : 0);
  o->seconds = (double)seconds;
  o->repeat = (int)repeat;
  o->max_logits = (size_t)logits;
  o->threads = (int)jobs;
  o->precision = c->precision ? sieve_precision_parse(c->precision) : -1;
  if (c->precision && o->precision < 0)
    return cli_usage_error(self, "--precision is float32 or float64, not", c->precision);
  return cli_timeout(self, c->timeout, &o->timeout_ms);
}

static int read_rule(const cli_command *self, fuzz_cli *c, fuzz_options *o) {
  char err[256];
  const char *against = c->against ? c->against : "profile:deepinfer";
  if (strncmp(against, "profile:", 8) != 0 && strncmp(against, "rule:", 5) != 0)
    return cli_usage_error(self, "--against is profile:NAME or rule:AXIS=VALUE,..., not", against);
  if (impl_command_parse(&c->rule, against, err, sizeof err) != 0)
    return cli_usage_error(self, err, NULL);
  o->rule = &c->rule.rule;
  o->rule_name = c->rule.name;
  o->against = against;
  if (impl_command_parse(&c->cmd, c->impl, err, sizeof err) != 0)
    return cli_usage_error(self, err, NULL);
  o->impl = &c->cmd.target;
  o->impl_arg = c->impl;
  return 0;
}

/* --report junit=FILE, refused before the run when FILE cannot be written. */
static int read_report(const cli_command *self, const char *report, fuzz_options *o) {
  char why[600];
  if (strncmp(report, "junit=", 6) != 0 || !report[6])
    return cli_usage_error(self, "--report takes junit=FILE (fuzz writes JUnit reports), not",
                           report);
  if (outfile_check(report + 6, why, sizeof why) != 0)
    return cli_usage_error(self, "--report junit=FILE cannot be written:", why);
  o->junit = report + 6;
  return 0;
}

/* --shard I/N: 0 <= I < N <= 4096; none is shard 0 of 1. */
static int read_shard(const cli_command *self, const char *shard, fuzz_options *o) {
  unsigned i = 0, n = 1;
  char end;
  if (shard && (sscanf(shard, "%u/%u%c", &i, &n, &end) != 2 || n < 1 || n > 4096 || i >= n))
    return cli_usage_error(self, "--shard is I/N with 0 <= I < N <= 4096, not", shard);
  o->shard = i;
  o->shards = n;
  return 0;
}

static int fuzz_main(const cli_command *self, int argc, char **argv) {
  fuzz_cli c = {.timeout = "30"};
  const cli_option options[] = {
      {"--impl", CLI_VALUE, &c.impl},       {"--against", CLI_VALUE, &c.against},
      {"--seed", CLI_VALUE, &c.seed},       {"--time", CLI_VALUE, &c.time},
      {"--rows", CLI_VALUE, &c.rows},       {"--vocab", CLI_LIST, &c.vocab},
      {"--batch", CLI_LIST, &c.batch},      {"--families", CLI_LIST, &c.families},
      {"--ops", CLI_LIST, &c.ops},          {"--repeat", CLI_VALUE, &c.repeat},
      {"--save", CLI_VALUE, &c.save},       {"--precision", CLI_VALUE, &c.precision},
      {"--timeout", CLI_VALUE, &c.timeout}, {"--max-logits", CLI_VALUE, &c.max_logits},
      {"--report", CLI_VALUE, &c.report},   {"--shard", CLI_VALUE, &c.shard},
      {"--jobs", CLI_VALUE, &c.jobs},       {"--first", CLI_FLAG, &c.first}};
  fuzz_options o = {.save = NULL};
  int rc = cli_parse(self, options, sizeof options / sizeof options[0], argc, argv, NULL, 0, NULL);
  if (rc != 0)
    return rc;
  if (!c.impl)
    return cli_usage_error(self, "--impl is required", NULL);
  if ((rc = read_space(self, &c, &o)) != 0 || (rc = read_numbers(self, &c, &o)) != 0 ||
      (rc = read_rule(self, &c, &o)) != 0)
    return rc;
  o.save = c.save;
  o.first = c.first;
  if (c.report && (rc = read_report(self, c.report, &o)) != 0)
    return rc;
  if ((rc = read_shard(self, c.shard, &o)) != 0)
    return rc;
  return sieve_fuzz(&o, stdout);
}

const cli_command cli_fuzz = {
    "fuzz", "--impl IMPL [--seed S] [--rows N | --time S] [--vocab LIST] [--batch LIST] ...",
    "random rows at engine scale, shrunk on failure",
    "usage: sieve fuzz --impl IMPL [--against profile:NAME|rule:AXIS=VALUE,...] [--seed S]\n"
    "                  [--rows N | --time SECONDS] [--vocab V,...] [--batch B,...]\n"
    "                  [--families F,...] [--ops OP,...] [--repeat K] [--save DIR]\n"
    "                  [--precision float32|float64] [--timeout S] [--max-logits N]\n"
    "                  [--first] [--report junit=FILE] [--shard I/N] [--jobs N]\n"
    "Random filter and sample rows in batches, and uniform, position and speculate\n"
    "requests, each judged against the rule (--against; DeepInfer's by default) at the\n"
    "implementation's precision, where a decision that precision could flip admits every\n"
    "outcome it could give. One row of each batch is asked again alone, the batch now and\n"
    "then reversed, and with --repeat K the same batch K times: a decision that moves is a\n"
    "failure of its own. The first failure of each kind is shrunk to a minimal batch and row\n"
    "and printed with the axis values under which the rule gives its answer; --save DIR\n"
    "writes those as DIR/fuzz-SEED.json (fuzz-SEED-shard-I-of-N.json), which sieve run\n"
    "--fixtures replays.\n"
    "--seed: the run is reproducible from it (default: the clock's seconds, printed first).\n"
    "--rows: stop after N rows (default 1000); --time: after that many seconds.\n"
    "--vocab: sizes to draw from, up to 1048576 (default 1 to 262144, around powers of two\n"
    "       and tile widths).\n"
    "--batch: batch sizes (default 1,2,7,64,257,1024; at most hello's \"max_batch\").\n"
    "--families: peaked, levels, bf16, fp16, holes, dyadic, collide, underflow, extremes\n"
    "       (default all).\n"
    "--ops: filter, sample, uniform, position, speculate (default: all that hello offers;\n"
    "       filter and position only where it says \"rng\":\"own\").\n"
    "--max-logits: the most logits one request carries (default 2097152).\n"
    "--first: stop at the first failure (the requests made by then are still asked); the\n"
    "       report says when it came.\n"
    "--report junit=FILE: also a JUnit report: the run, and each kind of failure with its\n"
    "       minimal case (CI systems show them as testcases).\n"
    "--shard I/N: shard I of N of the seed's rows (0 <= I < N): N machines with one seed ask\n"
    "       N different streams, their JUnit testcases named by shard.\n"
    "--jobs N: threads that judge a batch's rows (default: one per core). The next requests\n"
    "       are made, and the answers before judged, while the implementation works.\n"
    "Exit status: 0 no failure, 1 failures, 2 a usage error, an implementation that could not\n"
    "be started or greeted, or a file not written.\n",
    fuzz_main};
