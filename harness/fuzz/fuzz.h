/*
 * `sieve fuzz` (README.md): random filter rows in batches of many shapes, each row judged
 * against the rule (judge.h), each answer compared across batch shapes and repetitions, and
 * every failure shrunk to a minimal case (shrink.h).
 */
#ifndef SIEVE_FUZZ_H
#define SIEVE_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "judge.h"
#include "protocol/conn.h"
#include "rows.h"

typedef struct fuzz_options {
  const impl_target *impl;
  const char *impl_arg; /* as the user wrote it, for the replay line */
  const sieve_rule *rule;
  const char *rule_name;
  const char *against; /* as the user wrote it (profile:NAME, rule:...), for the replay line */
  int precision;       /* sieve_precision; -1: as hello declares (float32 when it does not) */
  uint64_t seed;
  unsigned shard, shards; /* shard I of N: other rows for each I (0 of 1: the seed's own) */
  size_t rows;            /* stop after this many rows; 0: by time */
  double seconds;         /* stop after this long; 0: by rows */
  fuzz_space space;
  uint32_t ops;          /* bit o: op o (rows.h) may be asked, where hello offers it */
  const size_t *batches; /* the batch sizes to draw from */
  size_t n_batches;
  size_t max_logits; /* the most logits one request carries */
  int repeat;        /* each batch is sent this many times */
  int first;         /* stop after the batch of the first failure */
  const char *save;  /* a folder for the minimal cases as fixture files, or NULL */
  const char *junit; /* a JUnit report's path, or NULL */
  int timeout_ms;
  int threads; /* that judge a batch's rows; 0: one per core */
} fuzz_options;

/* The default batch sizes. */
extern const size_t fuzz_default_batches[];
extern const size_t fuzz_default_n_batches;

/* Runs the fuzz loop, writing its report to `out`. Returns 0 when no row failed, 1 when one
 * did, 2 when the implementation could not be started or greeted, or a file not written. */
int sieve_fuzz(const fuzz_options *o, FILE *out);

#endif /* SIEVE_FUZZ_H */
