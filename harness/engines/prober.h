/*
 * The prober of `sieve fingerprint`, shared by the probes (probes.c) and the verdicts
 * (fingerprint.c): the implementation under probe, what each axis's probe found, and the
 * helpers that ask it. Internal to engines/.
 */
#ifndef SIEVE_PROBER_H
#define SIEVE_PROBER_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "protocol/conn.h"
#include "sieve.h"

typedef unsigned mask; /* bit v: value v of the axis fits the answers */

enum { ASKED = 0, NOT_OFFERED, NO_ANSWER };

/* A request the probes asked and its answer: a case of the joint reading (joint.c). */
typedef struct probe_row {
  char *request; /* as sent */
  char *answer;  /* as answered, an error too, unformatted JSON */
  uint32_t axes; /* the axes whose probes asked it */
} probe_row;

typedef struct prober {
  conn c;
  const cJSON *hello; /* its answer to hello: the ops it offers */
  mask found[SIEVE_AXIS_COUNT];
  int status[SIEVE_AXIS_COUNT];
  char note[SIEVE_AXIS_COUNT][320];
  size_t crashes;  /* requests that crashed, hung or got garbage; each restarts the child */
  size_t in_a_row; /* requests in a row without an answer; at CONN_GIVE_UP none is sent any more */
  char last_crash[300];
  char last_error[200];        /* the message of the last answer that was an error */
  int axis;                    /* the axis being probed */
  mask also[SIEVE_AXIS_COUNT]; /* what answers outside the joint reading allow (validate) */
  probe_row *rows;             /* the filter rows asked, each once */
  size_t n_rows, cap_rows;
} prober;

#define ALL(axis) ((1u << sieve_axis_values(SIEVE_AXIS_##axis)) - 1u)
#define ONE(axis, value) (1u << SIEVE_##axis##_##value)

/* What one filter row came back as. */
typedef struct row_answer {
  int answered;      /* 0: not offered, no answer, or refused */
  int refused;       /* an invalid_request error: the implementation cannot pose the request */
  int error;         /* the row is an error */
  char field[16];    /* the error's field, when it names one that fits */
  size_t kept;       /* tokens with a finite logprob */
  unsigned long set; /* the kept ids below 64 */
  double lp[8];      /* the first logprobs; -inf for removed tokens */
} row_answer;

/* The answer to a request that is not a whole-request error, or NULL: a crash, a hang or
 * garbage counts in pr->crashes (pr->last_crash says which), an error's message goes to
 * pr->last_error. After CONN_GIVE_UP requests in a row without an answer none is sent any more. */
cJSON *pr_ask(prober *pr, const char *request);

/* An answer without what the probe asked for (`missing`), which counts as a crash does. */
void pr_garbage(prober *pr, const cJSON *answer, const char *missing);

/* Keeps a request and its answer for the joint reading, once per request. */
void pr_keep(prober *pr, const char *request, const cJSON *answer);

/* Forgets the rows asked. */
void pr_rows_free(prober *pr);

/* One filter row (the logits and params as JSON text), as it came back; kept in pr->rows. */
row_answer pr_filter_row(prober *pr, const char *logits, const char *params);
/* The same with the token ids the penalties count, as the row's JSON members (say
 * "\"output_ids\":[0]"); none when `ids` is NULL. */
row_answer pr_filter_row_ids(prober *pr, const char *logits, const char *params, const char *ids);

/* The kept set as "{1,3}", "1024 tokens" or "an error"; with _ids, long runs as "{0-15,17}". */
const char *pr_describe(const row_answer *r, char *out, size_t len);
const char *pr_describe_ids(const row_answer *r, char *out, size_t len);

/* The evidence of an axis's verdict, printed beside it. */
void pr_note(prober *pr, int axis, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* One probe per axis, indexed by SIEVE_AXIS_*: the values of the axis the answers fit. */
extern mask (*const fingerprint_probes[SIEVE_AXIS_COUNT])(prober *);

#endif /* SIEVE_PROBER_H */
