/*
 * The protocol's `speculate` op (PROTOCOL.md): the request read into a sieve_speculation, and
 * the answer written from sieve_speculate's results.
 */
#ifndef SIEVE_SPECULATION_H
#define SIEVE_SPECULATION_H

#include <cjson/cJSON.h>

#include "jbuf.h"
#include "request.h"
#include "sieve.h"

typedef struct spec_request {
  sieve_speculation spec; /* points into the buffers below */
  sieve_engine engine;
  int sample_draft; /* draft.tokens left out: the implementation draws the draft itself */
  float *target, *draft;
  int64_t *tokens, *ids;
  req_penalties target_penalties, draft_penalties; /* the params' penalties; no ids are counted */
} spec_request;

/* Reads a speculate request; on failure every buffer is freed and `e` names the field. */
int req_speculation(const cJSON *req, spec_request *out, req_error *e);
void spec_request_free(spec_request *r);

/* Records the error `code` of a speculate request, with the part at fault in its message
 * (target.params, draft.rows[2], ...) when `rule` (the oracle's; NULL for a library) finds it
 * there. Returns -1. */
int spec_fail(req_error *e, const spec_request *r, const sieve_rule *rule, int code);

/* The answer: accepted, tokens, bonus, the steps, and with `extras` (the oracle) the margins. */
void write_speculation(jbuf *b, const spec_request *r, const sieve_speculate_step *steps,
                       const int64_t *tokens, const sieve_speculate_result *result, int extras);

#endif /* SIEVE_SPECULATION_H */
