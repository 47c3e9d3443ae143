/*
 * Penalties: step 1 of seed 004's standard pipeline (004:255-287: penalties, temperature,
 * top-k, top-p, softmax, the draw), after the engine options, which come before every other
 * step (000:67).
 *
 * Rule (ours: seed 004 says only that frequency_penalty and presence_penalty add to or
 * subtract from the logits directly, 004:199 and 004:264): a token counted c > 0 times among
 * the last last_n output tokens (all of them when last_n is -1, none when it is 0) gets
 *   l' = (float)(l - (c * frequency + presence)), in float64 and rounded to float32 once;
 *   then (float)(l' / repetition) when l' >= 0, (float)(l' * repetition) when l' < 0.
 * SGLang's order, additive penalties then the scaling one (sampling_batch_info.py,
 * _apply_pre_grammar_logits_transforms; penaltylib/repetition_penalty.py,
 * apply_scaling_penalties; at 15a4398). A token not counted keeps its logit; -inf stays -inf.
 * The prompt's tokens are not counted. An output id outside [0, V) is SIEVE_EOUTPUTTOKEN, then
 * a prompt id outside it SIEVE_EPROMPTTOKEN, counted or not; a finite logit whose penalized value
 * is not finite in float32 is SIEVE_EOVERFLOW.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int by_token(const void *a, const void *b) {
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

static int any_outside(const int64_t *ids, size_t n, size_t vocab) {
  for (size_t i = 0; i < n; i++)
    if (ids[i] < 0 || (uint64_t)ids[i] >= vocab)
      return 1;
  return 0;
}

/* How many of the last output tokens count. */
static size_t counted(const sieve_penalties *pen) {
  if (pen->last_n < 0 || (uint64_t)pen->last_n > pen->n_output)
    return pen->n_output;
  return (size_t)pen->last_n;
}

static int penalize(const sieve_penalties *pen, float *row, int64_t id, size_t count) {
  if (row[id] == -INFINITY)
    return 0;
  const double additive = (double)count * pen->frequency + pen->presence;
  const double shifted = sieve__to_float32((double)row[id] - additive);
  row[id] = (float)sieve__to_float32(shifted < 0.0 ? shifted * pen->repetition
                                                   : shifted / pen->repetition);
  return isfinite(row[id]) ? 0 : SIEVE_EOVERFLOW;
}

int sieve__apply_penalties(const sieve_penalties *pen, float *row, size_t vocab) {
  if (!pen)
    return 0;
  int rc = any_outside(pen->output, pen->n_output, vocab) ? SIEVE_EOUTPUTTOKEN : 0;
  if (rc == 0 && any_outside(pen->prompt, pen->n_prompt, vocab))
    rc = SIEVE_EPROMPTTOKEN;
  const size_t n = counted(pen);
  if (rc != 0 || n == 0)
    return rc;
  int64_t *ids = malloc(n * sizeof *ids);
  if (!ids)
    return SIEVE_ENOMEM;
  memcpy(ids, pen->output + (pen->n_output - n), n * sizeof *ids);
  qsort(ids, n, sizeof *ids, by_token);
  for (size_t i = 0; rc == 0 && i < n;) {
    size_t end = i + 1;
    while (end < n && ids[end] == ids[i])
      end++;
    rc = penalize(pen, row, ids[i], end - i);
    i = end;
  }
  free(ids);
  return rc;
}
