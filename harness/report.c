/* Renderings of a run report; see report.h. */
#include "report.h"

#include <string.h>

#include "check.h"
#include "jbuf.h"
#include "suites.h"

/* How many unexpected cases the CI-log summary names before it counts the rest. */
#define SUMMARY_CASES 10

typedef struct suite_counts {
  const char *suite;
  size_t counts[OUTCOME_COUNT];
} suite_counts;

/* Per-suite counts, in the order of sieve_suites; returns how many suites have cases. */
static size_t by_suite(const run_report *r, suite_counts *out) {
  size_t n = 0;
  for (size_t s = 0; sieve_suites[s]; s++) {
    suite_counts c = {sieve_suites[s], {0}};
    size_t total = 0;
    for (size_t i = 0; i < r->n_cases; i++)
      if (strcmp(r->cases[i].suite, sieve_suites[s]) == 0) {
        c.counts[r->cases[i].outcome]++;
        total++;
      }
    if (total)
      out[n++] = c;
  }
  return n;
}

static const char *verdict(const run_report *r) {
  return !sieve_report_failed(r)           ? "ok"
         : r->unexpected || r->now_passing ? "FAILED"
                                           : "FAILED (no case was asked: every one was skipped)";
}

static const char *mark(const case_result *c) {
  if (c->outcome == OUTCOME_PASS)
    return c->expected_failure ? "listed in the expectation file as a failure, but passes: "
                                 "remove it"
                               : "";
  return c->expected_failure ? " (expected)" : "";
}

/* ----------------------------------------------------------------------------- causes */

#define CAUSES_MAX 64

typedef struct cause_count {
  char name[48];
  size_t n;         /* failed cases whose answer is this reading's */
  size_t ruled_out; /* passing cases that this reading would fail */
} cause_count;

static int failed(const case_result *c) {
  return c->outcome == OUTCOME_FAIL || c->outcome == OUTCOME_ERROR;
}

/* The entry of a name, added when `add`; NULL when it is not there or there is no room. */
static cause_count *cause_of(cause_count *out, size_t *n, const char *name, size_t len, int add) {
  for (size_t i = 0; i < *n; i++)
    if (strlen(out[i].name) == len && strncmp(out[i].name, name, len) == 0)
      return &out[i];
  if (!add || *n == CAUSES_MAX || len >= sizeof out[0].name)
    return NULL;
  out[*n] = (cause_count){.n = 0};
  snprintf(out[*n].name, sizeof out[0].name, "%.*s", (int)len, name);
  return &out[(*n)++];
}

/* Calls count on each name of a comma-separated list. */
static void each_name(const char *list, cause_count *out, size_t *n, int failed_case) {
  for (size_t len; *list; list += len + (list[len] == ',')) {
    len = strcspn(list, ",");
    cause_count *c = cause_of(out, n, list, len, failed_case);
    if (c && failed_case)
      c->n++;
    else if (c)
      c->ruled_out++;
  }
}

/* A reading no passing case rules out comes first; then the one more failures give. */
static int more_likely(const cause_count *a, const cause_count *b) {
  if ((a->ruled_out == 0) != (b->ruled_out == 0))
    return a->ruled_out == 0;
  return a->n > b->n || (a->n == b->n && a->ruled_out < b->ruled_out);
}

/* How many failed fixture cases give each reading's answer, and how many passing cases rule it
 * out, most likely first (more_likely); returns how many readings, with the failed cases in *total.
 */
static size_t tally_causes(const run_report *r, cause_count *out, size_t *without, size_t *total) {
  size_t n = 0;
  *without = *total = 0;
  for (size_t i = 0; i < r->n_cases; i++)
    if (failed(&r->cases[i])) {
      ++*total;
      *without += !r->cases[i].causes[0];
      each_name(r->cases[i].causes, out, &n, 1);
    }
  for (size_t i = 0; i < r->n_cases; i++)
    if (r->cases[i].outcome == OUTCOME_PASS)
      each_name(r->cases[i].ruled_out, out, &n, 0);
  for (size_t i = 1; i < n; i++) /* insertion sort, stable */
    for (size_t j = i; j > 0 && more_likely(&out[j], &out[j - 1]); j--) {
      cause_count t = out[j];
      out[j] = out[j - 1];
      out[j - 1] = t;
    }
  return n;
}

static void cause_lines(const run_report *r, FILE *out, int markdown) {
  cause_count causes[CAUSES_MAX];
  size_t without, total, n = tally_causes(r, causes, &without, &total);
  if (n == 0 || total == 0)
    return;
  fprintf(out, markdown ? "\n| same answer as | failed cases | passing cases that rule it out |"
                          "\n|---|---:|---:|\n"
                        : "\nfailed cases whose answer a known reading gives, and passing cases "
                          "that rule it out (fixtures/README.md, \"Readings\"):\n");
  for (size_t i = 0; i < n; i++)
    fprintf(out,
            markdown ? "| `%s` | %zu of %zu | %zu |\n"
                     : "  %-28s %3zu of %zu failed, %zu "
                       "passing rule it out\n",
            causes[i].name, causes[i].n, total, causes[i].ruled_out);
  if (markdown)
    fprintf(out, "| no known reading | %zu of %zu | |\n", without, total);
  else
    fprintf(out, "  %-28s %3zu of %zu failed\n", "no known reading", without, total);
}

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
        fprintf(out, "      same for %s%s\n", c->id, mark(c));
      continue;
    }
    if (same > 3)
      fprintf(out, "      ... and %zu more with the same result\n", same - 3);
    same = 0;
    last = c;
    if (c)
      fprintf(out, "%-5s %s: %s%s\n", outcome_name(c->outcome), c->id, c->detail, mark(c));
  }
}

static void verdict_line(const run_report *r, FILE *out) {
  fprintf(out,
          "sieve run %s: %zu passed, %zu failed, %zu skipped, %zu errors, %zu crashed; "
          "%zu unexpected (precision %s)\n",
          verdict(r), r->counts[OUTCOME_PASS], r->counts[OUTCOME_FAIL], r->counts[OUTCOME_SKIP],
          r->counts[OUTCOME_ERROR], r->counts[OUTCOME_CRASH], r->unexpected + r->now_passing,
          sieve_precision_name(r->precision));
}

void sieve_report_summary(const run_report *r, FILE *out) {
  size_t shown = 0, total = r->unexpected + r->now_passing;
  for (size_t i = 0; i < r->n_cases && shown < SUMMARY_CASES; i++) {
    const case_result *c = &r->cases[i];
    if (!sieve_case_unexpected(c))
      continue;
    fprintf(out, "unexpected %s %s: %s%s\n", outcome_name(c->outcome), c->id, c->detail, mark(c));
    shown++;
  }
  if (total > shown)
    fprintf(out, "... and %zu more unexpected (the full list is in the report)\n", total - shown);
  verdict_line(r, out);
}

static void render_text(const run_report *r, FILE *out) {
  fprintf(out, "sieve run: %s (%s %s) against %s fixtures at precision %s (%s)\n", r->options->impl,
          r->impl_name, r->impl_version, r->fixtures_schema, sieve_precision_name(r->precision),
          r->precision_source);
  problem_lines(r, out);
  cause_lines(r, out, 0);
  suite_counts suites[SUITES_MAX];
  size_t n = by_suite(r, suites);
  fprintf(out, "\n%-24s %6s %6s %6s %6s %6s\n", "suite", "pass", "fail", "skip", "error", "crash");
  for (size_t s = 0; s < n; s++)
    fprintf(out, "%-24s %6zu %6zu %6zu %6zu %6zu\n", suites[s].suite, suites[s].counts[0],
            suites[s].counts[1], suites[s].counts[2], suites[s].counts[3], suites[s].counts[4]);
  skip_reasons(r, out);
  if (*r->note)
    fprintf(out, "note: %s\n", r->note);
  verdict_line(r, out);
}

static void md_cell(FILE *out, const char *text) {
  for (const char *p = text; *p; p++)
    fputs(*p == '|' ? "\\|" : *p == '\n' ? " " : (char[2]){*p, 0}, out);
}

static void render_markdown(const run_report *r, FILE *out) {
  fprintf(out,
          "## sieve run: %s\n\n`%s` (%s %s) against `%s` fixtures at precision %s (%s): "
          "**%zu passed**, %zu failed, %zu skipped, %zu errors, %zu crashed; **%zu "
          "unexpected**%s.\n\n",
          verdict(r), r->options->impl, r->impl_name, r->impl_version, r->fixtures_schema,
          sieve_precision_name(r->precision), r->precision_source, r->counts[0], r->counts[1],
          r->counts[2], r->counts[3], r->counts[4], r->unexpected + r->now_passing,
          r->unexpected + r->now_passing ? " (the cases marked so below fail the run)" : "");
  suite_counts suites[SUITES_MAX];
  size_t n = by_suite(r, suites);
  fputs("| suite | pass | fail | skip | error | crash |\n|---|---:|---:|---:|---:|---:|\n", out);
  for (size_t s = 0; s < n; s++)
    fprintf(out, "| %s | %zu | %zu | %zu | %zu | %zu |\n", suites[s].suite, suites[s].counts[0],
            suites[s].counts[1], suites[s].counts[2], suites[s].counts[3], suites[s].counts[4]);
  cause_lines(r, out, 1);
  int header = 0;
  for (size_t i = 0; i < r->n_cases; i++) {
    const case_result *c = &r->cases[i];
    if ((c->outcome == OUTCOME_PASS && !c->expected_failure) || c->outcome == OUTCOME_SKIP)
      continue;
    if (!header++)
      fputs("\n| outcome | case | what differs |\n|---|---|---|\n", out);
    const char *listed = !c->expected_failure         ? ""
                         : c->outcome == OUTCOME_PASS ? " (listed as a failure)"
                                                      : " (expected)";
    fprintf(out, "| %s%s%s | `%s` | ", sieve_case_unexpected(c) ? "**unexpected** " : "",
            outcome_name(c->outcome), listed, c->id);
    md_cell(out, c->outcome == OUTCOME_PASS ? "listed in the expectation file, but passes: "
                                              "remove it"
                                            : c->detail);
    if (c->expected_note[0]) {
      fputs("; expected: ", out);
      md_cell(out, c->expected_note);
    }
    fputs(" |\n", out);
  }
  if (*r->note)
    fprintf(out, "\n> %s\n", r->note);
}

/* A comma-separated list of reading names as a JSON array. */
static void json_causes(jbuf *b, const char *list) {
  jbuf_char(b, '[');
  for (size_t len, k = 0; *list; list += len + (list[len] == ','), k++) {
    char name[48];
    len = strcspn(list, ",");
    snprintf(name, sizeof name, "%.*s", (int)len, list);
    if (k)
      jbuf_char(b, ',');
    jbuf_str(b, name);
  }
  jbuf_char(b, ']');
}

static void render_json(const run_report *r, FILE *out) {
  jbuf b = {0};
  jbuf_raw(&b, "{\"sieve_report\":1");
  jbuf_key(&b, "impl", 1);
  jbuf_str(&b, r->options->impl);
  jbuf_key(&b, "name", 1);
  jbuf_str(&b, r->impl_name);
  jbuf_key(&b, "version", 1);
  jbuf_str(&b, r->impl_version);
  jbuf_key(&b, "fixtures_schema", 1);
  jbuf_str(&b, r->fixtures_schema);
  jbuf_key(&b, "precision", 1);
  jbuf_str(&b, sieve_precision_name(r->precision));
  jbuf_key(&b, "precision_source", 1);
  jbuf_str(&b, r->precision_source);
  jbuf_raw(&b, ",\"cases\":[\n");
  for (size_t i = 0; i < r->n_cases; i++) {
    const case_result *c = &r->cases[i];
    jbuf_raw(&b, i ? ",\n{" : "{");
    jbuf_key(&b, "id", 0);
    jbuf_str(&b, c->id);
    jbuf_key(&b, "suite", 1);
    jbuf_str(&b, c->suite);
    jbuf_key(&b, "seed_ref", 1);
    jbuf_str(&b, c->seed_ref);
    jbuf_key(&b, "outcome", 1);
    jbuf_str(&b, outcome_name(c->outcome));
    jbuf_key(&b, "expected_failure", 1);
    jbuf_raw(&b, c->expected_failure ? "true" : "false");
    if (c->expected_note[0]) {
      jbuf_key(&b, "expected_note", 1);
      jbuf_str(&b, c->expected_note);
    }
    jbuf_key(&b, "detail", 1);
    jbuf_str(&b, c->detail);
    jbuf_key(&b, "causes", 1);
    json_causes(&b, c->causes);
    jbuf_char(&b, '}');
  }
  jbuf_raw(&b, "],\n\"summary\":{");
  for (int o = 0; o < OUTCOME_COUNT; o++) {
    jbuf_key(&b, outcome_name((outcome)o), o > 0);
    jbuf_int(&b, (int64_t)r->counts[o]);
  }
  jbuf_key(&b, "unexpected", 1);
  jbuf_int(&b, (int64_t)(r->unexpected + r->now_passing));
  cause_count causes[CAUSES_MAX];
  size_t without, total, n = tally_causes(r, causes, &without, &total);
  jbuf_key(&b, "causes", 1);
  jbuf_char(&b, '{');
  for (size_t i = 0; i < n; i++) {
    jbuf_key(&b, causes[i].name, i > 0);
    jbuf_raw(&b, "{\"failed\":");
    jbuf_int(&b, (int64_t)causes[i].n);
    jbuf_key(&b, "ruled_out", 1);
    jbuf_int(&b, (int64_t)causes[i].ruled_out);
    jbuf_char(&b, '}');
  }
  jbuf_char(&b, '}');
  jbuf_key(&b, "failed_without_cause", 1);
  jbuf_int(&b, (int64_t)without);
  jbuf_raw(&b, "}}\n");
  fputs(b.data ? b.data : "", out);
  jbuf_free(&b);
}

static void xml_text(FILE *out, const char *text) {
  for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
    if (*p == '<')
      fputs("&lt;", out);
    else if (*p == '>')
      fputs("&gt;", out);
    else if (*p == '&')
      fputs("&amp;", out);
    else if (*p == '"')
      fputs("&quot;", out);
    else if (*p < 0x20 && *p != '\t')
      fputc(' ', out);
    else
      fputc(*p, out);
  }
}

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
    snprintf(message, sizeof message,
             "listed as an expected failure (%s) but passes: remove it "
             "from the expectation file",
             c->expected_note);
  else if (c->expected_failure)
    snprintf(message, sizeof message, "expected failure: %s; %s: %s", c->expected_note,
             outcome_name(c->outcome), c->detail);
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

static void render_junit(const run_report *r, FILE *out) {
  suite_counts suites[SUITES_MAX];
  size_t n = by_suite(r, suites);
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
            "      <property name=\"precision_source\" value=\"%s\"/>\n    </properties>\n",
            sieve_precision_name(r->precision), r->precision_source);
    for (size_t i = 0; i < r->n_cases; i++)
      if (strcmp(r->cases[i].suite, suites[s].suite) == 0)
        junit_case(out, &r->cases[i]);
    fputs("  </testsuite>\n", out);
  }
  fputs("</testsuites>\n", out);
}

static void render_tap(const run_report *r, FILE *out) {
  fprintf(out, "TAP version 13\n1..%zu\n# precision %s (%s)\n", r->n_cases,
          sieve_precision_name(r->precision), r->precision_source);
  for (size_t i = 0; i < r->n_cases; i++) {
    const case_result *c = &r->cases[i];
    int ok = c->outcome == OUTCOME_PASS || c->outcome == OUTCOME_SKIP;
    fprintf(out, "%s %zu - %s", ok ? "ok" : "not ok", i + 1, c->id);
    if (c->outcome == OUTCOME_SKIP)
      fprintf(out, " # SKIP %s", c->detail);
    else if (!ok && c->expected_failure)
      fprintf(out, " # TODO expected failure: %s", c->detail);
    else if (!ok)
      fprintf(out, " # %s: %s", outcome_name(c->outcome), c->detail);
    fputc('\n', out);
  }
}

static const struct {
  const char *name;
  void (*render)(const run_report *, FILE *);
} formats[] = {{"text", render_text},
               {"json", render_json},
               {"markdown", render_markdown},
               {"junit", render_junit},
               {"tap", render_tap}};

int sieve_report_format_known(const char *format) {
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
    if (strcmp(format, formats[i].name) == 0)
      return 1;
  return 0;
}

int sieve_report_render(const run_report *report, const char *format, FILE *out) {
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
    if (strcmp(format, formats[i].name) == 0) {
      formats[i].render(report, out);
      return 0;
    }
  return -1;
}
