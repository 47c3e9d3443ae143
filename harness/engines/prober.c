/* The prober's helpers; see prober.h. */
#define _GNU_SOURCE
#include "prober.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/jbuf.h"
#include "run/fixture.h"

/* A request that crashed, hung or got garbage; at CONN_GIVE_UP in a row, the last one. */
static void pr_no_answer(prober *pr) {
  pr->crashes++;
  if (++pr->in_a_row == CONN_GIVE_UP)
    snprintf(pr->last_crash + strlen(pr->last_crash),
             sizeof pr->last_crash - strlen(pr->last_crash),
             " (%d requests in a row without an answer: no more are sent)", CONN_GIVE_UP);
}

void pr_rows_free(prober *pr) {
  for (size_t i = 0; i < pr->n_rows; i++) {
    free(pr->rows[i].request);
    free(pr->rows[i].answer);
  }
  free(pr->rows);
  pr->rows = NULL;
  pr->n_rows = pr->cap_rows = 0;
}

/* Out of memory, the row is left out: the reading then has less evidence, never wrong evidence. */
void pr_keep(prober *pr, const char *request, const cJSON *answer) {
  for (size_t i = 0; i < pr->n_rows; i++)
    if (strcmp(pr->rows[i].request, request) == 0) {
      pr->rows[i].axes |= 1u << pr->axis;
      return;
    }
  if (pr->n_rows == pr->cap_rows) {
    size_t cap = pr->cap_rows ? 2 * pr->cap_rows : 32;
    probe_row *rows = realloc(pr->rows, cap * sizeof *rows);
    if (!rows)
      return;
    pr->rows = rows;
    pr->cap_rows = cap;
  }
  probe_row row = {strdup(request), cJSON_PrintUnformatted(answer), 1u << pr->axis};
  if (row.request && row.answer)
    pr->rows[pr->n_rows++] = row;
  else
    free(row.request), free(row.answer);
}

cJSON *pr_ask(prober *pr, const char *request) {
  if (pr->in_a_row >= CONN_GIVE_UP) {
    pr->crashes++;
    return NULL;
  }
  cJSON *answer = conn_ask(&pr->c, request, strlen(request), pr->last_crash, sizeof pr->last_crash);
  if (!answer)
    pr_no_answer(pr); /* an answer resets in_a_row where its caller has checked it */
  const cJSON *error = cJSON_GetObjectItemCaseSensitive(answer, "error");
  if (answer && !error)
    return answer;
  const cJSON *message = cJSON_GetObjectItemCaseSensitive(error, "message");
  snprintf(pr->last_error, sizeof pr->last_error, "%.190s",
           cJSON_IsString(message) ? message->valuestring : "no message");
  cJSON_Delete(answer);
  return NULL;
}

/* An answer without what the probe asked for counts as a crash does. */
void pr_garbage(prober *pr, const cJSON *answer, const char *missing) {
  char *text = cJSON_PrintUnformatted(answer);
  snprintf(pr->last_crash, sizeof pr->last_crash, "the answer has no %s: %.80s", missing,
           text ? text : "");
  free(text);
  pr_no_answer(pr);
}

static void pr_read_row(row_answer *r, const cJSON *lp) {
  int i = 0;
  for (const cJSON *x = lp->child; x; x = x->next, i++) {
    double v = cJSON_IsNumber(x) ? x->valuedouble : -INFINITY; /* null, a string: not kept */
    if (i < 8)
      r->lp[i] = v;
    if (isinf(v))
      continue;
    r->kept++;
    if (i < 64)
      r->set |= 1UL << i;
  }
}

row_answer pr_filter_row(prober *pr, const char *logits, const char *params) {
  return pr_filter_row_ids(pr, logits, params, NULL);
}

row_answer pr_filter_row_ids(prober *pr, const char *logits, const char *params, const char *ids) {
  row_answer r = {0};
  if (!sieve_hello_offers(pr->hello, "filter"))
    return r;
  jbuf b = {0};
  jbuf_raw(&b, "{\"op\":\"filter\",\"rows\":[{\"logits\":");
  jbuf_raw(&b, logits);
  jbuf_raw(&b, ",\"params\":");
  jbuf_raw(&b, params);
  if (ids) {
    jbuf_raw(&b, ",");
    jbuf_raw(&b, ids);
  }
  jbuf_raw(&b, "}]}");
  cJSON *answer = b.data && !b.failed ? pr_ask(pr, b.data) : NULL;
  const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(answer, "rows"), 0);
  const cJSON *lp = cJSON_GetObjectItemCaseSensitive(row, "logprobs");
  const cJSON *error = cJSON_GetObjectItemCaseSensitive(row, "error");
  const cJSON *field = cJSON_GetObjectItemCaseSensitive(error, "field");
  r.error = error != NULL;
  r.refused = r.error && !strcmp(sieve_case_str(error, "kind"), "invalid_request");
  if (cJSON_IsString(field) && strlen(field->valuestring) < sizeof r.field)
    strcpy(r.field, field->valuestring);
  r.answered = !r.refused && (r.error || cJSON_IsArray(lp));
  if (answer && !r.answered && !r.refused)
    pr_garbage(pr, answer, "rows[0].logprobs or rows[0].error");
  if (r.answered) {
    pr->in_a_row = 0;
    pr_keep(pr, b.data, answer);
  }
  jbuf_free(&b);
  if (cJSON_IsArray(lp))
    pr_read_row(&r, lp);
  cJSON_Delete(answer);
  return r;
}

/* "{1,3}", "{0,...,1023}" or "an error". */
const char *pr_describe(const row_answer *r, char *out, size_t len) {
  if (r->error)
    return snprintf(out, len, "an error"), out;
  size_t at = (size_t)snprintf(out, len, "{");
  for (int i = 0, n = 0; i < 64 && at < len; i++)
    if (r->set >> i & 1)
      at += (size_t)snprintf(out + at, len - at, "%s%d", n++ ? "," : "", i);
  if (at < len)
    snprintf(out + at, len - at, "%s}", r->kept > 64 ? ",..." : "");
  if (r->kept > 12)
    snprintf(out, len, "%zu tokens", r->kept);
  return out;
}

/* The kept ids as runs, "{0-15,17}", for the long tie blocks. */
const char *pr_describe_ids(const row_answer *r, char *out, size_t len) {
  if (r->error || r->kept <= 12)
    return pr_describe(r, out, len);
  size_t at = (size_t)snprintf(out, len, "{");
  for (int i = 0; i < 64 && at < len; i++) {
    if (!(r->set >> i & 1))
      continue;
    int j = i;
    while (j + 1 < 64 && r->set >> (j + 1) & 1)
      j++;
    at += (size_t)snprintf(out + at, len - at, "%s%d", at > 1 ? "," : "", i);
    if (j > i && at < len)
      at += (size_t)snprintf(out + at, len - at, "-%d", j);
    i = j;
  }
  if (at < len)
    snprintf(out + at, len - at, "}");
  return out;
}

void pr_note(prober *pr, int axis, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(pr->note[axis], sizeof pr->note[axis], fmt, ap);
  va_end(ap);
}
