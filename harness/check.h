/*
 * Matching an answer against a fixture's expectation (fixtures/README.md,
 * "Matchers"): the expectation is shaped like the response, and objects
 * with a "$" key say how a value is compared.
 */
#ifndef SIEVE_CHECK_H
#define SIEVE_CHECK_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

/* 1 when `got` matches `expect`; otherwise 0, with a one-line reason naming the path in `why`. */
int sieve_check(const cJSON *expect, const cJSON *got, char *why, size_t why_len);

/* The same; *error_mismatch is set when an error stood where an answer was due, or the reverse. */
int sieve_check_ex(const cJSON *expect, const cJSON *got, char *why, size_t why_len,
                   int *error_mismatch);

/* The mixsum64 checksum of 32-bit words (fixtures/README.md, "Recipes and checksums"). */
uint64_t sieve_mixsum64(const uint32_t *words, size_t n);

#endif /* SIEVE_CHECK_H */
