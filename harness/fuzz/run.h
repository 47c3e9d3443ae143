/*
 * One run of sieve fuzz, as its parts share it: fuzz.c greets the implementation and starts
 * the run, requests.c makes the requests, pipeline.c asks them and judges the answers on
 * threads of their own, verdicts.c counts what the answers got, report.c says what was found.
 */
#ifndef SIEVE_FUZZ_RUN_H
#define SIEVE_FUZZ_RUN_H

#include <pthread.h>

#include "fuzz.h"
#include "hint.h"
#include "shrink.h"

#define FUZZ_MAX_BATCH 1024 /* the most rows a batch has, whatever hello says */
#define FUZZ_SAMPLES 16     /* failing rows kept per verdict to test the hint on */
#define FUZZ_MAX_THREADS 64 /* that judge a batch's rows */

/* A queue of requests between two threads (pipeline.c). */
typedef struct fuzz_queue {
  struct fuzz_job *head, **tail;
  int closed; /* nothing more comes */
} fuzz_queue;

typedef struct fuzz_state {
  const fuzz_options *o;
  fuzz_judge judge;
  fuzz_space space;
  conn c;
  char label[80], replay[80]; /* "seed-S-shard-I-of-N", "--seed S --shard I/N" */
  size_t max_batch;
  uint32_t ops; /* those of o->ops that hello offers */
  int threads;  /* that judge a batch's rows */
  double start; /* the monotonic clock's seconds when the run started */

  /* The generator thread's (requests.c, pipeline.c). */
  fuzz_rng rng;        /* the requests */
  fuzz_rng shapes_rng; /* which row is asked alone, and when the rows are reversed */
  int step;            /* the round's next request */
  struct fuzz_job *shapes, **shapes_end; /* other shapes of batches, made and not yet ready */
  size_t rows_made;

  /* Between the threads, under `lock`; `changed` is signalled on every change. */
  pthread_mutex_t lock;
  pthread_cond_t changed;
  fuzz_queue ready;     /* made, to ask */
  fuzz_queue asked;     /* answered, to judge */
  size_t held;          /* the logits of the requests made and not yet judged */
  int judging;          /* the judge thread holds a job */
  uint32_t to_shrink;   /* bit v: found[v] is to be shrunk */
  double first_failure; /* seconds since the start at which the first row failed, or -1 */
  int out_of_memory;    /* a request could not be made or judged: the run stops */

  /* The judge thread's (verdicts.c), read by the others once it is idle. */
  size_t rows, logits, requests, compared;
  size_t by_verdict[FUZZ_VERDICT_COUNT];
  fuzz_failure found[FUZZ_VERDICT_COUNT]; /* the first failure of each verdict, shrunk */
  fuzz_sample samples[FUZZ_VERDICT_COUNT][FUZZ_SAMPLES];
  size_t n_samples[FUZZ_VERDICT_COUNT];
  FILE *out;
} fuzz_state;

/* The monotonic clock in seconds. */
double fuzz_now(void);

/* Stops the run after what is judged so far: a request could not be made or judged. */
void fuzz_stop_out_of_memory(fuzz_state *s);

/* The round's next request (requests.c): a batch of filter or sample rows, then a few requests
 * of each op without rows; NULL when out of memory. */
cJSON *fuzz_round_request(fuzz_state *s);

/* The rows a request asks: its rows, its uniform's items, or one (a position, a chain); and the
 * logits of its rows or its chain's. */
size_t fuzz_rows_asked(const cJSON *request);
size_t fuzz_logits_asked(const cJSON *request);

/* Judging (verdicts.c): a batch's answer row by row, on s->threads threads; a request without
 * rows whole; and the count of a verdict, keeping the first failure of each for shrinking. */
void fuzz_judge_batch(fuzz_state *s, const cJSON *request, const cJSON *answer);
void fuzz_judge_whole(fuzz_state *s, const cJSON *request, const cJSON *answer);
void fuzz_record(fuzz_state *s, const fuzz_failure *seen);

/* Makes, asks and judges requests until the run is over (pipeline.c). */
void fuzz_run(fuzz_state *s);

/* Writes the report (report.c); sieve_fuzz's exit status. */
int fuzz_report(fuzz_state *s, double seconds);

#endif /* SIEVE_FUZZ_RUN_H */
