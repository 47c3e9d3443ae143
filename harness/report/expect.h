/*
 * Expectation files (harness/CI.md): the known failures of an implementation, keyed by case id.
 *   {"schema": "sieve-fixtures/2",
 *    "expected_failures": {"ID": "reason",
 *                          "ID": {"reason": "...", "issue": "URL", "answer": "DIGEST"}}}
 * Read, checked against the fixtures (an id that is no case is an error, never ignored),
 * applied to a run, and written from one.
 */
#ifndef SIEVE_EXPECT_H
#define SIEVE_EXPECT_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "run/runner.h"

typedef struct expectations {
  cJSON *root;
  const cJSON *list; /* the expected_failures object */
} expectations;

/* Reads and checks the file's shape; 0, or -1 with a message naming the file and the fault. */
int sieve_expect_load(const char *path, expectations *e, char *err, size_t len);
void sieve_expect_free(expectations *e);

/* 0 when every listed id is a case of the fixtures at `fixtures_path` (or of the distribution
 * suite); -1 naming the ids that are not. */
int sieve_expect_known_ids(const expectations *e, const char *fixtures_path, char *err, size_t len);

/* Marks the listed cases of a run as expected failures, with their notes. */
void sieve_expect_apply(const expectations *e, run_report *report);

/*
 * Writes an expectation file whole (or not at all) to `path`. With `add_failures`, every case
 * that failed in this run is listed, with its old note when `old` lists it and its outcome and
 * detail otherwise, and the digest of this run's answer (--write-expect); without, only the
 * cases `old` lists stay, with their digests (--update-expect). Either way a case of `old` that
 * passed in this run goes, unless the run has new failures that may hide it and not `force`,
 * and one this run did not ask stays.
 */
int sieve_expect_write(const run_report *report, const expectations *old, const char *path,
                       int add_failures, int force, char *err, size_t len);

#endif /* SIEVE_EXPECT_H */
