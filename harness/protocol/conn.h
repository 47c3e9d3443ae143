/*
 * An implementation under test as the harness reaches it: a child process speaking protocol v1
 * (proc.h), or the oracle under a rule answering in this process. The oracle is trusted, so a
 * profile: or rule: implementation needs no process, no pipe and no text of its requests; an
 * implementation that is not the oracle always runs as a child, where its crash is a result.
 */
#ifndef SIEVE_CONN_H
#define SIEVE_CONN_H

#include <cjson/cJSON.h>
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
} impl_target;

/* Requests in a row without an answer after which fingerprint and diff ask no more. */
#define CONN_GIVE_UP 3

typedef struct conn {
  impl_target target;
  proc p;      /* the child, when there is one */
  jbuf answer; /* the last answer of the oracle in process */
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

/* The implementation's answer to {"op":"hello","protocol":1}, as conn_ask gives it. */
cJSON *conn_hello(conn *c, char *detail, size_t detail_len);

/* Ends the child if there is one; writes how it ended into `how` (may be NULL). */
void conn_stop(conn *c, char *how, size_t how_len);

#endif /* SIEVE_CONN_H */
