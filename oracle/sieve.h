/*
 * sieve: the DeepInfer token-sampling rule as an executable spec.
 *
 * One public header. Every function returns 0 or a negative SIEVE_E* code,
 * checks its arguments first, and writes only into buffers the caller owns.
 * The rule each function implements is written down in oracle/SPEC.md,
 * statement by statement, with the seed line it comes from.
 */
#ifndef SIEVE_H
#define SIEVE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SIEVE_VERSION "0.1.0"

/* Temperatures below this become this (seed 000:9, sampling_params.py:10). */
#define SIEVE_SAMPLING_EPS 1e-5
/* The largest top_k (seed 000:32, the int32 maximum). */
#define SIEVE_TOP_K_MAX INT64_C(2147483647)
/* The largest vocabulary; token ids must fit an int32. */
#define SIEVE_VOCAB_MAX ((size_t)2147483647)
/* Seed offset of the draft module's tag "mtp" (seed 000:59). */
#define SIEVE_MTP_SEED_OFFSET UINT64_C(1000000007)
/* The odd constant that multiplies position * 3 + case (seed 000:45). */
#define SIEVE_HASH_GOLDEN UINT64_C(0x9E3779B97F4A7C15)

/*
 * Error codes: X(name, value, message). The list generates the enum,
 * sieve_strerror() and sieve_err_name(). Messages name the field at fault.
 */
#define SIEVE_ERRNO_MAP(X)                                                                   \
  X(EARG, -1, "invalid argument: a required pointer is NULL")                                \
  X(ETEMPERATURE, -2, "temperature must be a finite number >= 0")                            \
  X(ETOPP, -3, "top_p must be a number in (0, 1]")                                           \
  X(ETOPK, -4, "top_k must be -1 or an integer in [1, 2147483647]")                          \
  X(EVOCAB, -5, "logits: the vocabulary size must be in [1, 2147483647]")                    \
  X(ENAN, -6, "logits: a logit is NaN")                                                      \
  X(EPOSINF, -7, "logits: a logit is +inf")                                                  \
  X(ENOFINITE, -8, "logits: no finite logit is left in the row")                             \
  X(EOVERFLOW, -9, "logits: a logit times 1/temperature overflows float32")                  \
  X(EFORCETOPK, -10, "engine: force_topk must be >= 0")                                      \
  X(EBLACKLIST, -11, "engine: a blacklist token id is outside [0, V)")                       \
  X(EPROBS, -12, "probs: a probability is negative, NaN or infinite, or their sum overflows") \
  X(EZEROMASS, -13, "probs: the probabilities sum to 0")                                     \
  X(EUNIFORM, -14, "u must be in [0, 1)")                                                    \
  X(ECASE, -15, "case must be 0 (sample), 1 (resample) or 2 (accept test)")                 \
  X(ETAG, -16, "tag must be main or mtp")                                                    \
  X(EPOSITION, -17, "position: need 1 <= seqlen_q <= seqlen_k and 0 <= row < seqlen_q")      \
  X(ETOPLOGPROBS, -18, "top_logprobs must be in [0, V]")                                     \
  X(ENOMEM, -19, "out of memory")                                                          \
  X(ERULE, -20, "rule: an axis has a value outside its enum")

#define SIEVE__ERRNO_ENUM(name, value, message) SIEVE_##name = (value),
typedef enum sieve_errno { SIEVE_OK = 0, SIEVE_ERRNO_MAP(SIEVE__ERRNO_ENUM) } sieve_errno;
#undef SIEVE__ERRNO_ENUM

/* The message of an error code; "success" for 0, "unknown error" otherwise. */
const char *sieve_strerror(int err);
/* The name of an error code, e.g. "SIEVE_ETOPK"; "SIEVE_OK"; "SIEVE_UNKNOWN". */
const char *sieve_err_name(int err);

/* ------------------------------------------------------------ parameters */

/* Sampling parameters. top_k is 64-bit so that out-of-range input can be rejected. */
typedef struct sieve_params {
  double temperature;
  double top_p;
  int64_t top_k;
} sieve_params;

/* The defaults of seed 000:63 (sampling_params.py:47-62). */
#define SIEVE_PARAMS_DEFAULT {1.0, 1.0, -1}

/*
 * Validates in the seed's order (temperature, top_p, top_k), then normalizes:
 * a temperature below SIEVE_SAMPLING_EPS becomes it, with top_p = 1 and
 * top_k = -1. `out` may equal `in`; it is written only on success.
 */
int sieve_params_check(const sieve_params *in, sieve_params *out);

/* ------------------------------------------------------- engine options */

/* Engine-wide settings (seed 000:65-68). Zero/NULL means off. */
typedef struct sieve_engine {
  int64_t force_topk;       /* keep only the N largest logits first; 0 = off */
  const int64_t *blacklist; /* token ids whose logits become -inf first */
  size_t blacklist_len;
} sieve_engine;

#define SIEVE_ENGINE_DEFAULT {0, NULL, 0}

/* ------------------------------------------------------------------ rules */

/*
 * Where engines choose differently (oracle/ENGINES.md). Each field is one
 * axis; 0 is DeepInfer's choice, the spec, so SIEVE_RULE_DEEPINFER is all 0.
 */
typedef enum sieve_topp_scope {
  SIEVE_TOPP_FULL = 0,      /* top-p on the full distribution; top-k cuts the same order */
  SIEVE_TOPP_AFTER_TOPK = 1 /* top-k first, top-p on the mass renormalized over the top k */
} sieve_topp_scope;

typedef enum sieve_boundary {
  SIEVE_BOUNDARY_GT = 0, /* remove a token when the mass before it is > top_p */
  SIEVE_BOUNDARY_GE = 1  /* remove it when that mass is >= top_p */
} sieve_boundary;

typedef enum sieve_topk_ties {
  SIEVE_TIES_BY_ID = 0,      /* exactly k; equal probabilities in ascending token id */
  SIEVE_TIES_BY_ID_DESC = 1, /* exactly k; equal probabilities in descending token id */
  SIEVE_TIES_KEEP_ALL = 2    /* every token tied with the k-th stays */
} sieve_topk_ties;

typedef enum sieve_temperature_at {
  SIEVE_TEMP_BEFORE = 0, /* the filters see the scaled logits */
  SIEVE_TEMP_AFTER = 1   /* the filters see T = 1; T scales the kept set only */
} sieve_temperature_at;

typedef enum sieve_t0 {
  SIEVE_T0_CLAMP = 0,  /* T < 1e-5 becomes 1e-5 with top_p 1, top_k -1: equal logits share */
  SIEVE_T0_ARGMAX = 1, /* T < 1e-5 keeps the first argmax (lowest id) alone */
  SIEVE_T0_TOPK1 = 2   /* T < 1e-5 becomes T = 1 with top_k = 1 */
} sieve_t0;

typedef enum sieve_top_k_zero { SIEVE_K0_ERROR = 0, SIEVE_K0_OFF = 1 } sieve_top_k_zero;

typedef enum sieve_logprobs_kind {
  SIEVE_LP_PROCESSED = 0, /* after temperature, top-p and top-k */
  SIEVE_LP_SCALED = 1,    /* after temperature only */
  SIEVE_LP_RAW = 2        /* of the raw logits */
} sieve_logprobs_kind;

typedef enum sieve_draw_kind {
  SIEVE_DRAW_HASH = 0, /* the hash uniform and inverse CDF of seed 000 */
  SIEVE_DRAW_OWN = 1   /* a generator of the engine's own (not the hash) */
} sieve_draw_kind;

typedef struct sieve_rule {
  int topp_scope;     /* sieve_topp_scope */
  int boundary;       /* sieve_boundary */
  int topk_ties;      /* sieve_topk_ties */
  int temperature_at; /* sieve_temperature_at */
  int t0;             /* sieve_t0 */
  int top_k_zero;     /* sieve_top_k_zero */
  int logprobs;       /* sieve_logprobs_kind: what sample returns */
  int draw;           /* sieve_draw_kind */
} sieve_rule;

#define SIEVE_RULE_DEEPINFER {0, 0, 0, 0, 0, 0, 0, 0}

/* ---------------------------------------------------------------- filter */

/* What the filter decided, with the margins that say how close it was. */
typedef struct sieve_filter_info {
  size_t kept;        /* tokens with a finite processed logprob */
  double kept_mass;   /* full-softmax mass of the kept tokens, summed in token lanes */
  double topp_margin; /* min over ranks of |mass before - top_p|; +inf when top-p is off */
  double cut_gap;     /* p(last kept) - p(first ranked token removed); +inf when none removed */
} sieve_filter_info;

/*
 * The processed log-probabilities of one row: logprobs[i] for every token,
 * -inf for removed tokens. `engine` and `info` may be NULL. The parameters
 * are checked and normalized here, so raw user values may be passed.
 */
int sieve_filter(const float *logits, size_t vocab, const sieve_params *params,
                 const sieve_engine *engine, double *logprobs, sieve_filter_info *info);

/*
 * The spec path of sieve_filter: a straight transcription of the rule with a full stable
 * sort (filter.c). sieve_filter takes the fast path (filter_fast.c) where it applies; the two
 * give the same kept set, margins and kept mass, and logprobs equal bit for bit.
 */
int sieve_filter_spec(const float *logits, size_t vocab, const sieve_params *params,
                      const sieve_engine *engine, double *logprobs, sieve_filter_info *info);

/* The same under another rule (NULL: DeepInfer's). */
int sieve_params_check_rule(const sieve_rule *rule, const sieve_params *in, sieve_params *out);
int sieve_filter_rule(const sieve_rule *rule, const float *logits, size_t vocab,
                      const sieve_params *params, const sieve_engine *engine, double *logprobs,
                      sieve_filter_info *info);

/* One entry of top_logprobs. */
typedef struct sieve_top_entry {
  int64_t token;
  double logprob;
} sieve_top_entry;

/* The n best entries of a processed row, by logprob descending, ties by token id. */
int sieve_top_logprobs(const double *logprobs, size_t vocab, size_t n, sieve_top_entry *out);

/* ------------------------------------------------------------ the draw */

typedef enum sieve_case {
  SIEVE_CASE_SAMPLE = 0,   /* a normal sample */
  SIEVE_CASE_RESAMPLE = 1, /* the new sample after a rejected draft token */
  SIEVE_CASE_ACCEPT = 2    /* the accept test of a draft token */
} sieve_case;

typedef enum sieve_tag { SIEVE_TAG_MAIN = 0, SIEVE_TAG_MTP = 1 } sieve_tag;

/* Everything the uniform depends on (seed 000:34). */
typedef struct sieve_draw_key {
  uint64_t seed;
  uint64_t position;
  int sample_case; /* a sieve_case */
  int tag;         /* a sieve_tag */
} sieve_draw_key;

/* The SplitMix64 finalizer, without the increment (our reading of random_sampling.py:58-67). */
uint64_t sieve_mix64(uint64_t z);

/* The hash-based uniform in [0, 1), a multiple of 2^-53 (seed 000:45-47). */
int sieve_uniform(const sieve_draw_key *key, double *u);

/*
 * Inverse CDF in token-id order (seed 000:48-50): the first token whose
 * float64 running sum is > u * total. `margin` (may be NULL) is the distance
 * of u * total from the nearest of the two cdf steps around the answer.
 */
int sieve_draw(const double *probs, size_t vocab, double u, int64_t *token, double *margin);

/* ------------------------------------------------------------ positions */

typedef enum sieve_mode { SIEVE_PREFILL = 0, SIEVE_DECODE = 1 } sieve_mode;

/*
 * The sample position of row `row` of a step (seed 000:59): prefill gives
 * seqlen_k; decode gives seqlen_k - seqlen_q + 1 + row.
 */
int sieve_position(sieve_mode mode, int64_t seqlen_q, int64_t seqlen_k, int64_t row,
                   int64_t *position);

/* --------------------------------------------------------------- sample */

typedef struct sieve_sample_result {
  int64_t token;            /* the drawn token */
  double logprob;           /* its processed logprob */
  double u;                 /* the uniform that drew it */
  double draw_margin;       /* see sieve_draw */
  sieve_filter_info filter; /* see sieve_filter */
} sieve_sample_result;

/*
 * Filter, probs = exp(processed logprobs), draw. Writes the n_top best
 * entries into `top` (may be NULL when n_top is 0).
 */
int sieve_sample(const float *logits, size_t vocab, const sieve_params *params,
                 const sieve_engine *engine, const sieve_draw_key *key, size_t n_top,
                 sieve_top_entry *top, sieve_sample_result *result);

/* The same under another rule (NULL: DeepInfer's). */
int sieve_sample_rule(const sieve_rule *rule, const float *logits, size_t vocab,
                      const sieve_params *params, const sieve_engine *engine,
                      const sieve_draw_key *key, size_t n_top, sieve_top_entry *top,
                      sieve_sample_result *result);

/* ---------------------------------------------------------------- batch */

/*
 * Batch entry points. Each row's result depends only on that row's inputs;
 * status[i] is the row's own return code. The call itself returns 0, or
 * SIEVE_EARG when an array it needs is NULL.
 */
typedef struct sieve_filter_row {
  const float *logits;
  size_t vocab;
  sieve_params params;
  double *logprobs; /* [vocab], written */
} sieve_filter_row;

int sieve_filter_batch(const sieve_filter_row *rows, size_t n, const sieve_engine *engine,
                       sieve_filter_info *infos, int *status);

typedef struct sieve_sample_row {
  const float *logits;
  size_t vocab;
  sieve_params params;
  sieve_draw_key key;
  size_t n_top;
  sieve_top_entry *top; /* [n_top], written */
} sieve_sample_row;

int sieve_sample_batch(const sieve_sample_row *rows, size_t n, const sieve_engine *engine,
                       sieve_sample_result *results, int *status);

#ifdef __cplusplus
}
#endif

#endif /* SIEVE_H */
