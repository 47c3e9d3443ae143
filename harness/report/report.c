/* Renderings of a run report (report.h): the format table, and what the renderers share. */
#include <string.h>

#include "render.h"
#include "run/check.h"
#include "run/suites.h"

/* How many unexpected cases the CI-log summary names before it counts the rest. */
#define SUMMARY_CASES 10

/* Per-suite counts, in the order of sieve_suites; returns how many suites have cases. */
size_t report_by_suite(const run_report *r, suite_counts *out) {
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

const char *report_verdict(const run_report *r) {
  return !sieve_report_failed(r)           ? "ok"
         : r->unexpected || r->now_passing ? "FAILED"
                                           : "FAILED (no case was asked: every one was skipped)";
}

const char *report_listed_pass(const case_result *c) {
  return c->masked ? "listed in the expectation file as a failure, passes now, possibly masked by "
                     "a new departure (the summary names the new failures first): keep it until "
                     "they are understood"
                   : "listed in the expectation file as a failure, but passes: remove it";
}

const char *report_mark(const case_result *c) {
  if (c->outcome == OUTCOME_PASS)
    return c->expected_failure ? report_listed_pass(c) : "";
  if (c->changed)
    return " (listed as a failure, but its answer changed: other kept tokens, tokens or errors "
           "than the expectation file recorded)";
  return c->expected_failure ? " (expected)" : "";
}

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
size_t report_tally_causes(const run_report *r, cause_count *out, size_t *without, size_t *total) {
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

void report_cause_lines(const run_report *r, FILE *out, int markdown) {
  cause_count causes[CAUSES_MAX];
  size_t without, total, n = report_tally_causes(r, causes, &without, &total);
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

void report_axis_value(const fit_axis *x, int axis, char *out, size_t len) {
  if (x->unfit) {
    snprintf(out, len, "no value fits (nearest %s)%s", sieve_axis_value_name(axis, x->nearest),
             x->elsewhere ? ", or another cause" : "");
    return;
  }
  if (x->value >= 0) {
    snprintf(out, len, "%s%s", sieve_axis_value_name(axis, x->value),
             x->from_hello ? " (hello)" : "");
    return;
  }
  size_t at = (size_t)snprintf(out, len, "undetermined (");
  for (int v = 0, k = 0; v < sieve_axis_values(axis) && at < len; v++)
    if (x->candidates >> v & 1)
      at += (size_t)snprintf(out + at, len - at, "%s%s", k++ ? ", " : "",
                             sieve_axis_value_name(axis, v));
  if (at < len && x->alternative[0])
    at += (size_t)snprintf(out + at, len - at, "; or [%s]", x->alternative);
  if (at < len)
    snprintf(out + at, len - at, ")");
}

static void diagnosis_axes(const fit_result *f, FILE *out, int markdown) {
  if (markdown)
    fputs("\n| axis | fitted value | decided by (the first cases) |\n|---|---|---|\n", out);
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++) {
    const fit_axis *x = &f->axes[a];
    char value[160];
    report_axis_value(x, a, value, sizeof value);
    const char *by = x->elsewhere ? "unexplained failures turn on it, and others on no axis (one "
                                    "cause may fail both): "
                     : x->unfit                       ? "unexplained failures turn on it: "
                     : x->n_deciding && x->value >= 0 ? "decided by "
                     : x->split ? "each value fails a case another explains, as these show: "
                     : x->n_deciding                  ? "rule out the other values: "
                     : x->masked[0] ? "the rest of this fit hides it in the cases that separate "
                                      "its values at DeepInfer's other choices: "
                                    : "no case run separates its values";
    const char *cases = x->unfit ? x->unfit_cases : x->n_deciding ? x->deciding : x->masked;
    if (markdown)
      fprintf(out, "| `%s` | %s | %s%s |\n", sieve_axis_name(a), value,
              x->n_deciding && !x->unfit && x->value >= 0 ? "" : by, cases);
    else
      fprintf(out, "  %-20s %-30s %s%s\n", sieve_axis_name(a), value, by, cases);
  }
}

static void diagnosis_residual(const fit_result *f, FILE *out, int markdown) {
  if (f->failures == f->explained)
    return;
  int unfit = 0;
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
    unfit |= f->axes[a].unfit;
  /* "The rule" of a group is the fit with each axis no value fits at its nearest value. */
  const char *against = unfit ? " (the rule: the fit, each axis no value fits at its nearest)" : "";
  if (markdown)
    fprintf(out,
            "\n| failures no known choice explains%s | cases | for example |\n|---|---:|---|\n",
            against);
  else
    fprintf(out, "failures no known choice explains, grouped by what they share%s:\n", against);
  for (size_t g = 0; g < f->n_groups; g++)
    if (markdown)
      fprintf(out, "| %s | %zu | `%s` |\n", f->groups[g].description, f->groups[g].count,
              f->groups[g].cases);
    else
      fprintf(out, "  %4zu  %s (%s)\n", f->groups[g].count, f->groups[g].description,
              f->groups[g].cases);
  if (f->grouped_rest)
    fprintf(out, markdown ? "| others | %zu | |\n" : "  %4zu  others\n", f->grouped_rest);
}

void report_rule_text(const fit_result *f, char *out, size_t len) {
  fit_rule_text(f, out, len);
  const char *sep =
      strcmp(out, "deepinfer") == 0 ? " on every axis the cases determine; open: " : "; open: ";
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++) {
    const fit_axis *x = &f->axes[a];
    if (x->value >= 0 || x->unfit || !x->n_deciding || !(x->candidates & (x->candidates - 1)))
      continue;
    size_t at = strlen(out);
    if (at + 1 >= len)
      return;
    at += (size_t)snprintf(out + at, len - at, "%s%s (", sep, sieve_axis_name(a));
    for (int v = 0, k = 0; v < sieve_axis_values(a) && at < len; v++)
      if (x->candidates >> v & 1)
        at += (size_t)snprintf(out + at, len - at, "%s%s", k++ ? " or " : "",
                               sieve_axis_value_name(a, v));
    if (at < len)
      snprintf(out + at, len - at, ")");
    sep = ", ";
  }
  sep = "; no value fits: ";
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++) {
    size_t at = strlen(out);
    if (f->axes[a].unfit && at + 1 < len) {
      snprintf(out + at, len - at, "%s%s", sep, sieve_axis_name(a));
      sep = ", ";
    }
  }
}

void report_diagnosis_lines(const run_report *r, FILE *out, int markdown) {
  const fit_result *f = &r->fit;
  if (!f->made)
    return;
  char rule[900];
  report_rule_text(f, rule, sizeof rule);
  fprintf(out,
          markdown ? "\n### The rule these answers follow\n\n`%s` gives %zu of the %zu answers "
                     "weighed, and %zu of the %zu failures among them (harness/run/README.md, "
                     "\"The fit\").\n"
                   : "\nthe rule these answers follow: %s\n  it gives %zu of the %zu answers "
                     "weighed, and %zu of the %zu failures among them\n",
          rule, f->agreed, f->considered, f->explained, f->failures);
  if (f->misreadings[0])
    fprintf(out,
            markdown ? "\nWith the misreading%s `%s`, which no engine chooses: a bug of the "
                       "implementation, named by its hint in each case it explains.\n"
                     : "  with the misreading%s [%s], which no engine chooses: a bug of the "
                       "implementation, named in each case it explains\n",
            strchr(f->misreadings, ',') ? "s" : "", f->misreadings);
  if (f->contradicted[0])
    fprintf(out,
            markdown ? "\nBut unexplained failures tell `%s` apart and give another answer: it "
                       "gives some of the answers, not the implementation's rule, which no known "
                       "choice explains.\n"
                     : "  but unexplained failures tell [%s] apart and give another answer: it "
                       "gives some of the answers, not the implementation's rule, which no known "
                       "choice explains\n",
            f->contradicted);
  if (f->passes_otherwise)
    fprintf(out,
            markdown ? "\n%zu passing answer%s not the rule's (%s%s): the implementation "
                       "answers as DeepInfer does where the rule would not, so the rule is not "
                       "all of its behaviour.\n"
                     : "  %zu passing answer%s not the rule's (%s%s): the implementation "
                       "answers as DeepInfer does where the rule would not, so the rule is not "
                       "all of its behaviour\n",
            f->passes_otherwise, f->passes_otherwise == 1 ? " is" : "s are",
            f->passes_otherwise_ids, f->passes_otherwise > FIT_DECIDING ? ", ..." : "");
  diagnosis_axes(f, out, markdown);
  diagnosis_residual(f, out, markdown);
  fputs(markdown ? "\nNearest profiles (every one within an axis of the nearest): "
                 : "nearest profiles (every one within an axis of the nearest): ",
        out);
  for (size_t i = 0; i < f->n_nearest; i++) {
    const fit_nearest *n = &f->nearest[i];
    fprintf(out, "%s%s%s%s (%d ax%s apart", i ? "; " : "", markdown ? "`" : "", n->name,
            markdown ? "`" : "", n->distance, n->distance == 1 ? "is" : "es");
    for (int a = 0, k = 0; a < SIEVE_AXIS_COUNT; a++)
      if (n->differs >> a & 1)
        fprintf(out, "%s%s=%s", k++ ? ", " : ": ", sieve_axis_name(a),
                sieve_axis_value_name(a, sieve_rule_get(&n->rule, a)));
    for (int a = 0, k = 0; a < SIEVE_AXIS_COUNT; a++)
      if (n->unconfirmed >> a & 1)
        fprintf(out, "%s%s", k++ ? ", " : "; unconfirmed in the profile: ", sieve_axis_name(a));
    fputs(")", out);
  }
  fputs("\n", out);
}

void report_verdict_line(const run_report *r, FILE *out) {
  fprintf(out,
          "sieve run %s: %zu passed, %zu failed, %zu skipped, %zu errors, %zu crashed; "
          "%zu unexpected (precision %s)\n",
          report_verdict(r), r->counts[OUTCOME_PASS], r->counts[OUTCOME_FAIL],
          r->counts[OUTCOME_SKIP], r->counts[OUTCOME_ERROR], r->counts[OUTCOME_CRASH],
          r->unexpected + r->now_passing, sieve_precision_name(r->precision));
}

void sieve_report_summary(const run_report *r, FILE *out) {
  size_t shown = 0, total = r->unexpected + r->now_passing;
  /* New and changed failures first: a listed case that passes may be hidden by one of them. */
  for (int passes = 0; passes < 2; passes++)
    for (size_t i = 0; i < r->n_cases && shown < SUMMARY_CASES; i++) {
      const case_result *c = &r->cases[i];
      if (!sieve_case_unexpected(c) || (c->outcome == OUTCOME_PASS) != passes)
        continue;
      fprintf(out, "unexpected %s %s: %s%s\n", outcome_name(c->outcome), c->id, c->detail,
              report_mark(c));
      shown++;
    }
  if (total > shown)
    fprintf(out, "... and %zu more unexpected (the full list is in the report)\n", total - shown);
  report_verdict_line(r, out);
}

#define REPORT__NAME(name) #name,
#define REPORT__RENDERER(name) report_##name,
const char *const sieve_report_formats[] = {SIEVE_REPORT_FORMATS(REPORT__NAME) NULL};
static void (*const renderers[])(const run_report *, FILE *, const report_pictures *) = {
    SIEVE_REPORT_FORMATS(REPORT__RENDERER)};

static int format_index(const char *format) {
  for (int i = 0; sieve_report_formats[i]; i++)
    if (strcmp(format, sieve_report_formats[i]) == 0)
      return i;
  return -1;
}

int sieve_report_format_known(const char *format) { return format_index(format) >= 0; }

int sieve_report_render(const run_report *report, const char *format, FILE *out,
                        const report_pictures *pictures) {
  int i = format_index(format);
  if (i < 0)
    return -1;
  renderers[i](report, out, pictures);
  return 0;
}
