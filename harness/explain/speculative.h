/*
 * `sieve explain` of a speculative case: the chain's accept tests step by step, where it
 * stopped, the residual or the bonus draw (explain_speculate.c).
 */
#ifndef SIEVE_EXPLAIN_SPECULATE_H
#define SIEVE_EXPLAIN_SPECULATE_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "sieve.h"

/* Prints the verification of a speculate request under `rule`, named `name`; 0, or -1 when the
 * request is malformed or the rule rejects it (the error is printed). */
int explain_speculative(FILE *out, const cJSON *request, const char *name, const sieve_rule *rule);

#endif /* SIEVE_EXPLAIN_SPECULATE_H */
