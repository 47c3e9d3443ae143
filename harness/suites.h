/*
 * The suites of `sieve run`: which suite each fixture case belongs to, and
 * the one-line hints that say what a failure probably means.
 */
#ifndef SIEVE_SUITES_H
#define SIEVE_SUITES_H

#include <cjson/cJSON.h>
#include <stddef.h>

#define SUITES_MAX 16
#define SMOKE_PER_SUITE 2

/* The suite of a fixture case: by family, and by op for the seed examples. */
const char *suite_of_case(const cJSON *c);

/* The position of a suite in sieve_suites (runner.h), or SUITES_MAX - 1 if unknown. */
int suite_index(const char *suite);

/* A short guess at the cause of a failure ("" if none), e.g. "kept {0} expected {0,1}: ...". */
void suite_hint(const char *id, const cJSON *expect, const cJSON *got, char *out, size_t len);

#endif /* SIEVE_SUITES_H */
