/*
 * The JUnit report of a fuzz run (junit.h). The run is one testcase, which passes when no row
 * failed; each kind of failure is another, named by the seed and its verdict as --save names
 * its case, whose <failure> (<error> for a crash or a malformed answer) carries the minimal
 * case as the text report prints it.
 */
#define _POSIX_C_SOURCE 200809L
#include "junit.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "report/outfile.h"
#include "report/xml.h"

static void property(FILE *out, const char *name, const char *value) {
  fprintf(out, "      <property name=\"%s\" value=\"", name);
  xml_text(out, value);
  fputs("\"/>\n", out);
}

static void header(FILE *out, const fuzz_junit_run *run, size_t failures, size_t errors, size_t n) {
  char text[64];
  fprintf(out,
          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"sieve fuzz\" "
          "tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" time=\"%.3f\">\n",
          n + 1, failures, errors, run->seconds);
  fprintf(out,
          "  <testsuite name=\"fuzz\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
          "skipped=\"0\" time=\"%.3f\">\n    <properties>\n",
          n + 1, failures, errors, run->seconds);
  snprintf(text, sizeof text, "%" PRIu64, run->seed);
  property(out, "seed", text);
  property(out, "run", run->label);
  property(out, "impl", run->impl);
  property(out, "against", run->against);
  snprintf(text, sizeof text, "%zu", run->rows);
  property(out, "rows", text);
  snprintf(text, sizeof text, "%zu", run->reach);
  property(out, "within_float_reach", text);
  fputs("    </properties>\n", out);
}

/* The testcase of the run as a whole: it fails when any row did. */
static void run_case(FILE *out, const fuzz_junit_run *run, size_t failed) {
  fprintf(out, "    <testcase classname=\"sieve.fuzz\" name=\"fuzz/%s\" time=\"%.3f\"", run->label,
          run->seconds);
  if (!failed) {
    fputs("/>\n", out);
    return;
  }
  fprintf(out,
          ">\n      <failure message=\"%zu of %zu rows failed (%s)\" "
          "type=\"fuzz\">%zu of %zu rows failed; the minimal cases follow as testcases of "
          "their own. The same rows again, with the run's other options: sieve fuzz --impl '",
          failed, run->rows, run->replay, failed, run->rows);
  xml_text(out, run->impl);
  fputs("' --against '", out);
  xml_text(out, run->against);
  fprintf(out, "' %s</failure>\n    </testcase>\n", run->replay);
}

static void failure_case(FILE *out, const fuzz_junit_run *run, const fuzz_junit_case *c) {
  const char *tag = c->error ? "error" : "failure";
  fputs("    <testcase classname=\"sieve.fuzz.", out);
  xml_text(out, c->op);
  fprintf(out, "\" name=\"fuzz/%s-", run->label);
  for (const char *p = c->verdict; *p; p++) /* the id --save gives its case */
    fputc(*p == ' ' ? '-' : *p, out);
  fprintf(out, "\" time=\"0.000\">\n      <%s message=\"", tag);
  xml_text(out, c->why);
  fputs("\" type=\"", out);
  xml_text(out, c->verdict);
  fputs("\">", out);
  fprintf(out, "%zu rows gave it.\n", c->rows);
  xml_lines(out, c->details);
  fprintf(out, "</%s>\n    </testcase>\n", tag);
}

int fuzz_junit_write(const char *path, const fuzz_junit_run *run, const fuzz_junit_case *cases,
                     size_t n, char *why, size_t len) {
  size_t failures = 0, errors = 0, failed = 0;
  for (size_t i = 0; i < n; i++) {
    errors += cases[i].error != 0;
    failed += cases[i].rows;
  }
  failures = n - errors + (failed > 0);
  outfile o;
  FILE *out = outfile_open(&o, path);
  if (!out)
    return snprintf(why, len, "%s: not written: %s", path, strerror(errno)), -1;
  header(out, run, failures, errors, n);
  run_case(out, run, failed);
  for (size_t i = 0; i < n; i++)
    failure_case(out, run, &cases[i]);
  fputs("  </testsuite>\n</testsuites>\n", out);
  if (outfile_commit(&o, !ferror(out)) != 0)
    return snprintf(why, len, "%s: not written: %s", path, strerror(errno)), -1;
  return 0;
}
