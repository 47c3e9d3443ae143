/*
 * Shrinking (shrink.h): first the batch, to the failing row alone or by bisection on its size;
 * then the failing row: its parameters and engine options one at a time, runs of its tokens
 * removed while nothing more can go (halving the run: delta debugging), and its logits rounded
 * whole.
 */
#define _POSIX_C_SOURCE 200809L
#include "shrink.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "run/check.h"

/* Whether the shrink may ask another request: within its budget of requests and its time. */
static int more(const fuzz_failure *f, size_t budget) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return f->asked < budget && (double)t.tv_sec + 1e-9 * (double)t.tv_nsec < f->deadline;
}

void fuzz_failure_free(fuzz_failure *f) {
  cJSON_Delete(f->request);
  cJSON_Delete(f->answer);
  cJSON_Delete(f->other);
  f->request = f->answer = f->other = NULL;
}

static cJSON *rows_of(const cJSON *request) {
  return cJSON_GetObjectItemCaseSensitive(request, "rows");
}

/* The request with its row `row` alone, copying that row only. */
static cJSON *alone(const cJSON *request, size_t row) {
  if (!rows_of(request))
    return cJSON_Duplicate(request, 1);
  cJSON *out = cJSON_CreateObject(), *rows = NULL;
  const cJSON *x;
  int ok = out != NULL;
  cJSON_ArrayForEach(x, request) {
    cJSON *copy = ok ? cJSON_Duplicate(strcmp(x->string, "rows") ? x : NULL, 1) : NULL;
    ok = ok && (strcmp(x->string, "rows") ? cJSON_AddItemToObject(out, x->string, copy)
                                          : (rows = cJSON_AddArrayToObject(out, "rows")) != NULL);
    if (!ok)
      cJSON_Delete(copy);
  }
  cJSON *r = ok && rows ? cJSON_Duplicate(cJSON_GetArrayItem(rows_of(request), (int)row), 1) : NULL;
  if (!r || !cJSON_AddItemToArray(rows, r))
    return cJSON_Delete(r), cJSON_Delete(out), NULL;
  return out;
}

cJSON *fuzz_shaped(const cJSON *request, fuzz_shape shape, size_t row) {
  if (shape == FUZZ_SHAPE_ALONE)
    return alone(request, row);
  cJSON *out = cJSON_Duplicate(request, 1), *rows = rows_of(out), *fresh = NULL;
  const size_t n = (size_t)cJSON_GetArraySize(rows);
  if (!out || shape == FUZZ_SHAPE_REPEATED)
    return out;
  if (!(fresh = cJSON_CreateArray()))
    return cJSON_Delete(out), NULL;
  for (size_t i = n; i-- > 0;)
    cJSON_AddItemToArray(fresh, cJSON_DetachItemFromArray(rows, (int)i));
  cJSON_ReplaceItemInObjectCaseSensitive(out, "rows", fresh);
  return out;
}

size_t fuzz_shaped_row(fuzz_shape shape, size_t i, size_t n, size_t row) {
  return shape == FUZZ_SHAPE_ALONE      ? (i == row ? 0 : SIZE_MAX)
         : shape == FUZZ_SHAPE_REVERSED ? n - 1 - i
                                        : i;
}

const char *fuzz_shape_how(fuzz_shape shape) {
  return shape == FUZZ_SHAPE_ALONE      ? "than alone"
         : shape == FUZZ_SHAPE_REVERSED ? "with the rows reversed"
                                        : "when asked again";
}

int fuzz_same_decisions(const cJSON *a, const cJSON *b) {
  char x[17], y[17];
  sieve_answer_digest(a, x);
  sieve_answer_digest(b, y);
  return strcmp(x, y) == 0;
}

/* The answer of row `row` to `request`, or NULL with the verdict that says why there is none. */
static cJSON *ask_row(conn *c, const cJSON *request, size_t row, fuzz_verdict *why) {
  char detail[256];
  cJSON *answer = conn_ask_json(c, request, detail, sizeof detail);
  cJSON *rows = cJSON_GetObjectItemCaseSensitive(answer, "rows"), *out = NULL;
  *why = !answer ? FUZZ_CRASH : FUZZ_MALFORMED;
  if (!rows_of(request))
    return answer;
  if (cJSON_IsArray(rows) && cJSON_GetArraySize(rows) == cJSON_GetArraySize(rows_of(request)))
    out = cJSON_DetachItemFromArray(rows, (int)row);
  cJSON_Delete(answer);
  return out;
}

int fuzz_fails_again(conn *c, const fuzz_judge *j, fuzz_failure *f, cJSON *request, size_t row) {
  fuzz_verdict none;
  cJSON *got = ask_row(c, request, row, &none), *other = NULL;
  fuzz_judgement verdict = {none, "no answer"};
  f->asked++;
  if (got && f->judgement.verdict == FUZZ_BATCH) {
    const size_t n = (size_t)cJSON_GetArraySize(rows_of(request));
    cJSON *shaped = fuzz_shaped(request, f->shape, row);
    other = shaped ? ask_row(c, shaped, fuzz_shaped_row(f->shape, row, n, row), &none) : NULL;
    f->asked++;
    verdict.verdict = other && !fuzz_same_decisions(got, other) ? FUZZ_BATCH : FUZZ_PASS;
    snprintf(verdict.why, sizeof verdict.why, "row %zu of a batch of %zu decides otherwise %s", row,
             n, fuzz_shape_how(f->shape));
    cJSON_Delete(shaped);
  } else if (got && fuzz_judge_answer(j, request, row, got, &verdict) != 0)
    verdict.verdict = FUZZ_PASS;
  const int same = verdict.verdict == f->judgement.verdict;
  if (same) {
    cJSON_Delete(f->answer);
    cJSON_Delete(f->other);
    f->answer = got, f->other = other, f->judgement = verdict;
  } else {
    cJSON_Delete(got);
    cJSON_Delete(other);
  }
  return same;
}

/* Tries a changed request in place of the failure's; keeps it when it fails the same way. */
static int try_request(conn *c, const fuzz_judge *j, fuzz_failure *f, cJSON *candidate,
                       size_t row) {
  if (candidate && fuzz_fails_again(c, j, f, candidate, row)) {
    cJSON_Delete(f->request);
    f->request = candidate;
    f->row = row;
    return 1;
  }
  cJSON_Delete(candidate);
  return 0;
}

/* ----------------------------------------------------------------------------- the batch */

/* The request with the failing row and the first `others` other rows, in their order. */
static cJSON *first_rows(const fuzz_failure *f, size_t others, size_t *row) {
  cJSON *out = cJSON_Duplicate(f->request, 1), *rows = rows_of(out);
  size_t n = (size_t)cJSON_GetArraySize(rows), kept = 0;
  for (size_t i = 0, at = 0; out && i < n; i++) {
    if (i == f->row)
      *row = at++;
    else if (kept < others)
      kept++, at++;
    else {
      cJSON_DeleteItemFromArray(rows, (int)at);
    }
  }
  return out;
}

/* The request without rows [from, to), the failing row kept; NULL when nothing would go. */
static cJSON *without_rows(const fuzz_failure *f, size_t from, size_t to, size_t *row) {
  if (from <= f->row && f->row < to && to - from == 1)
    return NULL;
  cJSON *out = cJSON_Duplicate(f->request, 1), *rows = rows_of(out);
  size_t removed_before = 0;
  for (size_t i = to; out && i-- > from;)
    if (i != f->row) {
      cJSON_DeleteItemFromArray(rows, (int)i);
      removed_before += i < f->row;
    }
  *row = f->row - removed_before;
  return out;
}

/* Runs of the other rows removed, halving the run while nothing more can go. */
static void remove_runs(conn *c, const fuzz_judge *j, fuzz_failure *f, size_t budget) {
  size_t n = (size_t)cJSON_GetArraySize(rows_of(f->request)), row = 0;
  for (size_t chunk = n / 2; chunk >= 1 && more(f, budget); chunk /= 2)
    for (size_t from = 0;
         from < (n = (size_t)cJSON_GetArraySize(rows_of(f->request))) && more(f, budget);) {
      const size_t to = from + chunk < n ? from + chunk : n;
      if (!try_request(c, j, f, without_rows(f, from, to, &row), row))
        from = to;
    }
}

/* The failing row alone, else the smallest batch of it and the rows before and after it in
 * order that still fails, by bisection on the batch size (a batched path that goes wrong above
 * some size shrinks to one row more than that size), then runs of rows removed with up to half
 * the budget (rows of other vocabularies, say). */
static void shrink_batch(conn *c, const fuzz_judge *j, fuzz_failure *f, size_t budget) {
  size_t n = (size_t)cJSON_GetArraySize(rows_of(f->request)), row = 0;
  if (n > 1 && f->judgement.verdict != FUZZ_BATCH &&
      try_request(c, j, f, fuzz_shaped(f->request, FUZZ_SHAPE_ALONE, f->row), 0))
    return;
  size_t lo = 1, hi = n - 1; /* the other rows: hi of them fail */
  while (lo < hi && more(f, budget)) {
    const size_t mid = lo + (hi - lo) / 2;
    if (try_request(c, j, f, first_rows(f, mid, &row), row))
      hi = mid;
    else
      lo = mid + 1;
  }
  remove_runs(c, j, f, f->asked < budget ? f->asked + (budget - f->asked) / 2 : budget);
}

/* ----------------------------------------------------------------------------- the row */

static cJSON *target_row(cJSON *request, size_t row) {
  return cJSON_GetArrayItem(rows_of(request), (int)row);
}

/* The request with one member of the failing row's params, or the engine options, left out. */
static cJSON *without_member(const fuzz_failure *f, const char *name) {
  cJSON *out = cJSON_Duplicate(f->request, 1);
  cJSON *holder = strcmp(name, "engine") == 0
                      ? out
                      : cJSON_GetObjectItemCaseSensitive(target_row(out, f->row), "params");
  if (!cJSON_HasObjectItem(holder, name))
    return cJSON_Delete(out), NULL;
  cJSON_DeleteItemFromObjectCaseSensitive(holder, name);
  return out;
}

/* Deletes items [from, to) of an array in one walk (by index, each would walk from the start). */
static void delete_range(cJSON *array, size_t from, size_t to) {
  cJSON *x = array ? array->child : NULL;
  for (size_t i = 0; x && i < to; i++) {
    cJSON *next = x->next;
    if (i >= from)
      cJSON_Delete(cJSON_DetachItemViaPointer(array, x));
    x = next;
  }
}

/* The request with tokens [from, to) of the failing row left out (and the engine options, whose
 * token ids would move); NULL when no token would be left. */
static cJSON *without_tokens(const fuzz_failure *f, size_t from, size_t to) {
  cJSON *out = cJSON_Duplicate(f->request, 1);
  cJSON *logits = cJSON_GetObjectItemCaseSensitive(target_row(out, f->row), "logits");
  const size_t v = (size_t)cJSON_GetArraySize(logits);
  if (!out || to - from >= v)
    return cJSON_Delete(out), NULL;
  delete_range(logits, from, to);
  cJSON_DeleteItemFromObjectCaseSensitive(out, "engine");
  return out;
}

/* The request with the failing row's finite logits rounded to multiples of `step`. */
static cJSON *rounded(const fuzz_failure *f, double step) {
  cJSON *out = cJSON_Duplicate(f->request, 1), *x;
  int changed = 0;
  cJSON_ArrayForEach(x, cJSON_GetObjectItemCaseSensitive(target_row(out, f->row), "logits")) {
    if (!cJSON_IsNumber(x))
      continue;
    const double r = nearbyint(x->valuedouble / step) * step;
    changed |= r != x->valuedouble;
    cJSON_SetNumberValue(x, r);
  }
  if (!changed)
    return cJSON_Delete(out), NULL;
  return out;
}

static void shrink_row(conn *c, const fuzz_judge *j, fuzz_failure *f, size_t budget) {
  static const char *const members[] = {"engine", "top_k", "top_p", "temperature"};
  for (size_t i = 0; i < 4 && more(f, budget); i++)
    try_request(c, j, f, without_member(f, members[i]), f->row);
  size_t v = (size_t)cJSON_GetArraySize(
      cJSON_GetObjectItemCaseSensitive(target_row(f->request, f->row), "logits"));
  for (size_t chunk = v / 2; chunk >= 1 && more(f, budget); chunk /= 2)
    for (size_t from = 0; from < v && more(f, budget);) {
      const size_t to = from + chunk < v ? from + chunk : v;
      if (try_request(c, j, f, without_tokens(f, from, to), f->row))
        v -= to - from;
      else
        from = to;
    }
  static const double steps[] = {16.0, 1.0, 0.25, 1.0 / 64};
  for (size_t i = 0; i < 4 && more(f, budget); i++)
    if (try_request(c, j, f, rounded(f, steps[i]), f->row))
      break;
}

/* ----------------------------------------------------------------------------- uniform */

/* The uniform request with its item `i` alone; NULL when it has one item only. */
static cJSON *one_item(const fuzz_failure *f, size_t i) {
  cJSON *out = cJSON_Duplicate(f->request, 1);
  cJSON *items = cJSON_GetObjectItemCaseSensitive(out, "items");
  const size_t n = (size_t)cJSON_GetArraySize(items);
  if (n < 2)
    return cJSON_Delete(out), NULL;
  delete_range(items, i + 1, n);
  delete_range(items, 0, i);
  return out;
}

/* A uniform request shrinks to the first of its items that fails alone. */
static void shrink_items(conn *c, const fuzz_judge *j, fuzz_failure *f, size_t budget) {
  const size_t n =
      (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(f->request, "items"));
  for (size_t i = 0; i < n && more(f, budget); i++)
    if (try_request(c, j, f, one_item(f, i), 0))
      return;
}

void fuzz_shrink(conn *c, const fuzz_judge *j, fuzz_failure *f, size_t budget, double seconds) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  f->deadline = (double)t.tv_sec + 1e-9 * (double)t.tv_nsec + seconds;
  if (f->judgement.verdict != FUZZ_CRASH && cJSON_HasObjectItem(f->request, "items"))
    shrink_items(c, j, f, budget);
  if (f->judgement.verdict == FUZZ_CRASH || !rows_of(f->request))
    return;
  shrink_batch(c, j, f, budget);
  shrink_row(c, j, f, budget);
}
