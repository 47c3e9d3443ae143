/* The HTML report: one self-contained page (no network, no other file) that a person opens to
 * see a run, and a CI job keeps as its artifact. It holds the verdict, the implementation and the
 * precision, the suites, and the rule the fit found. Then come the cases that did not pass,
 * grouped by cause, each with its detail, a picture of its row (report_pictures: the rule's kept
 * set beside the answer's), and its request and answer to unfold. */
#define _GNU_SOURCE /* open_memstream */
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "run/check.h"
#include "xml.h"

#define PICTURES_PER_GROUP 4 /* the cases of a cause drawn; the others name the command */
#define TEXT_SHOWN 6000      /* of a request or an answer; a long row's is cut there */

static const char style[] =
    "body{font-family:DejaVu Sans,Verdana,sans-serif;font-size:14px;color:#1a202c;"
    "max-width:1240px;margin:0 auto;padding:0 12px}"
    "h1{font-size:22px}h1 .ok{color:#2f855a}h1 .failed{color:#c53030}"
    "table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #cbd5e0;padding:3px 8px;"
    "text-align:right}td:first-child,th:first-child{text-align:left}"
    "pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f7fafc;padding:8px;"
    "font-size:12px}"
    ".picture svg{max-width:100%;height:auto;display:block}"
    "article{border-top:1px solid #e2e8f0;padding:6px 0}"
    ".detail{overflow-wrap:anywhere}.unexpected{color:#c53030;font-weight:bold}"
    "summary{cursor:pointer;color:#2b6cb0}";

static void html(FILE *out, const char *text) { xml_lines(out, text); }

/* What `emit` writes to a stream, escaped into the page inside <pre>. */
static void pre_of(FILE *out, const run_report *r, int markdown,
                   void (*emit)(const run_report *, FILE *, int)) {
  char *text = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&text, &len);
  if (!mem)
    return;
  emit(r, mem, markdown);
  fclose(mem);
  if (text && *text) {
    fputs("<pre>", out);
    html(out, text);
    fputs("</pre>\n", out);
  }
  free(text);
}

static void verdict(const run_report *r, FILE *out) {
  const char *v = report_verdict(r);
  fprintf(out, "<h1>sieve run: <span class=\"%s\">", strcmp(v, "ok") == 0 ? "ok" : "failed");
  html(out, v);
  fputs("</span></h1>\n<table id=\"about\">\n<tr><td>implementation</td><td>", out);
  html(out, r->options->impl_arg);
  fputs("</td></tr>\n<tr><td>it says</td><td>", out);
  html(out, r->impl_name);
  fputc(' ', out);
  html(out, r->impl_version);
  fprintf(out,
          "</td></tr>\n<tr><td>precision</td><td>%s (%s)</td></tr>\n"
          "<tr><td>fixtures</td><td>%s</td></tr>\n</table>\n",
          sieve_precision_name(r->precision), r->precision_source, r->fixtures_schema);
  if (r->options->alone_only)
    fprintf(out, "<p>%s.</p>\n", REPORT_ALONE_ONLY);
  if (*r->note) {
    fputs("<p class=\"note\">", out);
    html(out, r->note);
    fputs("</p>\n", out);
  }
}

static void counts(const run_report *r, FILE *out) {
  fputs("<table id=\"counts\">\n<tr>", out);
  for (int o = 0; o < OUTCOME_COUNT; o++)
    fprintf(out, "<th>%s</th>", outcome_name((outcome)o));
  fputs("<th>unexpected</th></tr>\n<tr>", out);
  for (int o = 0; o < OUTCOME_COUNT; o++)
    fprintf(out, "<td class=\"count\" data-outcome=\"%s\">%zu</td>", outcome_name((outcome)o),
            r->counts[o]);
  fprintf(out, "<td class=\"count\" data-outcome=\"unexpected\">%zu</td></tr>\n</table>\n",
          r->unexpected + r->now_passing);
  suite_counts suites[SUITES_MAX];
  size_t n = report_by_suite(r, suites);
  fputs("<table id=\"suites\">\n<tr><th>suite</th>", out);
  for (int o = 0; o < OUTCOME_COUNT; o++)
    fprintf(out, "<th>%s</th>", outcome_name((outcome)o));
  fputs("</tr>\n", out);
  for (size_t s = 0; s < n; s++) {
    fprintf(out, "<tr><td>%s</td>", suites[s].suite);
    for (int o = 0; o < OUTCOME_COUNT; o++)
      fprintf(out, "<td>%zu</td>", suites[s].counts[o]);
    fputs("</tr>\n", out);
  }
  fputs("</table>\n", out);
}

/* The cause a failure is grouped under: the fitted rule's departures, else the first reading
 * that gives its answer, else none known. */
static void cause_of(const case_result *c, char *out, size_t len) {
  if (c->explained_by[0])
    snprintf(out, len, "the fitted rule: %s", c->explained_by);
  else if (c->causes[0])
    snprintf(out, len, "the reading %.*s", (int)strcspn(c->causes, ","), c->causes);
  else
    snprintf(out, len, "no known choice explains this");
}

static int shown(const case_result *c) {
  return c->outcome != OUTCOME_SKIP && (c->outcome != OUTCOME_PASS || c->expected_failure);
}

/* A request's or an answer's text, cut at TEXT_SHOWN bytes. */
static void unfold(FILE *out, const char *what, const char *text, const char *id) {
  size_t n = strlen(text);
  fprintf(out, "<details><summary>%s</summary><pre>", what);
  char *cut = strndup(text, n > TEXT_SHOWN ? TEXT_SHOWN : n);
  html(out, cut ? cut : "");
  free(cut);
  if (n > TEXT_SHOWN) {
    fprintf(out, "\n… %zu bytes more: sieve case ", n - TEXT_SHOWN);
    html(out, id);
    fputs(" --request", out);
  }
  fputs("</pre></details>\n", out);
}

static void failure(const case_result *c, int draw, const report_pictures *pictures, FILE *out) {
  fputs("<article class=\"failure\" data-id=\"", out);
  html(out, c->id);
  fprintf(out, "\" data-outcome=\"%s\">\n<h4>", outcome_name(c->outcome));
  html(out, c->id);
  fprintf(out, " <span class=\"%s\">%s%s</span></h4>\n<p class=\"detail\">",
          sieve_case_unexpected(c) ? "unexpected" : "expected", outcome_name(c->outcome),
          c->expected_failure ? " (listed in the expectation file)" : "");
  html(out, c->outcome == OUTCOME_PASS ? report_listed_pass(c) : c->detail);
  fputs("</p>\n", out);
  char *request = NULL;
  if (draw && pictures) {
    fputs("<div class=\"picture\">\n", out);
    if (pictures->draw(pictures->ctx, c, out) != 0)
      fputs("<p class=\"no-picture\">No picture: DeepInfer's rule keeps no token of this case's "
            "row (it answers an error), or the case has no row (a speculative chain).</p>\n",
            out);
    fputs("</div>\n", out);
  } else if (pictures) {
    fputs("<p class=\"no-picture\">Its picture: <code>sieve explain ", out);
    html(out, c->id);
    fputs(" --impl IMPL --svg FILE</code></p>\n", out);
  }
  if (pictures && (request = pictures->request(pictures->ctx, c)) != NULL)
    unfold(out, "request", request, c->id);
  free(request);
  if (c->answer)
    unfold(out, "answer", c->answer, c->id);
  fputs("</article>\n", out);
}

/* The causes, largest first (ties in the order their first case comes): the index of each
 * cause's first case into `first` and its count into `count`; returns how many causes. */
static size_t group_causes(const run_report *r, char (*causes)[300], size_t *first, size_t *count) {
  size_t n = 0;
  for (size_t i = 0; i < r->n_cases; i++) {
    if (!shown(&r->cases[i]))
      continue;
    size_t g = 0;
    while (g < n && strcmp(causes[first[g]], causes[i]) != 0)
      g++;
    if (g == n)
      first[n] = i, count[n++] = 0;
    count[g]++;
  }
  for (size_t a = 1; a < n; a++) /* insertion sort: stable, by count descending */
    for (size_t b = a; b > 0 && count[b] > count[b - 1]; b--) {
      size_t f = first[b], c = count[b];
      first[b] = first[b - 1], count[b] = count[b - 1];
      first[b - 1] = f, count[b - 1] = c;
    }
  return n;
}

static void group(const run_report *r, char (*causes)[300], size_t g, size_t first, size_t n,
                  const report_pictures *pictures, FILE *out) {
  fprintf(out, "<section class=\"group\" id=\"cause-%zu\"><h3>", g);
  html(out, causes[first]);
  fprintf(out, " (%zu case%s)</h3>\n", n, n == 1 ? "" : "s");
  for (size_t j = first, k = 0; j < r->n_cases; j++)
    if (shown(&r->cases[j]) && strcmp(causes[first], causes[j]) == 0)
      failure(&r->cases[j], k++ < PICTURES_PER_GROUP, pictures, out);
  fputs("</section>\n", out);
}

/* The failures of each cause in turn, the largest cause first, after an index of the causes. */
static void failures(const run_report *r, const report_pictures *pictures, FILE *out) {
  char(*causes)[300] = calloc(r->n_cases + 1, sizeof *causes);
  size_t *first = calloc(r->n_cases + 1, sizeof *first);
  size_t *count = calloc(r->n_cases + 1, sizeof *count);
  fputs("<h2>What did not pass, by cause</h2>\n", out);
  if (r->counts[OUTCOME_PASS] + r->counts[OUTCOME_SKIP] == r->n_cases && !r->now_passing)
    fprintf(out, "<p>Every case asked passed (%zu skipped).</p>\n", r->counts[OUTCOME_SKIP]);
  for (size_t i = 0; causes && first && count && i < r->n_cases; i++)
    cause_of(&r->cases[i], causes[i], sizeof causes[i]);
  size_t n = causes && first && count ? group_causes(r, causes, first, count) : 0;
  if (n > 1) {
    fputs("<ul id=\"causes\">\n", out);
    for (size_t g = 0; g < n; g++) {
      fprintf(out, "<li><a href=\"#cause-%zu\">", g);
      html(out, causes[first[g]]);
      fprintf(out, "</a> (%zu)</li>\n", count[g]);
    }
    fputs("</ul>\n", out);
  }
  for (size_t g = 0; g < n; g++)
    group(r, causes, g, first[g], count[g], pictures, out);
  free(causes);
  free(first);
  free(count);
}

void report_html(const run_report *r, FILE *out, const report_pictures *pictures) {
  fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width\">\n<title>sieve run: ",
        out);
  html(out, r->options->impl_arg);
  fprintf(out, "</title>\n<style>%s</style>\n</head>\n<body>\n", style);
  verdict(r, out);
  counts(r, out);
  fputs("<h2>The rule the answers follow</h2>\n", out);
  pre_of(out, r, 0, report_diagnosis_lines);
  pre_of(out, r, 0, report_cause_lines);
  failures(r, pictures, out);
  fputs("</body>\n</html>\n", out);
}
