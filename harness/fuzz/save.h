/*
 * The minimal cases of a fuzz run as a fixture file (fixtures/README.md, schema
 * sieve-fixtures/2), which `sieve run --fixtures FILE` replays: each request with the rule's
 * answer to every row as its expectation.
 */
#ifndef SIEVE_FUZZ_SAVE_H
#define SIEVE_FUZZ_SAVE_H

#include <stddef.h>
#include <stdint.h>

#include "judge.h"
#include "shrink.h"

/* Writes DIR/fuzz-S.json (DIR/fuzz-S-shard-I-of-N.json) whole (report/outfile.h) from the
 * failures that have a request, their ids "fuzz/" `label` "-" verdict; 0 with its path in
 * `path`, or -1 with the reason there. `label` is "seed-S" or "seed-S-shard-I-of-N", `replay`
 * the options that ask the same rows ("--seed S", "--seed S --shard I/N"). */
int fuzz_save(const char *dir, const char *label, const char *replay, const fuzz_judge *j,
              const fuzz_failure *found, size_t n, char *path, size_t len);

#endif /* SIEVE_FUZZ_SAVE_H */
