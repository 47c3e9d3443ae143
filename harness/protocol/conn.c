/* An implementation as a child process or the oracle in process; see conn.h. */
#include "conn.h"

#include <stdio.h>

#include "recipe.h"
#include "serve.h"

proc_status conn_start(conn *c, const impl_target *target, int timeout_ms) {
  *c = (conn){.target = *target};
  c->p.pid = -1;
  return target->rule ? PROC_OK : proc_start(&c->p, target->argv, timeout_ms);
}

/* The oracle's answer, parsed. sieve serve answers every request with a JSON object, so a parse
 * that fails is the harness's own fault, said as such. */
static cJSON *answered(conn *c, const cJSON *request, char *detail, size_t detail_len) {
  sieve_serve_request(request, c->target.name, c->target.rule, &c->answer);
  cJSON *answer = c->answer.failed ? NULL : cJSON_ParseWithLength(c->answer.data, c->answer.len);
  if (!answer)
    snprintf(detail, detail_len, "the oracle in process could not answer (out of memory)");
  return answer;
}

cJSON *conn_ask(conn *c, const char *request, size_t len, char *detail, size_t detail_len) {
  if (!c->target.rule)
    return proc_ask(&c->p, request, len, detail, detail_len);
  cJSON *parsed = cJSON_ParseWithLength(request, len);
  cJSON *answer = parsed ? answered(c, parsed, detail, detail_len) : NULL;
  if (!parsed)
    snprintf(detail, detail_len, "the harness wrote a request that is not JSON");
  cJSON_Delete(parsed);
  return answer;
}

cJSON *conn_ask_json(conn *c, const cJSON *request, char *detail, size_t detail_len) {
  if (c->target.rule)
    return answered(c, request, detail, detail_len);
  jbuf b = {0};
  int rc = 0;
  if (c->target.reads_recipes)
    jbuf_json(&b, request);
  else
    rc = sieve_recipe_write_json(&b, request, detail, detail_len);
  cJSON *answer = rc || b.failed ? NULL : proc_ask(&c->p, b.data, b.len, detail, detail_len);
  if (b.failed)
    snprintf(detail, detail_len, "out of memory while writing the request");
  jbuf_free(&b);
  return answer;
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
  jbuf_free(&c->answer);
}
