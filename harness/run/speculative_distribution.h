/*
 * The speculative-distribution suite: a statistical test of speculative verification for
 * implementations that draw with their own generator (and for any that draw), the counterpart
 * of the distribution suite for the speculate op (oracle/SPEC.md, "Speculative decoding").
 *
 * Each case sends SPECDIST_RUNS speculate requests of the same target and draft rows with the
 * draft tokens left out, so the implementation draws the drafts, the accept tests and the
 * replacements itself. Speculative verification is lossless: whatever the drafts, the token
 * committed at position j of a chain that reaches j follows the target's processed p_j, the
 * drafts follow the draft's processed q_j, and the number of accepted drafts follows the rule's
 * acceptance probabilities sum_x min(p_j(x), q_j(x)). Per case, chi-square tests check the draft
 * tokens of each row, the accepted count, and the committed token of each position; every
 * answer must also commit its accepted drafts and exactly one more token. Each test fails below
 * SPECDIST_ALPHA / (the suite's number of tests), so the suite's false-alarm rate is at most
 * SPECDIST_ALPHA, the distribution suite's.
 *
 * A failure names the known bugs whose distributions the counts fit (harness/run/STATISTICS.md);
 * `sieve explain speculative-distribution` prints each case's power against each of them.
 */
#ifndef SIEVE_SPECULATIVE_DISTRIBUTION_H
#define SIEVE_SPECULATIVE_DISTRIBUTION_H

#include <stdio.h>

#include "distribution.h"
#include "runner.h"

#define SPECDIST_MAX_CASES 8
#define SPECDIST_RUNS 10000
#define SPECDIST_ALPHA 1e-6
#define SPECDIST_SUITE "speculative-distribution"

/* Fills `out` with the suite's cases, every one (the runner shards them with the rest). */
size_t specdist_cases(case_result *out);

/* Whether `id` names one of the suite's cases. */
int specdist_is_case(const char *id);

/* Runs one case through `ex` and sets its outcome, its detail and the bugs its counts fit. */
void specdist_run(case_result *r, exchange_fn ex, void *ctx);

/* Prints case `id`'s rows, the rule's distributions and its power against each known bug, or
 * every case's (id NULL); with `markdown`, the suite's power table (STATISTICS.md). */
int specdist_explain(FILE *out, const char *id, int markdown);

#endif /* SIEVE_SPECULATIVE_DISTRIBUTION_H */
