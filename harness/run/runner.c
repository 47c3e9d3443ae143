/*
 * `sieve run`: the runner layer (runner.h). Every case is sent alone (the
 * first pass) and then again inside a batch, after a filler row (the second
 * pass); its outcome comes from the first answer, and a second answer that
 * differs is reported as nondeterminism. The implementation is untrusted:
 * a crash, a hang or an answer that is not protocol is that case's result,
 * and the process is started again.
 */
#define _GNU_SOURCE
#include "runner.h"

#include <errno.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "distribution.h"
#include "fixture.h"
#include "protocol/conn.h"
#include "protocol/jbuf.h"
#include "speculative_distribution.h"
#include "suites.h"

#define BATCH_CASES 8
#define BATCH_LOGITS (1 << 19) /* a batch closes before its rows pass this many logits */

const char *outcome_name(outcome o) {
  static const char *const names[] = {"pass", "fail", "skip", "error", "crash"};
  return o < OUTCOME_COUNT ? names[o] : "?";
}

#define JOBS_MAX 64

typedef struct shared {
  const run_options *opt;
  run_report *report;
  pthread_mutex_t lock;
  size_t next; /* the next unit of work */
  size_t n_units;
  void (*unit)(struct shared *s, conn *c, size_t index);
  void *units; /* per pass: batches */
  conn *conns; /* one implementation per job, kept across the passes */
  int jobs;
  const char *phase, *counted; /* the pass and what it counts, for the progress line */
  size_t done;                 /* units finished in this pass */
  double started, last_shown;
} shared;

static char *request_text(const cJSON *request, size_t *len) {
  jbuf b = {0};
  jbuf_json(&b, request);
  *len = b.len;
  if (b.failed) {
    jbuf_free(&b);
    return NULL;
  }
  return b.data;
}

/* Error messages are for people and may name the row's place in a batch; never compared. */
static void strip_messages(cJSON *value) {
  for (cJSON *item = value ? value->child : NULL; item; item = item->next)
    strip_messages(item);
  if (value && value->string && strcmp(value->string, "error") == 0)
    cJSON_DeleteItemFromObjectCaseSensitive(value, "message");
}

char *sieve_answer_text(cJSON *value) {
  size_t len;
  strip_messages(value);
  return request_text(value, &len);
}

/* ----------------------------------------------------------------------------- first pass */

void sieve_case_of(case_result *r, const cJSON *fixture) {
  *r = (case_result){.fixture = fixture, .suite = suite_of_case(fixture)};
  r->family = sieve_case_str(fixture, "family");
  r->seed_ref = sieve_case_str(fixture, "seed_ref");
  snprintf(r->id, sizeof r->id, "%s", sieve_case_str(fixture, "id"));
}

void sieve_case_judge(case_result *r, const cJSON *answer, int precision) {
  int error_mismatch = 0;
  char why[600];
  const cJSON *expect = cJSON_GetObjectItemCaseSensitive(r->fixture, "expect");
  if (sieve_check_at(expect, answer, precision, why, sizeof why, &error_mismatch)) {
    r->outcome = r->alone = OUTCOME_PASS;
    sieve_case_separations(r->fixture, precision, r->ruled_out, sizeof r->ruled_out);
    return;
  }
  r->outcome = r->alone = error_mismatch ? OUTCOME_ERROR : OUTCOME_FAIL;
  snprintf(r->why, sizeof r->why, "%.399s", why);
  sieve_answer_digest(answer, r->digest);
  sieve_case_detail(r->fixture, answer, precision, why, NULL, r->detail, sizeof r->detail,
                    r->causes, sizeof r->causes);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void first_pass_unit(shared *s, conn *c, size_t index) {
  case_result *r = &s->report->cases[index];
  if (r->outcome == OUTCOME_SKIP || !r->fixture)
    return;
  const double start = now();
  char err[256];
  cJSON *request = sieve_case_request_compact(r->fixture, err, sizeof err);
  if (!request) {
    r->outcome = OUTCOME_CRASH;
    snprintf(r->detail, sizeof r->detail, "the fixture cannot be used: %s", err);
    return;
  }
  cJSON *answer = conn_ask_json(c, request, r->detail, sizeof r->detail);
  cJSON_Delete(request);
  r->seconds = now() - start;
  if (!answer) {
    r->outcome = OUTCOME_CRASH;
    return;
  }
  sieve_case_judge(r, answer, s->report->precision);
  r->answer = sieve_answer_text(answer); /* for the fit, and the batches to be compared with */
  cJSON_Delete(answer);
}

/* ----------------------------------------------------------------------------- second pass */

typedef struct batch {
  size_t members[BATCH_CASES];
  size_t n;
  size_t filler; /* the case whose rows come first, answers discarded */
  size_t logits; /* the members' logits */
} batch;

/* The number of logits in a case's rows (a recipe counts as its length). */
static size_t logits_of(const case_result *r) {
  const cJSON *request = cJSON_GetObjectItemCaseSensitive(r->fixture, "request");
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(request, "rows");
  size_t n = 0;
  for (const cJSON *row = rows ? rows->child : NULL; row; row = row->next) {
    const cJSON *logits = cJSON_GetObjectItemCaseSensitive(row, "logits");
    const cJSON *recipe = cJSON_GetObjectItemCaseSensitive(logits, "$recipe");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(recipe, "v");
    n += cJSON_IsNumber(v) ? (size_t)v->valuedouble : (size_t)cJSON_GetArraySize(logits);
  }
  return n;
}

/* Cases whose rows can be batched: row ops answered without a request-level error. */
static int batchable(const case_result *r, const char **op) {
  const cJSON *request = cJSON_GetObjectItemCaseSensitive(r->fixture, "request");
  *op = sieve_case_str(request, "op");
  if (!r->answer || (r->outcome != OUTCOME_PASS && r->outcome != OUTCOME_FAIL))
    return 0;
  if (strcmp(*op, "filter") && strcmp(*op, "sample") && strcmp(*op, "draw"))
    return 0;
  return strstr(r->answer, "{\"error\"") != r->answer;
}

/* The request's keys other than rows: cases batch together only when these are equal. */
static char *context_of(const case_result *r) {
  cJSON *request = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(r->fixture, "request"), 1);
  cJSON_DeleteItemFromObjectCaseSensitive(request, "rows");
  size_t len;
  char *text = request_text(request, &len);
  cJSON_Delete(request);
  return text;
}

static batch *plan_batches(run_report *report, size_t *n_batches) {
  batch *batches = calloc(report->n_cases + 1, sizeof *batches);
  char **contexts = calloc(report->n_cases + 1, sizeof *contexts);
  size_t nb = 0;
  for (size_t i = 0; batches && contexts && i < report->n_cases; i++) {
    const char *op;
    if (!batchable(&report->cases[i], &op))
      continue;
    contexts[i] = context_of(&report->cases[i]);
    size_t b = 0, cost = logits_of(&report->cases[i]);
    while (b < nb && (batches[b].n == BATCH_CASES || batches[b].logits + cost > BATCH_LOGITS ||
                      strcmp(contexts[batches[b].members[0]], contexts[i]) != 0))
      b++;
    if (b == nb)
      batches[nb++] = (batch){.n = 0};
    batches[b].members[batches[b].n++] = i;
    batches[b].logits += cost;
  }
  for (size_t b = 0; b < nb; b++) /* the filler: the batch's last member */
    batches[b].filler = batches[b].members[batches[b].n - 1];
  for (size_t i = 0; contexts && i < report->n_cases; i++)
    free(contexts[i]);
  free(contexts);
  *n_batches = nb;
  return batches;
}

static cJSON *rows_of(const case_result *r) {
  char err[256];
  cJSON *request = sieve_case_request_compact(r->fixture, err, sizeof err);
  cJSON *rows = cJSON_DetachItemFromObjectCaseSensitive(request, "rows");
  cJSON_Delete(request);
  return rows;
}

/* The batched request: the filler's rows, then each member's rows; offsets[k] is member k's. */
static cJSON *batch_request(run_report *report, const batch *b, size_t *offsets, size_t *counts) {
  char err[256];
  cJSON *request =
      sieve_case_request_compact(report->cases[b->members[0]].fixture, err, sizeof err);
  cJSON *rows = cJSON_CreateArray();
  cJSON_ReplaceItemInObjectCaseSensitive(request, "rows", rows);
  size_t at = 0;
  for (size_t k = 0; k <= b->n; k++) {
    cJSON *part = rows_of(&report->cases[k == 0 ? b->filler : b->members[k - 1]]);
    if (k > 0) {
      offsets[k - 1] = at;
      counts[k - 1] = (size_t)cJSON_GetArraySize(part);
    }
    while (part && part->child) {
      cJSON_AddItemToArray(rows, cJSON_DetachItemViaPointer(part, part->child));
      at++;
    }
    cJSON_Delete(part);
  }
  return request;
}

/* Member k's slice of a batched answer, in the shape of an answer to its own request. */
static cJSON *slice_answer(const cJSON *answer, size_t offset, size_t count) {
  cJSON *out = cJSON_CreateObject();
  for (const cJSON *field = answer->child; field; field = field->next) {
    if (!cJSON_IsArray(field))
      continue;
    cJSON *part = cJSON_AddArrayToObject(out, field->string);
    for (size_t i = 0; i < count; i++) {
      const cJSON *item = cJSON_GetArrayItem(field, (int)(offset + i));
      if (item)
        cJSON_AddItemToArray(part, cJSON_Duplicate(item, 1));
    }
  }
  return out;
}

static void second_pass_unit(shared *s, conn *c, size_t index) {
  batch *b = &((batch *)s->units)[index];
  run_report *report = s->report;
  size_t offsets[BATCH_CASES], counts[BATCH_CASES];
  cJSON *request = batch_request(report, b, offsets, counts);
  size_t total = (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(request, "rows"));
  char detail[400];
  cJSON *answer = conn_ask_json(c, request, detail, sizeof detail);
  cJSON_Delete(request);
  for (size_t k = 0; k < b->n; k++) {
    case_result *r = &report->cases[b->members[k]];
    if (!answer) {
      r->outcome = OUTCOME_CRASH;
      snprintf(r->detail, sizeof r->detail, "in a batch of %zu rows: %s", total, detail);
      continue;
    }
    cJSON *mine = slice_answer(answer, offsets[k], counts[k]);
    cJSON *first = cJSON_Parse(r->answer);
    strip_messages(mine);
    char why[500];
    if (!sieve_check(first, mine, why, sizeof why)) {
      r->outcome = OUTCOME_FAIL;
      snprintf(r->detail, sizeof r->detail,
               "nondeterministic: the answer changed at row %zu of a batch of %zu (alone it was "
               "row 0): %s",
               offsets[k], total, why);
    }
    cJSON_Delete(first);
    cJSON_Delete(mine);
  }
  cJSON_Delete(answer);
}

/* ----------------------------------------------------------------------------- distribution */

static cJSON *exchange_adapter(void *c, const char *request, size_t len, char *detail,
                               size_t detail_len) {
  return conn_ask(c, request, len, detail, detail_len);
}

static void distribution_unit(shared *s, conn *c, size_t index) {
  case_result *r = &s->report->cases[index];
  if (r->fixture || r->outcome == OUTCOME_SKIP)
    return;
  const double start = now();
  if (strcmp(r->suite, SPECDIST_SUITE) == 0)
    specdist_run(r, exchange_adapter, c);
  else
    distribution_run(r, exchange_adapter, c);
  r->seconds = now() - start;
}

/* ----------------------------------------------------------------------------- workers */

/* The progress line: rewritten in place on a terminal; elsewhere (a CI log) a plain line every
 * five seconds. Called with the lock held. */
static void show_progress(shared *s) {
  const double t = now();
  if (s->opt->progress == PROGRESS_TERMINAL)
    fprintf(stderr, "\rsieve run: %s, %zu of %zu %s", s->phase, s->done, s->n_units, s->counted);
  else if (s->opt->progress == PROGRESS_LINES && t - s->last_shown >= 5.0) {
    fprintf(stderr, "sieve run: %s, %zu of %zu %s after %.0f s\n", s->phase, s->done, s->n_units,
            s->counted, t - s->started);
    s->last_shown = t;
  }
}

typedef struct worker_arg {
  shared *s;
  conn *c;
} worker_arg;

static void *worker(void *arg) {
  shared *s = ((worker_arg *)arg)->s;
  conn *c = ((worker_arg *)arg)->c;
  for (;;) {
    pthread_mutex_lock(&s->lock);
    size_t index = s->next++;
    pthread_mutex_unlock(&s->lock);
    if (index >= s->n_units)
      break;
    s->unit(s, c, index);
    pthread_mutex_lock(&s->lock);
    s->done++;
    show_progress(s);
    pthread_mutex_unlock(&s->lock);
  }
  return NULL;
}

static void run_units(shared *s, const char *phase, const char *counted, size_t n_units,
                      void (*unit)(shared *, conn *, size_t), void *units) {
  s->phase = phase;
  s->counted = counted;
  s->done = 0;
  s->started = s->last_shown = now();
  s->next = 0;
  s->n_units = n_units;
  s->unit = unit;
  s->units = units;
  pthread_t threads[JOBS_MAX];
  worker_arg args[JOBS_MAX];
  int started = 0;
  for (; started < s->jobs; started++) {
    args[started] = (worker_arg){s, &s->conns[started]};
    if (pthread_create(&threads[started], NULL, worker, &args[started]) != 0)
      break;
  }
  if (started == 0)
    worker(&args[0]);
  for (int t = 0; t < started; t++)
    pthread_join(threads[t], NULL);
  if (s->opt->progress == PROGRESS_TERMINAL)
    fprintf(stderr, "\r\033[K");
}

/* ----------------------------------------------------------------------------- the run */

/* The precision answers are compared at: --precision, else what hello declared (-1: nothing),
 * else float32, the arithmetic of real engines' samplers. */
static void set_precision(run_report *report, const run_options *opt, int declared) {
  report->precision = opt->precision >= 0 ? opt->precision
                      : declared >= 0     ? declared
                                          : SIEVE_PRECISION_FLOAT32;
  report->precision_source = opt->precision >= 0 ? "--precision"
                             : declared >= 0     ? "hello"
                                                 : "default";
}

/* hello's "precision"; an unknown declaration is a harness error. */
static int declared_precision(const run_options *opt, run_report *report, const cJSON *answer,
                              char *err, size_t err_len) {
  const cJSON *declared = cJSON_GetObjectItemCaseSensitive(answer, "precision");
  int p = cJSON_IsString(declared) ? sieve_precision_parse(declared->valuestring) : -1;
  if (declared && p < 0) {
    snprintf(err, err_len, "hello: \"precision\" must be \"float32\" or \"float64\", not %.60s",
             cJSON_IsString(declared) ? declared->valuestring : "a non-string");
    return -1;
  }
  set_precision(report, opt, p);
  return 0;
}

/* Asks hello; *answer keeps the answer (its ops, engine options and rng) for skip_unsupported. */
static int hello(const run_options *opt, conn *c, run_report *report, cJSON **answer_out, char *err,
                 size_t err_len) {
  char detail[400] = "";
  cJSON *answer = conn_hello(c, detail, sizeof detail);
  *answer_out = answer;
  snprintf(report->impl_name, sizeof report->impl_name, "%s",
           answer ? sieve_case_str(answer, "name") : "");
  snprintf(report->impl_version, sizeof report->impl_version, "%s",
           answer ? sieve_case_str(answer, "version") : "");
  report->own_rng = answer && strcmp(sieve_case_str(answer, "rng"), "own") == 0;
  int rc = sieve_hello_check(answer, detail, err, err_len);
  if (rc == 0 && declared_precision(opt, report, answer, err, err_len) != 0)
    rc = -1;
  return rc;
}

static int listed(const char *const *list, const char *name) {
  for (; list && *list; list++)
    if (strcmp(*list, name) == 0)
      return 1;
  return 0;
}

static int glob_listed(const char *const *globs, const char *id) {
  for (; globs && *globs; globs++)
    if (fnmatch(*globs, id, 0) == 0)
      return 1;
  return 0;
}

static int nothing_chosen(const run_options *opt) {
  return !(opt->suites && opt->suites[0]) && !(opt->families && opt->families[0]) &&
         !(opt->cases && opt->cases[0]);
}

static int smoke_only(const run_options *opt) {
  return opt->suites && opt->suites[0] && !strcmp(opt->suites[0], "smoke") && !opt->suites[1] &&
         !(opt->families && opt->families[0]) && !(opt->cases && opt->cases[0]);
}

/* Whether a case is asked: the union of the suites named (smoke: the first cases of each
 * suite), the families and the ids; every suite but smoke when none is named. */
static int wanted(const run_options *opt, const char *suite, const char *family, const char *id,
                  size_t rank_in_suite) {
  if (nothing_chosen(opt))
    return 1;
  return listed(opt->suites, suite) || listed(opt->families, family) ||
         glob_listed(opt->cases, id) ||
         (listed(opt->suites, "smoke") && rank_in_suite < SMOKE_PER_SUITE);
}

static case_result *take(run_report *report, const run_options *opt, size_t *index) {
  return (*index)++ % opt->shard_count == opt->shard_index ? &report->cases[report->n_cases++]
                                                           : NULL;
}

/* The cases of this run, then the shard: a share of every `shard_count`-th case. */
static int select_cases(const run_options *opt, const sieve_fixtures *fx, run_report *report) {
  size_t n = (size_t)cJSON_GetArraySize(fx->cases) + DISTRIBUTION_MAX_CASES + SPECDIST_MAX_CASES;
  size_t per_suite[SUITES_MAX] = {0}, index = 0;
  case_result all[DISTRIBUTION_MAX_CASES + SPECDIST_MAX_CASES];
  report->cases = calloc(n, sizeof *report->cases);
  if (!report->cases)
    return -1;
  for (const cJSON *c = fx->cases->child; c; c = c->next) {
    const char *suite = suite_of_case(c), *id = sieve_case_str(c, "id");
    case_result *r;
    if (!wanted(opt, suite, sieve_case_str(c, "family"), id, per_suite[suite_index(suite)]++) ||
        !(r = take(report, opt, &index)))
      continue;
    sieve_case_of(r, c);
  }
  size_t n_drawn = distribution_cases(all, 0, 1);
  n_drawn += specdist_cases(all + n_drawn);
  for (size_t i = 0; i < n_drawn; i++) { /* drawn 10^4 times each: never in smoke */
    case_result *r;
    if (wanted(opt, all[i].suite, all[i].family, all[i].id, SMOKE_PER_SUITE) &&
        (r = take(report, opt, &index)))
      *r = all[i];
  }
  return 0;
}

/* A family or a case glob that selects nothing is a mistake to name, not an empty run. */
static int selection_known(const run_options *opt, const sieve_fixtures *fx, char *err,
                           size_t len) {
  for (const char *const *f = opt->families; f && *f; f++) {
    int found = !strcmp(*f, "distribution") || !strcmp(*f, SPECDIST_SUITE);
    for (const cJSON *c = fx->cases->child; c && !found; c = c->next)
      found = !strcmp(sieve_case_str(c, "family"), *f);
    if (!found)
      return snprintf(err, len, "no family '%s' in the fixtures (fixtures/README.md lists them)",
                      *f),
             -1;
  }
  for (const char *const *g = opt->cases; g && *g; g++) {
    const char *const one[] = {*g, NULL};
    int found = 0;
    for (const cJSON *c = fx->cases->child; c && !found; c = c->next)
      found = glob_listed(one, sieve_case_str(c, "id"));
    if (!found && strncmp(*g, "distribution/", 13) != 0 &&
        strncmp(*g, SPECDIST_SUITE "/", strlen(SPECDIST_SUITE "/")) != 0)
      return snprintf(err, len, "no case matches --case '%s'", *g), -1;
  }
  return 0;
}

/* The cases hello says the implementation cannot be asked (sieve_case_not_offered), skipped. */
static void skip_unsupported(run_report *report, const cJSON *answer) {
  for (size_t i = 0; i < report->n_cases; i++) {
    case_result *r = &report->cases[i];
    const cJSON *request = cJSON_GetObjectItemCaseSensitive(r->fixture, "request");
    const char *op = strcmp(r->suite, SPECDIST_SUITE) == 0 ? "speculate" : "sample";
    if (r->fixture ? sieve_case_not_offered(request, answer, r->detail, sizeof r->detail)
                   : !sieve_hello_offers(answer, op)) {
      r->outcome = OUTCOME_SKIP;
      if (!r->fixture)
        snprintf(r->detail, sizeof r->detail, "the implementation does not offer op %s (hello)",
                 op);
    }
  }
}

int sieve_case_unexpected(const case_result *c) {
  int bad = c->outcome != OUTCOME_PASS && c->outcome != OUTCOME_SKIP;
  return bad ? !c->expected_failure || c->changed
             : c->outcome == OUTCOME_PASS && c->expected_failure;
}

int sieve_report_failed(const run_report *r) {
  return r->unexpected || r->now_passing || (r->n_cases && r->counts[OUTCOME_SKIP] == r->n_cases);
}

void sieve_report_count(run_report *report) {
  memset(report->counts, 0, sizeof report->counts);
  report->unexpected = report->now_passing = 0;
  for (size_t i = 0; i < report->n_cases; i++) {
    const case_result *r = &report->cases[i];
    report->counts[r->outcome]++;
    int unexpected = sieve_case_unexpected(r), passed = r->outcome == OUTCOME_PASS;
    report->unexpected += (size_t)(unexpected && !passed);
    report->now_passing += (size_t)(unexpected && passed);
  }
  for (size_t i = 0; i < report->n_cases; i++) /* a new failure may hide a listed one */
    report->cases[i].masked = report->unexpected && report->cases[i].expected_failure &&
                              report->cases[i].outcome == OUTCOME_PASS;
  size_t ran = report->n_cases - report->counts[OUTCOME_SKIP], named = 0;
  for (size_t i = 0; i < report->n_cases; i++)
    named += report->cases[i].outcome != OUTCOME_PASS && report->cases[i].causes[0];
  if (ran > 0 && report->counts[OUTCOME_PASS] == 0 && named == 0) /* no known bug explains it */
    snprintf(report->note, sizeof report->note,
             "every case that ran failed: usually a broken adapter or protocol mismatch, not a "
             "broken sampler");
}

int sieve_run(const run_options *opt, run_report *report, char *err, size_t err_len) {
  sieve_fixtures fx;
  memset(report, 0, sizeof *report);
  report->options = opt;
  set_precision(report, opt, -1);
  if (sieve_fixtures_load(opt->fixtures, &fx, err, err_len) != 0)
    return -1;
  snprintf(report->fixtures_schema, sizeof report->fixtures_schema, "%s", SIEVE_FIXTURE_SCHEMA);
  if (selection_known(opt, &fx, err, err_len) != 0) {
    sieve_fixtures_free(&fx);
    return -1;
  }
  if (select_cases(opt, &fx, report) != 0) {
    snprintf(err, err_len, "out of memory");
    sieve_fixtures_free(&fx);
    return -1;
  }
  cJSON *greeting = NULL;
  static conn conns[JOBS_MAX];
  const int jobs = opt->jobs < 1 ? 1 : opt->jobs > JOBS_MAX ? JOBS_MAX : opt->jobs;
  /* Every worker's process starts now (slow starters start together) and the first is greeted;
   * an implementation that cannot be started or greeted is a harness error (exit 2), not a
   * failing sampler. */
  for (int j = 0; j < jobs; j++)
    conn_start(&conns[j], opt->impl, opt->timeout_ms);
  if (hello(opt, &conns[0], report, &greeting, err, err_len) != 0) {
    for (int j = 0; j < jobs; j++)
      conn_stop(&conns[j], NULL, 0);
    cJSON_Delete(greeting);
    free(report->cases);
    report->cases = NULL;
    report->n_cases = 0;
    sieve_fixtures_free(&fx);
    return -1;
  }
  skip_unsupported(report, greeting);
  shared s = {.opt = opt,
              .report = report,
              .lock = PTHREAD_MUTEX_INITIALIZER,
              .conns = conns,
              .jobs = jobs};
  run_units(&s, opt->alone_only ? "each case alone" : "pass 1 of 2 (each case alone)", "cases",
            report->n_cases, first_pass_unit, NULL);
  size_t n_batches = 0;
  batch *batches = opt->alone_only ? NULL : plan_batches(report, &n_batches);
  if (batches)
    run_units(&s, "pass 2 of 2 (the cases again, in batches)", "batches", n_batches,
              second_pass_unit, batches);
  free(batches);
  run_units(&s, "distribution draws", "cases", report->n_cases, distribution_unit, NULL);
  for (int j = 0; j < jobs; j++)
    conn_stop(&conns[j], NULL, 0);
  cJSON_Delete(greeting);
  if (sieve_fit(report, opt->fit_starts, opt->n_fit_starts) != 0) {
    snprintf(err, err_len, "out of memory in the fit");
    sieve_fixtures_free(&fx);
    return -1;
  }
  /* The fixture tree goes; keep what the report needs (the suite and family names are its). */
  for (size_t i = 0; i < report->n_cases; i++) {
    report->cases[i].fixture = NULL;
    report->cases[i].family = strdup(report->cases[i].family ? report->cases[i].family : "");
    report->cases[i].seed_ref = strdup(report->cases[i].seed_ref ? report->cases[i].seed_ref : "");
    report->cases[i].suite = strdup(report->cases[i].suite ? report->cases[i].suite : "");
  }
  sieve_fixtures_free(&fx);
  sieve_report_count(report);
  if (smoke_only(opt) && !report->note[0])
    snprintf(report->note, sizeof report->note,
             "the smoke suite checks that the implementation answers, not that its sampler is "
             "right: run without --suite smoke for that");
  return 0;
}

void sieve_report_free(run_report *report) {
  for (size_t i = 0; i < report->n_cases; i++) {
    free(report->cases[i].answer);
    free((char *)report->cases[i].family);
    free((char *)report->cases[i].seed_ref);
    free((char *)report->cases[i].suite);
  }
  free(report->cases);
  memset(report, 0, sizeof *report);
}
