/* What the answers of a fuzz run got (run.h): each judged, counted, and kept when it failed. */
#include <stdlib.h>

#include "run.h"

#define FUZZ_SAMPLE_LOGITS 4096 /* the largest row kept as a sample for the hint */

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

/* The first failure of each verdict is kept, with copies of what `seen` borrows, to be shrunk
 * (pipeline.c); the first rows of each are kept as samples for the hint. */
void fuzz_record(fuzz_state *s, const fuzz_failure *seen) {
  const fuzz_verdict v = seen->judgement.verdict;
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(seen->request, "rows");
  pthread_mutex_lock(&s->lock);
  if (v >= FUZZ_KEPT && s->first_failure < 0)
    s->first_failure = fuzz_now() - s->start;
  pthread_mutex_unlock(&s->lock);
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
  pthread_mutex_lock(&s->lock);
  s->to_shrink |= f->request ? UINT32_C(1) << v : 0;
  pthread_mutex_unlock(&s->lock);
}

typedef struct judge_part {
  const fuzz_judge *judge;
  const cJSON *request, *got;
  fuzz_judgement *out;
  size_t first, step, n;
  int failed;
} judge_part;

static void *judge_part_run(void *arg) {
  judge_part *p = arg;
  for (size_t i = p->first; i < p->n; i += p->step)
    p->failed |= fuzz_judge_answer(p->judge, p->request, i, cJSON_GetArrayItem(p->got, (int)i),
                                   &p->out[i]) != 0;
  return NULL;
}

/* Judges the n rows of a batch into out[0..n) on s->threads threads, this one among them; a
 * thread that cannot be started leaves its rows to this one. -1 when out of memory. */
static int judge_rows(const fuzz_state *s, const cJSON *request, const cJSON *got,
                      fuzz_judgement *out, size_t n) {
  pthread_t threads[FUZZ_MAX_THREADS];
  judge_part parts[FUZZ_MAX_THREADS];
  const size_t k = n < (size_t)s->threads ? (n ? n : 1) : (size_t)s->threads;
  size_t started = 1;
  int failed = 0;
  for (size_t t = 0; t < k; t++)
    parts[t] = (judge_part){&s->judge, request, got, out, t, k, n, 0};
  while (started < k &&
         pthread_create(&threads[started], NULL, judge_part_run, &parts[started]) == 0)
    started++;
  for (size_t t = started; t < k; t++)
    judge_part_run(&parts[t]);
  judge_part_run(&parts[0]);
  for (size_t t = 1; t < started; t++)
    pthread_join(threads[t], NULL);
  for (size_t t = 0; t < k; t++)
    failed |= parts[t].failed;
  return failed ? -1 : 0;
}

void fuzz_judge_batch(fuzz_state *s, const cJSON *request, const cJSON *answer) {
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(request, "rows");
  const cJSON *got = cJSON_GetObjectItemCaseSensitive(answer, "rows");
  const size_t n = (size_t)cJSON_GetArraySize(rows);
  fuzz_judgement *judged = calloc(n ? n : 1, sizeof *judged);
  if (!judged || judge_rows(s, request, got, judged, n) != 0) {
    fuzz_stop_out_of_memory(s);
    free(judged);
    return;
  }
  s->logits += fuzz_logits_asked(request);
  for (size_t i = 0; i < n; i++) {
    fuzz_failure seen = {.request = (cJSON *)request,
                         .row = i,
                         .judgement = judged[i],
                         .answer = cJSON_GetArrayItem(got, (int)i)};
    s->rows++;
    if (seen.judgement.verdict == FUZZ_REACH || seen.judgement.verdict >= FUZZ_KEPT)
      fuzz_record(s, &seen);
  }
  free(judged);
}

size_t fuzz_rows_asked(const cJSON *request) {
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(request, "rows");
  const cJSON *items = cJSON_GetObjectItemCaseSensitive(request, "items");
  return rows ? (size_t)cJSON_GetArraySize(rows) : items ? (size_t)cJSON_GetArraySize(items) : 1;
}

size_t fuzz_logits_asked(const cJSON *request) {
  const cJSON *x;
  size_t n = 0;
  cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(request, "rows")) n +=
      (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(x, "logits"));
  for (int side = 0; side < 2; side++)
    cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(
                              cJSON_GetObjectItemCaseSensitive(request, side ? "draft" : "target"),
                              "rows")) n += (size_t)cJSON_GetArraySize(x);
  return n;
}

void fuzz_judge_whole(fuzz_state *s, const cJSON *request, const cJSON *answer) {
  fuzz_failure seen = {.request = (cJSON *)request, .answer = (cJSON *)answer};
  s->rows += fuzz_rows_asked(request);
  s->logits += fuzz_logits_asked(request);
  if (fuzz_judge_answer(&s->judge, request, 0, answer, &seen.judgement))
    fuzz_stop_out_of_memory(s);
  if (seen.judgement.verdict == FUZZ_REACH || seen.judgement.verdict >= FUZZ_KEPT)
    fuzz_record(s, &seen);
}
