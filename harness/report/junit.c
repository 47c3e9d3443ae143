/* The JUnit report, as Jenkins and GitLab read it (Jenkins' junit-4.xsd). */
#include <string.h>

#include "render.h"
#include "run/check.h"
#include "xml.h"

/* A testcase as CI systems read JUnit (Jenkins, GitLab): a failure the expectation file lists
 * is skipped with its reason as the element's text (Jenkins' junit-4.xsd gives <skipped> no
 * attributes); one it does not list is a <failure> (fail, or a listed case that passed) or an
 * <error> (error, crash) with the detail as message and body. */
static void junit_case(FILE *out, const case_result *c) {
  int bad = sieve_case_unexpected(c), failed = c->outcome != OUTCOME_PASS;
  const char *tag = bad && (c->outcome == OUTCOME_ERROR || c->outcome == OUTCOME_CRASH) ? "error"
                    : bad                                                               ? "failure"
                    : c->outcome == OUTCOME_SKIP || failed                              ? "skipped"
                                                                                        : NULL;
  fputs("    <testcase classname=\"sieve.", out);
  xml_text(out, c->suite);
  fputs("\" name=\"", out);
  xml_text(out, c->id);
  fprintf(out, "\" time=\"%.3f\"", c->seconds);
  if (!tag) {
    fputs("/>\n", out);
    return;
  }
  char message[1200];
  if (!failed)
    snprintf(message, sizeof message, "%s (%s)", report_listed_pass(c), c->expected_note);
  else if (c->expected_failure)
    snprintf(message, sizeof message, "expected failure: %s; %s: %s%s", c->expected_note,
             outcome_name(c->outcome), c->detail, c->changed ? report_mark(c) : "");
  else
    snprintf(message, sizeof message, "%s", c->detail);
  if (strcmp(tag, "skipped") == 0) {
    fputs(">\n      <skipped>", out);
  } else {
    fprintf(out, ">\n      <%s message=\"", tag);
    xml_text(out, message);
    fprintf(out, "\" type=\"%s\">", failed ? outcome_name(c->outcome) : "stale-expectation");
  }
  xml_text(out, message);
  fprintf(out, "</%s>\n    </testcase>\n", tag);
}

/* A suite's counts as its testcases show them. */
typedef struct junit_counts {
  size_t tests, failures, errors, skipped;
  double seconds;
} junit_counts;

static junit_counts junit_count(const run_report *r, const char *suite) {
  junit_counts k = {0};
  for (size_t i = 0; i < r->n_cases; i++) {
    const case_result *c = &r->cases[i];
    if (suite && strcmp(c->suite, suite) != 0)
      continue;
    int bad = sieve_case_unexpected(c);
    k.tests++;
    k.seconds += c->seconds;
    k.errors += bad && (c->outcome == OUTCOME_ERROR || c->outcome == OUTCOME_CRASH);
    k.failures += bad && c->outcome != OUTCOME_ERROR && c->outcome != OUTCOME_CRASH;
    k.skipped += !bad && c->outcome != OUTCOME_PASS;
  }
  return k;
}

static void junit_property(FILE *out, const char *name, const char *value) {
  fprintf(out, "      <property name=\"%s\" value=\"", name);
  xml_text(out, value);
  fputs("\"/>\n", out);
}

/* The fit as properties: the rule, its misreadings, what it explains, the nearest profiles. */
static void junit_diagnosis(FILE *out, const fit_result *f) {
  char text[600];
  if (!f->made)
    return;
  fit_rule_text(f, text, sizeof text);
  junit_property(out, "diagnosis.rule", text);
  junit_property(out, "diagnosis.misreadings", f->misreadings);
  if (f->contradicted[0])
    junit_property(out, "diagnosis.misreadings_contradicted", f->contradicted);
  snprintf(text, sizeof text, "%zu of %zu failures", f->explained, f->failures);
  junit_property(out, "diagnosis.explained", text);
  if (f->passes_otherwise) {
    snprintf(text, sizeof text, "%zu: %s", f->passes_otherwise, f->passes_otherwise_ids);
    junit_property(out, "diagnosis.passes_otherwise", text);
  }
  for (size_t g = 0; g < f->n_groups; g++) {
    snprintf(text, sizeof text, "%zu: %s", f->groups[g].count, f->groups[g].description);
    junit_property(out, "diagnosis.unexplained", text);
  }
  for (size_t i = 0; i < f->n_nearest; i++) {
    snprintf(text, sizeof text, "%s (%d axes apart)", f->nearest[i].name, f->nearest[i].distance);
    junit_property(out, "diagnosis.nearest_profile", text);
  }
}

void report_junit(const run_report *r, FILE *out, const report_pictures *pictures) {
  (void)pictures;
  suite_counts suites[SUITES_MAX];
  size_t n = report_by_suite(r, suites);
  junit_counts all = junit_count(r, NULL);
  fprintf(out,
          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"sieve\" "
          "tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" time=\"%.3f\">\n",
          all.tests, all.failures, all.errors, all.seconds);
  for (size_t s = 0; s < n; s++) {
    junit_counts k = junit_count(r, suites[s].suite);
    fprintf(out,
            "  <testsuite name=\"%s\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" "
            "skipped=\"%zu\" time=\"%.3f\">\n",
            suites[s].suite, k.tests, k.failures, k.errors, k.skipped, k.seconds);
    fprintf(out,
            "    <properties>\n      <property name=\"precision\" value=\"%s\"/>\n"
            "      <property name=\"precision_source\" value=\"%s\"/>\n"
            "      <property name=\"batches\" value=\"%s\"/>\n",
            sieve_precision_name(r->precision), r->precision_source,
            r->options->alone_only ? "false" : "true");
    junit_diagnosis(out, &r->fit);
    fputs("    </properties>\n", out);
    for (size_t i = 0; i < r->n_cases; i++)
      if (strcmp(r->cases[i].suite, suites[s].suite) == 0)
        junit_case(out, &r->cases[i]);
    fputs("  </testsuite>\n", out);
  }
  fputs("</testsuites>\n", out);
}
