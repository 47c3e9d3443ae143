/*
 * What `sieve serve` answers with: the oracle itself (impl == NULL), under
 * DeepInfer's rule or an engine profile's, which also reports its margins;
 * or a shared library's sieve_impl table.
 */
#ifndef SIEVE_BACKEND_H
#define SIEVE_BACKEND_H

#include "sieve.h"
#include "sieve_impl.h"
#include "speculation.h"

/* Loads a library's table (sieve_impl.h); NULL with the reason in `err` when it cannot be loaded
 * or exports no table of a known ABI. */
const sieve_impl *backend_load_library(const char *path, char *err, size_t len);

/* The sampling options a library takes, one bit each (request.h): its `sampling_options`
 * (ABI 4), none for an earlier library. */
unsigned backend_library_options(const sieve_impl *impl);

/* Nonzero when the backend implements the protocol op `op`. */
int backend_supports(const sieve_impl *impl, const char *op);

typedef struct backend {
  const sieve_impl *impl; /* NULL: the oracle */
  const sieve_rule *rule; /* the oracle's rule */
  unsigned options;       /* the sampling options the oracle takes under it (a profile's) */
} backend;

/* The sampling options it takes: the oracle's `options`, or the library's. */
unsigned backend_options(const backend *b);

int backend_validate(const backend *b, const sieve_params *in, sieve_params *out);

/* *has_info is set when `info` was filled (the oracle only). */
int backend_filter(const backend *b, const float *logits, size_t vocab, const sieve_params *params,
                   const sieve_engine *engine, double *logprobs, sieve_filter_info *info,
                   int *has_info);

int backend_uniform(const backend *b, const sieve_draw_key *key, double *u);

/* result->u and result->draw_margin are filled by the oracle only (*has_extras). */
int backend_draw(const backend *b, const double *probs, size_t vocab, const sieve_draw_key *key,
                 sieve_sample_result *result, int *has_extras);

int backend_sample(const backend *b, const float *logits, size_t vocab, const sieve_params *params,
                   const sieve_engine *engine, const sieve_draw_key *key, size_t n_top,
                   sieve_top_entry *top, sieve_sample_result *result, int *has_extras);

/* The drafts of a request without draft tokens are drawn first (the oracle only). */
int backend_speculate(const backend *b, spec_request *r, sieve_speculate_step *steps,
                      int64_t *tokens, sieve_speculate_result *result, int *has_extras);

int backend_position(const backend *b, sieve_mode mode, int64_t q, int64_t k, int64_t row,
                     int64_t *position);

#endif /* SIEVE_BACKEND_H */
