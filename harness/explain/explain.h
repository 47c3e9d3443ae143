/*
 * One row under the rule, step by step (explain.c): the tokens by probability, the mass before
 * each, the cuts, the kept distribution and the draw, beside another profile's rule; as a table,
 * and as a picture (svg.h). A speculative case is shown test by test (speculative.h).
 */
#ifndef SIEVE_EXPLAIN_H
#define SIEVE_EXPLAIN_H

#include <cjson/cJSON.h>

#include "engines/profiles.h"
#include "protocol/conn.h"
#include "svg.h"

typedef struct explain_request {
  const cJSON *fixture_case;     /* the case explained, or NULL for `row` */
  row_input row;                 /* a row given with its parameters (no case) */
  const engine_profile *profile; /* a rule shown beside DeepInfer's, or NULL */
  const char *impl_arg;          /* an implementation asked the case too, or NULL */
  const impl_target *impl;       /* what runs it */
  const char *svg;               /* where to draw the picture, or NULL */
} explain_request;

/* Prints the explanation on stdout; returns the exit status (2: the case cannot be explained,
 * the picture cannot be drawn, or the implementation did not answer hello). */
int sieve_explain(const explain_request *rq);

/* The picture of a case's first row as an HTML page holds it: DeepInfer's rule, and beside it
 * the answer (`answer_text`, as sieve run keeps it) of the implementation called `name`. 0, or
 * -1 when the case has no row the rule answers with logprobs (a speculative chain, an error). */
int explain_case_svg(FILE *out, const cJSON *fixture_case, const char *answer_text,
                     const char *name);

#endif /* SIEVE_EXPLAIN_H */
