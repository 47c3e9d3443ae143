/*
 * The shared-library ABI of an implementation under test, version 1.
 *
 * A sampler built as a shared library exports one function,
 *
 *     const sieve_impl *sieve_impl_get(void);
 *
 * returning a table of the ops it implements (NULL for the others). `sieve run --impl
 * lib:PATH.so` loads it in a child process (`sieve serve --lib PATH.so`), so a crash of the
 * library is a reported result, never the harness's death. Types come from oracle/sieve.h;
 * every op returns 0 or a negative SIEVE_E* code, which the protocol reports as the matching
 * error kind and field (harness/protocol/PROTOCOL.md); any other code is reported as an error that
 * names it. Buffers belong to the caller; `sieve serve` fills them with NaN first, so an entry
 * the library leaves unwritten is answered as "nan", a failure.
 */
#ifndef SIEVE_IMPL_H
#define SIEVE_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "sieve.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The version this header describes. ABI 2 adds `speculate` at the end of the table; a library
 * built for ABI 1 (without it) still loads, and answers every op but speculate. ABI 3 (sieve.h
 * 4.0.0) adds min_p and the penalties at the end of sieve_params; a library built for ABI 1 or
 * 2 still loads and answers every op but speculate, whose sieve_speculation holds two
 * sieve_params (it reads the first three fields of the others, and so ignores min-p and the
 * penalties). ABI 4 adds `sampling_options` at the end: the min-p and penalty parameters the
 * library reads; a library of an earlier ABI reads none, and is asked no case that names one. */
#define SIEVE_IMPL_ABI 4

typedef struct sieve_impl {
  uint32_t abi;        /* SIEVE_IMPL_ABI */
  const char *name;    /* shown in reports */
  const char *version; /* shown in reports */
  /* Check and normalize parameters. */
  int (*validate)(const sieve_params *in, sieve_params *out);
  /* Processed logprobs of one row, -inf for removed tokens. `engine` may be NULL. */
  int (*filter)(const float *logits, size_t vocab, const sieve_params *params,
                const sieve_engine *engine, double *logprobs);
  /* The uniform of a draw key. */
  int (*uniform)(const sieve_draw_key *key, double *u);
  /* Draw a token from probabilities with the key's uniform. */
  int (*draw)(const double *probs, size_t vocab, const sieve_draw_key *key, int64_t *token);
  /* Filter, then draw; the drawn token, its logprob and the n_top best entries. */
  int (*sample)(const float *logits, size_t vocab, const sieve_params *params,
                const sieve_engine *engine, const sieve_draw_key *key, size_t n_top,
                sieve_top_entry *top, int64_t *token, double *logprob);
  /* The sample position of a row (mode: SIEVE_PREFILL or SIEVE_DECODE). */
  int (*position)(int mode, int64_t seqlen_q, int64_t seqlen_k, int64_t row, int64_t *position);
  /* ABI 2. Verify a draft chain as sieve_speculate does (oracle/sieve.h): write
   * steps[0 .. n_steps), tokens[0 .. n_tokens) and *result's accepted, n_tokens, n_steps and
   * bonus. The drafts' tokens are always given. */
  int (*speculate)(const sieve_speculation *spec, const sieve_engine *engine,
                   sieve_speculate_step *steps, int64_t *tokens, sieve_speculate_result *result);
  /* ABI 4. The parameters it reads beyond temperature, top_p and top_k, comma-separated as the
   * protocol names them: any of "min_p", "frequency_penalty", "presence_penalty",
   * "repetition_penalty", "penalty_last_n" (the last four read sieve_params.penalties). NULL or
   * "": none. `sieve serve` lists them in hello's "sampling_options" and refuses a request that
   * names another. */
  const char *sampling_options;
} sieve_impl;

typedef const sieve_impl *(*sieve_impl_get_fn)(void);

#define SIEVE_IMPL_SYMBOL "sieve_impl_get"

#ifdef __cplusplus
}
#endif

#endif /* SIEVE_IMPL_H */
