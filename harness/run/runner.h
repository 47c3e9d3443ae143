/*
 * `sieve run`: puts an implementation through the fixtures. The runner
 * layer: case selection, the two passes (each case alone, then inside a
 * batch), outcomes, and the report that every rendering is made from.
 */
#ifndef SIEVE_RUNNER_H
#define SIEVE_RUNNER_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "fit.h"
#include "protocol/conn.h"

typedef enum outcome {
  OUTCOME_PASS,
  OUTCOME_FAIL,
  OUTCOME_SKIP,
  OUTCOME_ERROR, /* an error where a value was due, or the reverse */
  OUTCOME_CRASH, /* crash, timeout, or an answer that is not protocol */
  OUTCOME_COUNT
} outcome;

const char *outcome_name(outcome o);

typedef struct case_result {
  const cJSON *fixture; /* the case while the run lasts; NULL for generated (distribution) cases */
  char id[192];
  const char *suite;
  const char *family;
  const char *seed_ref;
  outcome outcome;
  outcome alone; /* the first pass's: the case sent alone (the fit weighs it) */
  char detail[700];
  char why[400];          /* a failure of the first pass: the matcher's reason */
  char causes[600];       /* the readings whose answer a failure's is, comma-separated (suites.h) */
  char ruled_out[400];    /* a passing case: the readings it separates, comma-separated */
  char explained_by[200]; /* a failure the fit explains: its departures ("boundary=ge + ...") */
  int expected_failure;   /* listed in the expectation file */
  char expected_note[240];  /* its reason (and issue) there */
  char digest[17];          /* a failure's decisions (sieve_answer_digest), "" otherwise */
  char expected_digest[17]; /* the one the expectation file recorded, "" when none */
  int changed;          /* listed, still failing, but with other decisions than the file recorded */
  int masked;           /* listed, passes now, while the run has new failures that may hide it */
  char *answer;         /* this case's answer in the first pass, canonical JSON */
  uint32_t probed_axes; /* a fingerprint probe's row: the axes whose probes asked it */
  double seconds;       /* how long it took to answer (the first pass; the draws) */
} case_result;

typedef enum progress_mode { PROGRESS_NONE, PROGRESS_TERMINAL, PROGRESS_LINES } progress_mode;

typedef struct run_options {
  const impl_target *impl; /* what runs the implementation */
  const char *impl_arg;    /* as the user wrote it */
  const char *fixtures;
  const char **suites;   /* NULL-ended; the cases asked are the union of these three lists, */
  const char **families; /* and every suite but smoke when all three are empty */
  const char **cases;    /* case ids, or globs of them (fnmatch) */
  size_t shard_index, shard_count;
  int timeout_ms;
  int jobs;
  int progress;   /* a progress_mode: the progress line on stderr */
  int precision;  /* sieve_precision (check.h) from --precision; -1: as hello declares */
  int alone_only; /* --no-batches: the first pass only, no batches */
  const fit_start *fit_starts; /* the profiles the fit starts from and compares with */
  size_t n_fit_starts;
} run_options;

typedef struct run_report {
  const run_options *options;
  char impl_name[128], impl_version[64];
  char fixtures_schema[32];
  int own_rng;                  /* hello said "rng": "own": the draw is not the hash */
  int read_param_precision;     /* 1 + the param_precision that validate answers showed (the
                                   fingerprint's probe), or 0: the fit then takes it as given */
  int precision;                /* the arithmetic answers are compared at (sieve_precision) */
  const char *precision_source; /* "--precision", "hello" or "default" */
  case_result *cases;
  size_t n_cases;
  size_t counts[OUTCOME_COUNT];
  size_t unexpected;  /* failures not listed in the expectation file, or listed but changed */
  size_t now_passing; /* listed expected failures that passed */
  char note[256];     /* a run-wide remark, e.g. every case failed */
  fit_result fit;     /* the rule the answers follow (fit.h) */
} run_report;

/* A fixture case's result before it is asked: its id, suite, family and seed line. */
void sieve_case_of(case_result *r, const cJSON *fixture);

/* The first pass's verdict on a case's answer, at a precision (sieve_precision): the outcome
 * (also `alone`), and for a failure the matcher's reason, the digest, the detail and the readings
 * that give it; for a pass, the readings it rules out. */
void sieve_case_judge(case_result *r, const cJSON *answer, int precision);

/* An answer as canonical text without error messages (they are never compared), malloc'd; NULL
 * when out of memory. It removes the messages from `answer`. */
char *sieve_answer_text(cJSON *answer);

/* Nonzero when the case fails the gate: a failure the expectation file does not list or whose
 * answer changed from the one it recorded, or a listed failure that passed. */
int sieve_case_unexpected(const case_result *c);

/* The suites `sieve run` knows, NULL-ended. */
extern const char *const sieve_suites[];

/* Runs everything; 0, or -1 with a message in `err` for a harness error (exit 2). */
int sieve_run(const run_options *opt, run_report *report, char *err, size_t err_len);

/* Whether the run fails the gate: an unexpected failure, a listed failure that passed, or no
 * case asked at all (every one skipped: nothing was checked). */
int sieve_report_failed(const run_report *report);

/* Counts the outcomes, the unexpected failures and the expected failures that passed. */
void sieve_report_count(run_report *report);

void sieve_report_free(run_report *report);

#endif /* SIEVE_RUNNER_H */
