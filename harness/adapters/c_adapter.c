/*
 * A C shared-library adapter (harness/protocol/sieve_impl.h): the table of ops a
 * sampler exports so that `sieve run --impl lib:PATH.so` can call it in a
 * child process. This example forwards to the oracle; a real port puts its
 * own functions in the table and leaves NULL the ops it does not have.
 *
 * Built against an installed sieve (make install; PKG_CONFIG_PATH=PREFIX/lib/pkgconfig when
 * PREFIX is not a system one):
 *
 *   libdir=$(pkg-config --variable=libdir sieve)
 *   cc -shared -fPIC c_adapter.c $(pkg-config --cflags --libs sieve) -Wl,-rpath,"$libdir" \
 *     -o libmy_sampler.so
 *   sieve run --impl lib:./libmy_sampler.so
 *
 * In the checkout, `make` builds it as build/adapters/libc_adapter.so.
 */
#include <sieve_impl.h>

static int filter(const float *logits, size_t vocab, const sieve_params *params,
                  const sieve_engine *engine, double *logprobs) {
  return sieve_filter(logits, vocab, params, engine, logprobs, NULL);
}

static int draw(const double *probs, size_t vocab, const sieve_draw_key *key, int64_t *token) {
  double u;
  int rc = sieve_uniform(key, &u);
  return rc ? rc : sieve_draw(probs, vocab, u, token, NULL);
}

static int sample(const float *logits, size_t vocab, const sieve_params *params,
                  const sieve_engine *engine, const sieve_draw_key *key, size_t n_top,
                  sieve_top_entry *top, int64_t *token, double *logprob) {
  sieve_sample_result result;
  int rc = sieve_sample(logits, vocab, params, engine, key, n_top, top, &result);
  if (rc == 0) {
    *token = result.token;
    *logprob = result.logprob;
  }
  return rc;
}

static int position(int mode, int64_t seqlen_q, int64_t seqlen_k, int64_t row, int64_t *out) {
  return sieve_position((sieve_mode)mode, seqlen_q, seqlen_k, row, out);
}

static const sieve_impl table = {
    .abi = SIEVE_IMPL_ABI,
    .name = "c-adapter-example",
    .version = SIEVE_VERSION,
    .validate = sieve_params_check,
    .filter = filter,
    .uniform = sieve_uniform,
    .draw = draw,
    .sample = sample,
    .position = position,
    .speculate = sieve_speculate,
    /* The parameters beyond temperature, top_p and top_k it reads; a case naming another is
     * skipped. */
    .sampling_options = "min_p,frequency_penalty,presence_penalty,repetition_penalty,penalty_last_n",
};

const sieve_impl *sieve_impl_get(void) { return &table; }
