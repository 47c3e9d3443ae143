/*
 * Shrinking a failure (README.md, "Shrinking"): the smallest batch that still fails the same
 * way, then a smaller row: fewer tokens, rounder logits, simpler parameters; a uniform request,
 * the first of its items that fails alone. "The same way" is the same verdict (judge.h) on the
 * same row.
 */
#ifndef SIEVE_FUZZ_SHRINK_H
#define SIEVE_FUZZ_SHRINK_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "judge.h"
#include "protocol/conn.h"

/* The other shapes a batch is asked in: one row alone, the rows reversed, the same again. */
typedef enum fuzz_shape { FUZZ_SHAPE_ALONE, FUZZ_SHAPE_REVERSED, FUZZ_SHAPE_REPEATED } fuzz_shape;

/* A failing request: a filter request, and which of its rows fails. */
typedef struct fuzz_failure {
  cJSON *request; /* owned */
  size_t row;
  fuzz_judgement judgement;
  cJSON *answer;        /* the implementation's answer to that row, owned */
  cJSON *other;         /* FUZZ_BATCH: the row's answer in the other shape, owned */
  size_t other_batch;   /* the size of that other batch */
  fuzz_shape shape;     /* FUZZ_BATCH: the shape that answered otherwise */
  size_t asked;         /* requests the shrinking asked */
  size_t original_rows; /* the batch the failure was found in */
  double deadline;      /* the monotonic clock's seconds at which shrinking stops */
} fuzz_failure;

/* Whether asking `request` again gives the failure's verdict on its row (for FUZZ_BATCH: other
 * decisions than in the failure's other shape). Fills a fresh judgement and answer when it does. */
int fuzz_fails_again(conn *c, const fuzz_judge *j, fuzz_failure *f, cJSON *request, size_t row);

/* Shrinks `f` in place, asking at most `budget` requests for at most `seconds`. */
void fuzz_shrink(conn *c, const fuzz_judge *j, fuzz_failure *f, size_t budget, double seconds);

void fuzz_failure_free(fuzz_failure *f);

/* The request in another shape (row `row` alone, reversed, or a copy); NULL when out of memory. */
cJSON *fuzz_shaped(const cJSON *request, fuzz_shape shape, size_t row);

/* Where row i of a batch of n sits in that shape, or SIZE_MAX when it is not there. */
size_t fuzz_shaped_row(fuzz_shape shape, size_t i, size_t n, size_t row);

/* "than alone", "with the rows reversed", "when asked again". */
const char *fuzz_shape_how(fuzz_shape shape);

/* Whether two answers make the same decisions (run/check.h, sieve_answer_digest). */
int fuzz_same_decisions(const cJSON *a, const cJSON *b);

#endif /* SIEVE_FUZZ_SHRINK_H */
