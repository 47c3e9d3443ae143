/*
 * Reading protocol v1 requests: typed fields out of cJSON values, each
 * failure recorded as an error with the protocol's kind, the field at fault
 * and a message that names its path (e.g. rows[2].params.top_k).
 */
#ifndef SIEVE_REQUEST_H
#define SIEVE_REQUEST_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "sieve.h"

#define SIEVE_KIND_PARAMS "invalid_params"
#define SIEVE_KIND_LOGITS "invalid_logits"
#define SIEVE_KIND_REQUEST "invalid_request"
#define SIEVE_KIND_OP "unsupported_op"

typedef struct req_error {
  const char *kind;
  const char *code; /* the oracle's error name, or NULL for a malformed request */
  char field[64];
  char message[512];
} req_error;

/* Records an error; always returns -1. */
int req_fail(req_error *e, const char *kind, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Records an oracle error code found at `path`; always returns -1. */
int req_fail_code(req_error *e, int code, const char *path);

/* -1 unless `obj` is an object whose keys are all in `allowed` (NULL-ended), each once. */
int req_check_keys(const cJSON *obj, const char *const *allowed, const char *path, req_error *e);

/* The member `key` of an object, or NULL. */
const cJSON *req_get(const cJSON *obj, const char *key);

/* An integer-valued JSON number (|x| <= 2^53), or a decimal string for 64-bit values. */
int req_int(const cJSON *item, const char *path, const char *field, int64_t *out, req_error *e);
int req_u64(const cJSON *item, const char *path, const char *field, uint64_t *out, req_error *e);
/* What null is where a number is due: an error, or -inf (number arrays: logits, logprobs). */
enum { REQ_NULL_REFUSED = 0, REQ_NULL_MINUS_INF = 1 };

/* A protocol number (PROTOCOL.md): a JSON number, one of the strings "nan", "inf", "-inf", or
 * null when `null_rule` is REQ_NULL_MINUS_INF. 0, or -1 for anything else. The one reader of
 * numbers in requests, answers and expectations. */
int req_number(const cJSON *item, int null_rule, double *out);
/* A decimal string of digits only, in [0, 2^64-1]: seeds, positions, recipe seeds; 0, or -1. */
int req_decimal(const char *text, uint64_t *out);
/* A 64-bit seed: a decimal string in [0, 2^64-1]. */
int req_seed(const cJSON *item, const char *path, uint64_t *out, req_error *e);

/* The parameters beyond temperature, top_p and top_k, as params name them: what hello's
 * "sampling_options" lists, and what a case asks only of an implementation that lists it. */
#define REQ_SAMPLING_OPTIONS(X)                                                                    \
  X(min_p) X(frequency_penalty) X(presence_penalty) X(repetition_penalty) X(penalty_last_n)
#define REQ_OPTION_NAME(name) #name,
#define REQ_OPTION_BIT(name) REQ_OPTION_##name,
enum { REQ_SAMPLING_OPTIONS(REQ_OPTION_BIT) REQ_OPTION_COUNT };
#define REQ_OPTIONS_ALL ((1u << REQ_OPTION_COUNT) - 1u)

/* The options of a list of names (a cJSON array of strings, or a comma-separated string), one
 * bit each (1u << REQ_OPTION_min_p, ...); 0 for NULL. A name sieve does not know is ignored,
 * or, with `unknown` non-NULL, copied there (the first such name) and -1u returned. */
unsigned req_options_of_list(const cJSON *names);
unsigned req_options_of_text(const char *names, char *unknown, size_t len);
/* The first sampling option a request's params name (its own, its rows', its target's and its
 * draft's) that `offered` lacks, or NULL; req_params_option_missing looks at one params object. */
const char *req_option_missing(const cJSON *request, unsigned offered);
const char *req_params_option_missing(const cJSON *params, unsigned offered);

/* The penalties of a request: the parameters its params name and the token ids a row carries
 * (malloc'd; req_penalties_free releases them). Zero-initialize one before use. */
typedef struct req_penalties {
  sieve_penalties penalties;
  int64_t *output, *prompt;
} req_penalties;

/* Params with defaults for absent fields (NULL item: all defaults). Not validated here. Where
 * params names a penalty (frequency_penalty, presence_penalty, repetition_penalty,
 * penalty_last_n), out->penalties points to pen->penalties. */
int req_params(const cJSON *item, const char *path, sieve_params *out, req_penalties *pen,
               req_error *e);
/* A row's output_ids and prompt_ids, the tokens the penalties count, into pen; where the row
 * carries either, out->penalties points to pen->penalties. */
int req_counted(const cJSON *row, const char *path, sieve_params *out, req_penalties *pen,
                req_error *e);
void req_penalties_free(req_penalties *pen);

/* A row of float32 logits (null = -inf), or a recipe of one (recipe.h); *out is malloc'd. */
int req_logits(const cJSON *item, const char *path, float **out, size_t *vocab, req_error *e);
/* A row of float64 probabilities; *out is malloc'd. */
int req_probs(const cJSON *item, const char *path, double **out, size_t *vocab, req_error *e);

/* Engine options; *ids (the blacklist) is malloc'd and owned by the caller. */
int req_engine(const cJSON *item, sieve_engine *out, int64_t **ids, req_error *e);

/* A draw key's case and tag, from the request's top level (defaults 0 and "main"). */
int req_case_tag(const cJSON *req, int *sample_case, int *tag, req_error *e);

#endif /* SIEVE_REQUEST_H */
