/*
 * The rows `sieve fuzz` asks (README.md, "Rows"): random filter rows in families modelled on
 * real logits, with parameters near the decisions they make. Everything comes from one 64-bit
 * state, so a seed gives the same rows on every machine.
 */
#ifndef SIEVE_FUZZ_ROWS_H
#define SIEVE_FUZZ_ROWS_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

/* One X-macro list of the row families; their names are what --families and the report use. */
#define FUZZ_FAMILIES(X)                                                                           \
  X(PEAKED, "peaked", "a few spikes over a normal bulk")                                           \
  X(LEVELS, "levels", "a handful of tie levels: most tokens tied with many others")                \
  X(BF16, "bf16", "normal logits rounded to bfloat16: runs of exact ties")                         \
  X(FP16, "fp16", "normal logits rounded to float16")                                              \
  X(HOLES, "holes", "a masked vocabulary: most logits -inf")                                       \
  X(DYADIC, "dyadic", "2^k equal logits over a far tail: top-p boundaries exact in binary")        \
  X(COLLIDE, "collide", "2^k logits that only the float32 scaling by 1/T ties, over a far tail")   \
  X(UNDERFLOW, "underflow", "gaps of hundreds: float32 probabilities that underflow and tie")      \
  X(EXTREMES, "extremes", "denormals and huge magnitudes, whose scaled values may overflow")

typedef enum fuzz_family {
#define FUZZ__FAMILY_ENUM(id, name, what) FUZZ_FAMILY_##id,
  FUZZ_FAMILIES(FUZZ__FAMILY_ENUM)
#undef FUZZ__FAMILY_ENUM
      FUZZ_FAMILY_COUNT
} fuzz_family;

const char *fuzz_family_name(int family);
const char *fuzz_family_what(int family);
int fuzz_family_parse(const char *name);

/* One X-macro list of the ops fuzz asks; their names are hello's and what --ops takes. */
#define FUZZ_OPS(X)                                                                                \
  X(FILTER, "filter", "rows of logits filtered: the kept set and its logprobs")                    \
  X(SAMPLE, "sample", "rows sampled: the token the hash's uniform draws, and its logprob")         \
  X(UNIFORM, "uniform", "the hash's uniforms of random keys")                                      \
  X(POSITION, "position", "sample positions of random prefill and decode steps")                   \
  X(SPECULATE, "speculate", "chains of 1 to 8 drafts verified against target rows")

typedef enum fuzz_op {
#define FUZZ__OP_ENUM(id, name, what) FUZZ_OP_##id,
  FUZZ_OPS(FUZZ__OP_ENUM)
#undef FUZZ__OP_ENUM
      FUZZ_OP_COUNT
} fuzz_op;

const char *fuzz_op_name(int op);
int fuzz_op_parse(const char *name);

/* The random state: SplitMix64 (sieve_mix64 of a counter). */
typedef struct fuzz_rng {
  uint64_t state;
} fuzz_rng;

uint64_t fuzz_next(fuzz_rng *r);
/* Uniform in [0, n). */
uint64_t fuzz_below(fuzz_rng *r, uint64_t n);
/* Uniform in [0, 1). */
double fuzz_unit(fuzz_rng *r);

/* A token in rank order: by probability, equal probabilities by token id (seed 000:16). */
typedef struct fuzz_ranked {
  double p, lp;
  size_t id;
} fuzz_ranked;

/* The qsort comparison of that order. */
int fuzz_by_rank(const void *a, const void *b);

/* What rows may be drawn. */
typedef struct fuzz_space {
  const size_t *vocabs; /* the vocabulary sizes to draw from */
  size_t n_vocabs;
  uint32_t families;  /* bit f: family f may be drawn */
  int engine_options; /* the implementation takes force_topk and blacklist */
} fuzz_space;

/* The default vocabulary sizes: 1 to 262,144, around powers of two and tile widths. */
extern const size_t fuzz_default_vocabs[];
extern const size_t fuzz_default_n_vocabs;

/* A row of `vocab` logits with its parameters, as a protocol v1 filter row
 * ({"logits": [...], "params": {...}}); its family in *family. NULL when out of memory. */
cJSON *fuzz_row(fuzz_rng *r, const fuzz_space *space, size_t vocab, int *family);

/* A vocabulary size drawn from the space, at most `max`. */
size_t fuzz_vocab(fuzz_rng *r, const fuzz_space *space, size_t max);

/* Adds a draw's key to `x`, a sample row or a uniform item: "seed" (a decimal string: small,
 * near 2^32, above 2^63 or anywhere, and now and then, under tag main, the seed whose uniform
 * is 0) and "position". -1 when out of memory. */
int fuzz_key(fuzz_rng *r, cJSON *x, int sample_case, int mtp);

/* A position request of a random prefill or decode step (now and then one the rule rejects);
 * NULL when out of memory. */
cJSON *fuzz_position_request(fuzz_rng *r);

/* A speculate request of 1 to 8 drafts (chains.c); NULL when out of memory. */
cJSON *fuzz_chain_request(fuzz_rng *r, const fuzz_space *space);

/* The engine options a request may carry ({} most of the time); NULL when out of memory. */
cJSON *fuzz_engine(fuzz_rng *r, const fuzz_space *space, size_t vocab);

#endif /* SIEVE_FUZZ_ROWS_H */
