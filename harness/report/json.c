/* The JSON report: every case with its outcome, detail and causes, and the summary. */
#include <stdio.h>
#include <string.h>

#include "protocol/jbuf.h"
#include "render.h"
#include "run/check.h"

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

void report_json(const run_report *r, FILE *out) {
  jbuf b = {0};
  jbuf_raw(&b, "{\"sieve_report\":1");
  jbuf_key(&b, "impl", 1);
  jbuf_str(&b, r->options->impl_arg);
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
  jbuf_key(&b, "batches", 1);
  jbuf_raw(&b, r->options->alone_only ? "false" : "true");
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
  size_t without, total, n = report_tally_causes(r, causes, &without, &total);
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
