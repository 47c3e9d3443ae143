/*
 * `sieve run --impl IMPL [options]`: the command line of the runner.
 * Exit status: 0 when nothing fails beyond the expectation file, 1 when
 * something does (or an expected failure now passes), 2 on a usage or
 * harness error.
 */
#define _GNU_SOURCE
#include "run.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "expect.h"
#include "impl.h"
#include "outfile.h"
#include "report.h"
#include "runner.h"
#include "serve.h"

static const char run_usage[] =
    "usage: sieve run --impl IMPL [--suite NAME]... [--family NAME]... [--case ID]...\n"
    "                 [--expect FILE [--update-expect]]\n"
    "                 [--write-expect FILE]\n"
    "                 [--format text|json|markdown|junit|tap] [--output FILE]\n"
    "                 [--report FORMAT=FILE]...\n"
    "                 [--jobs N] [--shard I/N] [--timeout S] [--fixtures FILE]\n"
    "                 [--precision float32|float64]\n"
    "IMPL: exec:COMMAND (a protocol v1 process), lib:PATH.so (harness/sieve_impl.h),\n"
    "      profile:NAME (the oracle under an engine's rule: sieve profiles),\n"
    "      rule:AXIS=VALUE,... (the oracle with those axes set: sieve axes)\n"
    "--expect FILE: the known failures (harness/CI.md); an id that is no case is an error.\n"
    "--write-expect FILE: writes this run's failures as an expectation file (the notes of\n"
    "--expect kept) and exits 0; --update-expect removes from --expect the cases that now pass.\n"
    "suites: smoke params ordering large-vocab logprobs engine-options uniform draw sample\n"
    "        position special-values speculative distribution\n"
    "        speculative-distribution (default: all but smoke)\n"
    "--suite, --family (the part of a case id before its slash) and --case (an id or a glob,\n"
    "'ties/*') each take a comma-separated list or repeat; the cases asked are their union.\n"
    "--precision: the arithmetic answers are compared at (default: what hello declares, else\n"
    "float32, the arithmetic of real samplers; fixtures/README.md, \"Precision\").\n"
    "--report FORMAT=FILE writes the same run in another format too (repeatable: a JUnit file\n"
    "and a markdown summary from one run).\n"
    "--output FILE is written whole or not at all; a device or FIFO is written in place. With\n"
    "--output or a format other than text, stderr gets the first unexpected cases and the "
    "verdict.\n";

#define REPORTS_MAX 8

/* A report of --report: the run in FORMAT, written whole to PATH. */
typedef struct extra_report {
  const char *format, *path;
} extra_report;

typedef struct cli {
  run_options opt;
  extra_report reports[REPORTS_MAX];
  size_t n_reports;
  const char *suites[32], *families[32], *cases[64];
  size_t n_suites, n_families, n_cases;
  const char *expect, *format, *output, *write_expect;
  int update_expect;
  impl_command cmd;
  char self[PATH_MAX], fixtures[PATH_MAX + 64];
} cli;

static int usage(const char *what, const char *arg) {
  fprintf(stderr, "sieve run: %s%s%s\n%s", what, arg ? " " : "", arg ? arg : "", run_usage);
  return 2;
}

static int known_suite(const char *name) {
  if (strcmp(name, "smoke") == 0)
    return 1;
  for (size_t i = 0; sieve_suites[i]; i++)
    if (strcmp(sieve_suites[i], name) == 0)
      return 1;
  return 0;
}

static int parse_impl(cli *c, const char *impl) {
  char err[256];
  c->opt.impl = impl;
  c->opt.impl_argv = c->cmd.argv;
  return impl_command_parse(&c->cmd, impl, err, sizeof err) == 0 ? 0 : usage(err, NULL);
}

static int parse_shard(cli *c, const char *text) {
  unsigned long i, n;
  char extra;
  if (sscanf(text, "%lu/%lu%c", &i, &n, &extra) != 2 || n == 0 || i == 0 || i > n)
    return usage("--shard must be I/N with 1 <= I <= N, not", text);
  c->opt.shard_index = i - 1;
  c->opt.shard_count = n;
  return 0;
}

static int parse_positive(const char *text, const char *flag, int *out) {
  char *end;
  long v = strtol(text, &end, 10);
  if (*end || v < 1 || v > 1000000)
    return usage(flag, text);
  *out = (int)v;
  return 0;
}

/* Appends a comma-separated list to a NULL-ended one; suites must be known. */
static int parse_list(char *text, const char **list, size_t *n, size_t cap, int suites) {
  for (char *save = NULL, *name = strtok_r(text, ",", &save); name;
       name = strtok_r(NULL, ",", &save)) {
    if (suites && !known_suite(name))
      return usage("unknown suite (sieve run --help lists them; a family is --family):", name);
    if (*n + 1 >= cap)
      return usage("too many names in", name);
    list[(*n)++] = name;
  }
  return 0;
}

static int parse_report(cli *c, char *value) {
  char *eq = strchr(value, '=');
  if (!eq || eq[1] == '\0')
    return usage("--report takes FORMAT=FILE, not", value);
  if (c->n_reports == REPORTS_MAX)
    return usage("too many --report options; at most 8", NULL);
  *eq = '\0';
  if (!sieve_report_format_known(value))
    return usage("unknown --report format", value);
  c->reports[c->n_reports++] = (extra_report){value, eq + 1};
  return 0;
}

static int parse_option(cli *c, const char *flag, char *value, int *timeout_s) {
  if (!strcmp(flag, "--impl"))
    return parse_impl(c, value);
  if (!strcmp(flag, "--suite"))
    return parse_list(value, c->suites, &c->n_suites, 32, 1);
  if (!strcmp(flag, "--family"))
    return parse_list(value, c->families, &c->n_families, 32, 0);
  if (!strcmp(flag, "--case"))
    return parse_list(value, c->cases, &c->n_cases, 64, 0);
  if (!strcmp(flag, "--shard"))
    return parse_shard(c, value);
  if (!strcmp(flag, "--jobs"))
    return parse_positive(value, "--jobs must be a positive integer, not", &c->opt.jobs);
  if (!strcmp(flag, "--timeout"))
    return parse_positive(value, "--timeout must be a positive number of seconds, not", timeout_s);
  if (!strcmp(flag, "--precision")) {
    c->opt.precision = sieve_precision_parse(value);
    return c->opt.precision >= 0 ? 0 : usage("--precision must be float32 or float64, not", value);
  }
  if (!strcmp(flag, "--report"))
    return parse_report(c, value);
  if (!strcmp(flag, "--format")) {
    c->format = value;
    return sieve_report_format_known(value) ? 0 : usage("unknown --format", value);
  }
  const char **slot = !strcmp(flag, "--expect")         ? &c->expect
                      : !strcmp(flag, "--write-expect") ? &c->write_expect
                      : !strcmp(flag, "--output")       ? &c->output
                      : !strcmp(flag, "--fixtures")     ? &c->opt.fixtures
                                                        : NULL;
  if (!slot)
    return usage("unknown option", flag);
  *slot = value;
  return 0;
}

static int parse(cli *c, int argc, char **argv) {
  int timeout_s = 30;
  c->opt.jobs = 2;
  c->opt.shard_count = 1;
  c->opt.precision = -1;
  c->format = "text";
  ssize_t n = readlink("/proc/self/exe", c->self, sizeof c->self - 1);
  c->self[n > 0 ? n : 0] = '\0';
  for (int i = 0; i < argc; i++) {
    char *eq = strchr(argv[i], '=');
    if (strcmp(argv[i], "--update-expect") == 0) {
      c->update_expect = 1;
    } else if (strncmp(argv[i], "--", 2) == 0 && eq) {
      *eq = '\0';
      if (parse_option(c, argv[i], eq + 1, &timeout_s) != 0)
        return 2;
    } else if (strncmp(argv[i], "--", 2) == 0 && i + 1 < argc) {
      if (parse_option(c, argv[i], argv[i + 1], &timeout_s) != 0)
        return 2;
      i++;
    } else {
      return usage("unexpected argument", argv[i]);
    }
  }
  if (!c->opt.impl)
    return usage("--impl is required", NULL);
  if (c->update_expect && !c->expect)
    return usage("--update-expect rewrites the file of --expect, which is missing", NULL);
  c->suites[c->n_suites] = c->families[c->n_families] = c->cases[c->n_cases] = NULL;
  c->opt.suites = c->suites;
  c->opt.families = c->families;
  c->opt.cases = c->cases;
  c->opt.timeout_ms = timeout_s * 1000;
  c->opt.progress = isatty(STDERR_FILENO) ? PROGRESS_TERMINAL : PROGRESS_LINES;
  if (!c->opt.fixtures)
    c->opt.fixtures = sieve_default_fixtures(c->fixtures, sizeof c->fixtures);
  return 0;
}

/* To stdout, or whole to `path` (never a half-written report). */
static int write_report(const run_report *report, const char *format, const char *path) {
  if (!path)
    return sieve_report_render(report, format, stdout) == 0 && fflush(stdout) == 0 ? 0 : -1;
  outfile o;
  FILE *out = outfile_open(&o, path);
  if (outfile_commit(&o, out && sieve_report_render(report, format, out) == 0) == 0)
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
  if (sieve_expect_write(report, c->expect ? e : NULL, path, c->write_expect != NULL, err, len) !=
      0)
    return -1;
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

int sieve_run_main(int argc, char **argv) {
  static cli c;
  memset(&c, 0, sizeof c);
  if (argc == 1 && strcmp(argv[0], "--help") == 0) {
    fputs(run_usage, stdout);
    return 0;
  }
  int rc = parse(&c, argc, argv);
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
  rc = write_report(&report, c.format, c.output) != 0 ? 2 : sieve_report_failed(&report);
  for (size_t i = 0; i < c.n_reports; i++)
    if (write_report(&report, c.reports[i].format, c.reports[i].path) != 0)
      rc = 2;
  if (rc != 2 && (c.output || strcmp(c.format, "text") != 0))
    sieve_report_summary(&report, stderr);
  sieve_report_free(&report);
  return rc;
}
