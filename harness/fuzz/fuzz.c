/*
 * sieve fuzz (fuzz.h; README.md): greets the implementation, runs (run.h) and reports. Each
 * round asks a batch of filter or sample rows, judges every row against the rule, and asks one
 * row again alone (now and then the whole batch reversed too, and with --repeat the same batch
 * again) to compare the decisions; then a few uniform, position and speculate requests, judged
 * whole. The first failure of each verdict is shrunk (shrink.h) and reported with the axis
 * values under which the rule gives the implementation's answer.
 */
#define _POSIX_C_SOURCE 200809L
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "run.h"
#include "run/check.h"
#include "run/fixture.h"

const size_t fuzz_default_batches[] = {1, 2, 7, 64, 257, 1024};
const size_t fuzz_default_n_batches = sizeof fuzz_default_batches / sizeof fuzz_default_batches[0];

double fuzz_now(void) {
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
  fflush(s->out); /* the seed, first, even if the run is killed before its report */
  cJSON_Delete(hello);
  return rc;
}

/* The run's name and the options that ask its rows again; a shard's rows come from its own
 * state (shard 0 of 1 is the seed's). */
static void name_run(fuzz_state *s) {
  const unsigned long long seed = (unsigned long long)s->o->seed;
  s->rng.state = s->o->shard ? s->o->seed ^ sieve_mix64(s->o->shard) : s->o->seed;
  s->shapes_rng.state = sieve_mix64(s->rng.state ^ UINT64_C(0x5348415045530000)); /* "SHAPES" */
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
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  s.threads = o->threads > 0 ? o->threads : cores > 0 ? (int)cores : 1;
  s.threads = s.threads < FUZZ_MAX_THREADS ? s.threads : FUZZ_MAX_THREADS;
  pthread_mutex_init(&s.lock, NULL);
  pthread_cond_init(&s.changed, NULL);
  name_run(&s);
  s.judge = (fuzz_judge){o->rule ? o->rule : &deepinfer, o->rule_name, SIEVE_PRECISION_FLOAT32};
  int rc = greet(&s);
  s.start = fuzz_now();
  if (rc == 0)
    fuzz_run(&s);
  if (s.out_of_memory)
    fprintf(stderr, "sieve fuzz: out of memory; the report covers the rows judged so far\n");
  if (rc == 0)
    rc = fuzz_report(&s, fuzz_now() - s.start);
  if (rc == 0 && s.out_of_memory)
    rc = 2;
  conn_stop(&s.c, NULL, 0);
  pthread_mutex_destroy(&s.lock);
  pthread_cond_destroy(&s.changed);
  for (int v = 0; v < FUZZ_VERDICT_COUNT; v++) {
    fuzz_failure_free(&s.found[v]);
    for (size_t i = 0; i < s.n_samples[v]; i++) {
      cJSON_Delete(s.samples[v][i].request);
      cJSON_Delete(s.samples[v][i].answer);
    }
  }
  return rc;
}
