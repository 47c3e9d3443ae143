/* The report of a fuzz run (run.h): each kind of failure with its minimal case and hint, the
 * totals, the saved cases and the JUnit report. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>

#include "junit.h"
#include "protocol/jbuf.h"
#include "readings.h"
#include "run.h"
#include "run/fixture.h"
#include "save.h"

static void print_json_clipped(FILE *out, const char *label, const cJSON *x) {
  jbuf text = {0};
  if (x)
    jbuf_json(&text, x);
  const size_t n = text.data && !text.failed ? strlen(text.data) : 0;
  fprintf(out, "  %s: %.*s%s\n", label,
          n > 1200 ? 1200
          : n      ? (int)n
                   : 4,
          n ? text.data : "none", n > 1200 ? " ... (clipped)" : "");
  jbuf_free(&text);
}

#define FUZZ_BY_VALUE 4 /* failing rows an axis value alone must give to leave out the readings */

/* What explains each kind's answers: the axis values (hint.h), and, where no value alone does,
 * the misreadings (readings.h). */
typedef struct explanations {
  char hints[FUZZ_VERDICT_COUNT][600];
  int pairs[FUZZ_VERDICT_COUNT];
  int asked[FUZZ_VERDICT_COUNT]; /* the misreadings were asked for this kind */
  fuzz_named readings[FUZZ_VERDICT_COUNT];
  char why[400];
  int status; /* fuzz_name_readings's: 0 tried, 1 not DeepInfer's rule, -1 not tried */
} explanations;

/* The kinds of failure an axis value or a reading may explain. */
static int explicable(int verdict) {
  return verdict == FUZZ_KEPT || verdict == FUZZ_TOKEN || verdict == FUZZ_VALUE ||
         verdict == FUZZ_KEY || verdict == FUZZ_ERROR;
}

/* Asks the generators once for the readings of the minimal case and kept rows of every kind
 * no axis value alone explains with FUZZ_BY_VALUE failing rows kept or more (a value that
 * matches one row may match by chance: spec-chain-not-stopped's one chain with --first matches
 * topp_scope=ignored). */
static void name_readings(const fuzz_state *s, explanations *e) {
  fuzz_answered answered[FUZZ_VERDICT_COUNT * (FUZZ_SAMPLES + 1)];
  cJSON *alone[FUZZ_VERDICT_COUNT] = {NULL};
  size_t n = 0;
  for (int v = 0; v < FUZZ_VERDICT_COUNT; v++) {
    const fuzz_failure *f = &s->found[v];
    const int by_value = e->hints[v][0] && !e->pairs[v] && s->n_samples[v] >= FUZZ_BY_VALUE;
    if (!(e->asked[v] = f->request && explicable(v) && !by_value))
      continue;
    if (cJSON_HasObjectItem(f->request, "rows"))
      alone[v] = fuzz_shaped(f->request, FUZZ_SHAPE_ALONE, f->row);
    answered[n++] = (fuzz_answered){alone[v] ? alone[v] : f->request, f->answer, v};
    for (size_t i = 0; i < s->n_samples[v]; i++)
      answered[n++] = (fuzz_answered){s->samples[v][i].request, s->samples[v][i].answer, v};
  }
  e->status = fuzz_name_readings(s->judge.rule, answered, n, s->judge.precision, e->readings,
                                 FUZZ_VERDICT_COUNT, e->why, sizeof e->why);
  for (int v = 0; v < FUZZ_VERDICT_COUNT; v++)
    cJSON_Delete(alone[v]);
}

static void explain(const fuzz_state *s, explanations *e) {
  for (int v = 0; v < FUZZ_VERDICT_COUNT; v++) {
    e->hints[v][0] = '\0';
    e->pairs[v] = 0;
    if (s->found[v].request && explicable(v))
      fuzz_hint(&s->judge, s->judge.rule, &s->found[v], s->samples[v], s->n_samples[v], e->hints[v],
                sizeof e->hints[v], &e->pairs[v]);
  }
  name_readings(s, e);
}

/* What the answers of the failure's kind match, as one line. */
static void print_hint(const fuzz_state *s, const explanations *e, int kind, FILE *out) {
  const size_t n = s->n_samples[kind];
  const char *hint = e->hints[kind];
  char rows[96];
  if (n)
    snprintf(rows, sizeof rows, "this answer and those of the %zu failing row%s kept", n,
             n == 1 ? "" : "s");
  else
    snprintf(rows, sizeof rows, "this answer (no other failing row kept)");
  if (hint[0] && !e->pairs[kind])
    fprintf(out,
            "  of the axis values, %s gives %s: a match, not yet a cause (sieve run fits the "
            "rule over every case)\n",
            hint, rows);
  else if (hint[0])
    fprintf(out,
            "  no axis value alone gives %s; two together do: %s: a match, not yet a cause "
            "(sieve run fits the rule over every case)\n",
            rows, hint);
  else
    fprintf(out,
            "  no axis value alone gives %s, nor two together among the values that give some "
            "of them (sieve run fits every combination over every case)\n",
            rows);
}

/* The misreadings that give the answers of print_hint's line, where they were asked. */
static void print_readings(const explanations *e, int kind, FILE *out) {
  const fuzz_named *k = &e->readings[kind];
  char of[120] = "";
  if (!e->asked[kind] || e->status == 1)
    return;
  if (k->rebuilt < k->total)
    snprintf(of, sizeof of, " (over the %zu of these %zu answers whose requests they rebuild)",
             k->rebuilt, k->total);
  if (e->status < 0)
    fprintf(out, "  the misreadings of the seed (generators/readings.py) were not tried: %s\n",
            e->why);
  else if (!k->rebuilt)
    fprintf(out,
            "  the misreadings of the seed (generators/readings.py) were not tried: the "
            "generators refuse to rebuild the requests of these %zu answers (a decision within "
            "float reach, or a value they cannot read)\n",
            k->total);
  else if (k->names[0])
    fprintf(out,
            "  of the misreadings of the seed (generators/readings.py)%s, those that give this "
            "answer and more than half of the others: %s\n",
            of, k->names);
  else
    fprintf(out,
            "  no misreading of the seed (generators/readings.py)%s gives this answer and more "
            "than half of the others\n",
            of);
}

static void report_failure(const fuzz_state *s, const explanations *e, const fuzz_failure *f,
                           FILE *out) {
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(f->request, "rows");
  const cJSON *row = cJSON_GetArrayItem(rows, (int)f->row);
  fprintf(out, "\n%s: %s (%zu rows gave it)\n", fuzz_verdict_name(f->judgement.verdict),
          fuzz_verdict_what(f->judgement.verdict), s->by_verdict[f->judgement.verdict]);
  const char *op = sieve_case_str(f->request, "op");
  const int logits = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(row, "logits"));
  if (rows && f->asked)
    fprintf(out,
            "  minimal: %s row %zu of a batch of %d, %d logits (found in a batch of %zu; "
            "shrunk in %zu request%s)\n",
            op, f->row, cJSON_GetArraySize(rows), logits, f->original_rows, f->asked,
            f->asked == 1 ? "" : "s");
  else if (rows)
    fprintf(out, "  as found, not shrunk: %s row %zu of a batch of %d, %d logits\n", op, f->row,
            cJSON_GetArraySize(rows), logits);
  else if (f->asked)
    fprintf(out, "  a %s request (shrunk in %zu request%s)\n", op, f->asked,
            f->asked == 1 ? "" : "s");
  else
    fprintf(out, "  a %s request (as found, not shrunk)\n", op);
  fprintf(out, "  why: %s\n", f->judgement.why);
  print_json_clipped(out, cJSON_GetArraySize(rows) > 1 ? "the failing row" : "request",
                     cJSON_GetArraySize(rows) > 1 ? row : f->request);
  print_json_clipped(out, "its answer", f->answer);
  if (f->other)
    print_json_clipped(out, f->other_batch == 1 ? "asked alone" : "in the other shape", f->other);
  if (explicable(f->judgement.verdict)) {
    print_hint(s, e, (int)f->judgement.verdict, out);
    print_readings(e, (int)f->judgement.verdict, out);
  }
}

/* The JUnit report: the run, and each kind of failure with its minimal case as the text report
 * gives it. */
static int write_junit(const fuzz_state *s, const explanations *e, double seconds) {
  fuzz_junit_case cases[FUZZ_VERDICT_COUNT];
  char *texts[FUZZ_VERDICT_COUNT] = {NULL}, why[4300];
  size_t n = 0, sizes;
  int rc = 0;
  for (int v = FUZZ_KEPT; v < FUZZ_VERDICT_COUNT; v++) {
    const fuzz_failure *f = &s->found[v];
    FILE *text = f->request ? open_memstream(&texts[n], &sizes) : NULL;
    if (!f->request || !text)
      continue;
    report_failure(s, e, f, text);
    fclose(text);
    cases[n] = (fuzz_junit_case){fuzz_verdict_name(v), sieve_case_str(f->request, "op"),
                                 f->judgement.why,     texts[n],
                                 s->by_verdict[v],     v == FUZZ_CRASH || v == FUZZ_MALFORMED};
    n++;
  }
  char replay[160];
  /* The same rows: a run of that many rows makes the same requests, however it was stopped. */
  snprintf(replay, sizeof replay, "%s --rows %zu", s->replay, s->rows_made);
  const fuzz_junit_run run = {s->o->impl_arg,
                              s->o->against,
                              s->label,
                              replay,
                              s->o->seed,
                              s->rows,
                              s->by_verdict[FUZZ_REACH],
                              seconds};
  if (fuzz_junit_write(s->o->junit, &run, cases, n, why, sizeof why) != 0)
    fprintf(stderr, "sieve fuzz: %s\n", why), rc = 2;
  for (size_t i = 0; i < n; i++)
    free(texts[i]);
  return rc;
}

int fuzz_report(fuzz_state *s, double seconds) {
  size_t failed = 0;
  explanations e;
  explain(s, &e);
  for (int v = FUZZ_KEPT; v < FUZZ_VERDICT_COUNT; v++)
    if (s->found[v].request)
      report_failure(s, &e, &s->found[v], s->out);
  for (int v = FUZZ_KEPT; v < FUZZ_VERDICT_COUNT; v++)
    failed += s->by_verdict[v];
  int rc = failed ? 1 : 0;
  if (s->o->save && failed) {
    char path[4200];
    if (fuzz_save(s->o->save, s->label, s->replay, &s->judge, s->found, FUZZ_VERDICT_COUNT, path,
                  sizeof path) == 0)
      fprintf(s->out, "\nminimal cases saved: %s (sieve run --impl IMPL --fixtures %s)\n", path,
              path);
    else
      fprintf(stderr, "sieve fuzz: %s\n", path), rc = 2;
  }
  fprintf(s->out,
          "\nsieve fuzz %s: %zu rows (%zu logits) in %zu requests, %zu within float reach, %zu "
          "failed; %zu decisions compared across shapes; %.1f s (%s)\n",
          failed ? "FAILED" : "passed", s->rows, s->logits, s->requests, s->by_verdict[FUZZ_REACH],
          failed, s->compared, seconds, s->replay + 2);
  if (failed)
    fprintf(s->out, "the first failure came after %.1f s\n", s->first_failure);
  if (s->o->junit && write_junit(s, &e, seconds) != 0)
    rc = 2;
  return rc;
}
