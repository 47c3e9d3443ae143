/*
 * The distribution suite: for implementations that draw with their own
 * random generator (and for any that draw), a statistical test that the
 * draws follow the kept distribution the oracle computes.
 *
 * Each case sends DISTRIBUTION_DRAWS sample rows of the same logits (seeds
 * and positions fixed, so a run repeats). A draw of a removed token fails
 * at once; otherwise a chi-square goodness-of-fit test over the kept tokens
 * fails when its p-value is below DISTRIBUTION_ALPHA / number of cases, so
 * the whole suite's false-alarm rate is at most DISTRIBUTION_ALPHA.
 */
#ifndef SIEVE_DISTRIBUTION_H
#define SIEVE_DISTRIBUTION_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "runner.h"

#define DISTRIBUTION_MAX_CASES 8
#define DISTRIBUTION_DRAWS 10000
#define DISTRIBUTION_ALPHA 1e-6

/* Sends one request and returns the parsed answer, or NULL with `detail` filled. */
typedef cJSON *(*exchange_fn)(void *ctx, const char *request, size_t len, char *detail,
                              size_t detail_len);

/* Fills `out` with this shard's distribution cases; returns how many. */
size_t distribution_cases(case_result *out, size_t shard_index, size_t shard_count);

/* Runs one distribution case through `ex` and sets its outcome. */
void distribution_run(case_result *r, exchange_fn ex, void *ctx);

#endif /* SIEVE_DISTRIBUTION_H */
