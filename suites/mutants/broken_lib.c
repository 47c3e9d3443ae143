/*
 * Shared libraries that break the ABI of harness/protocol/sieve_impl.h, one way each, chosen with
 * -DBROKEN_<NAME> (build/mutants/libbroken-<name>.so). suites/harness/fakes.py runs
 * `sieve run --impl lib:` on each and checks the report names the problem, sieve itself
 * survives, and nothing passes that should not.
 *
 *   no-symbol     exports sieve_impl_table instead of sieve_impl_get
 *   null-table    sieve_impl_get returns NULL
 *   wrong-abi     a table of an ABI version from the future (SIEVE_IMPL_ABI + 1)
 *   unknown-code  filter returns 7, a code that is no SIEVE_E*
 *   segfault      filter dereferences a null pointer
 *   half-row      filter writes only the first half of the row
 *   vocab-error   filter answers every row with SIEVE_EVOCAB (it says V does not match)
 *   bad-token     sample draws token V, one past the row
 *   unknown-option  sampling_options names "top_a", an option sieve does not know
 */
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "protocol/sieve_impl.h"

static int filter(const float *logits, size_t vocab, const sieve_params *params,
                  const sieve_engine *engine, double *logprobs) {
#if defined(BROKEN_UNKNOWN_CODE)
  (void)logits, (void)vocab, (void)params, (void)engine, (void)logprobs;
  return 7;
#elif defined(BROKEN_SEGFAULT)
  (void)logits, (void)vocab, (void)params, (void)engine, (void)logprobs;
  raise(SIGSEGV);
  return 0;
#elif defined(BROKEN_HALF_ROW)
  double *all = malloc(vocab * sizeof *all);
  int rc = all ? sieve_filter(logits, vocab, params, engine, all, NULL) : SIEVE_ENOMEM;
  if (rc == 0)
    memcpy(logprobs, all, vocab / 2 * sizeof *all); /* the second half is left as it came */
  free(all);
  return rc;
#elif defined(BROKEN_VOCAB_ERROR)
  (void)logits, (void)vocab, (void)params, (void)engine, (void)logprobs;
  return SIEVE_EVOCAB;
#else
  return sieve_filter(logits, vocab, params, engine, logprobs, NULL);
#endif
}

static int sample(const float *logits, size_t vocab, const sieve_params *params,
                  const sieve_engine *engine, const sieve_draw_key *key, size_t n_top,
                  sieve_top_entry *top, int64_t *token, double *logprob) {
  sieve_sample_result r = {0};
  int rc = sieve_sample(logits, vocab, params, engine, key, n_top, top, &r);
  *token = r.token;
  *logprob = r.logprob;
#if defined(BROKEN_BAD_TOKEN)
  *token = (int64_t)vocab;
#endif
  return rc;
}

static const sieve_impl table = {
#if defined(BROKEN_WRONG_ABI)
    SIEVE_IMPL_ABI + 1,
#else
    SIEVE_IMPL_ABI,
#endif
    "broken", "1", sieve_params_check, filter, sieve_uniform, NULL, sample, NULL, NULL,
#if defined(BROKEN_UNKNOWN_OPTION)
    "min_p,top_a"
#else
    NULL
#endif
};

#if defined(BROKEN_NO_SYMBOL)
/* The symbol misspelled. */
const sieve_impl *sieve_impl_table(void);
const sieve_impl *sieve_impl_table(void) { return &table; }
#else
const sieve_impl *sieve_impl_get(void);
const sieve_impl *sieve_impl_get(void) {
#if defined(BROKEN_NULL_TABLE)
  (void)table;
  return NULL;
#else
  return &table;
#endif
}
#endif
