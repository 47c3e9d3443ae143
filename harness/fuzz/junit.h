/*
 * A fuzz run as a JUnit report (Jenkins' junit-4.xsd, as harness/report/junit.c writes sieve
 * run's): one testcase for the run, and one per kind of failure with its minimal case.
 */
#ifndef SIEVE_FUZZ_JUNIT_H
#define SIEVE_FUZZ_JUNIT_H

#include <stddef.h>
#include <stdint.h>

/* One kind of failure: its verdict's name, the op of its minimal case, the reason, the rows
 * that gave it, and the report's text of its minimal case. */
typedef struct fuzz_junit_case {
  const char *verdict, *op, *why, *details;
  size_t rows;
  int error; /* a crash or a malformed answer: a JUnit <error>, not a <failure> */
} fuzz_junit_case;

/* What the whole run did. */
typedef struct fuzz_junit_run {
  const char *impl, *against;
  const char *label, *replay; /* "seed-S[-shard-I-of-N]", "--seed S[ --shard I/N]" */
  uint64_t seed;
  size_t rows, reach;
  double seconds;
} fuzz_junit_run;

/* Writes the report to `path` whole or not at all; -1 with the reason in `why` when it was not
 * written. */
int fuzz_junit_write(const char *path, const fuzz_junit_run *run, const fuzz_junit_case *cases,
                     size_t n, char *why, size_t len);

#endif /* SIEVE_FUZZ_JUNIT_H */
