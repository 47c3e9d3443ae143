/*
 * Positions (seed 000:59; prepare_sample.cpp:198-206).
 *
 * Rule: in a prefill step the sample position is seqlen_k, the number of
 * tokens in the sequence so far; in a decode step row r of the step's
 * seqlen_q new rows has position seqlen_k - seqlen_q + 1 + r.
 * Ours: seqlen_k counts the step's own tokens, so 1 <= seqlen_q <= seqlen_k;
 * a prefill step has one sampled row (row 0).
 */
#include "sieve.h"

int sieve_position(sieve_mode mode, int64_t seqlen_q, int64_t seqlen_k, int64_t row,
                   int64_t *position) {
  if (!position)
    return SIEVE_EARG;
  if (seqlen_q < 1 || seqlen_k < seqlen_q || row < 0)
    return SIEVE_EPOSITION;
  switch (mode) {
  case SIEVE_PREFILL:
    if (row != 0)
      return SIEVE_EPOSITION;
    *position = seqlen_k;
    return 0;
  case SIEVE_DECODE:
    if (row >= seqlen_q)
      return SIEVE_EPOSITION;
    *position = seqlen_k - seqlen_q + 1 + row;
    return 0;
  default:
    return SIEVE_EPOSITION;
  }
}
