/*
 * What the renderers of a run report share (report.c), and the renderers, one per format:
 * text.c, markdown.c, json.c, junit.c, tap.c, html.c. Internal to report/.
 */
#ifndef SIEVE_REPORT_RENDER_H
#define SIEVE_REPORT_RENDER_H

#include <stdio.h>

#include "report.h"
#include "run/suites.h"

typedef struct suite_counts {
  const char *suite;
  size_t counts[OUTCOME_COUNT];
} suite_counts;

/* What a report says of a run with --no-batches. */
#define REPORT_ALONE_ONLY                                                                          \
  "each case was sent alone only (--no-batches): answers that change in a batch were not looked "  \
  "for"

/* Per-suite counts, in the order of sieve_suites; returns how many suites have cases. */
size_t report_by_suite(const run_report *r, suite_counts *out);

/* "ok", "FAILED", or why a run that failed nothing failed. */
const char *report_verdict(const run_report *r);

/* What a case's line adds when the expectation file lists it. */
const char *report_mark(const case_result *c);
/* What is said of a listed case that passes: remove it, or, while new failures may hide it, not. */
const char *report_listed_pass(const case_result *c);

#define CAUSES_MAX 64

typedef struct cause_count {
  char name[48];
  size_t n;         /* failed cases whose answer is this reading's */
  size_t ruled_out; /* passing cases that this reading would fail */
} cause_count;

/* How many failed fixture cases give each reading's answer, and how many passing cases rule it
 * out, most likely first; returns how many readings, with the failed cases in *total and those
 * no reading explains in *without. */
size_t report_tally_causes(const run_report *r, cause_count *out, size_t *without, size_t *total);

/* The table of readings against the failed cases, as text or markdown. */
void report_cause_lines(const run_report *r, FILE *out, int markdown);

/* The fitted rule for people: fit_rule_text, then the axes some case decides that the run leaves
 * open between values, "deepinfer on every axis the cases determine; open: boundary (gt or ge)".
 * (JUnit's diagnosis.rule property keeps fit_rule_text alone: sieve fuzz --against reads it.) */
void report_rule_text(const fit_result *f, char *out, size_t len);

/* The fit (run/fit.h) as text or markdown: the rule axis by axis, what it explains, the
 * residual groups and the nearest profiles. */
void report_diagnosis_lines(const run_report *r, FILE *out, int markdown);

/* The fit as the JSON object "diagnosis" (harness/run/README.md, "The fit", documents each
 * member). */
struct jbuf;
void report_diagnosis_json(struct jbuf *b, const fit_result *f);

/* An axis's fitted value for a person: the value, "undetermined (a, b)", or "(set by hello)". */
void report_axis_value(const fit_axis *x, int axis, char *out, size_t len);

/* The closing line: the verdict and the counts. */
void report_verdict_line(const run_report *r, FILE *out);

/* The renderers of SIEVE_REPORT_FORMATS (report.h). */
#define REPORT__DECLARE(name)                                                                      \
  void report_##name(const run_report *r, FILE *out, const report_pictures *pictures);
SIEVE_REPORT_FORMATS(REPORT__DECLARE)
#undef REPORT__DECLARE

#endif /* SIEVE_REPORT_RENDER_H */
