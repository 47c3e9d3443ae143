/* The oracle or a shared library behind `sieve serve`; see backend.h. */
#define _POSIX_C_SOURCE 200809L
#include "backend.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "request.h"

const sieve_impl *backend_load_library(const char *path, char *err, size_t len) {
  void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    snprintf(err, len, "cannot load %s: %s", path, dlerror());
    return NULL;
  }
  sieve_impl_get_fn get;
  *(void **)&get = dlsym(handle, SIEVE_IMPL_SYMBOL);
  const sieve_impl *impl = get ? get() : NULL;
  if (!impl || impl->abi < 1 || impl->abi > SIEVE_IMPL_ABI || !impl->name || !impl->version) {
    snprintf(err, len, "%s does not export %s() returning a sieve_impl of ABI 1 to %d", path,
             SIEVE_IMPL_SYMBOL, SIEVE_IMPL_ABI);
    return NULL;
  }
  char unknown[64];
  if (impl->abi >= 4 &&
      req_options_of_text(impl->sampling_options, unknown, sizeof unknown) == -1u) {
    snprintf(err, len,
             "%s: sampling_options names \"%s\", which sieve does not know (known: min_p, "
             "frequency_penalty, presence_penalty, repetition_penalty, penalty_last_n)",
             path, unknown);
    return NULL;
  }
  return impl;
}

unsigned backend_library_options(const sieve_impl *impl) {
  return impl->abi >= 4 ? req_options_of_text(impl->sampling_options, NULL, 0) : 0u;
}

unsigned backend_options(const backend *b) {
  return b->impl ? backend_library_options(b->impl) : b->options;
}

int backend_supports(const sieve_impl *impl, const char *op) {
  if (!impl || strcmp(op, "hello") == 0 || strcmp(op, "bye") == 0)
    return 1;
  if (strcmp(op, "validate") == 0)
    return impl->validate != NULL;
  if (strcmp(op, "filter") == 0)
    return impl->filter != NULL;
  if (strcmp(op, "uniform") == 0)
    return impl->uniform != NULL;
  if (strcmp(op, "draw") == 0)
    return impl->draw != NULL;
  if (strcmp(op, "sample") == 0)
    return impl->sample != NULL;
  if (strcmp(op, "position") == 0)
    return impl->position != NULL;
  if (strcmp(op, "speculate") == 0) /* an ABI 1 table ends before the member, and ABI 2 reads
                                       another layout of sieve_speculation */
    return impl->abi >= 3 && impl->speculate != NULL;
  return 0;
}

/* A library (ABI 1) knows no SIEVE_TOP_K_UNSET nor SIEVE_TOP_P_UNSET: a top_k left out reaches it
 * as -1 and a top_p left out as 1, both off. */
static sieve_params for_library(const sieve_params *p) {
  sieve_params q = *p;
  if (q.top_k == SIEVE_TOP_K_UNSET)
    q.top_k = -1;
  if (q.top_p == SIEVE_TOP_P_UNSET)
    q.top_p = 1.0;
  return q;
}

int backend_validate(const backend *b, const sieve_params *in, sieve_params *out) {
  sieve_params p = for_library(in);
  return b->impl ? b->impl->validate(&p, out) : sieve_params_check_rule(b->rule, in, out);
}

int backend_filter(const backend *b, const float *logits, size_t vocab, const sieve_params *params,
                   const sieve_engine *engine, double *logprobs, sieve_filter_info *info,
                   int *has_info) {
  *has_info = b->impl == NULL;
  sieve_params p = for_library(params);
  if (b->impl)
    return b->impl->filter(logits, vocab, &p, engine, logprobs);
  return sieve_filter_rule(b->rule, logits, vocab, params, engine, logprobs, info);
}

int backend_uniform(const backend *b, const sieve_draw_key *key, double *u) {
  return b->impl ? b->impl->uniform(key, u) : sieve_uniform(key, u);
}

int backend_draw(const backend *b, const double *probs, size_t vocab, const sieve_draw_key *key,
                 sieve_sample_result *result, int *has_extras) {
  *has_extras = b->impl == NULL;
  if (b->impl)
    return b->impl->draw(probs, vocab, key, &result->token);
  int rc = sieve_uniform(key, &result->u);
  return rc ? rc : sieve_draw(probs, vocab, result->u, &result->token, &result->draw_margin);
}

int backend_sample(const backend *b, const float *logits, size_t vocab, const sieve_params *params,
                   const sieve_engine *engine, const sieve_draw_key *key, size_t n_top,
                   sieve_top_entry *top, sieve_sample_result *result, int *has_extras) {
  *has_extras = b->impl == NULL;
  sieve_params p = for_library(params);
  if (b->impl)
    return b->impl->sample(logits, vocab, &p, engine, key, n_top, top, &result->token,
                           &result->logprob);
  return sieve_sample_rule(b->rule, logits, vocab, params, engine, key, n_top, top, result);
}

int backend_speculate(const backend *b, spec_request *r, sieve_speculate_step *steps,
                      int64_t *tokens, sieve_speculate_result *result, int *has_extras) {
  *has_extras = b->impl == NULL;
  sieve_speculation spec = r->spec;
  spec.target_params = for_library(&r->spec.target_params);
  spec.draft_params = for_library(&r->spec.draft_params);
  if (b->impl)
    return b->impl->speculate(&spec, &r->engine, steps, tokens, result);
  int rc = r->sample_draft ? sieve_speculate_draft(b->rule, &r->spec, &r->engine, r->tokens) : 0;
  return rc ? rc : sieve_speculate_rule(b->rule, &r->spec, &r->engine, steps, tokens, result);
}

int backend_position(const backend *b, sieve_mode mode, int64_t q, int64_t k, int64_t row,
                     int64_t *position) {
  return b->impl ? b->impl->position((int)mode, q, k, row, position)
                 : sieve_position(mode, q, k, row, position);
}
