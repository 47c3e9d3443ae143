/*
 * Naming the reading (README.md, "Naming the reading"): the misreadings of the seed that the
 * generators transcribe (generators/readings.py) whose answers are those of a failure's minimal
 * case and of the failing rows kept of its kind. The generators run as a child on the requests
 * and give each its readings with their expectations, as a fixture case lists them; each answer
 * is then matched as sieve run matches a case's readings.
 */
#ifndef SIEVE_FUZZ_READINGS_H
#define SIEVE_FUZZ_READINGS_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "sieve.h"

/* A request and an implementation's answer, of a kind of failure. */
typedef struct fuzz_answered {
  const cJSON *request; /* one row alone, or a request without rows */
  const cJSON *answer;  /* the row's answer, or the whole answer */
  int kind;
} fuzz_answered;

/* The readings named for a kind of failure. */
typedef struct fuzz_named {
  char names[700];       /* "name gives 15 of 16: hint; ...", or "" */
  size_t rebuilt, total; /* the kind's answers whose request the generators rebuild, and all */
} fuzz_named;

/*
 * For each kind k < kinds, the readings that give its first answer the generators rebuild (the
 * minimal case's, when they can) and more than half of those answers, in named[k]. The
 * generators refuse a request with a decision within float reach (as they build no fixture on
 * one). 0; 1 when the rule is not
 * DeepInfer's, as the readings are misreadings of it; -1 with `why` when they could not be
 * tried (no generators/ beside this sieve, no PyTorch, a child that failed).
 */
int fuzz_name_readings(const sieve_rule *rule, const fuzz_answered *answered, size_t n,
                       int precision, fuzz_named *named, int kinds, char *why, size_t why_len);

#endif /* SIEVE_FUZZ_READINGS_H */
