/*
 * An implementation under test as the harness reaches it: a child process speaking protocol v1
 * (proc.h), or the oracle under a rule answering in this process. The oracle is trusted, so a
 * profile: or rule: implementation needs no process, no pipe and no text of its requests; an
 * implementation that is not the oracle always runs as a child, where its crash is a result.
 */
#ifndef SIEVE_CONN_H
#define SIEVE_CONN_H

#include <cjson/cJSON.h>
#include <pthread.h>
#include <stddef.h>

#include "jbuf.h"
#include "proc.h"
#include "sieve.h"

/* What runs an implementation: a command, or a rule of the oracle with its name in hello. */
typedef struct impl_target {
  char **argv;            /* the command of a child process, when `rule` is NULL */
  const sieve_rule *rule; /* the oracle in process under this rule */
  const char *name;       /* the rule's name: a profile, with "+AXIS=VALUE,..." when set */
  int reads_recipes;      /* the child is sieve serve (lib:), which reads recipe rows */
  unsigned options;       /* the sampling options the rule takes (request.h's bits) */
} impl_target;

/* Requests in a row without an answer after which fingerprint and diff ask no more. */
#define CONN_GIVE_UP 3

typedef struct conn {
  impl_target target;
  proc p; /* the child, when there is one */
  /* A request sent (conn_send), asked on a thread of its own, and its answer line. */
  const struct conn_request *sent;
  pthread_t asker;
  int asking;
  char *line;
  char detail[600];
} conn;

/* Starts the child (the oracle needs no start); proc_start's status. */
proc_status conn_start(conn *c, const impl_target *target, int timeout_ms);

/*
 * One request, as text or parsed, for one JSON object: the answer, or NULL when the child
 * crashed, hung, exited or answered something else; then `detail` says which and the child has
 * been started again (proc_ask). A parsed request may hold recipe rows (recipe.h): the oracle and
 * sieve serve read them, and any other child gets them written out as arrays.
 */
cJSON *conn_ask(conn *c, const char *request, size_t len, char *detail, size_t detail_len);
cJSON *conn_ask_json(conn *c, const cJSON *request, char *detail, size_t detail_len);

/* A request written out as the implementation reads it, ready to send. */
typedef struct conn_request {
  const cJSON *json;
  jbuf text;        /* for a child */
  char failed[300]; /* why it could not be written, or "" */
} conn_request;

/*
 * conn_ask_json in parts, so that the implementation works while the caller does something
 * else. conn_prepare writes the request out (on any thread: it reads `c` only); conn_send asks
 * it on a thread of its own; conn_answer_line waits for its answer line (malloc'd), or NULL as
 * conn_ask_json says; conn_parse_answer may parse it while the next request is sent. One
 * request at a time is sent, and it and its JSON must live until its line.
 */
int conn_prepare(const conn *c, conn_request *r, const cJSON *request);
void conn_send(conn *c, const conn_request *r);
char *conn_answer_line(conn *c, char *detail, size_t detail_len);
void conn_request_free(conn_request *r);

/* The line as a JSON object, or NULL with `detail` saying what it is instead. */
cJSON *conn_parse_answer(conn *c, const char *line, char *detail, size_t detail_len);

/* Starts the child again after a line that was not an answer (proc_restart). */
void conn_restart(conn *c, char *detail, size_t detail_len);

/* The implementation's answer to {"op":"hello","protocol":1}, as conn_ask gives it. */
cJSON *conn_hello(conn *c, char *detail, size_t detail_len);

/* Ends the child if there is one; writes how it ended into `how` (may be NULL). */
void conn_stop(conn *c, char *how, size_t how_len);

#endif /* SIEVE_CONN_H */
