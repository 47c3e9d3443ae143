/*
 * sieve-bench: the oracle's fast path, its spec path and the floor (one pass
 * that reads each logit, scales it and sums its exp in float64, with the
 * oracle's own vectorized exp and sum, oracle/softmax.c) on the grid of
 * oracle/PERFORMANCE.md. Rows are fixture recipes, so harness/bench.py can
 * time generators/reference.py on the very same rows. One JSON line per grid
 * point on stdout: medians in milliseconds per batch. A batch of 32 rows is
 * split over two threads (both cores); a batch of 1 runs on one. The fast path
 * and the floor take turns, one repetition each, so that a load on the machine
 * that comes and goes weighs on both alike; the spec path's repetitions follow.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../oracle/internal.h"
#include "../../oracle/sieve.h"
#include "protocol/recipe.h"
#include "run/fixture.h"

#define BATCH_MAX 32

static const size_t vocabs[] = {32000, 128256, 151936, 262144};
static const sieve_params grid[] = {{0.7, 0.9, 50}, {1.0, 0.95, -1}, {1.0, 1.0, -1}};
static const char *const shapes[] = {"peaked", "flat"};

typedef enum { FAST, SPEC, FLOOR_PASS } path;

typedef struct job {
  float **rows;
  size_t vocab, first, count;
  const sieve_params *params;
  path which;
  double sink;
} job;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double floor_pass(const float *row, size_t vocab, double temperature) {
  return sieve__exp_sum(row, vocab, (float)(1.0 / temperature), 8.0, NULL);
}

static void *run_job(void *arg) {
  job *j = arg;
  double *lp = malloc(j->vocab * sizeof *lp);
  for (size_t r = j->first; lp && r < j->first + j->count; r++) {
    if (j->which == FLOOR_PASS)
      j->sink += floor_pass(j->rows[r], j->vocab, j->params->temperature);
    else if (j->which == FAST)
      sieve_filter(j->rows[r], j->vocab, j->params, NULL, lp, NULL);
    else
      sieve_filter_spec(j->rows[r], j->vocab, j->params, NULL, lp, NULL);
    j->sink += lp ? lp[0] : 0;
  }
  free(lp);
  return NULL;
}

/* One timed batch: a single thread for one row, two threads for more. */
static double time_batch(float **rows, size_t vocab, size_t batch, const sieve_params *p,
                         path which) {
  job jobs[2] = {{rows, vocab, 0, batch > 1 ? batch / 2 : 1, p, which, 0},
                 {rows, vocab, batch / 2, batch - batch / 2, p, which, 0}};
  double start = now_ms();
  if (batch == 1) {
    run_job(&jobs[0]);
  } else {
    pthread_t t;
    pthread_create(&t, NULL, run_job, &jobs[1]);
    run_job(&jobs[0]);
    pthread_join(t, NULL);
  }
  return now_ms() - start;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median milliseconds of each path (FAST, SPEC, FLOOR_PASS): the fast path and the floor
 * taking turns (the floor allocates nothing, so the fast path's allocations follow each other
 * as before), then the spec path. */
static void medians_ms(float **rows, size_t vocab, size_t batch, const sieve_params *p, int reps,
                       double median[3]) {
  double t[3][16];
  for (int i = 0; i < reps; i++) {
    t[FAST][i] = time_batch(rows, vocab, batch, p, FAST);
    t[FLOOR_PASS][i] = time_batch(rows, vocab, batch, p, FLOOR_PASS);
  }
  for (int i = 0; i < reps; i++)
    t[SPEC][i] = time_batch(rows, vocab, batch, p, SPEC);
  for (int which = FAST; which <= FLOOR_PASS; which++) {
    qsort(t[which], (size_t)reps, sizeof t[which][0], by_value);
    median[which] = t[which][reps / 2];
  }
}

static float *recipe_row(size_t vocab, int shape, int index) {
  char text[256], err[128];
  size_t v;
  snprintf(text, sizeof text,
           "{\"kind\":\"irwin_hall4\",\"seed\":\"%d\",\"v\":%zu,\"bits\":%d,\"exp\":%d,"
           "\"spike_every\":%d,\"spike_units\":%d}",
           1000 + 97 * index + shape, vocab, shape ? 2 : 20, shape ? -2 : -19, shape ? 0 : 40009,
           shape ? 0 : 1 << 23);
  cJSON *recipe = cJSON_Parse(text);
  float *row = sieve_recipe_logits(recipe, &v, err, sizeof err);
  cJSON_Delete(recipe);
  return row;
}

int main(int argc, char **argv) {
  /* glibc moves its mmap and trim thresholds as blocks are freed; with rows of this size, a
   * process whose allocations alternate as these do can pay a page fault on every page of
   * every call (600,000 faults in one run over the grid). Fixed thresholds, as a long-running
   * caller may set them, keep the pages; oracle/PERFORMANCE.md gives the figures without. */
  if (!getenv("SIEVE_BENCH_DEFAULT_MALLOC")) {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 128 << 20);
  }
  int reps = argc > 1 ? atoi(argv[1]) : 5;
  reps = reps < 1 ? 1 : reps > 15 ? 15 : reps;
  for (size_t vi = 0; vi < sizeof vocabs / sizeof vocabs[0]; vi++)
    for (int shape = 0; shape < 2; shape++) {
      float *rows[BATCH_MAX];
      for (int r = 0; r < BATCH_MAX; r++)
        rows[r] = recipe_row(vocabs[vi], shape, r);
      for (size_t g = 0; g < sizeof grid / sizeof grid[0]; g++)
        for (size_t batch = 1; batch <= BATCH_MAX; batch += BATCH_MAX - 1) {
          const sieve_params *p = &grid[g];
          double ms[3];
          medians_ms(rows, vocabs[vi], batch, p, reps, ms);
          printf("{\"v\":%zu,\"shape\":\"%s\",\"temperature\":%g,\"top_p\":%g,\"top_k\":%lld,"
                 "\"batch\":%zu,\"fast_ms\":%.6f,\"spec_ms\":%.6f,\"floor_ms\":%.6f}\n",
                 vocabs[vi], shapes[shape], p->temperature, p->top_p, (long long)p->top_k, batch,
                 ms[FAST], ms[SPEC], ms[FLOOR_PASS]);
          fflush(stdout);
        }
      for (int r = 0; r < BATCH_MAX; r++)
        free(rows[r]);
    }
  return 0;
}
