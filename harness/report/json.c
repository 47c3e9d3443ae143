/* The JSON report: every case with its outcome, detail and causes, and the summary. */
#include <stdio.h>
#include <string.h>

#include "protocol/jbuf.h"
#include "render.h"
#include "run/check.h"

/* A comma-separated list of names or ids as a JSON array of strings. */
static void json_list(jbuf *b, const char *list, const char *sep) {
  jbuf_char(b, '[');
  for (size_t len, k = 0; *list; list += len + strspn(list + len, sep), k++) {
    char name[256];
    len = strcspn(list, sep);
    snprintf(name, sizeof name, "%.*s", (int)len, list);
    if (k)
      jbuf_char(b, ',');
    jbuf_str(b, name);
  }
  jbuf_char(b, ']');
}

static void json_axis_value(jbuf *b, int axis, int value) {
  if (value < 0)
    jbuf_raw(b, "null");
  else
    jbuf_str(b, sieve_axis_value_name(axis, value));
}

void report_diagnosis_json(jbuf *b, const fit_result *f) {
  jbuf_raw(b, "{\"rule\":{");
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++) {
    jbuf_key(b, sieve_axis_name(a), a > 0);
    json_axis_value(b, a, f->axes[a].value);
  }
  jbuf_raw(b, "},\"axes\":{");
  for (int a = 0; a < SIEVE_AXIS_COUNT; a++) {
    const fit_axis *x = &f->axes[a];
    jbuf_key(b, sieve_axis_name(a), a > 0);
    jbuf_raw(b, "{\"candidates\":[");
    for (int v = 0, k = 0; v < sieve_axis_values(a); v++)
      if (x->candidates >> v & 1) {
        jbuf_raw(b, k++ ? "," : "");
        jbuf_str(b, sieve_axis_value_name(a, v));
      }
    jbuf_raw(b, "],\"decided_by\":");
    json_list(b, x->deciding, ",");
    jbuf_key(b, "from_hello", 1);
    jbuf_raw(b, x->from_hello ? "true" : "false");
    if (x->masked[0]) {
      jbuf_key(b, "hidden_in", 1);
      json_list(b, x->masked, ",");
    }
    if (x->alternative[0]) {
      jbuf_key(b, "or_reading", 1);
      jbuf_str(b, x->alternative);
    }
    jbuf_key(b, "fits", 1);
    jbuf_raw(b, x->unfit ? "false" : "true");
    if (x->unfit) {
      jbuf_key(b, "nearest", 1);
      json_axis_value(b, a, x->nearest);
      jbuf_key(b, "unexplained", 1);
      json_list(b, x->unfit_cases, ",");
      jbuf_key(b, "cause_may_lie_elsewhere", 1);
      jbuf_raw(b, x->elsewhere ? "true" : "false");
    }
    jbuf_char(b, '}');
  }
  jbuf_raw(b, "},\"misreadings\":");
  json_list(b, f->misreadings, ",");
  jbuf_key(b, "misreadings_contradicted", 1);
  json_list(b, f->contradicted, ",");
  jbuf_key(b, "weighed", 1);
  jbuf_int(b, (int64_t)f->considered);
  jbuf_key(b, "agreed", 1);
  jbuf_int(b, (int64_t)f->agreed);
  jbuf_key(b, "failures", 1);
  jbuf_int(b, (int64_t)f->failures);
  jbuf_key(b, "explained", 1);
  jbuf_int(b, (int64_t)f->explained);
  jbuf_key(b, "passes_otherwise", 1);
  jbuf_int(b, (int64_t)f->passes_otherwise);
  jbuf_key(b, "passes_otherwise_cases", 1);
  json_list(b, f->passes_otherwise_ids, ",");
  jbuf_raw(b, ",\"unexplained\":[");
  for (size_t g = 0; g < f->n_groups; g++) {
    jbuf_raw(b, g ? ",{" : "{");
    jbuf_key(b, "kind", 0);
    jbuf_str(b, f->groups[g].kind);
    jbuf_key(b, "description", 1);
    jbuf_str(b, f->groups[g].description);
    jbuf_key(b, "count", 1);
    jbuf_int(b, (int64_t)f->groups[g].count);
    jbuf_key(b, "cases", 1);
    json_list(b, f->groups[g].cases, ",");
    jbuf_char(b, '}');
  }
  jbuf_raw(b, "],\"unexplained_ungrouped\":");
  jbuf_int(b, (int64_t)f->grouped_rest);
  jbuf_raw(b, ",\"nearest_profiles\":[");
  for (size_t i = 0; i < f->n_nearest; i++) {
    const fit_nearest *n = &f->nearest[i];
    jbuf_raw(b, i ? ",{" : "{");
    jbuf_key(b, "name", 0);
    jbuf_str(b, n->name);
    jbuf_key(b, "distance", 1);
    jbuf_int(b, n->distance);
    jbuf_raw(b, ",\"differs\":{");
    for (int a = 0, k = 0; a < SIEVE_AXIS_COUNT; a++)
      if (n->differs >> a & 1) {
        jbuf_key(b, sieve_axis_name(a), k++ > 0);
        json_axis_value(b, a, sieve_rule_get(&n->rule, a));
      }
    jbuf_raw(b, "},\"unconfirmed\":[");
    for (int a = 0, k = 0; a < SIEVE_AXIS_COUNT; a++)
      if (n->unconfirmed >> a & 1) {
        if (k++)
          jbuf_char(b, ',');
        jbuf_str(b, sieve_axis_name(a));
      }
    jbuf_raw(b, "]}");
  }
  jbuf_raw(b, "]}");
}

void report_json(const run_report *r, FILE *out, const report_pictures *pictures) {
  (void)pictures;
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
    if (c->changed)
      jbuf_raw(&b, ",\"changed\":true");
    if (c->masked)
      jbuf_raw(&b, ",\"masked\":true");
    if (c->expected_note[0]) {
      jbuf_key(&b, "expected_note", 1);
      jbuf_str(&b, c->expected_note);
    }
    jbuf_key(&b, "detail", 1);
    jbuf_str(&b, c->detail);
    jbuf_key(&b, "causes", 1);
    json_list(&b, c->causes, ",");
    if (c->explained_by[0]) {
      jbuf_key(&b, "explained_by", 1);
      json_list(&b, c->explained_by, " +");
    }
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
  jbuf_char(&b, '}');
  if (r->fit.made) {
    jbuf_raw(&b, ",\n\"diagnosis\":");
    report_diagnosis_json(&b, &r->fit);
  }
  jbuf_raw(&b, "}\n");
  fputs(b.data ? b.data : "", out);
  jbuf_free(&b);
}
