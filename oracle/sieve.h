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

#include <float.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SIEVE_VERSION "5.0.0"

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
  X(ETOPP, -3, "top_p must be a number in (0, 1], and below 1 where the rule rejects an "     \
               "explicit 1")                                                                \
  X(ETOPK, -4, "top_k must be -1 or an integer in [1, 2147483647], and below the vocabulary " \
               "size where the rule asks it")                                                \
  X(EVOCAB, -5, "logits: the vocabulary size must be in [1, 2147483647]")                    \
  X(ENAN, -6, "logits: a logit is NaN")                                                      \
  X(EPOSINF, -7, "logits: a logit is +inf")                                                  \
  X(ENOFINITE, -8, "logits: no finite logit is left in the row")                             \
  X(EOVERFLOW, -9, "logits: a logit penalized or times 1/temperature overflows float32")     \
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
  X(ERULE, -20, "rule: an axis has a value outside its enum")                                \
  X(EDRAFT, -21, "draft: the chain must have 1 to 64 tokens")                                \
  X(EDRAFTTOKEN, -22, "draft: a draft token id is outside [0, V)")                           \
  X(EMINP, -23, "min_p must be a number in [0, 1]")                                          \
  X(EFREQUENCY, -24, "frequency_penalty must be a number in [-2, 2]")                        \
  X(EPRESENCE, -25, "presence_penalty must be a number in [-2, 2]")                          \
  X(EREPETITION, -26, "repetition_penalty must be a number in (0, 2]")                       \
  X(EPENALTYWINDOW, -27, "penalty_last_n must be -1 (every output token) or >= 0")           \
  X(EOUTPUTTOKEN, -28, "output_ids: a token id is outside [0, V)")                           \
  X(EPROMPTTOKEN, -29, "prompt_ids: a token id is outside [0, V)")

#define SIEVE__ERRNO_ENUM(name, value, message) SIEVE_##name = (value),
typedef enum sieve_errno { SIEVE_OK = 0, SIEVE_ERRNO_MAP(SIEVE__ERRNO_ENUM) } sieve_errno;
#undef SIEVE__ERRNO_ENUM

/* The message of an error code; "success" for 0, "unknown error" otherwise. */
const char *sieve_strerror(int err);
/* The name of an error code, e.g. "SIEVE_ETOPK"; "SIEVE_OK"; "SIEVE_UNKNOWN". */
const char *sieve_err_name(int err);

/* ------------------------------------------------------------ parameters */

/*
 * The penalties of seed 004 (its pipeline's step 1, before temperature) and the tokens they
 * count (oracle/penalties.c). A token counted c > 0 times has c * frequency + presence
 * subtracted from its logit, then the result divided by repetition when positive, multiplied
 * by it when negative. Our rule counts the last last_n output tokens (-1: all of them); the
 * prompt is carried for the rules that count it too.
 */
typedef struct sieve_penalties {
  double frequency;      /* [-2, 2]; 0 = off */
  double presence;       /* [-2, 2]; 0 = off */
  double repetition;     /* (0, 2]; 1 = off */
  int64_t last_n;        /* -1 or >= 0 */
  const int64_t *output; /* the tokens generated so far, oldest first */
  size_t n_output;
  const int64_t *prompt; /* the prompt's tokens */
  size_t n_prompt;
} sieve_penalties;

#define SIEVE_PENALTIES_DEFAULT {0.0, 0.0, 1.0, -1, NULL, 0, NULL, 0}

/* Sampling parameters. top_k is 64-bit so that out-of-range input can be rejected. */
typedef struct sieve_params {
  double temperature;
  double top_p;
  int64_t top_k;
  double min_p;                     /* a token goes when p < min_p * the largest p; 0 = off */
  const sieve_penalties *penalties; /* NULL = none */
} sieve_params;

/* The defaults of seed 000:63 (sampling_params.py:47-62), with min-p and the penalties off. */
#define SIEVE_PARAMS_DEFAULT {1.0, 1.0, -1, 0.0, NULL}

/* A top_k left out of a request: no top-k under every rule, even one where an explicit -1 is an
 * error (the top_k_minus_one axis). Checking turns it into -1. It is INT64_MIN, so that value is
 * "left out", never an error; INT64_MIN + 1 and below are errors. */
#define SIEVE_TOP_K_UNSET INT64_MIN

/* A top_p left out of a request: 1, no top-p, under every rule, even one where an explicit 1 is
 * an error (the explicit_top_p_one axis). Checking turns it into 1. It is -DBL_MAX, so that
 * value is "left out", never an error; every other negative top_p is an error. */
#define SIEVE_TOP_P_UNSET (-DBL_MAX)

/*
 * Validates in the seed's order (temperature, top_p, top_k), then (ours) min_p and the
 * penalties' frequency, presence, repetition and last_n; then normalizes: a temperature below
 * SIEVE_SAMPLING_EPS becomes it, with top_p = 1 and top_k = -1 (min_p and the penalties stay).
 * `out` may equal `in`; it is written only on success. The counted token ids are checked
 * against the vocabulary by the filter.
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
 * The axes on which engines choose differently (oracle/ENGINES.md), defined
 * once here: X(AXIS, field, "what it decides"). Each axis lists its values as
 * SIEVE_<AXIS>_VALUES: V(AXIS, VALUE, "name", "what the engine does"), in
 * value order. Value 0 of every axis is DeepInfer's choice, the spec, so
 * SIEVE_RULE_DEEPINFER is all 0. The enums, the fields of sieve_rule, the
 * names of sieve_axis_*() and, through them, the profiles, the fingerprint's
 * probes and oracle/ENGINES.md all come from these lists.
 */
#define SIEVE_AXES(X)                                                                   \
  X(RANK_KEY, rank_key, "what the cuts rank tokens by")                                \
  X(TOPP_SCOPE, topp_scope, "where top-p is measured")                                 \
  X(BOUNDARY, boundary, "the top-p boundary")                                          \
  X(TOPP_TIES, topp_ties, "which tokens tied at the top-p cut stay")                   \
  X(TOPK_TIES, topk_ties, "which tokens tied with the k-th stay")                      \
  X(TEMPERATURE_AT, temperature_at, "where temperature applies")                       \
  X(TEMPERATURE_OP, temperature_op, "how temperature scales a logit")                  \
  X(T0_BELOW, t0_below, "the temperatures that take the temperature-0 rule")           \
  X(T0, t0, "what the temperature-0 rule does")                                        \
  X(CHECK_ORDER, check_order, "the order of the checks and the temperature-0 rule")    \
  X(TEMPERATURE_FLOOR, temperature_floor, "the smallest temperature otherwise used")   \
  X(TOP_K_ZERO, top_k_zero, "what top_k = 0 means")                                    \
  X(TOP_K_MINUS_ONE, top_k_minus_one, "what an explicit top_k = -1 means")             \
  X(EXPLICIT_TOP_P_ONE, explicit_top_p_one, "what an explicit top_p = 1 means")        \
  X(TOP_K_VOCAB, top_k_vocab, "what a top_k of the vocabulary size or more does")      \
  X(TOP_K_MAX, top_k_max, "the largest top_k accepted")                                \
  X(PARAM_PRECISION, param_precision, "the precision temperature and top_p are read in") \
  X(TOPP_ONE, topp_one, "what top_p = 1 does when a top-k is set")                     \
  X(LOGPROBS, logprobs, "the logprob sample returns")                                  \
  X(DRAW, draw, "how the token is drawn")                                              \
  X(SPEC_ACCEPT, spec_accept, "the accept test of a draft token")                      \
  X(SPEC_Q_ZERO, spec_q_zero, "a draft token its own draft row removed (q = 0)")       \
  X(SPEC_Q, spec_q, "the q of the accept test and the residual")                       \
  X(SPEC_EMPTY_RESIDUAL, spec_empty_residual, "a rejection whose max(p - q, 0) is all 0")   \
  X(PENALTY_ORDER, penalty_order, "the order of the additive and the repetition penalty")    \
  X(PENALTY_TOKENS, penalty_tokens, "the tokens each penalty counts")                        \
  X(MIN_P_SCALE, min_p_scale, "the probabilities min-p compares")                            \
  X(MIN_P_ORDER, min_p_order, "where min-p cuts beside top-p and top-k")                     \
  X(MIN_P_BOUNDARY, min_p_boundary, "the min-p boundary")                                   \
  X(PENALTY_RANGE, penalty_range, "the min-p and penalty values accepted")                   \
  X(PENALTY_OVERFLOW, penalty_overflow, "a penalized logit past float32's range")

#define SIEVE_RANK_KEY_VALUES(V)                                                                 \
  V(RANK_KEY, PROBABILITY, "probability", "the float64 probability: tokens whose probability "   \
                                          "underflows to 0 tie and keep token order")            \
  V(RANK_KEY, LOGIT, "logit", "the scaled logit: tokens keep their logit order even where the " \
                              "probability underflows")

#define SIEVE_TOPP_SCOPE_VALUES(V)                                                              \
  V(TOPP_SCOPE, FULL, "full", "top-p on the full distribution; top-k cuts the same order")    \
  V(TOPP_SCOPE, AFTER_TOPK, "after_topk", "top-k first, top-p on the mass renormalized over " \
                                          "the top k")                                        \
  V(TOPP_SCOPE, IGNORED, "ignored", "top-p is not applied at all")

#define SIEVE_BOUNDARY_VALUES(V)                                                       \
  V(BOUNDARY, GT, "gt", "a token goes when the mass before it is > top_p")            \
  V(BOUNDARY, GE, "ge", "a token goes when the mass before it is >= top_p")

#define SIEVE_TOPP_TIES_VALUES(V)                                                            \
  V(TOPP_TIES, LOWEST, "lowest", "the lowest ids of the tied tokens, as many as the cut keeps") \
  V(TOPP_TIES, HIGHEST, "highest", "the highest ids of the tied tokens")                     \
  V(TOPP_TIES, ALL, "all", "every token tied with the last one kept")                        \
  V(TOPP_TIES, UNSPECIFIED, "unspecified", "as many as the cut keeps, in an order of the "  \
                                           "sort's own (neither lowest nor highest ids)")

#define SIEVE_TOPK_TIES_VALUES(V)                                                              \
  V(TOPK_TIES, BY_ID, "by_id", "exactly k; equal probabilities in ascending token id")        \
  V(TOPK_TIES, BY_ID_DESC, "by_id_desc", "exactly k; equal probabilities in descending id")   \
  V(TOPK_TIES, KEEP_ALL, "keep_all", "every token tied with the k-th stays")                  \
  V(TOPK_TIES, UNSPECIFIED, "unspecified", "exactly k, in an order of the sort's own")

#define SIEVE_TEMPERATURE_AT_VALUES(V)                                                  \
  V(TEMPERATURE_AT, BEFORE, "before", "the filters see the scaled logits")             \
  V(TEMPERATURE_AT, AFTER, "after", "the filters see T = 1; T scales the kept set only")

#define SIEVE_TEMPERATURE_OP_VALUES(V)                                                    \
  V(TEMPERATURE_OP, RECIPROCAL, "reciprocal", "logit times the float32 1/T, in float32")     \
  V(TEMPERATURE_OP, DIVIDE, "divide", "logit divided by the float32 T, in float32: no tie " \
                                      "that the rounded 1/T makes")                              \
  V(TEMPERATURE_OP, SHIFTED, "shifted", "(logit - the row's largest) times the float32 1/T, "   \
                                        "in float32: the subtraction rounds first")              \
  V(TEMPERATURE_OP, DIVIDE_FLOAT64, "divide_float64", "logit divided by the float64 T, rounded " \
                                                      "to float32 (a Float32Array divided in "   \
                                                      "JavaScript): a float32 step off where T " \
                                                      "is no float32")

#define SIEVE_T0_BELOW_VALUES(V)                                                        \
  V(T0_BELOW, EPS, "below_1e-5", "T < 1e-5")                                           \
  V(T0_BELOW, MICRO, "below_1e-6", "T < 1e-6")                                         \
  V(T0_BELOW, ZERO, "zero", "T = 0 only")                                              \
  V(T0_BELOW, NONPOSITIVE, "nonpositive", "T <= 0: a negative temperature is accepted")     \
  V(T0_BELOW, ZERO_NEGATIVE_SCALES, "zero_negative_scales", "T = 0 only; a negative T is "   \
                                                            "accepted and scales the logits, " \
                                                            "reversing them")                  \
  V(T0_BELOW, NANO_NEGATIVE, "below_1e-7", "T < 1e-7: a negative temperature is accepted and " \
                                           "takes the rule too")

#define SIEVE_T0_VALUES(V)                                                                \
  V(T0, CLAMP, "clamp", "T becomes 1e-5 with top_p 1 and top_k off: equal logits share")  \
  V(T0, ARGMAX, "argmax", "the first maximum (lowest id) alone")                          \
  V(T0, TOPK1, "topk1", "T becomes 1 with top_k = 1")                                     \
  V(T0, REJECT, "reject", "the temperature is an error")

#define SIEVE_CHECK_ORDER_VALUES(V)                                                            \
  V(CHECK_ORDER, CHECKS_FIRST, "checks_first", "temperature, top_p and top_k are checked, then "   \
                                               "the temperature-0 rule applies")                 \
  V(CHECK_ORDER, T0_RULE_FIRST, "t0_rule_first", "the temperature-0 rule applies right after the " \
                                                 "temperature check, before top_p and top_k are "  \
                                                 "checked (as it rewrites them)")                  \
  V(CHECK_ORDER, T0_RULE_TOP_K_FIRST, "t0_rule_top_k_first", "the temperature-0 rule, then top_k " \
                                                             "is checked before top_p")

#define SIEVE_TEMPERATURE_FLOOR_VALUES(V)                                               \
  V(TEMPERATURE_FLOOR, NONE, "none", "no floor")                                       \
  V(TEMPERATURE_FLOOR, CENTI, "0.01", "a temperature in (0, 0.01) becomes 0.01")

#define SIEVE_TOP_K_ZERO_VALUES(V)                                                      \
  V(TOP_K_ZERO, ERROR, "error", "top_k = 0 is an error")                               \
  V(TOP_K_ZERO, OFF, "off", "top_k = 0 means no top-k")

#define SIEVE_TOP_K_MINUS_ONE_VALUES(V)                                                 \
  V(TOP_K_MINUS_ONE, OFF, "off", "top_k = -1 means no top-k")                          \
  V(TOP_K_MINUS_ONE, ERROR, "error", "top_k = -1 is an error (leaving it out is off)")

#define SIEVE_EXPLICIT_TOP_P_ONE_VALUES(V)                                              \
  V(EXPLICIT_TOP_P_ONE, OFF, "off", "top_p = 1 means no top-p")                        \
  V(EXPLICIT_TOP_P_ONE, ERROR, "error", "top_p = 1 is an error (leaving it out is off)")

#define SIEVE_TOP_K_VOCAB_VALUES(V)                                                     \
  V(TOP_K_VOCAB, ALL, "all", "a top_k of V or more keeps every token")                 \
  V(TOP_K_VOCAB, ERROR, "error", "a top_k of V or more is an error")

#define SIEVE_TOP_K_MAX_VALUES(V)                                                       \
  V(TOP_K_MAX, INT32, "int32", "a top_k above 2147483647 is an error")                 \
  V(TOP_K_MAX, NONE, "none", "every positive top_k is accepted")

#define SIEVE_PARAM_PRECISION_VALUES(V)                                                 \
  V(PARAM_PRECISION, FLOAT64, "float64", "as given")                                   \
  V(PARAM_PRECISION, FLOAT32, "float32", "rounded to float32 before the checks")

#define SIEVE_TOPP_ONE_VALUES(V)                                                             \
  V(TOPP_ONE, OFF, "off", "top_p = 1 removes nothing")                                      \
  V(TOPP_ONE, FLOAT32_TAIL, "float32_tail", "with a top-k set, top_p = 1 still compares a " \
                                            "float32 cumulative sum, which cuts the tail")

#define SIEVE_LOGPROBS_VALUES(V)                                                        \
  V(LOGPROBS, PROCESSED, "processed", "after temperature, top-p and top-k")            \
  V(LOGPROBS, SCALED, "scaled", "after the penalties and temperature only")            \
  V(LOGPROBS, RAW, "raw", "of the raw logits")

#define SIEVE_DRAW_VALUES(V)                                                            \
  V(DRAW, HASH, "hash", "the hash uniform and inverse CDF of seed 000")                \
  V(DRAW, OWN, "own", "a generator of the engine's own")

#define SIEVE_SPEC_ACCEPT_VALUES(V)                                                     \
  V(SPEC_ACCEPT, LT, "lt", "accepted when u * q < p (u < p / q)")                       \
  V(SPEC_ACCEPT, LE, "le", "accepted when u * q <= p (u <= p / q, or p / q >= u)")

#define SIEVE_SPEC_Q_ZERO_VALUES(V)                                                     \
  V(SPEC_Q_ZERO, ACCEPT, "accept", "accepted when the target keeps it (p / q is +inf)")  \
  V(SPEC_Q_ZERO, REJECT, "reject", "rejected (a guard q > 0 before the test)")

#define SIEVE_SPEC_Q_VALUES(V)                                                          \
  V(SPEC_Q, PROCESSED, "processed", "the draft row after its own temperature, top-p and " \
                                    "top-k: the q the draft was drawn from")              \
  V(SPEC_Q, RAW, "raw", "the draft row's softmax at T = 1 with no filters")

#define SIEVE_SPEC_EMPTY_RESIDUAL_VALUES(V)                                                  \
  V(SPEC_EMPTY_RESIDUAL, TARGET, "target", "drawn from p")                                  \
  V(SPEC_EMPTY_RESIDUAL, FIRST_TOKEN, "first_token", "token 0, whether p keeps it or not")  \
  V(SPEC_EMPTY_RESIDUAL, LAST_TOKEN, "last_token", "the vocabulary's last token, whether p " \
                                                   "keeps it or not")

#define SIEVE_PENALTY_ORDER_VALUES(V)                                                        \
  V(PENALTY_ORDER, ADDITIVE_FIRST, "additive_first", "c * frequency + presence is "          \
                                                     "subtracted, then the repetition "      \
                                                     "penalty divides or multiplies")        \
  V(PENALTY_ORDER, REPETITION_FIRST, "repetition_first", "the repetition penalty divides or " \
                                                         "multiplies the logit, then "        \
                                                         "c * frequency + presence is "       \
                                                         "subtracted")

#define SIEVE_PENALTY_TOKENS_VALUES(V)                                                         \
  V(PENALTY_TOKENS, OUTPUT, "output", "every penalty counts the output tokens only")          \
  V(PENALTY_TOKENS, REPETITION_PROMPT, "repetition_prompt", "the repetition penalty counts "  \
                                                            "the prompt's tokens too; "       \
                                                            "frequency and presence the "     \
                                                            "output only")                    \
  V(PENALTY_TOKENS, PROMPT, "prompt", "every penalty counts the prompt's tokens and the "     \
                                      "output's; the window is the last n of both")

#define SIEVE_MIN_P_SCALE_VALUES(V)                                                            \
  V(MIN_P_SCALE, SCALED, "scaled", "the probabilities after temperature")                     \
  V(MIN_P_SCALE, UNSCALED, "unscaled", "the probabilities at T = 1 (min-p before temperature)")

#define SIEVE_MIN_P_ORDER_VALUES(V)                                                            \
  V(MIN_P_ORDER, WITH_FILTERS, "with_filters", "min-p, top-p and top-k cut one ranking of "   \
                                               "the full distribution; the smallest set "     \
                                               "stays")                                       \
  V(MIN_P_ORDER, FIRST, "first", "min-p first; top-p measures the mass renormalized over "    \
                                 "the tokens min-p keeps")

#define SIEVE_MIN_P_BOUNDARY_VALUES(V)                                                         \
  V(MIN_P_BOUNDARY, KEEP_EQUAL, "keep_equal", "a token goes when p < min_p * the largest p")  \
  V(MIN_P_BOUNDARY, REMOVE_EQUAL, "remove_equal", "a token goes when p <= min_p * the "       \
                                                  "largest p; the first rank stays")

#define SIEVE_PENALTY_RANGE_VALUES(V)                                                           \
  V(PENALTY_RANGE, BOUNDED, "bounded", "min_p in [0, 1], frequency and presence in [-2, 2], "  \
                                       "repetition in (0, 2]")                                 \
  V(PENALTY_RANGE, REPETITION_UNBOUNDED, "repetition_unbounded", "the same, but any "          \
                                                                 "repetition above 0")         \
  V(PENALTY_RANGE, UNCHECKED, "unchecked", "every finite value: min_p above 1 keeps the first " \
                                           "rank alone, a repetition of 0 or less divides and "  \
                                           "multiplies as it is")

#define SIEVE_PENALTY_OVERFLOW_VALUES(V)                                                        \
  V(PENALTY_OVERFLOW, ERROR, "error", "a penalized logit past float32's range is an error")   \
  V(PENALTY_OVERFLOW, MINUS_INF, "minus_inf", "one below it becomes -inf and its token goes "  \
                                              "(float32 arithmetic, unchecked); one above it "  \
                                              "is still an error")

#define SIEVE__VALUE_ENUM(axis, value, name, what) SIEVE_##axis##_##value,
#define SIEVE__AXIS_ENUM(AXIS, field, what) \
  enum { SIEVE_##AXIS##_VALUES(SIEVE__VALUE_ENUM) SIEVE_##AXIS##_COUNT };
SIEVE_AXES(SIEVE__AXIS_ENUM)
#undef SIEVE__AXIS_ENUM
#undef SIEVE__VALUE_ENUM

/* The axes by number, in the list's order (SIEVE_AXIS_RANK_KEY = 0, ...), and their count. */
#define SIEVE__AXIS_INDEX(AXIS, field, what) SIEVE_AXIS_##AXIS,
enum { SIEVE_AXES(SIEVE__AXIS_INDEX) SIEVE_AXIS_COUNT };
#undef SIEVE__AXIS_INDEX

/*
 * One engine's choice on every axis: a value of that axis's enum in each field. `consulted`
 * is NULL, or where the oracle records what an answer depended on: it sets bit `axis` for
 * every axis whose value it read, and it reads an axis only where the value could change the
 * answer. So another rule that agrees on the axes set gives the same answer (the fit of
 * `sieve run` reuses answers on that promise).
 */
#define SIEVE__RULE_FIELD(AXIS, field, what) int field;
typedef struct sieve_rule {
  SIEVE_AXES(SIEVE__RULE_FIELD)
  uint32_t *consulted;
} sieve_rule;
#undef SIEVE__RULE_FIELD

#define SIEVE_RULE_DEEPINFER {0}

/* An axis's name ("topp_scope") and what it decides; NULL outside [0, SIEVE_AXIS_COUNT). */
const char *sieve_axis_name(int axis);
const char *sieve_axis_what(int axis);
/* The number of values of an axis, or SIEVE_ERULE. */
int sieve_axis_values(int axis);
/* A value's name ("after_topk") and what it does; NULL when out of range. */
const char *sieve_axis_value_name(int axis, int value);
const char *sieve_axis_value_what(int axis, int value);
/* The axis called `name`, or the value of `axis` called `name`; SIEVE_ERULE when none is. */
int sieve_axis_find(const char *name);
int sieve_axis_value_find(int axis, const char *name);
/* A rule's value on an axis, or SIEVE_ERULE for an axis out of range. */
int sieve_rule_get(const sieve_rule *rule, int axis);
/* Sets a rule's value on an axis; SIEVE_ERULE when the axis or the value is out of range. */
int sieve_rule_set(sieve_rule *rule, int axis, int value);

/* ---------------------------------------------------------------- filter */

/* What the filter decided, with the margins that say how close it was. */
typedef struct sieve_filter_info {
  size_t kept;        /* tokens with a finite processed logprob */
  double kept_mass;   /* full-softmax mass of the kept tokens, summed in token lanes */
  double topp_margin; /* min over ranks of |mass before - top_p|; +inf when top-p is off */
  double cut_gap;     /* p(last kept) - p(first ranked token removed); +inf when none removed */
  double minp_margin; /* |p - min_p * p_max| / p_max at the min-p cut; +inf when min-p is off */
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

/* The seed (tag main) whose uniform at `position` and `sample_case` is exactly 0: the combined
 * value is 0, which the finalizer keeps. Tests and probes reach the boundary u = 0 with it. */
uint64_t sieve_seed_of_zero_u(uint64_t position, int sample_case);

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
 * entries into `top` (may be NULL when n_top is 0). Errors come in the
 * order: a NULL argument, the parameters, the vocabulary, the filter's,
 * n_top > vocab (SIEVE_ETOPLOGPROBS), then the draw key's.
 */
int sieve_sample(const float *logits, size_t vocab, const sieve_params *params,
                 const sieve_engine *engine, const sieve_draw_key *key, size_t n_top,
                 sieve_top_entry *top, sieve_sample_result *result);

/* The same under another rule (NULL: DeepInfer's). */
int sieve_sample_rule(const sieve_rule *rule, const float *logits, size_t vocab,
                      const sieve_params *params, const sieve_engine *engine,
                      const sieve_draw_key *key, size_t n_top, sieve_top_entry *top,
                      sieve_sample_result *result);

/* ------------------------------------------------------------ speculate */

/* The longest draft chain a step verifies. */
#define SIEVE_DRAFT_MAX 64

/*
 * One speculative step (oracle/speculate.c, SPEC.md "Speculative decoding"): the target's
 * rows at positions t .. t + n_draft, and the draft's tokens at t .. t + n_draft - 1 with the
 * draft's row for each. p_j is the target's row j processed by target_params, q_j the draft's
 * row j processed by draft_params; without draft rows the drafts are greedy, q_j one-hot at
 * the token. The engine options apply to every row.
 */
typedef struct sieve_speculation {
  const float *target_logits;  /* (n_draft + 1) * vocab */
  const float *draft_logits;   /* n_draft * vocab, or NULL for greedy drafts */
  const int64_t *draft_tokens; /* n_draft */
  size_t n_draft, vocab;
  sieve_params target_params, draft_params;
  uint64_t seed;
  uint64_t position; /* t: the position of the first draft token */
} sieve_speculation;

/* The accept test of draft token j: accepted when u * q < p. */
typedef struct sieve_speculate_step {
  double u;      /* case 2 (accept test), tag main, at position t + j */
  double p, q;   /* the target's and the draft's processed probability of the token */
  double ratio;  /* p / q; 0 when p is 0, +inf when only q is 0 */
  double margin; /* |u - ratio|: how far the test is from the other outcome; +inf when p or q
                    is 0, where every arithmetic gives the same outcome */
  int accepted;
} sieve_speculate_step;

typedef struct sieve_speculate_result {
  size_t accepted;      /* draft tokens accepted before the first rejection */
  size_t n_tokens;      /* tokens committed: accepted + 1 */
  size_t n_steps;       /* accept tests run: accepted + 1 after a rejection, else n_draft */
  int bonus;            /* 1: the last token is the bonus draw from p_n_draft (case 0);
                           0: the draw from the residual after a rejection (case 1) */
  double u;             /* the last token's uniform */
  double draw_margin;   /* the last draw's margin, as sieve_draw gives it */
  double residual_mass; /* the residual's total before the draw; NAN for the bonus */
} sieve_speculate_result;

/*
 * Verifies the chain: steps[0 .. n_steps) are written (the test that rejected included),
 * tokens[0 .. n_tokens) the committed tokens. steps has room for n_draft entries, tokens for
 * n_draft + 1.
 */
int sieve_speculate(const sieve_speculation *spec, const sieve_engine *engine,
                    sieve_speculate_step *steps, int64_t *tokens, sieve_speculate_result *result);

/* The same under another rule (NULL: DeepInfer's); the rule decides the filter of every row. */
int sieve_speculate_rule(const sieve_rule *rule, const sieve_speculation *spec,
                         const sieve_engine *engine, sieve_speculate_step *steps, int64_t *tokens,
                         sieve_speculate_result *result);

/*
 * The draft's own tokens: token j drawn from q_j with case 0, tag mtp, at position t + j
 * (seed 000:59), q_j filtered under `rule` (NULL: DeepInfer's). spec->draft_tokens is not
 * read; tokens has room for n_draft entries.
 */
int sieve_speculate_draft(const sieve_rule *rule, const sieve_speculation *spec,
                          const sieve_engine *engine, int64_t *tokens);

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
