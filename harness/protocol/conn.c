/* An implementation as a child process or the oracle in process; see conn.h. */
#include "conn.h"

#include <stdio.h>
#include <stdlib.h>

#include "recipe.h"
#include "serve.h"

proc_status conn_start(conn *c, const impl_target *target, int timeout_ms) {
  *c = (conn){.target = *target};
  c->p.pid = -1;
  return target->rule ? PROC_OK : proc_start(&c->p, target->argv, timeout_ms);
}

cJSON *conn_ask(conn *c, const char *request, size_t len, char *detail, size_t detail_len) {
  if (!c->target.rule)
    return proc_ask(&c->p, request, len, detail, detail_len);
  cJSON *parsed = cJSON_ParseWithLength(request, len);
  cJSON *answer = parsed ? conn_ask_json(c, parsed, detail, detail_len) : NULL;
  if (!parsed)
    snprintf(detail, detail_len, "the harness wrote a request that is not JSON");
  cJSON_Delete(parsed);
  return answer;
}

int conn_prepare(const conn *c, conn_request *r, const cJSON *request) {
  *r = (conn_request){.json = request};
  if (c->target.rule)
    return 0;
  int rc = 0;
  if (c->target.reads_recipes)
    jbuf_json(&r->text, request);
  else
    rc = sieve_recipe_write_json(&r->text, request, r->failed, sizeof r->failed);
  if (r->text.failed)
    snprintf(r->failed, sizeof r->failed, "out of memory while writing the request");
  return rc || r->text.failed ? -1 : 0;
}

void conn_request_free(conn_request *r) { jbuf_free(&r->text); }

/* The answer line to a prepared request, as proc_ask_line gives it. */
static char *ask_line(conn *c, const conn_request *r, char *detail, size_t detail_len) {
  if (r->failed[0])
    return snprintf(detail, detail_len, "%s", r->failed), NULL;
  if (!c->target.rule)
    return proc_ask_line(&c->p, r->text.data, r->text.len, detail, detail_len);
  jbuf answer = {0};
  sieve_serve_request(r->json, c->target.name, c->target.rule, c->target.options, &answer);
  if (answer.failed)
    snprintf(detail, detail_len, "the oracle in process could not answer (out of memory)");
  return answer.failed ? (jbuf_free(&answer), NULL) : answer.data;
}

cJSON *conn_parse_answer(conn *c, const char *line, char *detail, size_t detail_len) {
  cJSON *answer = proc_parse_answer(line, detail, detail_len);
  /* sieve serve answers every request with a JSON object: a parse that fails ran out of memory. */
  if (!answer && c->target.rule)
    snprintf(detail, detail_len, "the oracle in process could not answer (out of memory)");
  return answer;
}

cJSON *conn_ask_json(conn *c, const cJSON *request, char *detail, size_t detail_len) {
  conn_request r;
  conn_prepare(c, &r, request);
  char *line = ask_line(c, &r, detail, detail_len);
  cJSON *answer = line ? conn_parse_answer(c, line, detail, detail_len) : NULL;
  if (line && !answer)
    conn_restart(c, detail, detail_len);
  free(line);
  conn_request_free(&r);
  return answer;
}

static void *ask_sent(void *arg) {
  conn *c = arg;
  c->line = ask_line(c, c->sent, c->detail, sizeof c->detail);
  return NULL;
}

void conn_send(conn *c, const conn_request *r) {
  c->sent = r;
  c->detail[0] = '\0';
  c->asking = pthread_create(&c->asker, NULL, ask_sent, c) == 0;
  if (!c->asking)
    ask_sent(c);
}

char *conn_answer_line(conn *c, char *detail, size_t detail_len) {
  if (c->asking)
    pthread_join(c->asker, NULL);
  c->asking = 0;
  snprintf(detail, detail_len, "%s", c->detail);
  char *line = c->line;
  c->line = NULL;
  return line;
}

void conn_restart(conn *c, char *detail, size_t detail_len) {
  if (!c->target.rule)
    proc_restart(&c->p, detail, detail_len);
}

cJSON *conn_hello(conn *c, char *detail, size_t detail_len) {
  static const char hello[] = "{\"op\":\"hello\",\"protocol\":" SIEVE_PROTOCOL_TEXT "}";
  return conn_ask(c, hello, sizeof hello - 1, detail, detail_len);
}

void conn_stop(conn *c, char *how, size_t how_len) {
  if (!c->target.rule)
    proc_stop(&c->p, how, how_len);
  else if (how)
    snprintf(how, how_len, "the oracle in process");
}
