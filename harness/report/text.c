/* The text report: the cases that did not pass, the readings table, the suites, the verdict. */
#include <string.h>

#include "render.h"
#include "run/check.h"

/* Each distinct skip reason once, with how many cases it covers. */
static void skip_reasons(const run_report *r, FILE *out) {
  for (size_t i = 0; i < r->n_cases; i++) {
    const case_result *c = &r->cases[i];
    size_t first = 0, n = 0;
    while (first < i && !(r->cases[first].outcome == OUTCOME_SKIP &&
                          strcmp(r->cases[first].detail, c->detail) == 0))
      first++;
    if (c->outcome != OUTCOME_SKIP || first < i)
      continue;
    for (size_t j = i; j < r->n_cases; j++)
      n += r->cases[j].outcome == OUTCOME_SKIP && strcmp(r->cases[j].detail, c->detail) == 0;
    fprintf(out, "skipped %zu case%s: %s\n", n, n == 1 ? "" : "s", c->detail);
  }
}

/* Non-passing cases, one line each; a run of cases with the same result is folded. */
static void problem_lines(const run_report *r, FILE *out) {
  const case_result *last = NULL;
  size_t same = 0;
  for (size_t i = 0; i <= r->n_cases; i++) {
    const case_result *c = i < r->n_cases ? &r->cases[i] : NULL;
    if (c && ((c->outcome == OUTCOME_PASS && !c->expected_failure) || c->outcome == OUTCOME_SKIP))
      continue;
    if (c && last && last->outcome == c->outcome && strcmp(last->detail, c->detail) == 0) {
      if (same++ < 3)
        fprintf(out, "      same for %s%s%s\n", c->id, c->outcome == OUTCOME_PASS ? ": " : "",
                report_mark(c));
      continue;
    }
    if (same > 3)
      fprintf(out, "      ... and %zu more with the same result\n", same - 3);
    same = 0;
    last = c;
    if (c)
      fprintf(out, "%-5s %s: %s%s\n", outcome_name(c->outcome), c->id, c->detail, report_mark(c));
  }
}

void report_text(const run_report *r, FILE *out, const report_pictures *pictures) {
  (void)pictures;
  fprintf(out, "sieve run: %s (%s %s) against %s fixtures at precision %s (%s)\n",
          r->options->impl_arg, r->impl_name, r->impl_version, r->fixtures_schema,
          sieve_precision_name(r->precision), r->precision_source);
  if (r->options->alone_only)
    fprintf(out, "%s\n", REPORT_ALONE_ONLY);
  problem_lines(r, out);
  report_diagnosis_lines(r, out, 0);
  report_cause_lines(r, out, 0);
  suite_counts suites[SUITES_MAX];
  size_t n = report_by_suite(r, suites);
  fprintf(out, "\n%-24s %6s %6s %6s %6s %6s\n", "suite", "pass", "fail", "skip", "error", "crash");
  for (size_t s = 0; s < n; s++)
    fprintf(out, "%-24s %6zu %6zu %6zu %6zu %6zu\n", suites[s].suite, suites[s].counts[0],
            suites[s].counts[1], suites[s].counts[2], suites[s].counts[3], suites[s].counts[4]);
  skip_reasons(r, out);
  if (*r->note)
    fprintf(out, "note: %s\n", r->note);
  report_verdict_line(r, out);
}
