/*
 * How a fuzz run asks (run.h). Three threads keep the implementation busy, which answers one
 * request at a time:
 * - the generator makes requests ahead and writes them out as the implementation reads them;
 * - this thread sends each as soon as the answer before it is in, and parses that answer while
 *   the implementation works on the next;
 * - the judge thread judges the answers in the order they were asked (verdicts.c).
 * A failure to shrink holds the next request back until every answer before it is judged, as
 * shrinking asks requests of its own.
 */
#include <stdio.h>
#include <stdlib.h>

#include "run.h"

#define FUZZ_HELD 1            /* requests of the most logits made and not yet judged, at most */
#define FUZZ_SHRINK_BUDGET 400 /* requests one shrink may ask */
#define FUZZ_SHRINK_SECONDS 60 /* and the seconds it may take */

/* A batch and its first answer, kept until its other shapes are judged. */
typedef struct fuzz_batch {
  cJSON *request, *answer;
  int refs;
} fuzz_batch;

/* A request: made, written out, asked, then judged. */
typedef struct fuzz_job {
  cJSON *request;    /* owned; a batch's belongs to its fuzz_batch */
  conn_request sent; /* the request written out */
  fuzz_batch *batch; /* a batch of rows, or the batch this job asks in another shape */
  int other_shape;   /* the job asks the batch in `shape` */
  fuzz_shape shape;
  size_t row;    /* the row asked alone */
  size_t logits; /* in the request, and at least 1 */
  cJSON *answer; /* once asked: the answer, or NULL with `why` */
  char why[400];
  struct fuzz_job *next; /* in a queue */
} fuzz_job;

static void release(fuzz_batch *b) {
  if (b && --b->refs == 0) {
    cJSON_Delete(b->request);
    cJSON_Delete(b->answer);
    free(b);
  }
}

static void drop(fuzz_job *job) {
  if (!job)
    return;
  if (!job->batch || job->other_shape)
    cJSON_Delete(job->request);
  conn_request_free(&job->sent);
  cJSON_Delete(job->answer);
  release(job->batch);
  free(job);
}

void fuzz_stop_out_of_memory(fuzz_state *s) {
  pthread_mutex_lock(&s->lock);
  s->out_of_memory = 1;
  pthread_mutex_unlock(&s->lock);
}

/* ----------------------------------------------------------------------------- queues */

/* Appends `job`. */
static void put(fuzz_state *s, fuzz_queue *q, fuzz_job *job) {
  pthread_mutex_lock(&s->lock);
  *q->tail = job;
  q->tail = &job->next;
  pthread_cond_broadcast(&s->changed);
  pthread_mutex_unlock(&s->lock);
}

/* The first job, waiting (when `wait`) while the queue is empty and open; NULL once it is
 * closed and empty, or empty when not waiting. `holding` (may be NULL) is set while the lock is
 * held, so that a waiter sees no gap. */
static fuzz_job *take(fuzz_state *s, fuzz_queue *q, int wait, int *holding) {
  pthread_mutex_lock(&s->lock);
  while (wait && !q->head && !q->closed)
    pthread_cond_wait(&s->changed, &s->lock);
  fuzz_job *job = q->head;
  if (job) {
    q->head = job->next;
    q->tail = q->head ? q->tail : &q->head;
    job->next = NULL;
  }
  if (holding)
    *holding = job != NULL;
  pthread_cond_broadcast(&s->changed);
  pthread_mutex_unlock(&s->lock);
  return job;
}

static void close_queue(fuzz_state *s, fuzz_queue *q) {
  pthread_mutex_lock(&s->lock);
  q->closed = 1;
  pthread_cond_broadcast(&s->changed);
  pthread_mutex_unlock(&s->lock);
}

/* ----------------------------------------------------------------------------- the generator */

static fuzz_job *new_job(fuzz_state *s, cJSON *request) {
  fuzz_job *job = request ? calloc(1, sizeof *job) : NULL;
  if (!job) {
    cJSON_Delete(request);
    fuzz_stop_out_of_memory(s);
  } else {
    job->request = request;
    job->logits = 1 + fuzz_logits_asked(request);
  }
  return job;
}

/* Queues the batch asked in `shape`: row `row` alone, the rows reversed, or the same again. */
static void queue_shape(fuzz_state *s, fuzz_batch *b, fuzz_shape shape, size_t row) {
  fuzz_job *job = new_job(s, fuzz_shaped(b->request, shape, row));
  if (!job)
    return;
  job->batch = b;
  job->other_shape = 1;
  job->shape = shape;
  job->row = row;
  b->refs++;
  *s->shapes_end = job;
  s->shapes_end = &job->next;
}

/* Makes `job` a batch's and queues its other shapes, to be asked right after it: one row
 * alone; the rows reversed one time in four; with --repeat K, the batch K - 1 more times. */
static void queue_shapes(fuzz_state *s, fuzz_job *job) {
  const size_t n =
      (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(job->request, "rows"));
  const size_t row = (size_t)fuzz_below(&s->shapes_rng, n);
  const int reversed = n > 2 && fuzz_below(&s->shapes_rng, 4) == 0;
  if (!(job->batch = malloc(sizeof *job->batch))) {
    fuzz_stop_out_of_memory(s);
    return;
  }
  *job->batch = (fuzz_batch){job->request, NULL, 1};
  if (n > 1)
    queue_shape(s, job->batch, FUZZ_SHAPE_ALONE, row);
  if (reversed)
    queue_shape(s, job->batch, FUZZ_SHAPE_REVERSED, row);
  for (int k = 1; k < s->o->repeat; k++)
    queue_shape(s, job->batch, FUZZ_SHAPE_REPEATED, row);
}

static int keep_going(fuzz_state *s) {
  pthread_mutex_lock(&s->lock);
  const int go = !s->out_of_memory && !(s->o->first && s->first_failure >= 0);
  pthread_mutex_unlock(&s->lock);
  return go && (s->o->rows ? s->rows_made < s->o->rows : fuzz_now() - s->start < s->o->seconds);
}

/* The next request: another shape of a batch first; else, while the run goes on, the round's
 * next; NULL when there is none. */
static fuzz_job *next_job(fuzz_state *s) {
  fuzz_job *job = s->shapes;
  if (job) {
    s->shapes = job->next;
    s->shapes_end = s->shapes ? s->shapes_end : &s->shapes;
    job->next = NULL;
    return job;
  }
  if (!keep_going(s) || !(job = new_job(s, fuzz_round_request(s))))
    return NULL;
  s->rows_made += fuzz_rows_asked(job->request);
  if (cJSON_HasObjectItem(job->request, "rows"))
    queue_shapes(s, job);
  return job;
}

/* Makes requests while those made and not yet judged hold fewer logits than FUZZ_HELD requests
 * of the most logits: enough to keep every thread busy, and a bound on memory. */
static void *generate(void *arg) {
  fuzz_state *s = arg;
  const size_t most = FUZZ_HELD * s->o->max_logits;
  for (fuzz_job *job;;) {
    pthread_mutex_lock(&s->lock);
    while (s->held >= most)
      pthread_cond_wait(&s->changed, &s->lock);
    pthread_mutex_unlock(&s->lock);
    if (!(job = next_job(s)))
      break;
    conn_prepare(&s->c, &job->sent, job->request);
    pthread_mutex_lock(&s->lock);
    s->held += job->logits;
    pthread_mutex_unlock(&s->lock);
    put(s, &s->ready, job);
  }
  close_queue(s, &s->ready);
  return NULL;
}

/* ----------------------------------------------------------------------------- the judge */

/* Compares the decisions of each row of a batch asked in another shape with its first answer;
 * no answer is a failure too. */
static void compare_shape(fuzz_state *s, const fuzz_job *job) {
  const cJSON *first = cJSON_GetObjectItemCaseSensitive(job->batch->answer, "rows");
  const cJSON *request = job->batch->request, *again = job->answer;
  const size_t n = (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(request, "rows"));
  fuzz_failure seen = {.request = job->request, .judgement = {FUZZ_CRASH, ""}, .shape = job->shape};
  if (!again) {
    snprintf(seen.judgement.why, sizeof seen.judgement.why, "%s", job->why);
    fuzz_record(s, &seen);
  }
  for (size_t i = 0; again && first && i < n; i++) {
    const size_t at = fuzz_shaped_row(job->shape, i, n, job->row);
    const cJSON *a = cJSON_GetArrayItem(first, (int)i);
    const cJSON *b = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(again, "rows"), (int)at);
    if (at == SIZE_MAX || (s->compared++, fuzz_same_decisions(a, b)))
      continue;
    seen = (fuzz_failure){.request = (cJSON *)request,
                          .row = i,
                          .judgement = {FUZZ_BATCH, ""},
                          .answer = (cJSON *)a,
                          .other = (cJSON *)b,
                          .other_batch = job->shape == FUZZ_SHAPE_ALONE ? 1 : n,
                          .shape = job->shape};
    snprintf(seen.judgement.why, sizeof seen.judgement.why,
             "row %zu of a batch of %zu decides otherwise %s", i, n, fuzz_shape_how(job->shape));
    fuzz_record(s, &seen);
  }
}

/* Judges an asked job, then drops it; a batch's answer stays for its other shapes. */
static void judge_job(fuzz_state *s, fuzz_job *job) {
  fuzz_failure seen = {.request = job->request, .judgement = {FUZZ_CRASH, ""}};
  if (job->other_shape) {
    compare_shape(s, job);
  } else if (!job->answer) {
    snprintf(seen.judgement.why, sizeof seen.judgement.why, "%s", job->why);
    s->rows += fuzz_rows_asked(job->request);
    fuzz_record(s, &seen);
  } else if (!job->batch) {
    fuzz_judge_whole(s, job->request, job->answer);
  } else {
    fuzz_judge_batch(s, job->request, job->answer);
    job->batch->answer = job->answer;
    job->answer = NULL;
  }
  s->requests += !job->other_shape;
  drop(job);
}

static void *judge(void *arg) {
  fuzz_state *s = arg;
  for (fuzz_job *job; (job = take(s, &s->asked, 1, &s->judging));) {
    const size_t logits = job->logits;
    judge_job(s, job);
    pthread_mutex_lock(&s->lock);
    s->held -= logits;
    s->judging = 0;
    pthread_cond_broadcast(&s->changed);
    pthread_mutex_unlock(&s->lock);
  }
  return NULL;
}

/* Waits until every answer handed to the judge thread is judged. */
static void wait_judged(fuzz_state *s) {
  pthread_mutex_lock(&s->lock);
  while (s->asked.head || s->judging)
    pthread_cond_wait(&s->changed, &s->lock);
  pthread_mutex_unlock(&s->lock);
}

/* ----------------------------------------------------------------------------- asking */

static int shrink_pending(fuzz_state *s) {
  pthread_mutex_lock(&s->lock);
  const int pending = s->to_shrink != 0;
  pthread_mutex_unlock(&s->lock);
  return pending;
}

/* Shrinks the failures found so far, once every answer is judged. */
static void shrink_found(fuzz_state *s) {
  wait_judged(s);
  for (int v = 0; v < FUZZ_VERDICT_COUNT; v++)
    if (s->to_shrink >> v & 1)
      fuzz_shrink(&s->c, &s->judge, &s->found[v], FUZZ_SHRINK_BUDGET, FUZZ_SHRINK_SECONDS);
  s->to_shrink = 0;
}

/* Parses a job's answer line (NULL: none, and job->why says why), its rows counted against the
 * request's. A line that is no answer restarts the implementation, which may be out of step, and
 * `following`, when it was sent meanwhile, is sent again. */
static void take_answer(fuzz_state *s, fuzz_job *job, char *line, fuzz_job *following) {
  job->answer = line ? conn_parse_answer(&s->c, line, job->why, sizeof job->why) : NULL;
  if (line && !job->answer) {
    char ignored[600];
    if (following)
      free(conn_answer_line(&s->c, ignored, sizeof ignored));
    conn_restart(&s->c, job->why, sizeof job->why);
    if (following)
      conn_send(&s->c, &following->sent);
  }
  free(line);
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(job->answer, "rows");
  const cJSON *asked = cJSON_GetObjectItemCaseSensitive(job->request, "rows");
  if (job->answer && asked &&
      (!cJSON_IsArray(rows) || cJSON_GetArraySize(rows) != cJSON_GetArraySize(asked))) {
    snprintf(job->why, sizeof job->why, "not one row of answers per row asked");
    cJSON_Delete(job->answer);
    job->answer = NULL;
  }
}

/* The next request made, sent; when not waiting, NULL unless one is ready. */
static fuzz_job *send_next(fuzz_state *s, int wait) {
  fuzz_job *job = take(s, &s->ready, wait, NULL);
  if (job)
    conn_send(&s->c, &job->sent);
  return job;
}

/* The next request is sent before the answer in hand is parsed when it is ready; else after that
 * answer is handed to the judge thread, whose judging may be what lets the generator make it
 * (the requests held are bounded). */
static void ask_all(fuzz_state *s) {
  for (fuzz_job *flying = send_next(s, 1), *following; flying; flying = following) {
    char *line = conn_answer_line(&s->c, flying->why, sizeof flying->why);
    const int shrink = shrink_pending(s);
    following = shrink ? NULL : send_next(s, 0);
    take_answer(s, flying, line, following);
    put(s, &s->asked, flying);
    if (shrink)
      shrink_found(s);
    if (!following)
      following = send_next(s, 1);
  }
  shrink_found(s);
}

void fuzz_run(fuzz_state *s) {
  pthread_t generator, judge_thread;
  s->shapes_end = &s->shapes;
  s->ready = (fuzz_queue){.tail = &s->ready.head};
  s->asked = (fuzz_queue){.tail = &s->asked.head};
  if (pthread_create(&judge_thread, NULL, judge, s) != 0) {
    fuzz_stop_out_of_memory(s);
    return;
  }
  if (pthread_create(&generator, NULL, generate, s) == 0) {
    ask_all(s);
    pthread_join(generator, NULL);
  } else {
    fuzz_stop_out_of_memory(s);
  }
  close_queue(s, &s->asked);
  pthread_join(judge_thread, NULL);
  for (fuzz_job *job; (job = s->shapes);) {
    s->shapes = job->next;
    drop(job);
  }
}
