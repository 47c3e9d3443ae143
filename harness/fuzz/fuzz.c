/*
 * The fuzz loop (fuzz.h; README.md). Each round asks a batch of filter or sample rows, judges
 * every row against the rule, and asks one row again alone (now and then the whole batch
 * reversed too, and with --repeat the same batch again) to compare the decisions; then a few
 * uniform, position and speculate requests, judged whole. The first failure of each verdict
 * is shrunk (shrink.h) and reported with the axis values under which the rule gives the
 * implementation's answer.
 */
#define _POSIX_C_SOURCE 200809L
#include "fuzz.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hint.h"
#include "junit.h"
#include "protocol/jbuf.h"
#include "run/check.h"
#include "run/fixture.h"
#include "save.h"
#include "shrink.h"

const size_t fuzz_default_batches[] = {1, 2, 7, 64, 257, 1024};
const size_t fuzz_default_n_batches = sizeof fuzz_default_batches / sizeof fuzz_default_batches[0];

#define FUZZ_SHRINK_BUDGET 400  /* requests one shrink may ask */
#define FUZZ_SHRINK_SECONDS 60  /* and the seconds it may take */
#define FUZZ_MAX_BATCH 1024     /* the most rows a batch has, whatever hello says */
#define FUZZ_SAMPLES 16         /* failing rows kept per verdict to test the hint on */
#define FUZZ_SAMPLE_LOGITS 4096 /* the largest row kept as such a sample */
#define FUZZ_WHOLE_PER_ROUND 4  /* requests of each op without rows per round */

typedef struct fuzz_state {
  const fuzz_options *o;
  fuzz_judge judge;
  fuzz_space space;
  conn c;
  fuzz_rng rng;
  char label[80], replay[80]; /* "seed-S-shard-I-of-N", "--seed S --shard I/N" */
  size_t max_batch;
  uint32_t ops; /* those of o->ops that hello offers */
  size_t rows, logits, requests, compared;
  double start, first_failure; /* seconds since the start at which the first row failed */
  int out_of_memory;           /* a batch could not be made or judged: the run stops */
  size_t by_verdict[FUZZ_VERDICT_COUNT];
  fuzz_failure found[FUZZ_VERDICT_COUNT]; /* the first failure of each verdict, shrunk */
  fuzz_sample samples[FUZZ_VERDICT_COUNT][FUZZ_SAMPLES];
  size_t n_samples[FUZZ_VERDICT_COUNT];
  FILE *out;
} fuzz_state;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ----------------------------------------------------------------------------- hello */

static int lists(const cJSON *array, const char *name) {
  const cJSON *x;
  cJSON_ArrayForEach(x, array) if (cJSON_IsString(x) && strcmp(x->valuestring, name) == 0) return 1;
  return 0;
}

/* The precision, the largest batch and the engine options hello states; -1 with the reason in
 * `why` for a precision sieve does not know (as sieve run refuses it). */
static int read_hello(fuzz_state *s, const cJSON *hello, char *why, size_t len) {
  const cJSON *precision = cJSON_GetObjectItemCaseSensitive(hello, "precision");
  const cJSON *max_batch = cJSON_GetObjectItemCaseSensitive(hello, "max_batch");
  const cJSON *options = cJSON_GetObjectItemCaseSensitive(hello, "engine_options");
  const int declared =
      cJSON_IsString(precision) ? sieve_precision_parse(precision->valuestring) : -1;
  if (precision && declared < 0)
    return snprintf(why, len, "hello: \"precision\" must be \"float32\" or \"float64\""), -1;
  s->judge.precision = s->o->precision >= 0 ? s->o->precision
                       : declared >= 0      ? declared
                                            : SIEVE_PRECISION_FLOAT32;
  s->max_batch = !cJSON_IsNumber(max_batch) || max_batch->valuedouble >= FUZZ_MAX_BATCH
                     ? FUZZ_MAX_BATCH
                 : max_batch->valuedouble >= 1 ? (size_t)max_batch->valuedouble
                                               : 1;
  s->space.engine_options =
      s->o->space.engine_options &&
      (!options || (lists(options, "force_topk") && lists(options, "blacklist")));
  const cJSON *rng = cJSON_GetObjectItemCaseSensitive(hello, "rng");
  /* A draw of its own generator, or a rule's that is not the hash, predicts no token. */
  const int own_rng = (cJSON_IsString(rng) && strcmp(rng->valuestring, "own") == 0) ||
                      sieve_rule_get(s->judge.rule, SIEVE_AXIS_DRAW) == SIEVE_DRAW_OWN;
  for (int op = 0; op < FUZZ_OP_COUNT; op++)
    if ((s->o->ops >> op & 1) && sieve_hello_offers(hello, fuzz_op_name(op)) &&
        !(own_rng && op != FUZZ_OP_FILTER && op != FUZZ_OP_POSITION))
      s->ops |= UINT32_C(1) << op;
  if (!s->ops)
    return snprintf(why, len,
                    "it offers none of the ops asked (of filter, sample, uniform, "
                    "position, speculate; with \"rng\":\"own\" filter and position only)"),
           -1;
  return 0;
}

/* The ops asked, "filter, sample". */
static void ops_text(uint32_t ops, char *out, size_t len) {
  size_t at = 0;
  out[0] = '\0';
  for (int op = 0; op < FUZZ_OP_COUNT; op++)
    if (ops >> op & 1 && at < len)
      at += (size_t)snprintf(out + at, len - at, "%s%s", at ? ", " : "", fuzz_op_name(op));
}

static int greet(fuzz_state *s) {
  char crash[300] = "", why[400] = "";
  if (conn_start(&s->c, s->o->impl, s->o->timeout_ms) != PROC_OK) {
    fprintf(stderr, "sieve fuzz: cannot start %s\n", s->o->impl_arg);
    return 2;
  }
  cJSON *hello = conn_hello(&s->c, crash, sizeof crash);
  int rc = sieve_hello_check(hello, crash, why, sizeof why) != 0 ? 2 : 0;
  if (rc == 0 && read_hello(s, hello, why, sizeof why) != 0)
    rc = 2;
  char ops[80];
  ops_text(s->ops, ops, sizeof ops);
  if (rc != 0)
    fprintf(stderr, "sieve fuzz: %s: %s\n", s->o->impl_arg, why);
  else
    fprintf(s->out, "sieve fuzz: %s, %s (%s), %s judged against %s at %s\n", s->replay + 2,
            s->o->impl_arg, sieve_case_str(hello, "name"), ops, s->judge.name,
            sieve_precision_name(s->judge.precision));
  cJSON_Delete(hello);
  return rc;
}

/* ----------------------------------------------------------------------------- rounds */

/* A batch size from --batch, at most hello's max_batch and small enough that the smallest
 * vocabulary fits max_logits. */
static size_t draw_size(fuzz_state *s) {
  size_t b = s->o->batches[fuzz_below(&s->rng, s->o->n_batches)], smallest = SIZE_MAX;
  for (size_t i = 0; i < s->space.n_vocabs; i++)
    smallest = s->space.vocabs[i] < smallest ? s->space.vocabs[i] : smallest;
  const size_t fits = s->o->max_logits / smallest ? s->o->max_logits / smallest : 1;
  b = b < s->max_batch ? b : s->max_batch;
  return b < fits ? b : fits;
}

/* The request-wide members of a sample request: a case and a tag, each left out now and then
 * where it is the default; the tag in *mtp. */
static int sample_members(fuzz_state *s, cJSON *request, int *sample_case, int *mtp) {
  *sample_case = (int)fuzz_below(&s->rng, 3);
  *mtp = fuzz_below(&s->rng, 4) == 0;
  return (*sample_case == 0 && fuzz_below(&s->rng, 2)) ||
                 cJSON_AddNumberToObject(request, "case", *sample_case)
             ? ((!*mtp && fuzz_below(&s->rng, 2)) ||
                        cJSON_AddStringToObject(request, "tag", *mtp ? "mtp" : "main")
                    ? 0
                    : -1)
             : -1;
}

static cJSON *draw_batch(fuzz_state *s, int op) {
  size_t vocab[FUZZ_MAX_BATCH], smallest = SIZE_MAX;
  const size_t b = draw_size(s), most = s->o->max_logits / b;
  const int one_vocab = (int)fuzz_below(&s->rng, 2);
  for (size_t i = 0; i < b; i++) {
    vocab[i] = one_vocab && i ? vocab[0] : fuzz_vocab(&s->rng, &s->space, most);
    smallest = vocab[i] < smallest ? vocab[i] : smallest;
  }
  cJSON *request = cJSON_CreateObject(), *rows = cJSON_AddArrayToObject(request, "rows");
  cJSON *engine = fuzz_engine(&s->rng, &s->space, smallest);
  int sample_case = 0, mtp = 0;
  if (!rows || !engine || !cJSON_AddStringToObject(request, "op", fuzz_op_name(op)) ||
      !cJSON_AddItemToObject(request, "engine", engine))
    goto fail;
  engine = NULL;
  if (op == FUZZ_OP_SAMPLE && sample_members(s, request, &sample_case, &mtp) != 0)
    goto fail;
  for (size_t i = 0; i < b; i++) {
    int family;
    cJSON *row = fuzz_row(&s->rng, &s->space, vocab[i], &family);
    if (row && op == FUZZ_OP_SAMPLE && fuzz_key(&s->rng, row, sample_case, mtp) != 0)
      row = (cJSON_Delete(row), NULL);
    if (!row || !cJSON_AddItemToArray(rows, row)) {
      cJSON_Delete(row);
      goto fail;
    }
  }
  return request;
fail:
  cJSON_Delete(engine);
  cJSON_Delete(request);
  return NULL;
}

static void keep_sample(fuzz_state *s, const cJSON *request, size_t row, fuzz_verdict v,
                        const cJSON *got) {
  const cJSON *r = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(request, "rows"), (int)row);
  if (!got || s->n_samples[v] == FUZZ_SAMPLES ||
      cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r, "logits")) > FUZZ_SAMPLE_LOGITS)
    return;
  fuzz_sample *k = &s->samples[v][s->n_samples[v]++];
  k->request = fuzz_shaped(request, FUZZ_SHAPE_ALONE, row);
  k->answer = cJSON_Duplicate(got, 1);
}

/* Counts a verdict; the first failure of each verdict is kept, with copies of what `seen`
 * borrows, and shrunk. */
static void record(fuzz_state *s, const fuzz_failure *seen) {
  const fuzz_verdict v = seen->judgement.verdict;
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(seen->request, "rows");
  if (v >= FUZZ_KEPT && s->first_failure < 0)
    s->first_failure = now() - s->start;
  if (v >= FUZZ_KEPT)
    keep_sample(s, seen->request, seen->row, v, seen->answer);
  if (s->by_verdict[v]++ || v < FUZZ_KEPT)
    return;
  fuzz_failure *f = &s->found[v];
  *f = *seen;
  f->request = cJSON_Duplicate(seen->request, 1);
  f->answer = seen->answer ? cJSON_Duplicate(seen->answer, 1) : NULL;
  f->other = seen->other ? cJSON_Duplicate(seen->other, 1) : NULL;
  f->original_rows = (size_t)cJSON_GetArraySize(rows);
  if (f->request)
    fuzz_shrink(&s->c, &s->judge, f, FUZZ_SHRINK_BUDGET, FUZZ_SHRINK_SECONDS);
}

static cJSON *ask(fuzz_state *s, const cJSON *request, char *detail, size_t len) {
  cJSON *answer = conn_ask_json(&s->c, request, detail, len);
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(answer, "rows");
  if (answer && cJSON_HasObjectItem(request, "rows") &&
      (!cJSON_IsArray(rows) ||
       cJSON_GetArraySize(rows) !=
           cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(request, "rows")))) {
    snprintf(detail, len, "not one row of answers per row asked");
    cJSON_Delete(answer);
    return NULL;
  }
  return answer;
}

static void judge_batch(fuzz_state *s, const cJSON *request, const cJSON *answer) {
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(request, "rows");
  const cJSON *got = cJSON_GetObjectItemCaseSensitive(answer, "rows");
  for (size_t i = 0; i < (size_t)cJSON_GetArraySize(rows); i++) {
    fuzz_failure seen = {.request = (cJSON *)request, .row = i};
    const cJSON *g = cJSON_GetArrayItem(got, (int)i);
    s->rows++;
    s->logits += (size_t)cJSON_GetArraySize(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(rows, (int)i), "logits"));
    if (fuzz_judge_answer(&s->judge, request, i, g, &seen.judgement))
      s->out_of_memory = 1;
    seen.answer = (cJSON *)g;
    if (seen.judgement.verdict == FUZZ_REACH || seen.judgement.verdict >= FUZZ_KEPT)
      record(s, &seen);
  }
}

/* Asks the batch in another shape and compares each row's decisions with its first answer;
 * a crash there is a failure too. */
static void compare_shape(fuzz_state *s, const cJSON *request, const cJSON *answer,
                          fuzz_shape shape, size_t row) {
  const cJSON *first = cJSON_GetObjectItemCaseSensitive(answer, "rows");
  const size_t n = (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(request, "rows"));
  fuzz_failure seen = {.shape = shape};
  cJSON *other = fuzz_shaped(request, shape, row), *again = NULL;
  if (!other || !(again = ask(s, other, seen.judgement.why, sizeof seen.judgement.why))) {
    seen.request = other ? other : (cJSON *)request;
    seen.judgement.verdict = other ? FUZZ_CRASH : FUZZ_PASS;
    s->out_of_memory |= !other;
    if (other)
      record(s, &seen);
  }
  for (size_t i = 0; again && i < n; i++) {
    const size_t at = fuzz_shaped_row(shape, i, n, row);
    const cJSON *a = cJSON_GetArrayItem(first, (int)i);
    const cJSON *b = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(again, "rows"), (int)at);
    if (at == SIZE_MAX || (s->compared++, fuzz_same_decisions(a, b)))
      continue;
    seen = (fuzz_failure){.request = (cJSON *)request,
                          .row = i,
                          .judgement = {FUZZ_BATCH, ""},
                          .answer = (cJSON *)a,
                          .other = (cJSON *)b,
                          .other_batch = shape == FUZZ_SHAPE_ALONE ? 1 : n,
                          .shape = shape};
    snprintf(seen.judgement.why, sizeof seen.judgement.why,
             "row %zu of a batch of %zu decides otherwise %s", i, n, fuzz_shape_how(shape));
    record(s, &seen);
  }
  cJSON_Delete(again);
  cJSON_Delete(other);
}

/* One row asked alone; the batch reversed one time in four; with --repeat K, asked K - 1 more
 * times as it was. */
static void compare_shapes(fuzz_state *s, const cJSON *request, const cJSON *answer) {
  const size_t n = (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(request, "rows"));
  const size_t row = (size_t)fuzz_below(&s->rng, n);
  if (n > 1)
    compare_shape(s, request, answer, FUZZ_SHAPE_ALONE, row);
  if (n > 2 && fuzz_below(&s->rng, 4) == 0)
    compare_shape(s, request, answer, FUZZ_SHAPE_REVERSED, row);
  for (int k = 1; k < s->o->repeat; k++)
    compare_shape(s, request, answer, FUZZ_SHAPE_REPEATED, row);
}

/* A uniform request of a few keys. */
static cJSON *draw_uniform(fuzz_state *s) {
  cJSON *request = cJSON_CreateObject(), *items = cJSON_AddArrayToObject(request, "items");
  int ok = items && cJSON_AddStringToObject(request, "op", "uniform");
  for (uint64_t n = 1 + fuzz_below(&s->rng, 16); ok && n > 0; n--) {
    cJSON *item = cJSON_CreateObject();
    const int sample_case = (int)fuzz_below(&s->rng, 3), mtp = fuzz_below(&s->rng, 4) == 0;
    ok = item && cJSON_AddItemToArray(items, item) &&
         fuzz_key(&s->rng, item, sample_case, mtp) == 0 &&
         cJSON_AddNumberToObject(item, "case", sample_case) &&
         cJSON_AddStringToObject(item, "tag", mtp ? "mtp" : "main");
  }
  return ok ? request : (cJSON_Delete(request), NULL);
}

/* The rows a request asks: its rows, its uniform's items, or one (a position, a chain). */
static size_t rows_asked(const cJSON *request) {
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(request, "rows");
  const cJSON *items = cJSON_GetObjectItemCaseSensitive(request, "items");
  return rows ? (size_t)cJSON_GetArraySize(rows) : items ? (size_t)cJSON_GetArraySize(items) : 1;
}

/* A uniform, position or speculate request, judged whole. */
static void judge_whole(fuzz_state *s, const cJSON *request, const cJSON *answer) {
  fuzz_failure seen = {.request = (cJSON *)request, .answer = (cJSON *)answer};
  const cJSON *x;
  s->rows += rows_asked(request);
  for (int side = 0; side < 2; side++)
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(
                              cJSON_GetObjectItemCaseSensitive(request, side ? "draft" : "target"),
                              "rows")) s->logits += (size_t)cJSON_GetArraySize(x);
  if (fuzz_judge_answer(&s->judge, request, 0, answer, &seen.judgement))
    s->out_of_memory = 1;
  if (seen.judgement.verdict == FUZZ_REACH || seen.judgement.verdict >= FUZZ_KEPT)
    record(s, &seen);
}

/* One request of op `op`, asked and judged. */
static void ask_op(fuzz_state *s, int op) {
  fuzz_failure seen = {.judgement = {FUZZ_CRASH, ""}};
  cJSON *request = op == FUZZ_OP_UNIFORM     ? draw_uniform(s)
                   : op == FUZZ_OP_POSITION  ? fuzz_position_request(&s->rng)
                   : op == FUZZ_OP_SPECULATE ? fuzz_chain_request(&s->rng, &s->space)
                                             : draw_batch(s, op),
        *answer = NULL;
  if (request)
    answer = ask(s, request, seen.judgement.why, sizeof seen.judgement.why);
  if (request && !answer) {
    seen.request = request;
    s->rows += rows_asked(request);
    record(s, &seen);
  } else if (answer && !cJSON_HasObjectItem(request, "rows")) {
    judge_whole(s, request, answer);
  } else if (answer) {
    judge_batch(s, request, answer);
    compare_shapes(s, request, answer);
  }
  s->out_of_memory |= !request;
  s->requests++;
  cJSON_Delete(answer);
  cJSON_Delete(request);
}

/* A round: a batch of filter or sample rows, then, as those take far longer to answer, a few
 * requests of each op without rows (uniform, position, speculate) asked. */
static void round_of(fuzz_state *s) {
  const uint32_t batched =
      s->ops & ((UINT32_C(1) << FUZZ_OP_FILTER) | (UINT32_C(1) << FUZZ_OP_SAMPLE));
  if (batched)
    ask_op(s, batched == (UINT32_C(1) << FUZZ_OP_SAMPLE) ||
                      (batched != (UINT32_C(1) << FUZZ_OP_FILTER) && fuzz_below(&s->rng, 2))
                  ? FUZZ_OP_SAMPLE
                  : FUZZ_OP_FILTER);
  for (int k = 0; k < FUZZ_WHOLE_PER_ROUND; k++)
    for (int op = FUZZ_OP_UNIFORM; op < FUZZ_OP_COUNT && !s->out_of_memory; op++)
      if (s->ops >> op & 1)
        ask_op(s, op);
}

/* ----------------------------------------------------------------------------- the report */

static void print_json_clipped(FILE *out, const char *label, const cJSON *x) {
  jbuf text = {0};
  if (x)
    jbuf_json(&text, x);
  const size_t n = text.data && !text.failed ? strlen(text.data) : 0;
  fprintf(out, "  %s: %.*s%s\n", label, n > 1200 ? 1200 : (int)n, n ? text.data : "none",
          n > 1200 ? " ... (clipped)" : "");
  jbuf_free(&text);
}

/* What the answers of the failure's kind match (hint.h), as one line. */
static void print_hint(const fuzz_state *s, const fuzz_failure *f, FILE *out) {
  const fuzz_verdict kind = f->judgement.verdict;
  const size_t n = s->n_samples[kind];
  char hint[600], rows[96];
  int pairs;
  fuzz_hint(&s->judge, s->judge.rule, f, s->samples[kind], n, hint, sizeof hint, &pairs);
  if (n)
    snprintf(rows, sizeof rows, "this answer and those of the %zu failing row%s kept", n,
             n == 1 ? "" : "s");
  else
    snprintf(rows, sizeof rows, "this answer (no other failing row kept)");
  if (hint[0] && !pairs)
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
            "  no axis value alone, nor two together, give %s: no known choice of one or two "
            "axes explains it (sieve run fits every combination over every case)\n",
            rows);
}

static void report_failure(const fuzz_state *s, const fuzz_failure *f, FILE *out) {
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(f->request, "rows");
  const cJSON *row = cJSON_GetArrayItem(rows, (int)f->row);
  fprintf(out, "\n%s: %s (%zu rows gave it)\n", fuzz_verdict_name(f->judgement.verdict),
          fuzz_verdict_what(f->judgement.verdict), s->by_verdict[f->judgement.verdict]);
  if (rows)
    fprintf(out,
            "  minimal: %s row %zu of a batch of %d, %d logits (found in a batch of %zu; "
            "shrunk in %zu requests)\n",
            sieve_case_str(f->request, "op"), f->row, cJSON_GetArraySize(rows),
            cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(row, "logits")), f->original_rows,
            f->asked);
  else
    fprintf(out, "  a %s request\n", sieve_case_str(f->request, "op"));
  fprintf(out, "  why: %s\n", f->judgement.why);
  print_json_clipped(out, cJSON_GetArraySize(rows) > 1 ? "the failing row" : "request",
                     cJSON_GetArraySize(rows) > 1 ? row : f->request);
  print_json_clipped(out, "its answer", f->answer);
  if (f->other)
    print_json_clipped(out, f->other_batch == 1 ? "asked alone" : "in the other shape", f->other);
  if (f->judgement.verdict == FUZZ_KEPT || f->judgement.verdict == FUZZ_TOKEN ||
      f->judgement.verdict == FUZZ_VALUE || f->judgement.verdict == FUZZ_KEY ||
      f->judgement.verdict == FUZZ_ERROR)
    print_hint(s, f, out);
}

/* The JUnit report: the run, and each kind of failure with its minimal case as the text report
 * gives it. */
static int write_junit(const fuzz_state *s, double seconds) {
  fuzz_junit_case cases[FUZZ_VERDICT_COUNT];
  char *texts[FUZZ_VERDICT_COUNT] = {NULL}, why[4300];
  size_t n = 0, sizes;
  int rc = 0;
  for (int v = FUZZ_KEPT; v < FUZZ_VERDICT_COUNT; v++) {
    const fuzz_failure *f = &s->found[v];
    FILE *text = f->request ? open_memstream(&texts[n], &sizes) : NULL;
    if (!f->request || !text)
      continue;
    report_failure(s, f, text);
    fclose(text);
    cases[n] = (fuzz_junit_case){fuzz_verdict_name(v), sieve_case_str(f->request, "op"),
                                 f->judgement.why,     texts[n],
                                 s->by_verdict[v],     v == FUZZ_CRASH || v == FUZZ_MALFORMED};
    n++;
  }
  const fuzz_junit_run run = {s->o->impl_arg,
                              s->o->against,
                              s->label,
                              s->replay,
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

static int report(fuzz_state *s, double seconds) {
  size_t failed = 0;
  for (int v = FUZZ_KEPT; v < FUZZ_VERDICT_COUNT; v++)
    if (s->found[v].request)
      report_failure(s, &s->found[v], s->out);
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
  if (s->o->junit && write_junit(s, seconds) != 0)
    rc = 2;
  return rc;
}

/* The run's name and the options that ask its rows again; a shard's rows come from its own
 * state (shard 0 of 1 is the seed's). */
static void name_run(fuzz_state *s) {
  const unsigned long long seed = (unsigned long long)s->o->seed;
  s->rng.state = s->o->shard ? s->o->seed ^ sieve_mix64(s->o->shard) : s->o->seed;
  if (s->o->shards > 1) {
    snprintf(s->label, sizeof s->label, "seed-%llu-shard-%u-of-%u", seed, s->o->shard,
             s->o->shards);
    snprintf(s->replay, sizeof s->replay, "--seed %llu --shard %u/%u", seed, s->o->shard,
             s->o->shards);
  } else {
    snprintf(s->label, sizeof s->label, "seed-%llu", seed);
    snprintf(s->replay, sizeof s->replay, "--seed %llu", seed);
  }
}

int sieve_fuzz(const fuzz_options *o, FILE *out) {
  static const sieve_rule deepinfer = SIEVE_RULE_DEEPINFER;
  fuzz_state s = {.o = o, .space = o->space, .out = out, .first_failure = -1};
  name_run(&s);
  s.judge = (fuzz_judge){o->rule ? o->rule : &deepinfer, o->rule_name, SIEVE_PRECISION_FLOAT32};
  int rc = greet(&s);
  s.start = now();
  while (rc == 0 && !s.out_of_memory &&
         (o->rows ? s.rows < o->rows : now() - s.start < o->seconds) &&
         !(o->first && s.first_failure >= 0))
    round_of(&s);
  if (s.out_of_memory)
    fprintf(stderr, "sieve fuzz: out of memory; the report covers the rows judged so far\n");
  if (rc == 0)
    rc = report(&s, now() - s.start);
  if (rc == 0 && s.out_of_memory)
    rc = 2;
  conn_stop(&s.c, NULL, 0);
  for (int v = 0; v < FUZZ_VERDICT_COUNT; v++) {
    fuzz_failure_free(&s.found[v]);
    for (size_t i = 0; i < s.n_samples[v]; i++) {
      cJSON_Delete(s.samples[v][i].request);
      cJSON_Delete(s.samples[v][i].answer);
    }
  }
  return rc;
}
