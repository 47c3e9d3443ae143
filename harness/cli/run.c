/*
 * `sieve run --impl IMPL [options]`: the command line of the runner (run/runner.h).
 * Exit status: 0 when nothing fails beyond the expectation file, 1 when
 * something does (or an expected failure now passes), 2 on a usage or
 * harness error.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "explain/explain.h"
#include "impl.h"
#include "options.h"
#include "report/expect.h"
#include "report/outfile.h"
#include "report/report.h"
#include "run/check.h"
#include "run/fixture.h"
#include "run/runner.h"
#include "run/suites.h"

#define REPORTS_MAX 8

/* A report of --report: the run in FORMAT, written whole to PATH. */
typedef struct extra_report {
  const char *format, *path;
} extra_report;

typedef struct cli {
  run_options opt;
  extra_report reports[REPORTS_MAX];
  size_t n_reports;
  cli_list suites, families, cases, report_args;
  const char *impl, *expect, *format, *output, *write_expect, *fixtures, *shard, *jobs, *timeout,
      *precision;
  int update_expect, no_batches, force;
  impl_command cmd;
  char fixtures_found[PATH_MAX + 64];
  fit_start starts[32]; /* the profiles, where the fit starts */
} cli;

static int check_suites(const cli_command *self, const cli_list *suites) {
  for (size_t i = 0; i < suites->n; i++)
    if (!suite_known(suites->items[i]) && strcmp(suites->items[i], "smoke") != 0)
      return cli_usage_error(
          self,
          "unknown suite (sieve run --help lists them; a family is --family):", suites->items[i]);
  return 0;
}

static int parse_shard(const cli_command *self, cli *c) {
  unsigned long i, n;
  char extra;
  c->opt.shard_count = 1;
  if (!c->shard)
    return 0;
  if (sscanf(c->shard, "%lu/%lu%c", &i, &n, &extra) != 2 || n == 0 || i == 0 || i > n)
    return cli_usage_error(self, "--shard must be I/N with 1 <= I <= N, not", c->shard);
  c->opt.shard_index = i - 1;
  c->opt.shard_count = n;
  return 0;
}

static int parse_reports(const cli_command *self, cli *c) {
  for (size_t i = 0; i < c->report_args.n; i++) {
    char *value = (char *)c->report_args.items[i], *eq = strchr(value, '=');
    if (!eq || eq[1] == '\0')
      return cli_usage_error(self, "--report takes FORMAT=FILE, not", value);
    if (c->n_reports == REPORTS_MAX)
      return cli_usage_error(self, "too many --report options; at most 8", NULL);
    *eq = '\0';
    if (!sieve_report_format_known(value))
      return cli_usage_error(self, "unknown --report format", value);
    c->reports[c->n_reports++] = (extra_report){value, eq + 1};
  }
  return 0;
}

/* The values of the options, checked and set on c->opt. */
static int check_values(const cli_command *self, cli *c) {
  long long jobs = 2;
  char err[256];
  int rc;
  if (!c->impl)
    return cli_usage_error(self, "--impl is required", NULL);
  if (impl_command_parse(&c->cmd, c->impl, err, sizeof err) != 0)
    return cli_usage_error(self, err, NULL);
  if (c->update_expect && !c->expect)
    return cli_usage_error(self, "--update-expect rewrites the file of --expect, which is missing",
                           NULL);
  if (c->force && !c->update_expect && !c->write_expect)
    return cli_usage_error(self, "--force goes with --update-expect or --write-expect", NULL);
  if (c->jobs && cli_integer(c->jobs, 1, 1000000, &jobs) != 0)
    return cli_usage_error(self, "--jobs must be a positive integer, not", c->jobs);
  c->opt.jobs = (int)jobs;
  c->opt.timeout_ms = 30000;
  if (c->timeout && (rc = cli_timeout(self, c->timeout, &c->opt.timeout_ms)) != 0)
    return rc;
  c->opt.precision = c->precision ? sieve_precision_parse(c->precision) : -1;
  if (c->precision && c->opt.precision < 0)
    return cli_usage_error(self, "--precision must be float32 or float64, not", c->precision);
  if (cli_format(self, c->format, sieve_report_formats) < 0)
    return 2;
  if ((rc = check_suites(self, &c->suites)) != 0 || (rc = parse_shard(self, c)) != 0)
    return rc;
  return parse_reports(self, c);
}

static int parse(const cli_command *self, cli *c, int argc, char **argv) {
  c->format = "text";
  const cli_option options[] = {{"--impl", CLI_VALUE, &c->impl},
                                {"--suite", CLI_LIST, &c->suites},
                                {"--family", CLI_LIST, &c->families},
                                {"--case", CLI_LIST, &c->cases},
                                {"--expect", CLI_VALUE, &c->expect},
                                {"--update-expect", CLI_FLAG, &c->update_expect},
                                {"--write-expect", CLI_VALUE, &c->write_expect},
                                {"--force", CLI_FLAG, &c->force},
                                {"--format", CLI_VALUE, &c->format},
                                {"--output", CLI_VALUE, &c->output},
                                {"--report", CLI_EACH, &c->report_args},
                                {"--jobs", CLI_VALUE, &c->jobs},
                                {"--shard", CLI_VALUE, &c->shard},
                                {"--timeout", CLI_VALUE, &c->timeout},
                                {"--fixtures", CLI_VALUE, &c->fixtures},
                                {"--precision", CLI_VALUE, &c->precision},
                                {"--no-batches", CLI_FLAG, &c->no_batches}};
  int rc = cli_parse(self, options, sizeof options / sizeof options[0], argc, argv, NULL, 0, NULL);
  if (rc != 0 || (rc = check_values(self, c)) != 0)
    return rc;
  c->opt.impl_arg = c->impl;
  c->opt.impl = &c->cmd.target;
  c->opt.suites = c->suites.items;
  c->opt.families = c->families.items;
  c->opt.cases = c->cases.items;
  c->opt.alone_only = c->no_batches;
  c->opt.fit_starts = c->starts;
  c->opt.n_fit_starts = profiles_fit_starts(c->starts, sizeof c->starts / sizeof c->starts[0]);
  c->opt.progress = isatty(STDERR_FILENO) ? PROGRESS_TERMINAL : PROGRESS_LINES;
  c->opt.fixtures = c->fixtures
                        ? c->fixtures
                        : sieve_default_fixtures(c->fixtures_found, sizeof c->fixtures_found);
  return 0;
}

/* The HTML report's pictures and requests: the fixture cases, read again (the run let them go),
 * drawn by explain/. */
typedef struct html_pictures {
  const char *fixtures, *name;
  sieve_fixtures fx;
  int loaded; /* 1 read, -1 unreadable, 0 not yet */
} html_pictures;

static const cJSON *fixture_of(html_pictures *h, const case_result *c) {
  char err[256];
  if (h->loaded == 0)
    h->loaded = sieve_fixtures_load(h->fixtures, &h->fx, err, sizeof err) == 0 ? 1 : -1;
  return h->loaded == 1 ? sieve_fixtures_find(&h->fx, c->id) : NULL;
}

static int draw_case(void *ctx, const case_result *c, FILE *out) {
  const cJSON *fixture = fixture_of(ctx, c);
  return fixture ? explain_case_svg(out, fixture, c->answer, ((html_pictures *)ctx)->name) : -1;
}

static char *request_of(void *ctx, const case_result *c) {
  char err[256];
  const cJSON *fixture = fixture_of(ctx, c);
  cJSON *request = fixture ? sieve_case_request_compact(fixture, err, sizeof err) : NULL;
  char *text = request ? cJSON_PrintUnformatted(request) : NULL;
  cJSON_Delete(request);
  return text;
}

/* To stdout, or whole to `path` (never a half-written report). */
static int write_report(const run_report *report, const char *format, const char *path,
                        html_pictures *h) {
  const report_pictures pictures = {draw_case, request_of, h};
  if (!path)
    return sieve_report_render(report, format, stdout, &pictures) == 0 && fflush(stdout) == 0 ? 0
                                                                                              : -1;
  outfile o;
  FILE *out = outfile_open(&o, path);
  if (outfile_commit(&o, out && sieve_report_render(report, format, out, &pictures) == 0) == 0)
    return 0;
  fprintf(stderr, "sieve run: cannot write %s\n", path);
  return -1;
}

/* The expectation file of --expect, checked before the run: readable, of these fixtures' schema,
 * and naming only cases the fixtures have. */
static int load_expectations(const cli *c, expectations *e, char *err, size_t len) {
  if (!c->expect)
    return 0;
  if (sieve_expect_load(c->expect, e, err, len) != 0)
    return -1;
  char why[400];
  if (sieve_expect_known_ids(e, c->opt.fixtures, why, sizeof why) == 0)
    return 0;
  snprintf(err, len, "%s: %s", c->expect, why);
  sieve_expect_free(e);
  return -1;
}

/* The ids of `old` that `now` no longer lists, on stderr. */
static void say_removed(const expectations *old, const expectations *now, const char *path) {
  size_t n = 0;
  for (const cJSON *x = old->list ? old->list->child : NULL; x; x = x->next)
    if (!cJSON_GetObjectItemCaseSensitive(now->list, x->string))
      fprintf(stderr, "%s%s", n++ ? ", " : "sieve run: removed (they now pass): ", x->string);
  if (n)
    fprintf(stderr, " (%zu from %s)\n", n, path);
}

/* --write-expect and --update-expect, then the file written is the run's expectations. */
static int rewrite_expectations(const cli *c, expectations *e, run_report *report, char *err,
                                size_t len) {
  const char *path = c->write_expect ? c->write_expect : c->expect;
  if (sieve_expect_write(report, c->expect ? e : NULL, path, c->write_expect != NULL, c->force, err,
                         len) != 0)
    return -1;
  size_t kept = 0;
  for (size_t i = 0; !c->force && i < report->n_cases; i++)
    kept += (size_t)report->cases[i].masked;
  if (kept)
    fprintf(stderr,
            "sieve run: kept %zu listed cases that pass now: the run has new failures, which may "
            "hide them (--force removes them)\n",
            kept);
  expectations old = *e, now = {0};
  if (sieve_expect_load(path, &now, err, len) != 0) {
    sieve_expect_free(&old);
    return -1;
  }
  say_removed(&old, &now, path);
  sieve_expect_free(&old);
  *e = now;
  sieve_expect_apply(e, report);
  fprintf(stderr, "sieve run: wrote %s (%zu expected failures)\n", path,
          (size_t)cJSON_GetArraySize(e->list));
  return 0;
}

/* Checks what must work before the run: the report's destination and the expectation files. */
static int before_run(const cli *c, expectations *e, char *err, size_t len) {
  char why[400];
  if (c->output && outfile_check(c->output, why, sizeof why) != 0)
    return snprintf(err, len, "cannot write %s: %s", c->output, why), -1;
  if (c->write_expect && outfile_check(c->write_expect, why, sizeof why) != 0)
    return snprintf(err, len, "cannot write %s: %s", c->write_expect, why), -1;
  for (size_t i = 0; i < c->n_reports; i++)
    if (outfile_check(c->reports[i].path, why, sizeof why) != 0)
      return snprintf(err, len, "cannot write %s: %s", c->reports[i].path, why), -1;
  return load_expectations(c, e, err, len);
}

static int run_main(const cli_command *self, int argc, char **argv) {
  static cli c;
  memset(&c, 0, sizeof c);
  int rc = parse(self, &c, argc, argv);
  if (rc != 0)
    return rc;
  run_report report = {0};
  expectations e = {0};
  char err[1024];
  /* What cannot be used fails now, not after the run. */
  rc = before_run(&c, &e, err, sizeof err);
  if (rc == 0)
    rc = sieve_run(&c.opt, &report, err, sizeof err);
  if (rc == 0)
    sieve_expect_apply(c.expect ? &e : NULL, &report);
  if (rc == 0 && (c.write_expect || c.update_expect))
    rc = rewrite_expectations(&c, &e, &report, err, sizeof err);
  sieve_expect_free(&e);
  if (rc != 0) {
    fprintf(stderr, "sieve run: %s\n", err);
    sieve_report_free(&report);
    return 2;
  }
  html_pictures h = {.fixtures = c.opt.fixtures, .name = report.impl_name};
  rc = write_report(&report, c.format, c.output, &h) != 0 ? 2 : sieve_report_failed(&report);
  for (size_t i = 0; i < c.n_reports; i++)
    if (write_report(&report, c.reports[i].format, c.reports[i].path, &h) != 0)
      rc = 2;
  if (h.loaded == 1)
    sieve_fixtures_free(&h.fx);
  if (rc != 2 && (c.output || strcmp(c.format, "text") != 0))
    sieve_report_summary(&report, stderr);
  sieve_report_free(&report);
  return rc;
}

const cli_command cli_run = {
    "run", "--impl IMPL [options]", "put an implementation through the fixtures",
    "usage: sieve run --impl IMPL [--suite NAME]... [--family NAME]... [--case ID]...\n"
    "                 [--expect FILE [--update-expect]] [--write-expect FILE] [--force]\n"
    "                 [--format text|json|markdown|junit|tap|html] [--output FILE]\n"
    "                 [--report FORMAT=FILE]...\n"
    "                 [--jobs N] [--shard I/N] [--timeout S] [--fixtures FILE]\n"
    "                 [--precision float32|float64] [--no-batches]\n"
    "IMPL: exec:COMMAND (a protocol v1 process), lib:PATH.so (harness/protocol/sieve_impl.h),\n"
    "      profile:NAME (the oracle under an engine's rule: sieve profiles),\n"
    "      rule:AXIS=VALUE,... (the oracle with those axes set: sieve axes)\n"
    "--expect FILE: the known failures (harness/CI.md); an id that is no case is an error.\n"
    "--write-expect FILE: writes this run's failures as an expectation file (the notes of\n"
    "--expect kept), each with a digest of its answer, and exits 0; --update-expect removes\n"
    "from --expect the cases that now pass. A listed failure whose answer changed fails the\n"
    "run; one that passes while the run has new failures is kept (one may hide it) unless\n"
    "--force.\n"
    "suites: smoke params ordering large-vocab logprobs engine-options uniform draw sample\n"
    "        position special-values speculative penalties distribution\n"
    "        speculative-distribution (default: all but smoke)\n"
    "--suite, --family (the part of a case id before its slash) and --case (an id or a glob,\n"
    "'ties/*') each take a comma-separated list or repeat; the cases asked are their union.\n"
    "--precision: the arithmetic answers are compared at (default: what hello declares, else\n"
    "float32, the arithmetic of real samplers; fixtures/README.md, \"Precision\").\n"
    "--report FORMAT=FILE writes the same run in another format too (repeatable: a JUnit file\n"
    "and a markdown summary from one run).\n"
    "--output FILE is written whole or not at all; a device or FIFO is written in place. With\n"
    "--output or a format other than text, stderr gets the first unexpected cases and the "
    "verdict.\n"
    "--no-batches: each case is sent alone only; the second pass, which sends the cases again\n"
    "in batches to find answers that change with their place in a batch, is left out.\n",
    run_main};
