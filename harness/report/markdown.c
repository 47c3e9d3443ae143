/* The markdown report, for a CI job summary: the verdict, the suites, the readings, the cases
 * that did not pass. */
#include <string.h>

#include "render.h"
#include "run/check.h"

static void md_cell(FILE *out, const char *text) {
  for (const char *p = text; *p; p++)
    fputs(*p == '|' ? "\\|" : *p == '\n' ? " " : (char[2]){*p, 0}, out);
}

void report_markdown(const run_report *r, FILE *out, const report_pictures *pictures) {
  (void)pictures;
  fprintf(out,
          "## sieve run: %s\n\n`%s` (%s %s) against `%s` fixtures at precision %s (%s): "
          "**%zu passed**, %zu failed, %zu skipped, %zu errors, %zu crashed; **%zu "
          "unexpected**%s.\n\n",
          report_verdict(r), r->options->impl_arg, r->impl_name, r->impl_version,
          r->fixtures_schema, sieve_precision_name(r->precision), r->precision_source, r->counts[0],
          r->counts[1], r->counts[2], r->counts[3], r->counts[4], r->unexpected + r->now_passing,
          r->unexpected + r->now_passing ? " (the cases marked so below fail the run)" : "");
  if (r->options->alone_only)
    fprintf(out, "_%s._\n\n", REPORT_ALONE_ONLY);
  suite_counts suites[SUITES_MAX];
  size_t n = report_by_suite(r, suites);
  fputs("| suite | pass | fail | skip | error | crash |\n|---|---:|---:|---:|---:|---:|\n", out);
  for (size_t s = 0; s < n; s++)
    fprintf(out, "| %s | %zu | %zu | %zu | %zu | %zu |\n", suites[s].suite, suites[s].counts[0],
            suites[s].counts[1], suites[s].counts[2], suites[s].counts[3], suites[s].counts[4]);
  report_diagnosis_lines(r, out, 1);
  report_cause_lines(r, out, 1);
  int header = 0;
  for (size_t i = 0; i < r->n_cases; i++) {
    const case_result *c = &r->cases[i];
    if ((c->outcome == OUTCOME_PASS && !c->expected_failure) || c->outcome == OUTCOME_SKIP)
      continue;
    if (!header++)
      fputs("\n| outcome | case | what differs |\n|---|---|---|\n", out);
    const char *listed = !c->expected_failure         ? ""
                         : c->outcome == OUTCOME_PASS ? " (listed as a failure)"
                         : c->changed                 ? " (listed, but changed)"
                                                      : " (expected)";
    fprintf(out, "| %s%s%s | `%s` | ", sieve_case_unexpected(c) ? "**unexpected** " : "",
            outcome_name(c->outcome), listed, c->id);
    md_cell(out, c->outcome == OUTCOME_PASS ? report_listed_pass(c) : c->detail);
    if (c->changed)
      md_cell(out, report_mark(c));
    if (c->expected_note[0]) {
      fputs("; expected: ", out);
      md_cell(out, c->expected_note);
    }
    fputs(" |\n", out);
  }
  if (*r->note)
    fprintf(out, "\n> %s\n", r->note);
}
