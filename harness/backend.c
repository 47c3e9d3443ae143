/* The oracle or a shared library behind `sieve serve`; see backend.h. */
#include "backend.h"

#include <string.h>

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
  return 0;
}

int backend_validate(const sieve_impl *impl, const sieve_params *in, sieve_params *out) {
  return impl ? impl->validate(in, out) : sieve_params_check(in, out);
}

int backend_filter(const sieve_impl *impl, const float *logits, size_t vocab,
                   const sieve_params *params, const sieve_engine *engine, double *logprobs,
                   sieve_filter_info *info, int *has_info) {
  *has_info = impl == NULL;
  if (impl)
    return impl->filter(logits, vocab, params, engine, logprobs);
  return sieve_filter(logits, vocab, params, engine, logprobs, info);
}

int backend_uniform(const sieve_impl *impl, const sieve_draw_key *key, double *u) {
  return impl ? impl->uniform(key, u) : sieve_uniform(key, u);
}

int backend_draw(const sieve_impl *impl, const double *probs, size_t vocab,
                 const sieve_draw_key *key, sieve_sample_result *result, int *has_extras) {
  *has_extras = impl == NULL;
  if (impl)
    return impl->draw(probs, vocab, key, &result->token);
  int rc = sieve_uniform(key, &result->u);
  return rc ? rc : sieve_draw(probs, vocab, result->u, &result->token, &result->draw_margin);
}

int backend_sample(const sieve_impl *impl, const float *logits, size_t vocab,
                   const sieve_params *params, const sieve_engine *engine,
                   const sieve_draw_key *key, size_t n_top, sieve_top_entry *top,
                   sieve_sample_result *result, int *has_extras) {
  *has_extras = impl == NULL;
  if (impl)
    return impl->sample(logits, vocab, params, engine, key, n_top, top, &result->token,
                        &result->logprob);
  return sieve_sample(logits, vocab, params, engine, key, n_top, top, result);
}

int backend_position(const sieve_impl *impl, sieve_mode mode, int64_t q, int64_t k, int64_t row,
                     int64_t *position) {
  return impl ? impl->position((int)mode, q, k, row, position)
              : sieve_position(mode, q, k, row, position);
}
