/*
 * Engine profiles; see profiles.h. Each choice cites where it was read or run
 * (file, function and commit); a choice not confirmed from the engine's own
 * code says why, and keeps the spec's value, never a guess.
 */
#include "profiles.h"

#include <stdio.h>
#include <string.h>

#define SEEN(src)                                                                                  \
  { src, 1 }
#define UNCONFIRMED(why)                                                                           \
  { why, 0 }
#define A(axis) [SIEVE_AXIS_##axis]

const engine_profile profiles[] = {
    {"deepinfer",
     "DeepInfer, the spec (seed 000)",
     {0},
     {A(RANK_KEY) = SEEN(
          "seed 000:16: rank by p, ties in token order (fused_sample.py sorts the probabilities)"),
      A(TOPP_SCOPE) = SEEN("seed 000:25-28, fused_sample.py:121-150"),
      A(BOUNDARY) = SEEN("seed 000:17, fused_sample.py:139"),
      A(TOPP_TIES) = SEEN("seed 000:16 (stable sort, ties in token order), 000:17"),
      A(TOPK_TIES) = SEEN("seed 000:16 (stable sort), 000:18"),
      A(TEMPERATURE_AT) = SEEN("seed 000:15, fused_sample.py:209"),
      A(TEMPERATURE_OP) =
          SEEN("seed 000:11: the reference multiplies the logits by 1/T (fused_sample.py:209)"),
      A(T0_BELOW) = SEEN("seed 000:9, sampling_params.py:76-79 (T < 1e-5)"),
      A(T0) = SEEN("seed 000:9, sampling_params.py:76-79"),
      A(CHECK_ORDER) =
          SEEN("seed 000:63: the checks run before the clamp, so T = 0 with top_k = 0 is an "
               "error"),
      A(TEMPERATURE_FLOOR) = SEEN("seed 000:9 (only the 1e-5 clamp)"),
      A(TOP_K_ZERO) = SEEN("seed 000:32, sampling_params.py:96-99"),
      A(TOP_K_MINUS_ONE) = SEEN("seed 000:32 (-1 is off)"),
      A(EXPLICIT_TOP_P_ONE) = SEEN(
          "seed 000:32: top_p must be in (0, 1], so 1 is accepted, and 000:17: it removes nothing"),
      A(TOP_K_VOCAB) = SEEN(
          "seed 000:32: a top_k larger than the vocabulary keeps all tokens (fused_sample.py:149)"),
      A(TOP_K_MAX) = SEEN("seed 000:32: top_k must be -1 or between 1 and the int32 maximum"),
      A(PARAM_PRECISION) = SEEN("sampling_params.py: Python floats"),
      A(TOPP_ONE) = SEEN("seed 000:17 (top_p = 1 removes nothing)"),
      A(LOGPROBS) = SEEN("seed 000:70-72, fused_sample.py:51-52"),
      A(DRAW) = SEEN("seed 000:34-50, random_sampling.py:17-20"),
      A(SPEC_ACCEPT) = SEEN("seed 000:52 names case 2 for the accept test; u * q < p is our "
                            "reading (oracle/SPEC.md, Speculative decoding)"),
      A(SPEC_Q_ZERO) = SEEN(
          "our reading: the test without a division accepts q = 0 when p > 0 (oracle/SPEC.md)"),
      A(SPEC_Q) = SEEN("our reading: q is the processed draft row the draft was drawn from (seed "
                       "000:59, dflash.py:329)"),
      A(SPEC_EMPTY_RESIDUAL) =
          SEEN("our reading: a residual of total 0 is drawn from p (oracle/SPEC.md)"),
      A(PENALTY_ORDER) =
          SEEN("our reading: seed 004 names only frequency and presence, which add to or "
               "subtract from the logits (004:264); the repetition penalty scales the result "
               "(oracle/SPEC.md, Penalties and min-p)"),
      A(PENALTY_TOKENS) =
          SEEN("our reading: the output tokens only (oracle/penalties.c; seed 004 counts no "
               "prompt)"),
      A(MIN_P_SCALE) =
          SEEN("our reading: min-p on the scaled probabilities (oracle/SPEC.md; seeds 000 and "
               "004 have no min-p)"),
      A(MIN_P_ORDER) =
          SEEN("our reading: min-p, top-p and top-k cut one ranking of the full distribution "
               "(oracle/filter.c min_p_keep)"),
      A(MIN_P_BOUNDARY) =
          SEEN("our reading: p < min_p * the largest goes (oracle/filter.c min_p_removes)"),
      A(PENALTY_RANGE) =
          SEEN("our reading: SGLang's ranges, min_p in [0, 1], frequency and presence "
               "in [-2, 2], repetition in (0, 2] (oracle/params.c check_rest; seed 004 states "
               "none)"),
      A(PENALTY_OVERFLOW) =
          SEEN("our reading: a penalized logit past float32's range is an overflow error "
               "(oracle/penalties.c penalize; seed 004 says nothing)")},
     "min_p,frequency_penalty,presence_penalty,repetition_penalty,penalty_last_n"},
    {"numpy-002",
     "the NumPy sampler of seed 002 (Hugging Face order)",
     {.rank_key = SIEVE_RANK_KEY_LOGIT,
      .topp_scope = SIEVE_TOPP_SCOPE_AFTER_TOPK,
      .topp_ties = SIEVE_TOPP_TIES_HIGHEST,
      .topk_ties = SIEVE_TOPK_TIES_KEEP_ALL,
      .temperature_op = SIEVE_TEMPERATURE_OP_DIVIDE,
      .t0_below = SIEVE_T0_BELOW_ZERO,
      .t0 = SIEVE_T0_ARGMAX,
      .top_k_zero = SIEVE_TOP_K_ZERO_OFF,
      .draw = SIEVE_DRAW_OWN},
     {A(RANK_KEY) = SEEN("seed 002:99: np.argsort(logits)"),
      A(TOPP_SCOPE) = SEEN("seed 002:99-107, 002:164 (top-p on the top-k-filtered logits)"),
      A(BOUNDARY) = SEEN("seed 002:102-104 (cum > p, shifted right)"),
      A(TOPP_TIES) = SEEN("seed 002:99: np.argsort(logits)[:, ::-1], ascending then reversed, so "
                          "the highest tied ids come first (numpy sorts short rows by insertion, "
                          "which is stable)"),
      A(TOPK_TIES) = SEEN("seed 002:89 (strict < keeps ties)"),
      A(TEMPERATURE_AT) = SEEN("seed 002:55, 002:164"),
      A(TEMPERATURE_OP) = SEEN("seed 002:55: logits / temperature"),
      A(T0_BELOW) = SEEN("seed 002:48 (temperature == 0)"),
      A(T0) = SEEN("seed 002:48-49 (argmax)"),
      A(CHECK_ORDER) = UNCONFIRMED("seed 002 checks neither top_p nor top_k"),
      A(TEMPERATURE_FLOOR) = SEEN("seed 002:55 (logits / temperature, no floor)"),
      A(TOP_K_ZERO) = SEEN("seed 002:78-80 (top_k 0: nothing removed)"),
      A(TOP_K_MINUS_ONE) = UNCONFIRMED("seed 002 does not say what a negative top_k does"),
      A(EXPLICIT_TOP_P_ONE) = SEEN("seed 002:99: top_p >= 1 returns the logits; nothing checks it"),
      A(TOP_K_VOCAB) = UNCONFIRMED("seed 002 does not say what a top_k of V or more does"),
      A(TOP_K_MAX) = UNCONFIRMED("seed 002 does not check top_k"),
      A(PARAM_PRECISION) = UNCONFIRMED("seed 002 takes Python floats"),
      A(TOPP_ONE) = SEEN("seed 002:99 (top_p >= 1 returns the logits)"),
      A(LOGPROBS) = UNCONFIRMED("seed 002 returns no logprobs"),
      A(DRAW) = SEEN("seed 002:18, 002:140 (rng.random)"),
      A(SPEC_ACCEPT) = UNCONFIRMED("seed 002 has no speculative decoding"),
      A(SPEC_Q_ZERO) = UNCONFIRMED("seed 002 has no speculative decoding"),
      A(SPEC_Q) = UNCONFIRMED("seed 002 has no speculative decoding"),
      A(SPEC_EMPTY_RESIDUAL) = UNCONFIRMED("seed 002 has no speculative decoding"),
      A(PENALTY_ORDER) = UNCONFIRMED("seed 002 has no penalties"),
      A(PENALTY_TOKENS) = UNCONFIRMED("seed 002 has no penalties"),
      A(MIN_P_SCALE) = UNCONFIRMED("seed 002 has no min-p"),
      A(MIN_P_ORDER) = UNCONFIRMED("seed 002 has no min-p"),
      A(MIN_P_BOUNDARY) = UNCONFIRMED("seed 002 has no min-p"),
      A(PENALTY_RANGE) =
          UNCONFIRMED("seed 002 has no penalties"),
      A(PENALTY_OVERFLOW) =
          UNCONFIRMED("seed 002 has no penalties")},
     ""},
    {"vllm",
     "vLLM v1, its PyTorch sampler (vllm-project/vllm v0.19.0, 2a69949)",
     {.penalty_range = SIEVE_PENALTY_RANGE_REPETITION_UNBOUNDED,
      .penalty_overflow = SIEVE_PENALTY_OVERFLOW_MINUS_INF,
      .top_k_max = SIEVE_TOP_K_MAX_NONE,
      .rank_key = SIEVE_RANK_KEY_LOGIT,
      .topp_scope = SIEVE_TOPP_SCOPE_AFTER_TOPK,
      .boundary = SIEVE_BOUNDARY_GE,
      .topp_ties = SIEVE_TOPP_TIES_UNSPECIFIED,
      .topk_ties = SIEVE_TOPK_TIES_KEEP_ALL,
      .temperature_op = SIEVE_TEMPERATURE_OP_DIVIDE,
      .t0_below = SIEVE_T0_BELOW_ZERO,
      .t0 = SIEVE_T0_ARGMAX,
      .temperature_floor = SIEVE_TEMPERATURE_FLOOR_CENTI,
      .top_k_zero = SIEVE_TOP_K_ZERO_OFF,
      .logprobs = SIEVE_LOGPROBS_RAW,
      .draw = SIEVE_DRAW_OWN,
      .spec_accept = SIEVE_SPEC_ACCEPT_LE,
      .spec_q_zero = SIEVE_SPEC_Q_ZERO_REJECT,
      .spec_empty_residual = SIEVE_SPEC_EMPTY_RESIDUAL_FIRST_TOKEN,
      .penalty_order = SIEVE_PENALTY_ORDER_REPETITION_FIRST,
      .penalty_tokens = SIEVE_PENALTY_TOKENS_REPETITION_PROMPT,
      .min_p_order = SIEVE_MIN_P_ORDER_FIRST},
     {A(RANK_KEY) = SEEN("apply_top_k_top_p_pytorch: logits.sort(); run: (0,-1000,-2000,-1500) "
                         "top_k 3 keeps {0,1,3}"),
      A(TOPP_SCOPE) = SEEN("vllm/v1/sample/ops/topk_topp_sampler.py apply_top_k_top_p_pytorch: "
                           "softmax of the top-k masked logits (2a69949, run: "
                           "harness/adapters/engines/vllm_adapter.py)"),
      A(BOUNDARY) = SEEN("same: ascending cumsum <= 1 - p removed; run: 4 equal at 0.5 keep 2"),
      A(TOPP_TIES) = SEEN("same: logits.sort() is not stable: short tie runs keep the highest ids "
                          "({2,3} of 4), 64 equal keep {0,17-31} (run)"),
      A(TOPK_TIES) = SEEN("same: logits < the k-th value masked; run: {1,3,4}"),
      A(TEMPERATURE_AT) = SEEN("vllm/v1/sample/sampler.py Sampler.apply_temperature before "
                               "TopKTopPSampler"),
      A(TEMPERATURE_OP) =
          SEEN("vllm/v1/sample/sampler.py Sampler.apply_temperature: logits.div_(temp), a "
               "float32 temperature tensor"),
      A(T0_BELOW) = SEEN("vllm/sampling_params.py SamplingParams.__post_init__: the 0.01 floor "
                         "first, so only T = 0 is greedy; T < 0 raises"),
      A(T0) = SEEN("same: greedy (top_p 1, top_k 0); Sampler.greedy_sample, the first maximum"),
      A(CHECK_ORDER) = SEEN("vllm/sampling_params.py SamplingParams.__post_init__: _verify_args() "
                            "before the greedy reset of top_p and top_k"),
      A(TEMPERATURE_FLOOR) = SEEN("same: 0 < T < _MAX_TEMP (0.01) becomes 0.01"),
      A(TOP_K_ZERO) = SEEN("same, _verify_args: 0 (or -1) disables top-k"),
      A(TOP_K_MINUS_ONE) = SEEN("same: -1 accepted as off; -2 raises"),
      A(EXPLICIT_TOP_P_ONE) =
          SEEN("vllm/sampling_params.py _verify_args: 0 < top_p <= 1 (2a69949)"),
      A(TOP_K_VOCAB) =
          SEEN("vllm/v1/worker/gpu_input_batch.py InputBatch.add_request: a top_k of V or more "
               "becomes V (2a69949)"),
      A(TOP_K_MAX) = SEEN("vllm/sampling_params.py _verify_args: only top_k < -1 raises (2a69949)"),
      A(PARAM_PRECISION) =
          SEEN("vllm/sampling_params.py: Python floats, checked as given (2a69949)"),
      A(TOPP_ONE) = SEEN("vllm/v1/sample/sampler.py: top_p 1 builds no top-p tensor; run: 32000 "
                         "of 32000 kept"),
      A(LOGPROBS) = SEEN("vllm/v1/sample/sampler.py: logprobs_mode defaults to raw_logprobs"),
      A(DRAW) = SEEN("topk_topp_sampler.py random_sample: exponential race on torch "
                     "generators"),
      A(SPEC_ACCEPT) =
          SEEN("vllm/v1/sample/rejection_sampler.py rejection_random_sample_kernel: target_prob / "
               "draft_prob >= uniform_prob (2a69949, read: Triton, not run here)"),
      A(SPEC_Q_ZERO) = SEEN("same: draft_prob > 0 and ..., so q = 0 rejects"),
      A(SPEC_Q) = SEEN("same: the draft_probs the proposer drew from; NO_DRAFT_PROBS drafts "
                       "(argmax proposers) have q = 1"),
      A(SPEC_EMPTY_RESIDUAL) =
          SEEN("same: sample_recovered_tokens_kernel takes the argmax of max(p - q, 0) / "
               "exponential; recovered_id starts at 0 and an all-zero row keeps the first index"),
      A(PENALTY_ORDER) =
          SEEN("vllm/model_executor/layers/utils.py apply_penalties: "
               "apply_repetition_penalties, then logits -= frequency * counts and -= presence "
               "* mask (2a69949, read and run)"),
      A(PENALTY_TOKENS) =
          SEEN("vllm/_custom_ops.py apply_repetition_penalties_torch: torch.where(prompt_mask "
               "| output_mask, ...); frequency and presence use the output counts (2a69949, "
               "read and run)"),
      A(MIN_P_SCALE) =
          SEEN("vllm/v1/sample/sampler.py Sampler.sample: apply_temperature before the "
               "argmax-invariant processors (MinP) (2a69949, read and run)"),
      A(MIN_P_ORDER) =
          SEEN("same: MinPLogitsProcessor writes -inf before TopKTopPSampler, whose softmax "
               "renormalizes over what it left (2a69949, read and run)"),
      A(MIN_P_BOUNDARY) =
          SEEN("vllm/v1/sample/logits_processor/builtin.py MinPLogitsProcessor.apply: "
               "probability_values < max * min_p removed (2a69949, read and run)"),
      A(PENALTY_RANGE) =
          SEEN("vllm/sampling_params.py SamplingParams._verify_args: presence and "
               "frequency in [-2, 2], min_p in [0, 1], only repetition_penalty <= 0 raises "
               "(2a69949, read and run)"),
      A(PENALTY_OVERFLOW) =
          SEEN("vllm/_custom_ops.py apply_repetition_penalties_torch: logits *= scaling in "
               "float32, unchecked, so a negative logit past the range is -inf (2a69949, read "
               "and run)")},
     "min_p,frequency_penalty,presence_penalty,repetition_penalty"},
    {"sglang",
     "SGLang's PyTorch sampler (sgl-project/sglang 15a4398)",
     {.penalty_overflow = SIEVE_PENALTY_OVERFLOW_MINUS_INF,
      .top_k_max = SIEVE_TOP_K_MAX_NONE,
      .topp_ties = SIEVE_TOPP_TIES_UNSPECIFIED,
      .topk_ties = SIEVE_TOPK_TIES_UNSPECIFIED,
      .temperature_op = SIEVE_TEMPERATURE_OP_DIVIDE,
      .t0_below = SIEVE_T0_BELOW_MICRO,
      .t0 = SIEVE_T0_TOPK1,
      .check_order = SIEVE_CHECK_ORDER_T0_RULE_FIRST,
      .topp_one = SIEVE_TOPP_ONE_FLOAT32_TAIL,
      .logprobs = SIEVE_LOGPROBS_SCALED,
      .draw = SIEVE_DRAW_OWN,
      .spec_empty_residual = SIEVE_SPEC_EMPTY_RESIDUAL_LAST_TOKEN},
     {A(RANK_KEY) = SEEN(
          "top_k_top_p_min_p_sampling_from_probs_torch: probs.sort() of the float32 probabilities"),
      A(TOPP_SCOPE) = SEEN("python/sglang/srt/layers/sampler.py "
                           "top_k_top_p_min_p_sampling_from_probs_torch: cumsum of the full "
                           "sorted probabilities (15a4398, run: "
                           "harness/adapters/engines/sglang_adapter.py)"),
      A(BOUNDARY) = SEEN("same: (probs_sum - probs_sort) > top_p removed"),
      A(TOPP_TIES) = SEEN("same: torch.sort(descending=True) is not stable: short tie runs come "
                          "out in id order, 64 equal at top_p 0.25 keep {32-48} (run)"),
      A(TOPK_TIES) = SEEN("same: rank >= k removed after that sort; 64 equal at top_k 20 keep "
                          "{32-51} (run)"),
      A(TEMPERATURE_AT) = SEEN("sampler.py Sampler.forward: logits.div_(temperatures) before the "
                               "softmax"),
      A(TEMPERATURE_OP) = SEEN("python/sglang/srt/layers/sampler.py Sampler.forward: "
                               "logits.div_(sampling_info.temperatures), float32"),
      A(T0_BELOW) = SEEN("python/sglang/srt/sampling/sampling_params.py: _SAMPLING_EPS = 1e-6"),
      A(T0) = SEEN("same, SamplingParams.__post_init__: T = 1, top_k = 1"),
      A(CHECK_ORDER) = SEEN("python/sglang/srt/sampling/sampling_params.py "
                            "SamplingParams.__post_init__: T < 1e-6 sets top_k = 1 before verify() "
                            "checks top_k; run: T = 0 with top_k 0 is answered"),
      A(TEMPERATURE_FLOOR) = SEEN("same: no floor"),
      A(TOP_K_ZERO) = SEEN("same, verify: top_k must be -1 (disable) or at least 1"),
      A(TOP_K_MINUS_ONE) = SEEN("same: -1 becomes TOP_K_ALL"),
      A(EXPLICIT_TOP_P_ONE) =
          SEEN("srt/sampling/sampling_params.py verify: 0 < top_p <= 1 (15a4398)"),
      A(TOP_K_VOCAB) =
          SEEN("srt/layers/sampler.py: ranks >= top_k are masked, so a top_k of V or more keeps "
               "all (15a4398)"),
      A(TOP_K_MAX) =
          SEEN("srt/sampling/sampling_params.py verify: -1 or at least 1, no largest; but "
               "sampling_batch_info.py from_schedule_batch builds top_ks as an int32 tensor, so "
               "a larger one fails when sampled (15a4398; run: the fingerprint's filter probe "
               "reads int32)"),
      A(PARAM_PRECISION) =
          SEEN("srt/sampling/sampling_params.py: Python floats, checked as given (15a4398)"),
      A(TOPP_ONE) = SEEN("sampler.py: with a top-k set the function runs at top_p 1; run: 28024 "
                         "of 32000 kept on a peaked row (torch's float32 softmax and cumsum)"),
      A(LOGPROBS) = SEEN("sampler.py Sampler.forward: torch.log(probs) after temperature, before "
                         "the filters (SGLANG_RETURN_ORIGINAL_LOGPROB gives raw)"),
      A(DRAW) = SEEN("sampler.py: multinomial_with_seed"),
      A(SPEC_ACCEPT) =
          SEEN("python/sglang/kernels/ops/speculative/reject_sampling.py "
               "speculative_sampling_classic_kernel: coin * q < p (15a4398, read: Triton, not run "
               "here); the EAGLE tree kernel tree_speculative_sampling_target_only tests greedy "
               "drafts with coin <= prob_acc / threshold_acc"),
      A(SPEC_Q_ZERO) = SEEN("same: coin * 0 < p accepts a draft the target keeps"),
      A(SPEC_Q) = UNCONFIRMED("the kernel takes DraftProbs as the drafter gives them; which q the "
                              "drafters pass was not read"),
      A(SPEC_EMPTY_RESIDUAL) = SEEN("same: final_token = VOCAB_SIZE - 1 when the residual's "
                                    "running sum never exceeds coin_final * norm_sum = 0"),
      A(PENALTY_ORDER) =
          SEEN("python/sglang/srt/sampling/sampling_batch_info.py "
               "_apply_pre_grammar_logits_transforms: logits.add_(acc_additive_penalties), "
               "then apply_scaling_penalties (15a4398, read and run)"),
      A(PENALTY_TOKENS) =
          SEEN("penaltylib: every penalizer is fed by cumulate_output_tokens only (15a4398, "
               "read and run); with the default overlap scheduler the counts lag one step and "
               "take the prompt's last token once, which no value names "
               "(harness/engines/PENALTIES.md)"),
      A(MIN_P_SCALE) =
          SEEN("python/sglang/srt/layers/sampler.py Sampler.forward: "
               "logits.div_(temperatures), then the softmax and min-p (15a4398, read and run)"),
      A(MIN_P_ORDER) =
          SEEN("same, top_k_top_p_min_p_sampling_from_probs_torch: top-k and top-p on the full "
               "sorted probs, then probs_sort < probs_sort[:, 0] * min_p (15a4398, read and run)"),
      A(MIN_P_BOUNDARY) =
          SEEN("same: probs_sort < min_p_thresholds removed; flashinfer's kernel keeps probs "
               ">= pivot (15a4398, read and run)"),
      A(PENALTY_RANGE) =
          SEEN("python/sglang/srt/sampling/sampling_params.py SamplingParams.verify: min_p "
               "in [0, 1], frequency and presence in [-2, 2], repetition in (0, 2] (15a4398, "
               "read and run)"),
      A(PENALTY_OVERFLOW) =
          SEEN("penaltylib/repetition_penalty.py apply_scaling_penalties: logits * "
               "penalty in float32, unchecked (15a4398, read and run)")},
     "min_p,frequency_penalty,presence_penalty,repetition_penalty"},
    {"hf-transformers",
     "Hugging Face transformers generate() with do_sample (huggingface/transformers c49429e)",
     {.penalty_range = SIEVE_PENALTY_RANGE_REPETITION_UNBOUNDED,
      .penalty_overflow = SIEVE_PENALTY_OVERFLOW_MINUS_INF,
      .top_k_max = SIEVE_TOP_K_MAX_NONE,
      .rank_key = SIEVE_RANK_KEY_LOGIT,
      .topp_scope = SIEVE_TOPP_SCOPE_AFTER_TOPK,
      .boundary = SIEVE_BOUNDARY_GE,
      .topp_ties = SIEVE_TOPP_TIES_UNSPECIFIED,
      .topk_ties = SIEVE_TOPK_TIES_KEEP_ALL,
      .temperature_op = SIEVE_TEMPERATURE_OP_DIVIDE,
      .t0_below = SIEVE_T0_BELOW_ZERO,
      .t0 = SIEVE_T0_REJECT,
      .check_order = SIEVE_CHECK_ORDER_T0_RULE_TOP_K_FIRST,
      .top_k_zero = SIEVE_TOP_K_ZERO_OFF,
      .top_k_minus_one = SIEVE_TOP_K_MINUS_ONE_ERROR,
      .draw = SIEVE_DRAW_OWN,
      .spec_accept = SIEVE_SPEC_ACCEPT_LE,
      .penalty_tokens = SIEVE_PENALTY_TOKENS_REPETITION_PROMPT},
     {A(RANK_KEY) = SEEN("logits_process.py: TopKLogitsWarper torch.topk(scores), TopPLogitsWarper "
                         "torch.sort(scores)"),
      A(TOPP_SCOPE) = SEEN("src/transformers/generation/utils.py _get_logits_processor: "
                           "temperature, top-k, then top-p (c49429e, run: "
                           "harness/adapters/engines/hf_transformers_adapter.py)"),
      A(BOUNDARY) = SEEN("generation/logits_process.py TopPLogitsWarper: cumulative_probs <= "
                         "1 - top_p removed"),
      A(TOPP_TIES) = SEEN("same: torch.sort is not stable: short tie runs keep the highest ids "
                          "({2,3} of 4), 64 equal keep {0,17-31} (run)"),
      A(TOPK_TIES) = SEEN("same file, TopKLogitsWarper: scores < the k-th value removed"),
      A(TEMPERATURE_AT) = SEEN("_get_logits_processor: TemperatureLogitsWarper first"),
      A(TEMPERATURE_OP) = SEEN("src/transformers/generation/logits_process.py "
                               "TemperatureLogitsWarper.__call__: scores / self.temperature"),
      A(T0_BELOW) = SEEN("generation/configuration_utils.py: T must be strictly positive "
                         "(negatives too are rejected)"),
      A(T0) = SEEN("TemperatureLogitsWarper: T = 0 raises ValueError (set do_sample=False)"),
      A(CHECK_ORDER) = SEEN("src/transformers/generation/utils.py _get_logits_processor: "
                            "TemperatureLogitsWarper (which raises at T = 0), then "
                            "TopKLogitsWarper, then TopPLogitsWarper, each checking its "
                            "argument when built; run"),
      A(TEMPERATURE_FLOOR) = SEEN("no floor: T = 1e-7 divides by 1e-7"),
      A(TOP_K_ZERO) = SEEN("_get_logits_processor: no TopKLogitsWarper at top_k 0"),
      A(TOP_K_MINUS_ONE) = SEEN("TopKLogitsWarper: top_k has to be a strictly positive integer"),
      A(EXPLICIT_TOP_P_ONE) =
          SEEN("TopPLogitsWarper.__init__ accepts 0 <= top_p <= 1; _get_logits_processor "
               "adds no warper at 1 (c49429e)"),
      A(TOP_K_VOCAB) =
          SEEN("TopKLogitsWarper.__call__: top_k = min(top_k, scores.size(-1)) (c49429e)"),
      A(TOP_K_MAX) = SEEN("TopKLogitsWarper.__init__: any positive int (c49429e)"),
      A(PARAM_PRECISION) = SEEN("GenerationConfig: Python floats, checked as given (c49429e)"),
      A(TOPP_ONE) = SEEN("_get_logits_processor: no TopPLogitsWarper at top_p 1"),
      A(LOGPROBS) = SEEN("none by default; compute_transition_scores(normalize_logits=True) "
                         "gives the processed logprobs"),
      A(DRAW) = SEEN("utils.py _sample: torch.multinomial"),
      A(SPEC_ACCEPT) =
          SEEN("src/transformers/generation/utils.py _speculative_sampling: is_accepted = r_i <= "
               "probability_ratio (c49429e, run: its u = 0 cases fail as [spec-accept-le])"),
      A(SPEC_Q_ZERO) = SEEN("same: p_i / q_i is inf at q = 0, and r_i <= inf accepts (read)"),
      A(SPEC_Q) = SEEN(
          "candidate_generator.py AssistedCandidateGenerator returns assistant_output.scores, the "
          "processed logits it drew from (c49429e, read); its DFlashTokenCandidateGenerator and "
          "MTPCandidateGenerator return raw logits instead (transformers#47932)"),
      A(SPEC_EMPTY_RESIDUAL) = UNCONFIRMED(
          "_speculative_sampling divides clamp(p - q, 0) by its sum, 0 here, and torch.multinomial "
          "rejects the NaN row: an error, which no value of this axis is (c49429e, read; torch "
          "1.13 here raises on that row, run)"),
      A(PENALTY_ORDER) =
          UNCONFIRMED("only the repetition penalty is offered (generation/logits_process.py has no "
                      "frequency or presence processor, c49429e): no order to read"),
      A(PENALTY_TOKENS) =
          SEEN("generation/logits_process.py RepetitionPenaltyLogitsProcessor.__call__: "
               "torch.gather(scores, 1, input_ids), the whole sequence (c49429e, read and run)"),
      A(MIN_P_SCALE) =
          SEEN("generation/utils.py _get_logits_processor: TemperatureLogitsWarper before "
               "MinPLogitsWarper (c49429e, read and run)"),
      A(MIN_P_ORDER) =
          SEEN("same: MinPLogitsWarper last, against probs.amax of the row top-k and top-p "
               "left (c49429e, read and run)"),
      A(MIN_P_BOUNDARY) =
          SEEN("generation/logits_process.py MinPLogitsWarper.__call__: probs < min_p * "
               "top_probs removed (c49429e, read and run)"),
      A(PENALTY_RANGE) =
          SEEN("generation/logits_process.py RepetitionPenaltyLogitsProcessor.__init__: any "
               "float penalty > 0; MinPLogitsWarper.__init__: 0 <= min_p <= 1 (c49429e, read "
               "and run; no frequency or presence)"),
      A(PENALTY_OVERFLOW) =
          SEEN("RepetitionPenaltyLogitsProcessor.__call__: score * penalty on float32 "
               "scores, unchecked (c49429e, read and run)")},
     "min_p,repetition_penalty"},
    {"transformers.js",
     "transformers.js generate() sampling (npm @huggingface/transformers 4.3.2)",
     {.penalty_range = SIEVE_PENALTY_RANGE_UNCHECKED,
      .penalty_overflow = SIEVE_PENALTY_OVERFLOW_MINUS_INF,
      .top_k_max = SIEVE_TOP_K_MAX_NONE,
      .rank_key = SIEVE_RANK_KEY_LOGIT,
      .topp_scope = SIEVE_TOPP_SCOPE_IGNORED,
      .temperature_op = SIEVE_TEMPERATURE_OP_DIVIDE_FLOAT64,
      .t0_below = SIEVE_T0_BELOW_ZERO_NEGATIVE_SCALES,
      .t0 = SIEVE_T0_ARGMAX,
      .top_k_zero = SIEVE_TOP_K_ZERO_OFF,
      .draw = SIEVE_DRAW_OWN,
      .penalty_tokens = SIEVE_PENALTY_TOKENS_REPETITION_PROMPT},
     {A(RANK_KEY) =
          SEEN("logits_sampler.js MultinomialSampler.sample: topk of the logits; run: {0,1,3}"),
      A(TOPP_SCOPE) = SEEN("src/models/modeling_utils.js _get_logits_processor: the top-p warper "
                           "is commented out, and TopPLogitsWarper "
                           "(src/generation/logits_process.js) has no _call"),
      A(BOUNDARY) = UNCONFIRMED("not applicable: top-p is not applied"),
      A(TOPP_TIES) = UNCONFIRMED("not applicable: top-p is not applied"),
      A(TOPK_TIES) = SEEN("src/generation/logits_sampler.js MultinomialSampler.sample: topk, an "
                          "ONNX TopK (lower index first among equals); run: {1,3}, {0,3}"),
      A(TEMPERATURE_AT) = SEEN("_get_logits_processor: TemperatureLogitsWarper before the "
                               "sampler's top-k (no top-p for it to move)"),
      A(TEMPERATURE_OP) = SEEN("src/generation/logits_process.js TemperatureLogitsWarper._call: "
                               "Float32Array element /= this.temperature, a float64 quotient "
                               "rounded to float32, a float32 step from the float32 T's where "
                               "T is no float32 (sieve fuzz found it at T = 1e-6; run)"),
      A(T0_BELOW) = SEEN("modeling_utils.js: temperature === 0 && do_sample switches do_sample "
                         "off; other temperatures, negative ones too, divide "
                         "(TemperatureLogitsWarper); run: T = -1 answers the reversed row"),
      A(T0) = SEEN("logits_sampler.js LogitsSampler.getSampler: GreedySampler, the first "
                   "maximum"),
      A(CHECK_ORDER) = UNCONFIRMED("no top_p or top_k is checked"),
      A(TEMPERATURE_FLOOR) = SEEN("TemperatureLogitsWarper: no floor"),
      A(TOP_K_ZERO) = SEEN("MultinomialSampler: k = V unless top_k > 0"),
      A(TOP_K_MINUS_ONE) = SEEN("same: top_k > 0 only"),
      A(EXPLICIT_TOP_P_ONE) =
          SEEN("src/generation/logits_process.js TopPLogitsWarper: 0 <= top_p <= 1 accepted"),
      A(TOP_K_VOCAB) = SEEN("src/generation/logits_sampler.js MultinomialSampler.sample: k = "
                            "Math.min(top_k, V)"),
      A(TOP_K_MAX) = SEEN("MultinomialSampler.sample: k = Math.min(top_k, V) for any top_k > 0"),
      A(PARAM_PRECISION) = SEEN("GenerationConfig: JavaScript numbers, float64"),
      A(TOPP_ONE) = SEEN("not applied, so top_p = 1 removes nothing"),
      A(LOGPROBS) = SEEN("MultinomialSampler.sample returns log(softmax over the top k of the "
                         "scaled logits)"),
      A(DRAW) = SEEN("src/utils/random.js _weightedIndex, its own generator"),
      A(SPEC_ACCEPT) =
          UNCONFIRMED("no speculative verification in its generation loop (not read further)"),
      A(SPEC_Q_ZERO) =
          UNCONFIRMED("no speculative verification in its generation loop (not read further)"),
      A(SPEC_Q) =
          UNCONFIRMED("no speculative verification in its generation loop (not read further)"),
      A(SPEC_EMPTY_RESIDUAL) =
          UNCONFIRMED("no speculative verification in its generation loop (not read further)"),
      A(PENALTY_ORDER) = UNCONFIRMED(
          "only the repetition penalty is offered (src/generation/configuration_utils.js "
          "GenerationConfig): no order to read"),
      A(PENALTY_TOKENS) =
          SEEN("src/generation/logits_process.js RepetitionPenaltyLogitsProcessor._call: new "
               "Set(input_ids[i]) over all_input_ids, prompt and output (5ed4c5c, which says "
               "4.2.0; the pinned 4.3.2 not read)"),
      A(MIN_P_SCALE) = UNCONFIRMED(
          "min_p is not offered (src/generation/configuration_utils.js GenerationConfig "
          "has no min_p)"),
      A(MIN_P_ORDER) = UNCONFIRMED("min_p is not offered"),
      A(MIN_P_BOUNDARY) = UNCONFIRMED("min_p is not offered"),
      A(PENALTY_RANGE) =
          SEEN("src/generation/logits_process.js RepetitionPenaltyLogitsProcessor: the "
               "penalty is stored unchecked (5ed4c5c, read; no min_p, frequency or presence)"),
      A(PENALTY_OVERFLOW) =
          SEEN("same, _call: a Float32Array element times the penalty, -Infinity past "
               "the range, unchecked (5ed4c5c, read)")},
     "repetition_penalty"},
    {"sglang-004",
     "SGLang as seed 004 describes it",
     {.topp_scope = SIEVE_TOPP_SCOPE_AFTER_TOPK,
      .boundary = SIEVE_BOUNDARY_GE,
      .topk_ties = SIEVE_TOPK_TIES_KEEP_ALL,
      .temperature_op = SIEVE_TEMPERATURE_OP_DIVIDE,
      .t0 = SIEVE_T0_TOPK1,
      .top_k_zero = SIEVE_TOP_K_ZERO_OFF,
      .draw = SIEVE_DRAW_OWN},
     {A(RANK_KEY) = SEEN("seed 004:211: sorted(range(len(probs)), key=probs)"),
      A(TOPP_SCOPE) = SEEN("seed 004:261-279, 004:301"),
      A(BOUNDARY) = SEEN("seed 004:216-220 (stop once cumsum >= p)"),
      A(TOPP_TIES) = SEEN("seed 004:211 (Python's sorted is stable: ties in id order)"),
      A(TOPK_TIES) = SEEN("seed 004:170 (x >= threshold)"),
      A(TEMPERATURE_AT) = SEEN("seed 004:288"),
      A(TEMPERATURE_OP) = SEEN("seed 004:288: logits / params.temperature"),
      A(T0_BELOW) = UNCONFIRMED("seed 004:54 names _SAMPLING_EPS without its value; the spec's "
                                "1e-5 is kept"),
      A(T0) = SEEN("seed 004:54-56 (T = 1, top_k = 1)"),
      A(CHECK_ORDER) = UNCONFIRMED("seed 004 does not show where the checks run"),
      A(TEMPERATURE_FLOOR) = SEEN("seed 004:54-56 (no other clamp)"),
      A(TOP_K_ZERO) = SEEN("seed 004:165, 004:290 (top_k > 0)"),
      A(TOP_K_MINUS_ONE) = SEEN("seed 004:165 (k <= 0 is no filter)"),
      A(EXPLICIT_TOP_P_ONE) =
          UNCONFIRMED("seed 004 does not say whether an explicit top_p = 1 is accepted"),
      A(TOP_K_VOCAB) = UNCONFIRMED("seed 004 does not say what a top_k of V or more does"),
      A(TOP_K_MAX) = UNCONFIRMED("seed 004 does not say"),
      A(PARAM_PRECISION) = UNCONFIRMED("seed 004 does not say"),
      A(TOPP_ONE) = UNCONFIRMED("seed 004 does not say what top_p = 1 does"),
      A(LOGPROBS) = UNCONFIRMED("seed 004 does not say which logprobs are returned"),
      A(DRAW) = SEEN("seed 004:297 (multinomial_sample)"),
      A(SPEC_ACCEPT) = UNCONFIRMED("seed 004 has no speculative decoding"),
      A(SPEC_Q_ZERO) = UNCONFIRMED("seed 004 has no speculative decoding"),
      A(SPEC_Q) = UNCONFIRMED("seed 004 has no speculative decoding"),
      A(SPEC_EMPTY_RESIDUAL) = UNCONFIRMED("seed 004 has no speculative decoding"),
      A(PENALTY_ORDER) =
          UNCONFIRMED("seed 004:284-286 applies frequency and presence only, so no order shows"),
      A(PENALTY_TOKENS) = UNCONFIRMED("seed 004 does not say which tokens the penalties count"),
      A(MIN_P_SCALE) = UNCONFIRMED("seed 004 has no min-p"),
      A(MIN_P_ORDER) = UNCONFIRMED("seed 004 has no min-p"),
      A(MIN_P_BOUNDARY) = UNCONFIRMED("seed 004 has no min-p"),
      A(PENALTY_RANGE) =
          UNCONFIRMED("seed 004 states no range"),
      A(PENALTY_OVERFLOW) =
          UNCONFIRMED("seed 004 does not say")},
     ""},
    {"llama.cpp",
     "llama.cpp's default sampler chain (ggml-org/llama.cpp, tag v0.4.0 as node-llama-cpp 3.21.1 "
     "bundles it)",
     {.penalty_range = SIEVE_PENALTY_RANGE_UNCHECKED,
      .penalty_overflow = SIEVE_PENALTY_OVERFLOW_MINUS_INF,
      .param_precision = SIEVE_PARAM_PRECISION_FLOAT32,
      .rank_key = SIEVE_RANK_KEY_LOGIT,
      .topp_scope = SIEVE_TOPP_SCOPE_AFTER_TOPK,
      .boundary = SIEVE_BOUNDARY_GE,
      .topp_ties = SIEVE_TOPP_TIES_UNSPECIFIED,
      .topk_ties = SIEVE_TOPK_TIES_UNSPECIFIED,
      .temperature_at = SIEVE_TEMPERATURE_AT_AFTER,
      .temperature_op = SIEVE_TEMPERATURE_OP_DIVIDE,
      .t0_below = SIEVE_T0_BELOW_NONPOSITIVE,
      .t0 = SIEVE_T0_ARGMAX,
      .top_k_zero = SIEVE_TOP_K_ZERO_OFF,
      .draw = SIEVE_DRAW_OWN,
      .penalty_order = SIEVE_PENALTY_ORDER_REPETITION_FIRST,
      .penalty_tokens = SIEVE_PENALTY_TOKENS_PROMPT,
      .min_p_scale = SIEVE_MIN_P_SCALE_UNSCALED},
     {A(RANK_KEY) = SEEN("src/llama-sampler.cpp: candidates sorted by logit; run: {0,1,3}"),
      A(TOPP_SCOPE) = SEEN("src/llama-sampler.cpp llama_sampler_top_p_apply: softmax over the "
                           "candidates top-k left; common/common.h samplers: top_k before top_p "
                           "(80fb11a, the v0.4.0 bundle of node-llama-cpp 3.21.1)"),
      A(BOUNDARY) = SEEN("same: keeps up to and including the token where cum_sum >= p"),
      A(TOPP_TIES) = SEEN("same: candidates ordered by std::partial_sort or a bucket std::sort, "
                          "neither stable; run: 4 equal at top_p 0.5 keep {1,3}"),
      A(TOPK_TIES) = SEEN("src/llama-sampler.cpp llama_sampler_top_k_impl: partial_sort_inplace, "
                          "exactly k, unstable"),
      A(TEMPERATURE_AT) = SEEN("common/common.h common_params_sampling::samplers: temperature "
                               "last"),
      A(TEMPERATURE_OP) = SEEN("src/llama-sampler.cpp llama_sampler_temp_impl: "
                               "cur_p->data[i].logit /= temp, float (run)"),
      A(T0_BELOW) = SEEN("src/llama-sampler.cpp llama_sampler_temp_impl: temp <= 0"),
      A(T0) = SEEN("same: the maximum alone (the first in the array's current order)"),
      A(CHECK_ORDER) = UNCONFIRMED("llama.cpp checks no parameter"),
      A(TEMPERATURE_FLOOR) = SEEN("llama_sampler_temp_impl: no floor"),
      A(TOP_K_ZERO) = SEEN("llama_sampler_top_k_impl: k <= 0 returns, nothing removed"),
      A(TOP_K_MINUS_ONE) = SEEN("same: k <= 0"),
      A(EXPLICIT_TOP_P_ONE) =
          SEEN("tools/server/server-task.cpp params_from_json_cmpl checks no top_p; "
               "llama_sampler_top_p_apply: p >= 1 returns"),
      A(TOP_K_VOCAB) = SEEN("src/llama-sampler.cpp llama_sampler_top_k_impl: k = min(k, size)"),
      A(TOP_K_MAX) = SEEN("llama_sampler_init_top_k(int32_t k): a larger top_k cannot reach it"),
      A(PARAM_PRECISION) =
          SEEN("llama_sampler_init_temp(float t), llama_sampler_init_top_p(float p, size_t)"),
      A(TOPP_ONE) = SEEN("llama_sampler_top_p_apply: p >= 1 returns"),
      A(LOGPROBS) = SEEN("the chain's own probabilities: cur_p after dist holds the softmax of "
                         "the kept candidates at their final logits (tools/server returns these "
                         "with post_sampling_probs; without it, its default, the softmax of the "
                         "raw logits)"),
      A(DRAW) = SEEN("llama_sampler_dist_apply: std::mt19937"),
      A(SPEC_ACCEPT) =
          UNCONFIRMED("the library's sampler chain run here has no speculative verifier"),
      A(SPEC_Q_ZERO) =
          UNCONFIRMED("the library's sampler chain run here has no speculative verifier"),
      A(SPEC_Q) = UNCONFIRMED("the library's sampler chain run here has no speculative verifier"),
      A(SPEC_EMPTY_RESIDUAL) =
          UNCONFIRMED("not read: the library's sampler chain run here has no speculative verifier"),
      A(PENALTY_ORDER) =
          SEEN("src/llama-sampling.cpp llama_sampler_penalties_apply: logit *= or /= "
               "penalty_repeat, then -= count * freq + (count > 0) * present (read at 00efb3e; "
               "the same at 5b4ebc5 in an earlier run)"),
      A(PENALTY_TOKENS) =
          SEEN("llama-server replays the prompt into the sampler (common_sampler_accept for "
               "each prompt token), and llama_sampler_penalties_accept keeps the last "
               "penalty_last_n accepted: the last n of the prompt and the output (00efb3e, "
               "read); the library alone counts what its caller accepts"),
      A(MIN_P_SCALE) =
          SEEN("common/common.h: the default chain puts MIN_P before TEMPERATURE (00efb3e, "
               "read)"),
      A(MIN_P_ORDER) =
          SEEN("same: min-p after top-k and top-p, against the largest logit left, the row's "
               "(00efb3e, read)"),
      A(MIN_P_BOUNDARY) =
          SEEN("src/llama-sampling.cpp llama_sampler_min_p_apply: logit >= max_logit + logf(p) "
               "kept, in float32 log space (00efb3e, read)"),
      A(PENALTY_RANGE) =
          SEEN("src/llama-sampler.cpp llama_sampler_init_penalties and "
               "llama_sampler_init_min_p check no value; min_p above 1 keeps one token (00efb3e, "
               "read)"),
      A(PENALTY_OVERFLOW) =
          SEEN("llama_sampler_penalties_apply: logit *= penalty_repeat in float32, "
               "unchecked (00efb3e, read)")},
     "min_p,frequency_penalty,presence_penalty,repetition_penalty,penalty_last_n"},
    {"mlx-lm",
     "MLX-LM make_sampler (ml-explore/mlx-lm)",
     {.top_k_max = SIEVE_TOP_K_MAX_NONE,
      .rank_key = SIEVE_RANK_KEY_LOGIT,
      .boundary = SIEVE_BOUNDARY_GE,
      .topp_ties = SIEVE_TOPP_TIES_HIGHEST,
      .temperature_at = SIEVE_TEMPERATURE_AT_AFTER,
      .t0_below = SIEVE_T0_BELOW_ZERO,
      .t0 = SIEVE_T0_ARGMAX,
      .top_k_zero = SIEVE_TOP_K_ZERO_OFF,
      .top_k_vocab = SIEVE_TOP_K_VOCAB_ERROR,
      .logprobs = SIEVE_LOGPROBS_RAW,
      .draw = SIEVE_DRAW_OWN,
      .penalty_order = SIEVE_PENALTY_ORDER_REPETITION_FIRST,
      .min_p_scale = SIEVE_MIN_P_SCALE_UNSCALED},
     {A(RANK_KEY) = SEEN(
          "sample_utils.py: argsort / argpartition of the logprobs, which keep the logit order"),
      A(TOPP_SCOPE) = SEEN("mlx_lm/sample_utils.py make_sampler: top-p, min-p, xtc, then top-k, "
                           "all on the full logprobs (d78bf58)"),
      A(BOUNDARY) = SEEN("same file, apply_top_p: keeps ascending inclusive cumsum > 1 - top_p"),
      A(TOPP_TIES) = SEEN("apply_top_p: mx.argsort ascending is stable (ml-explore/mlx 846d176, "
                          "std::stable_sort / Metal merge sort), so the highest ids stay"),
      A(TOPK_TIES) = SEEN("apply_top_k: argpartition(-logprobs), ordered by (value, index) on "
                          "CPU; Metal uses the stable sort"),
      A(TEMPERATURE_AT) = SEEN("categorical_sampling: logits * (1 / temp) after the filters"),
      A(TEMPERATURE_OP) =
          SEEN("categorical_sampling: logits * (1 / temp), the Python float 1 / temp "
               "taken as a float32 scalar"),
      A(T0_BELOW) = SEEN("make_sampler: temp == 0 (negative T is not rejected there)"),
      A(T0) = SEEN("make_sampler: mx.argmax, the first maximum"),
      A(CHECK_ORDER) = UNCONFIRMED("make_sampler checks no parameter"),
      A(TEMPERATURE_FLOOR) = SEEN("make_sampler: none"),
      A(TOP_K_ZERO) = SEEN("make_sampler: top_k > 0 only"),
      A(TOP_K_MINUS_ONE) = SEEN("make_sampler: top_k > 0 only (server.py rejects -1)"),
      A(EXPLICIT_TOP_P_ONE) =
          SEEN("server.py validate_model_parameters: 0 <= top_p <= 1 (d78bf58)"),
      A(TOP_K_VOCAB) =
          SEEN("mlx_lm/sample_utils.py apply_top_k: ValueError unless 0 < top_k < vocab_size, "
               "raised when the sampler runs (d78bf58)"),
      A(TOP_K_MAX) = SEEN("server.py validate_model_parameters: an int >= 0, no largest (d78bf58)"),
      A(PARAM_PRECISION) = SEEN("make_sampler(temp: float, top_p: float): Python floats (d78bf58)"),
      A(TOPP_ONE) = SEEN("make_sampler: top-p only when 0 < top_p < 1"),
      A(LOGPROBS) = SEEN("generate.py generate_step: logits - logsumexp(logits), before the "
                         "sampler"),
      A(DRAW) = SEEN("mx.random.categorical"),
      A(SPEC_ACCEPT) =
          UNCONFIRMED("not read; mlx-lm#1085 describes its MTP verifier as an exact match "
                      "(verify_pred == draft_tok), which has no accept test of p and q"),
      A(SPEC_Q_ZERO) =
          UNCONFIRMED("not read; mlx-lm#1085 describes its MTP verifier as an exact match "
                      "(verify_pred == draft_tok), which has no accept test of p and q"),
      A(SPEC_Q) = UNCONFIRMED("not read; mlx-lm#1085 describes its MTP verifier as an exact match "
                              "(verify_pred == draft_tok), which has no accept test of p and q"),
      A(SPEC_EMPTY_RESIDUAL) =
          UNCONFIRMED("not read; mlx-lm#1085 describes its MTP verifier as an exact match "
                      "(verify_pred == draft_tok), which has no accept test of p and q"),
      A(PENALTY_ORDER) =
          SEEN("mlx_lm/sample_utils.py make_logits_processors: the repetition penalty, then "
               "presence, then frequency (d78bf58, read)"),
      A(PENALTY_TOKENS) =
          UNCONFIRMED("no value: each penalty counts the last 20 tokens of its own window, which "
                      "generate_step starts at the prompt's last token (d78bf58, read; "
                      "harness/engines/PENALTIES.md)"),
      A(MIN_P_SCALE) =
          SEEN("mlx_lm/generate.py generate_step: the sampler's filters see logprobs at T = 1; "
               "categorical_sampling scales last (d78bf58, read)"),
      A(MIN_P_ORDER) =
          SEEN("mlx_lm/sample_utils.py make_sampler: top_p, min_p, top_k each on the full "
               "logprobs, min-p against their max (d78bf58, read)"),
      A(MIN_P_BOUNDARY) =
          SEEN("mlx_lm/sample_utils.py apply_min_p: logprobs < top + log(min_p) removed, in "
               "log space (d78bf58, read)"),
      A(PENALTY_RANGE) =
          UNCONFIRMED("no value fits: min_p in [0, 1] and repetition >= 0 (0 is off) are "
               "checked, presence and frequency not (mlx_lm/sample_utils.py, server.py, d78bf58)"),
      A(PENALTY_OVERFLOW) =
          UNCONFIRMED("no value fits: unchecked in the logits' own dtype, float16 "
               "overflowing at 65504 (d78bf58, read)")},
     ""},
    {"ollama",
     "Ollama's Go sampler (ollama/ollama sample/, f63eea3; removed in 9db4bdb, after which GGML "
     "models use llama.cpp's chain)",
     {.rank_key = SIEVE_RANK_KEY_LOGIT,
      .topp_scope = SIEVE_TOPP_SCOPE_AFTER_TOPK,
      .topp_ties = SIEVE_TOPP_TIES_UNSPECIFIED,
      .topk_ties = SIEVE_TOPK_TIES_UNSPECIFIED,
      .temperature_op = SIEVE_TEMPERATURE_OP_DIVIDE,
      .t0_below = SIEVE_T0_BELOW_NONPOSITIVE,
      .t0 = SIEVE_T0_ARGMAX,
      .top_k_zero = SIEVE_TOP_K_ZERO_OFF,
      .logprobs = SIEVE_LOGPROBS_RAW,
      .draw = SIEVE_DRAW_OWN},
     {A(RANK_KEY) = SEEN("sample/transforms.go: topK and topP order tokens by logit (the softmax "
                         "runs after top-k)"),
      A(TOPP_SCOPE) = SEEN("sample/samplers.go Sampler.sample: topK, temperature, softmax over "
                           "the k kept, topP (f63eea3)"),
      A(BOUNDARY) = SEEN("sample/transforms.go topP: returns ts[:i+1] once sum > p"),
      A(TOPP_TIES) = SEEN("same: order from container/heap or slices.SortFunc, neither stable"),
      A(TOPK_TIES) = SEEN("sample/transforms.go topK: a min-heap replacing on strict >; [1,1,1,2] "
                          "with k 2 keeps {1,3}"),
      A(TEMPERATURE_AT) = SEEN("sample/samplers.go: temperature before softmax and topP"),
      A(TEMPERATURE_OP) = SEEN("sample/transforms.go temperature: ts[i].value / temp, float32"),
      A(T0_BELOW) = SEEN("sample/samplers.go NewSampler: temperature < 0 becomes 0, greedy"),
      A(T0) = SEEN("sample/samplers.go greedy: strict > in id order, the lowest id"),
      A(CHECK_ORDER) = UNCONFIRMED("not read"),
      A(TEMPERATURE_FLOOR) = SEEN("sample/transforms.go temperature: max(T, 1e-7), below every "
                                  "temperature the t0 rule leaves"),
      A(TOP_K_ZERO) = SEEN("sample/transforms.go topK: k <= 0 sorts only"),
      A(TOP_K_MINUS_ONE) = SEEN("same: k <= 0"),
      A(EXPLICIT_TOP_P_ONE) =
          SEEN("sample/samplers.go NewSampler checks no top_p; transforms.go topP: p >= 1 "
               "returns (f63eea3)"),
      A(TOP_K_VOCAB) = SEEN("sample/transforms.go topK: k >= len(ts) keeps all (f63eea3)"),
      A(TOP_K_MAX) = UNCONFIRMED("not read: the Go int options take any top_k"),
      A(PARAM_PRECISION) = UNCONFIRMED("not read"),
      A(TOPP_ONE) = SEEN("sample/transforms.go topP: p == 1 returns"),
      A(LOGPROBS) = SEEN("runner/common/logprob.go CalculateLogprobs: log-softmax of the raw "
                         "logits"),
      A(DRAW) = SEEN("sample/samplers.go: rand/v2 PCG"),
      A(SPEC_ACCEPT) = UNCONFIRMED("its speculative decoding was not read"),
      A(SPEC_Q_ZERO) = UNCONFIRMED("its speculative decoding was not read"),
      A(SPEC_Q) = UNCONFIRMED("its speculative decoding was not read"),
      A(SPEC_EMPTY_RESIDUAL) = UNCONFIRMED("its speculative decoding was not read"),
      A(PENALTY_ORDER) =
          UNCONFIRMED("the Go sampler applies no penalty: runner/ollamarunner/runner.go builds "
                      "sample.NewSampler without them (f63eea3, read)"),
      A(PENALTY_TOKENS) = UNCONFIRMED("the Go sampler applies no penalty (f63eea3, read)"),
      A(MIN_P_SCALE) =
          SEEN("sample/samplers.go Sampler.sample: temperature, softmax, then minP (f63eea3, "
               "read)"),
      A(MIN_P_ORDER) = SEEN("same: minP last, against the top token's p (f63eea3, read)"),
      A(MIN_P_BOUNDARY) =
          SEEN("sample/transforms.go minP: t.value < maxProb * p removed (f63eea3, read)"),
      A(PENALTY_RANGE) =
          UNCONFIRMED("no value fits: sample.NewSampler clamps min_p into [0, 1], never "
               "rejects; the Go sampler applies no penalty (f63eea3, read)"),
      A(PENALTY_OVERFLOW) =
          UNCONFIRMED("the Go sampler applies no penalty (f63eea3, read)")},
     ""},
    {"tensorrt-llm",
     "TensorRT-LLM's PyTorch TorchSampler on its FlashInfer path (NVIDIA/TensorRT-LLM; the "
     "default sampler_type=auto)",
     {.rank_key = SIEVE_RANK_KEY_LOGIT,
      .topp_scope = SIEVE_TOPP_SCOPE_AFTER_TOPK,
      .boundary = SIEVE_BOUNDARY_GE,
      .topp_ties = SIEVE_TOPP_TIES_ALL,
      .topk_ties = SIEVE_TOPK_TIES_KEEP_ALL,
      .temperature_op = SIEVE_TEMPERATURE_OP_DIVIDE,
      .t0_below = SIEVE_T0_BELOW_ZERO,
      .t0 = SIEVE_T0_ARGMAX,
      .top_k_zero = SIEVE_TOP_K_ZERO_OFF,
      .top_k_minus_one = SIEVE_TOP_K_MINUS_ONE_ERROR,
      .logprobs = SIEVE_LOGPROBS_RAW,
      .draw = SIEVE_DRAW_OWN},
     {A(RANK_KEY) = UNCONFIRMED("FlashInfer's top_k_mask_logits compares logits; its top-p kernel "
                                "compares probabilities (read, not run)"),
      A(TOPP_SCOPE) = SEEN("tensorrt_llm/_torch/pyexecutor/sampling_utils_flashinfer.py: "
                           "top_k_top_p_sampling_from_logits(..., \"top_k_first\") (490c756)"),
      A(BOUNDARY) = SEEN("FlashInfer's kernel: a token stays while the mass strictly above it "
                         "is < top_p (see flashinfer-top-k-first); the torch fallback of "
                         "sampling_utils.py (053c42c) is gt"),
      A(TOPP_TIES) = SEEN("FlashInfer's pivot compares by value: tied tokens stay or go "
                          "together"),
      A(TOPK_TIES) = SEEN("FlashInfer's top-k mask keeps >= pivot; the torch fallback's "
                          "logits < kth also keeps ties"),
      A(TEMPERATURE_AT) = SEEN("sampling_utils.py: logits / T before the filters"),
      A(TEMPERATURE_OP) = SEEN("sampling_utils.py: logits / T"),
      A(T0_BELOW) = SEEN("sampling_utils.py params_imply_greedy_decoding: T == 0 (T < 0 raises)"),
      A(T0) = SEEN("same: torch.argmax, the first maximum. The C++ decoder (samplingTopKKernels"
                   ".cu 0396172, penaltyKernels.cu 249d93d) has no t0 rule: 1 / (T + 1e-6)"),
      A(CHECK_ORDER) = UNCONFIRMED("not read"),
      A(TEMPERATURE_FLOOR) = SEEN("sampling_utils.py: no floor (the torch fallback uses "
                                  "max(T, 1e-5))"),
      A(TOP_K_ZERO) = SEEN("sampling_utils.py: top_k or vocab_size"),
      A(TOP_K_MINUS_ONE) = SEEN("sampling_params.py: a negative top_k raises ValueError"),
      A(EXPLICIT_TOP_P_ONE) =
          SEEN("tensorrt_llm/_torch/pyexecutor/sampling_utils.py resolve_sampling_strategy: "
               "top_p or 1.0, no check (053c42c)"),
      A(TOP_K_VOCAB) =
          SEEN("same: need_top_k = top_k < vocab_size, so V or more keeps all (053c42c)"),
      A(TOP_K_MAX) = UNCONFIRMED("not read"),
      A(PARAM_PRECISION) = UNCONFIRMED("not read"),
      A(TOPP_ONE) = SEEN("sampling_utils.py: top-p only when top_p < 1"),
      A(LOGPROBS) = UNCONFIRMED("raw per the API docs and PR #9675 (logprobs_mode "
                                "LogprobMode.RAW); the enum's own file was not read"),
      A(DRAW) = SEEN("FlashInfer's Philox generator"),
      A(SPEC_ACCEPT) = UNCONFIRMED("its speculative decoding was not read"),
      A(SPEC_Q_ZERO) = UNCONFIRMED("its speculative decoding was not read"),
      A(SPEC_Q) = UNCONFIRMED("its speculative decoding was not read"),
      A(SPEC_EMPTY_RESIDUAL) = UNCONFIRMED("its speculative decoding was not read"),
      A(PENALTY_ORDER) =
          UNCONFIRMED("the TorchSampler ignores the penalties at 053c42c (sampling_utils.py "
                      "UtilsSamplingParams has none; PR #16485 says they were ignored)"),
      A(PENALTY_TOKENS) =
          UNCONFIRMED("the TorchSampler ignores the penalties at 053c42c (sampling_utils.py "
                      "UtilsSamplingParams has none; PR #16485 says they were ignored)"),
      A(MIN_P_SCALE) = UNCONFIRMED("the TorchSampler ignores min_p at 053c42c (sampling_utils.py "
                                   "UtilsSamplingParams has none)"),
      A(MIN_P_ORDER) = UNCONFIRMED("the TorchSampler ignores min_p at 053c42c (sampling_utils.py "
                                   "UtilsSamplingParams has none)"),
      A(MIN_P_BOUNDARY) =
          UNCONFIRMED("the TorchSampler ignores min_p at 053c42c (sampling_utils.py "
                      "UtilsSamplingParams has none)"),
      A(PENALTY_RANGE) =
          UNCONFIRMED("no value fits: samplingConfig.cpp checks min_p in [0, 1] and "
               "repetition > 0, presence and frequency not (053c42c / ce175b5, read)"),
      A(PENALTY_OVERFLOW) =
          UNCONFIRMED("no value fits: written back in the logits' type, half "
               "overflowing at 65504 (read)")},
     ""},
    {"candle",
     "candle's LogitsProcessor as its example CLIs build it (huggingface/candle 2a13b0f: "
     "candle-transformers/src/generation/mod.rs, candle-examples/examples/llama/main.rs)",
     {.penalty_range = SIEVE_PENALTY_RANGE_UNCHECKED,
      .penalty_overflow = SIEVE_PENALTY_OVERFLOW_MINUS_INF,
      .topk_ties = SIEVE_TOPK_TIES_UNSPECIFIED,
      .boundary = SIEVE_BOUNDARY_GE,
      .t0_below = SIEVE_T0_BELOW_NONPOSITIVE,
      .t0 = SIEVE_T0_ARGMAX,
      .check_order = SIEVE_CHECK_ORDER_T0_RULE_FIRST,
      .top_k_minus_one = SIEVE_TOP_K_MINUS_ONE_ERROR,
      .topp_one = SIEVE_TOPP_ONE_FLOAT32_TAIL,
      .draw = SIEVE_DRAW_OWN,
      .penalty_tokens = SIEVE_PENALTY_TOKENS_REPETITION_PROMPT},
     {A(RANK_KEY) = SEEN("generation/mod.rs sample_topp, sample_topk: sort and select_nth on the "
                         "float32 probabilities (total_cmp), so float32 underflow ties"),
      A(TOPP_SCOPE) = SEEN("mod.rs sample_topk_topp: top-k, then top-p against the k tokens' "
                           "full-softmax mass, not renormalized: top-p on the full distribution"),
      A(BOUNDARY) = SEEN("mod.rs sample_topp: if cumsum >= top_p the token's weight is 0; cumsum "
                         "is the float32 mass before it"),
      A(TOPP_TIES) = SEEN("mod.rs sample_topp: a stable sort_by on descending probability, ties in "
                          "id order (with a top-k < V set, the selection's order)"),
      A(TOPK_TIES) = SEEN("mod.rs sample_topk: select_nth_unstable_by(top_k), exactly k in the "
                          "selection's order"),
      A(TEMPERATURE_AT) = SEEN("mod.rs sample_f: logits / T and the softmax before the filters"),
      A(TEMPERATURE_OP) = SEEN("candle-core tensor.rs: Tensor / f64 is affine(1 / T, 0), the logit "
                               "times the float32 1/T"),
      A(T0_BELOW) = SEEN("examples/llama/main.rs: temperature <= 0 is Sampling::ArgMax (mod.rs "
                         "LogitsProcessor::new instead takes T < 1e-7: below_1e-7)"),
      A(T0) = SEEN("mod.rs sample_argmax: argmax of the raw logits; cpu_backend ReduceIndex keeps "
                   "the first maximum"),
      A(CHECK_ORDER) = SEEN("examples/llama/main.rs: T <= 0 becomes ArgMax before top_k or top_p "
                            "is looked at; neither is checked"),
      A(TEMPERATURE_FLOOR) = SEEN("mod.rs: none"),
      A(TOP_K_ZERO) = SEEN("mod.rs sample_topk: top_k 0 leaves no token, and rand's WeightedIndex "
                           "fails with InvalidInput"),
      A(TOP_K_MINUS_ONE) = SEEN("Sampling::TopK { k: usize }; the CLIs' top_k: Option<usize> "
                                "rejects -1, and leaving it out is off"),
      A(EXPLICIT_TOP_P_ONE) =
          SEEN("generation/mod.rs LogitsProcessor::new checks nothing; sample_f: p >= 1 samples "
               "from all (2a13b0f)"),
      A(TOP_K_VOCAB) = SEEN("generation/mod.rs sample_topk: top_k >= V samples from all (2a13b0f)"),
      A(TOP_K_MAX) = UNCONFIRMED("not read: top_k is a usize"),
      A(PARAM_PRECISION) = UNCONFIRMED("not read"),
      A(TOPP_ONE) = SEEN("mod.rs sample_topk_topp: k >= V runs sample_topp(p = 1) unguarded; "
                         "k < V runs it when the float32 mass of the k exceeds 1"),
      A(LOGPROBS) = UNCONFIRMED("not applicable: LogitsProcessor::sample returns the token alone"),
      A(DRAW) = SEEN("mod.rs sample_multinomial: rand 0.9 WeightedIndex<f32> on StdRng"),
      A(SPEC_ACCEPT) = UNCONFIRMED("not applicable: candle has no speculative decoding (2a13b0f)"),
      A(SPEC_Q_ZERO) = UNCONFIRMED("not applicable: candle has no speculative decoding (2a13b0f)"),
      A(SPEC_Q) = UNCONFIRMED("not applicable: candle has no speculative decoding (2a13b0f)"),
      A(SPEC_EMPTY_RESIDUAL) =
          UNCONFIRMED("not applicable: candle has no speculative decoding (2a13b0f)"),
      A(PENALTY_ORDER) =
          UNCONFIRMED("only the repetition penalty is offered (candle-transformers/src/utils.rs "
                      "apply_repeat_penalty): no order to read"),
      A(PENALTY_TOKENS) =
          SEEN("candle-examples/examples/llama/main.rs: apply_repeat_penalty over "
               "tokens[start_at..], the last repeat_last_n of the prompt and the output "
               "(2a13b0f, read)"),
      A(MIN_P_SCALE) =
          UNCONFIRMED("min_p is not offered (candle-transformers/src/generation/mod.rs Sampling)"),
      A(MIN_P_ORDER) = UNCONFIRMED("min_p is not offered"),
      A(MIN_P_BOUNDARY) = UNCONFIRMED("min_p is not offered"),
      A(PENALTY_RANGE) =
          SEEN("candle-transformers/src/utils.rs apply_repeat_penalty: the example CLIs' "
               "repeat_penalty is an f32 never checked (2a13b0f, read)"),
      A(PENALTY_OVERFLOW) =
          SEEN("same: logit * penalty in float32, unchecked (2a13b0f, read)")},
     "repetition_penalty"},
    {"mistral.rs",
     "mistral.rs's sampler on CPU tensors (EricLBuehler/mistral.rs 9e92262: "
     "mistralrs-core/src/sampler.rs Sampler::sample)",
     {.penalty_range = SIEVE_PENALTY_RANGE_UNCHECKED,
      .penalty_overflow = SIEVE_PENALTY_OVERFLOW_MINUS_INF,
      .topp_scope = SIEVE_TOPP_SCOPE_AFTER_TOPK,
      .boundary = SIEVE_BOUNDARY_GE,
      .topp_ties = SIEVE_TOPP_TIES_UNSPECIFIED,
      .topk_ties = SIEVE_TOPK_TIES_UNSPECIFIED,
      .t0_below = SIEVE_T0_BELOW_NANO_NEGATIVE,
      .t0 = SIEVE_T0_ARGMAX,
      .top_k_zero = SIEVE_TOP_K_ZERO_OFF,
      .top_k_minus_one = SIEVE_TOP_K_MINUS_ONE_ERROR,
      .logprobs = SIEVE_LOGPROBS_SCALED,
      .draw = SIEVE_DRAW_OWN,
      .penalty_tokens = SIEVE_PENALTY_TOKENS_REPETITION_PROMPT,
      .min_p_boundary = SIEVE_MIN_P_BOUNDARY_REMOVE_EQUAL},
     {A(RANK_KEY) = SEEN("sampler.rs partial_sort_top_k: sorts (id, float32 probability) after "
                         "the softmax, so float32 underflow ties"),
      A(TOPP_SCOPE) = SEEN("sampler.rs top_p_cutoff: top_p times the float32 mass of the top k, "
                           "top-p renormalized over the top k"),
      A(BOUNDARY) = SEEN("sampler.rs sample_top_kp_min_p: a token goes when cumsum >= cutoff, "
                         "cumsum the float32 mass before it"),
      A(TOPP_TIES) = SEEN("sampler.rs partial_sort_top_k: sort_unstable_by (rows of 20 or fewer "
                          "come out in id order)"),
      A(TOPK_TIES) = SEEN("same: select_nth_unstable_by(k - 1), exactly k"),
      A(TEMPERATURE_AT) = SEEN("sampler.rs Sampler::sample: logits / T, the softmax, then "
                               "sample_top_kp_min_p"),
      A(TEMPERATURE_OP) = SEEN("candle 35d7ae7 tensor.rs: Tensor / f64 is affine(1 / T, 0), the "
                               "logit times the float32 1/T"),
      A(T0_BELOW) = SEEN("sampler.rs Sampler::new: temperature.is_none_or(|v| v < 1e-7) is "
                         "greedy, every negative T too"),
      A(T0) = SEEN("sampler.rs sample_argmax: a strict > scan, the first maximum"),
      A(CHECK_ORDER) = UNCONFIRMED("no check of temperature, top_p or top_k anywhere "
                                   "(engine/add_request.rs, openai.rs): only serde types"),
      A(TEMPERATURE_FLOOR) = SEEN("sampler.rs Sampler::new: T >= 1e-7 is used as given"),
      A(TOP_K_ZERO) = SEEN("sampler.rs sample_top_kp_min_p: k = top_k if top_k > 0, else the "
                           "vocabulary"),
      A(TOP_K_MINUS_ONE) = SEEN("openai.rs ChatCompletionRequest: top_k: Option<usize> rejects -1; "
                                "leaving it out is off"),
      A(EXPLICIT_TOP_P_ONE) =
          SEEN("engine/add_request.rs add_request: top_p unwrap_or(1.0), no check (9e92262)"),
      A(TOP_K_VOCAB) = SEEN("sampler.rs partial_sort_top_k: k = k.min(n) (9e92262)"),
      A(TOP_K_MAX) = UNCONFIRMED("not read: top_k is a usize"),
      A(PARAM_PRECISION) = UNCONFIRMED("not read"),
      A(TOPP_ONE) = SEEN("sampler.rs sample_top_kp_min_p: top-p only if 0 < top_p < 1"),
      A(LOGPROBS) = SEEN("sampler.rs sample_multinomial: ln of softmax(logits / T) before the "
                         "filters"),
      A(DRAW) = SEEN("sampler.rs sample_multinomial: rand 0.9 WeightedIndex on Isaac64Rng"),
      A(SPEC_ACCEPT) = SEEN("speculative/verifier.rs accepts_draft: draw < min(p / q, 1), draw a "
                            "float32 uniform"),
      A(SPEC_Q_ZERO) = SEEN("verifier.rs finish_verified_step_stochastic: q <= 0 accepts when "
                            "p > 0"),
      A(SPEC_Q) = SEEN("sampler.rs speculative_candidate_probs: the draft row through the "
                       "sequence's own sampler (the DFlash drafter picks by argmax)"),
      A(SPEC_EMPTY_RESIDUAL) = SEEN("verifier.rs finish_verified_step_stochastic: a residual that "
                                    "does not normalize is replaced by p"),
      A(PENALTY_ORDER) =
          SEEN("mistralrs-core/src/sampler.rs Sampler::apply_freq_pres_rep_penalty: logit - "
               "count * f - presence, then /= or *= repetition (9e92262, read)"),
      A(PENALTY_TOKENS) =
          SEEN("same: seen[] over the whole context for repetition, generated_counts for idx "
               ">= prompt_len (9e92262, read)"),
      A(MIN_P_SCALE) =
          SEEN("mistralrs-core/src/sampler.rs Sampler::sample: logits / temperature, then the "
               "softmax and min-p (9e92262, read)"),
      A(MIN_P_ORDER) =
          SEEN("same, sample_top_kp_min_p: top-k, top-p, then min-p against the top token's p "
               "(9e92262, read)"),
      A(MIN_P_BOUNDARY) =
          SEEN("same: min_p_threshold >= prob removed; min_p >= 1 is off, which no value names "
               "(9e92262, read)"),
      A(PENALTY_RANGE) =
          SEEN("mistralrs-core/src/engine/add_request.rs: min_p and the penalties taken "
               "as given, no check found (9e92262, read)"),
      A(PENALTY_OVERFLOW) =
          SEEN("float32, unchecked (9e92262, read)")},
     "min_p,frequency_penalty,presence_penalty,repetition_penalty"},
    {"mlc-llm",
     "MLC-LLM's serve engine sampler (mlc-ai/mlc-llm 79d603f: cpp/serve/sampler/, "
     "python/mlc_llm/compiler_pass/attach_softmax_with_temperature.py); it has no top-k",
     {.penalty_range = SIEVE_PENALTY_RANGE_REPETITION_UNBOUNDED,
      .penalty_overflow = SIEVE_PENALTY_OVERFLOW_MINUS_INF,
      .boundary = SIEVE_BOUNDARY_GE,
      .topp_ties = SIEVE_TOPP_TIES_ALL,
      .temperature_op = SIEVE_TEMPERATURE_OP_DIVIDE,
      .top_k_zero = SIEVE_TOP_K_ZERO_OFF,
      .spec_accept = SIEVE_SPEC_ACCEPT_LE,
      .draw = SIEVE_DRAW_OWN},
     {A(RANK_KEY) = SEEN("cpu_sampler.cc RenormalizeProbByTopP: std::sort of the float32 "
                         "probabilities; top_p_pivot.py pivots on them"),
      A(TOPP_SCOPE) = SEEN("batch_decode.cc Step: top-p on the full softmax (there is no top-k)"),
      A(BOUNDARY) = SEEN("top_p_pivot.py valid(): the mass above the kept set < top_p <= with it; "
                         "the CPU path compares with top_p - 1e-5"),
      A(TOPP_TIES) = SEEN("cpu_sampler.cc RenormalizeProbByTopP: keeps every p >= the boundary "
                          "value; top_p_renorm keeps p >= pivot"),
      A(TOPK_TIES) = UNCONFIRMED("not applicable: no top-k (config.h GenerationConfigNode has no "
                                 "top_k, and a request's top_k is ignored)"),
      A(TEMPERATURE_AT) = SEEN("batch_decode.cc Step: ComputeProbsFromLogits (logits / T) before "
                               "BatchRenormalizeProbsByTopP"),
      A(TEMPERATURE_OP) = SEEN("attach_softmax_with_temperature.py: A / temperature, float32"),
      A(T0_BELOW) = UNCONFIRMED("no value fits: the softmax kernels take float32(T) <= 1e-5, so "
                                "T = 1e-5 itself takes the rule; below_1e-5 is the nearest"),
      A(T0) = UNCONFIRMED("no value fits: the kernels give each exactly equal maximum 1/count and "
                          "top-p still runs; clamp is the nearest"),
      A(CHECK_ORDER) = SEEN("config.cc GenerationConfig::Validate checks temperature, then top_p; "
                            "the temperature-0 rule lives in the softmax kernel"),
      A(TEMPERATURE_FLOOR) = SEEN("attach_softmax_with_temperature.py: a float32 T above 1e-5 "
                                  "divides as given"),
      A(TOP_K_ZERO) = UNCONFIRMED("every top_k is ignored (openai_api_protocol.py has no field; "
                                  "pydantic drops it), 0 as off, but also 5, which no value "
                                  "describes"),
      A(TOP_K_MINUS_ONE) = UNCONFIRMED("not applicable: every top_k is ignored"),
      A(EXPLICIT_TOP_P_ONE) =
          SEEN("cpp/serve/config.cc GenerationConfig::Validate: 0 <= top_p <= 1 (79d603f)"),
      A(TOP_K_VOCAB) = UNCONFIRMED("not applicable: it has no top_k"),
      A(TOP_K_MAX) = UNCONFIRMED("not applicable: it has no top_k"),
      A(PARAM_PRECISION) = UNCONFIRMED("not read"),
      A(TOPP_ONE) = SEEN("cpu_sampler.cc RenormalizeProbByTopP: top_p == 1 returns"),
      A(LOGPROBS) = SEEN("data.cc TokenToLogProbJSON: log(max(p, 1e-10)) of the top-p "
                         "renormalized row"),
      A(DRAW) = SEEN("cpp/support/random.h RandomGenerator: std::mt19937"),
      A(SPEC_ACCEPT) = SEEN("batch_spec_verify.py (GPU): p >= u * q; the CPU path accepts p >= q "
                            "at once, else u < p / (q + 1e-5)"),
      A(SPEC_Q_ZERO) = SEEN("batch_spec_verify.py: p >= u * 0 always holds, even at p = 0"),
      A(SPEC_Q) = UNCONFIRMED("no value fits: batch_draft.cc keeps the draft softmax after T, "
                              "before top-p, while the draft is drawn after it"),
      A(SPEC_EMPTY_RESIDUAL) =
          UNCONFIRMED("no value fits: batch_spec_verify.py accepts the draft when the residual's "
                      "mass is below 1e-7"),
      A(PENALTY_ORDER) =
          SEEN("python/mlc_llm/compiler_pass/attach_logit_processor.py _apply_penalty_inplace: "
               "-= presence + count * frequency, then * or / repetition (79d603f, read)"),
      A(PENALTY_TOKENS) =
          SEEN("cpp/serve/request_state.cc RequestModelStateNode::CommitToken fills "
               "appeared_token_ids with sampled tokens only (79d603f, read)"),
      A(MIN_P_SCALE) =
          UNCONFIRMED("min_p is not offered (cpp/serve/config.h GenerationConfigNode)"),
      A(MIN_P_ORDER) = UNCONFIRMED("min_p is not offered"),
      A(MIN_P_BOUNDARY) = UNCONFIRMED("min_p is not offered"),
      A(PENALTY_RANGE) =
          SEEN("cpp/serve/config.cc: frequency in [-2, 2], repetition > 0; "
               "openai_api_protocol.py check_penalty_range: presence in [-2, 2] (79d603f, read; no "
               "min_p)"),
      A(PENALTY_OVERFLOW) =
          SEEN("attach_logit_processor.py _apply_penalty_inplace: float32 TIR, unchecked "
               "(79d603f, read)")},
     "frequency_penalty,presence_penalty,repetition_penalty"},
    {"flashinfer-top-k-first",
     "FlashInfer top_k_top_p_sampling_from_logits, filter_apply_order=top_k_first "
     "(flashinfer-ai/flashinfer)",
     {.rank_key = SIEVE_RANK_KEY_LOGIT,
      .topp_scope = SIEVE_TOPP_SCOPE_AFTER_TOPK,
      .boundary = SIEVE_BOUNDARY_GE,
      .topp_ties = SIEVE_TOPP_TIES_ALL,
      .topk_ties = SIEVE_TOPK_TIES_KEEP_ALL,
      .topp_one = SIEVE_TOPP_ONE_FLOAT32_TAIL,
      .draw = SIEVE_DRAW_OWN},
     {A(RANK_KEY) = UNCONFIRMED(
          "top_k_mask_logits compares logits, then top-p on probabilities (read, not run)"),
      A(TOPP_SCOPE) = SEEN("flashinfer/sampling.py: top_k_mask_logits, softmax, then "
                           "TopPSamplingFromProbKernel (fb28d72)"),
      A(BOUNDARY) = SEEN("include/flashinfer/sampling.cuh: a token is accepted when the mass "
                         "strictly greater than it is < top_p"),
      A(TOPP_TIES) = SEEN("same: the pivot is compared by value, so tied tokens pass together"),
      A(TOPK_TIES) = SEEN("top_k_mask_logits keeps >= pivot (the radix fast path for scalar k "
                          "<= 256 and vocab >= 65536 keeps exactly k, unspecified)"),
      A(TEMPERATURE_AT) = UNCONFIRMED("not applicable: no temperature argument, the caller "
                                      "scales the logits"),
      A(TEMPERATURE_OP) = UNCONFIRMED("not applicable: the caller scales the logits"),
      A(T0_BELOW) = UNCONFIRMED("not applicable: the caller's"),
      A(T0) = UNCONFIRMED("not applicable: the caller's"),
      A(CHECK_ORDER) = UNCONFIRMED("not applicable: the caller's"),
      A(TEMPERATURE_FLOOR) = UNCONFIRMED("not applicable: the caller's"),
      A(TOP_K_ZERO) = UNCONFIRMED("neither value: k = 0 is not validated and masks every logit "
                                  "(read, not run)"),
      A(TOP_K_MINUS_ONE) = SEEN("-1 wraps to a uint32 >= vocab: off"),
      A(EXPLICIT_TOP_P_ONE) =
          UNCONFIRMED("a kernel library: the engine that calls it checks top_p"),
      A(TOP_K_VOCAB) = UNCONFIRMED("not read: what the kernel does with top_k >= V"),
      A(TOP_K_MAX) = UNCONFIRMED("a kernel library: the engine that calls it checks top_k"),
      A(PARAM_PRECISION) =
          UNCONFIRMED("a kernel library: the engine that calls it reads the parameters"),
      A(TOPP_ONE) = SEEN("sampling.cuh: the kernel still runs at top_p = 1, comparing a float32 "
                         "sum with 1.0f"),
      A(LOGPROBS) = UNCONFIRMED("not applicable: returns token ids only"),
      A(DRAW) = SEEN("curand Philox, rejection sampling"),
      A(SPEC_ACCEPT) = UNCONFIRMED("flashinfer's chain_speculative_sampling was not run"),
      A(SPEC_Q_ZERO) = UNCONFIRMED("flashinfer's chain_speculative_sampling was not run"),
      A(SPEC_Q) = UNCONFIRMED("flashinfer's chain_speculative_sampling was not run"),
      A(SPEC_EMPTY_RESIDUAL) = UNCONFIRMED("flashinfer's chain_speculative_sampling was not run"),
      A(PENALTY_ORDER) = UNCONFIRMED("FlashInfer offers no penalty"),
      A(PENALTY_TOKENS) = UNCONFIRMED("FlashInfer offers no penalty"),
      A(MIN_P_SCALE) =
          UNCONFIRMED("top_k_top_p_sampling_from_logits has no min-p (min_p_sampling_from_probs is "
                      "another entry point)"),
      A(MIN_P_ORDER) =
          UNCONFIRMED("top_k_top_p_sampling_from_logits has no min-p (min_p_sampling_from_probs is "
                      "another entry point)"),
      A(MIN_P_BOUNDARY) =
          UNCONFIRMED("top_k_top_p_sampling_from_logits has no min-p (min_p_sampling_from_probs is "
                      "another entry point)"),
      A(PENALTY_RANGE) =
          UNCONFIRMED("top_k_top_p_sampling_from_logits takes no min-p or penalty "
                      "(min_p_sampling_from_probs, another entry point, checks no min_p)"),
      A(PENALTY_OVERFLOW) =
          UNCONFIRMED("a kernel library with no penalty")},
     ""},
    {"flashinfer-joint",
     "FlashInfer top_k_top_p_sampling_from_logits, filter_apply_order=joint "
     "(flashinfer-ai/flashinfer)",
     {.boundary = SIEVE_BOUNDARY_GE,
      .topp_ties = SIEVE_TOPP_TIES_ALL,
      .topk_ties = SIEVE_TOPK_TIES_KEEP_ALL,
      .topp_one = SIEVE_TOPP_ONE_FLOAT32_TAIL,
      .draw = SIEVE_DRAW_OWN},
     {A(RANK_KEY) = UNCONFIRMED("the joint kernel compares float32 probabilities (read, not run)"),
      A(TOPP_SCOPE) = SEEN("flashinfer/sampling.py: TopKTopPSamplingFromProbKernel on "
                           "softmax(logits), top-p on the full distribution (fb28d72)"),
      A(BOUNDARY) = SEEN("include/flashinfer/sampling.cuh: mass strictly greater < top_p"),
      A(TOPP_TIES) = SEEN("same: tied tokens pass together"),
      A(TOPK_TIES) = SEEN("same: the count strictly greater < k keeps ties"),
      A(TEMPERATURE_AT) = UNCONFIRMED("not applicable: the caller scales the logits"),
      A(TEMPERATURE_OP) = UNCONFIRMED("not applicable: the caller scales the logits"),
      A(T0_BELOW) = UNCONFIRMED("not applicable: the caller's"),
      A(T0) = UNCONFIRMED("not applicable: the caller's"),
      A(CHECK_ORDER) = UNCONFIRMED("not applicable: the caller's"),
      A(TEMPERATURE_FLOOR) = UNCONFIRMED("not applicable: the caller's"),
      A(TOP_K_ZERO) = UNCONFIRMED("neither value: k = 0 never accepts and returns token 0 with "
                                  "valid = false (read, not run)"),
      A(TOP_K_MINUS_ONE) = SEEN("-1 wraps to a uint32 >= vocab: off"),
      A(EXPLICIT_TOP_P_ONE) =
          UNCONFIRMED("a kernel library: the engine that calls it checks top_p"),
      A(TOP_K_VOCAB) = UNCONFIRMED("not read: what the kernel does with top_k >= V"),
      A(TOP_K_MAX) = UNCONFIRMED("a kernel library: the engine that calls it checks top_k"),
      A(PARAM_PRECISION) =
          UNCONFIRMED("a kernel library: the engine that calls it reads the parameters"),
      A(TOPP_ONE) = SEEN("sampling.cuh: the kernel compares a float32 sum with 1.0f at "
                         "top_p = 1"),
      A(LOGPROBS) = UNCONFIRMED("not applicable: returns token ids only"),
      A(DRAW) = SEEN("curand Philox, rejection sampling"),
      A(SPEC_ACCEPT) = UNCONFIRMED("flashinfer's chain_speculative_sampling was not run"),
      A(SPEC_Q_ZERO) = UNCONFIRMED("flashinfer's chain_speculative_sampling was not run"),
      A(SPEC_Q) = UNCONFIRMED("flashinfer's chain_speculative_sampling was not run"),
      A(SPEC_EMPTY_RESIDUAL) = UNCONFIRMED("flashinfer's chain_speculative_sampling was not run"),
      A(PENALTY_ORDER) = UNCONFIRMED("FlashInfer offers no penalty"),
      A(PENALTY_TOKENS) = UNCONFIRMED("FlashInfer offers no penalty"),
      A(MIN_P_SCALE) =
          UNCONFIRMED("top_k_top_p_sampling_from_logits has no min-p (min_p_sampling_from_probs is "
                      "another entry point)"),
      A(MIN_P_ORDER) =
          UNCONFIRMED("top_k_top_p_sampling_from_logits has no min-p (min_p_sampling_from_probs is "
                      "another entry point)"),
      A(MIN_P_BOUNDARY) =
          UNCONFIRMED("top_k_top_p_sampling_from_logits has no min-p (min_p_sampling_from_probs is "
                      "another entry point)"),
      A(PENALTY_RANGE) =
          UNCONFIRMED("top_k_top_p_sampling_from_logits takes no min-p or penalty "
                      "(min_p_sampling_from_probs, another entry point, checks no min_p)"),
      A(PENALTY_OVERFLOW) =
          UNCONFIRMED("a kernel library with no penalty")},
     ""},
    {"tgi",
     "Hugging Face text-generation-inference, /generate with sampling on a flash model "
     "(huggingface/text-generation-inference db931fc: router/src/validation.rs, "
     "server/text_generation_server/utils/tokens.py, utils/logits_process.py)",
     {.penalty_range = SIEVE_PENALTY_RANGE_REPETITION_UNBOUNDED,
      .rank_key = SIEVE_RANK_KEY_LOGIT,
      .topp_scope = SIEVE_TOPP_SCOPE_AFTER_TOPK,
      .boundary = SIEVE_BOUNDARY_GE,
      .topp_ties = SIEVE_TOPP_TIES_UNSPECIFIED,
      .topk_ties = SIEVE_TOPK_TIES_KEEP_ALL,
      .temperature_op = SIEVE_TEMPERATURE_OP_DIVIDE,
      .t0_below = SIEVE_T0_BELOW_NONPOSITIVE,
      .t0 = SIEVE_T0_REJECT,
      .check_order = SIEVE_CHECK_ORDER_T0_RULE_FIRST,
      .top_k_minus_one = SIEVE_TOP_K_MINUS_ONE_ERROR,
      .explicit_top_p_one = SIEVE_EXPLICIT_TOP_P_ONE_ERROR,
      .param_precision = SIEVE_PARAM_PRECISION_FLOAT32,
      .draw = SIEVE_DRAW_OWN,
      .penalty_order = SIEVE_PENALTY_ORDER_REPETITION_FIRST,
      .penalty_tokens = SIEVE_PENALTY_TOKENS_PROMPT},
     {A(RANK_KEY) = SEEN("logits_process.py HeterogeneousTopKLogitsWarper: torch.topk(scores); "
                         "HeterogeneousTopPLogitsWarper: torch.sort(scores)"),
      A(TOPP_SCOPE) = SEEN("tokens.py HeterogeneousNextTokenChooser: the top-k warper comes "
                           "before the top-p warper, which renormalizes what it leaves"),
      A(BOUNDARY) = SEEN("HeterogeneousTopPLogitsWarper: an ascending cumsum <= 1 - top_p is "
                         "removed"),
      A(TOPP_TIES) = SEEN("same: torch.sort(scores), not stable"),
      A(TOPK_TIES) = SEEN("HeterogeneousTopKLogitsWarper: scores < kth_scores are removed"),
      A(TEMPERATURE_AT) = SEEN("tokens.py: the temperature warper is the first"),
      A(TEMPERATURE_OP) = SEEN("HeterogeneousTemperatureLogitsWarper: scores.div_(temperature)"),
      A(T0_BELOW) = SEEN("router/src/validation.rs Validation::validate: temperature <= 0 is an "
                         "error (the OpenAI endpoints turn 0 into greedy instead)"),
      A(T0) = SEEN("same"),
      A(CHECK_ORDER) = SEEN("same: temperature, then top_p, then top_k"),
      A(TEMPERATURE_FLOOR) = SEEN("no floor: a positive temperature divides as it is"),
      A(TOP_K_ZERO) = SEEN("validation.rs: a top_k <= 0 is an error"),
      A(TOP_K_MINUS_ONE) = SEEN("same; leaving top_k out is off"),
      A(EXPLICIT_TOP_P_ONE) = SEEN("validation.rs: top_p <= 0 or >= 1 is an error; left out, it "
                                   "becomes 1"),
      A(TOP_K_VOCAB) = UNCONFIRMED("top_k = V keeps all; above V the warper's gather indexes "
                                   "past the row (logits_process.py), an exception"),
      A(TOP_K_MAX) = SEEN("router/src/lib.rs GenerateParameters: top_k is an Option<i32>"),
      A(PARAM_PRECISION) = SEEN("same: temperature and top_p are Option<f32>"),
      A(TOPP_ONE) = SEEN("tokens.py: no top-p warper for a top_p left out"),
      A(LOGPROBS) = SEEN("tokens.py: the log_softmax of the warped scores"),
      A(DRAW) = SEEN("tokens.py Sampling: an exponential race of its own generator"),
      A(SPEC_ACCEPT) = UNCONFIRMED("its speculation accepts a draft only when it equals the "
                                   "sampled token: no value describes it"),
      A(SPEC_Q_ZERO) = UNCONFIRMED("same"),
      A(SPEC_Q) = UNCONFIRMED("same"),
      A(SPEC_EMPTY_RESIDUAL) = UNCONFIRMED("same"),
      A(PENALTY_ORDER) =
          SEEN("server/text_generation_server/utils/tokens.py "
               "HeterogeneousNextTokenChooser.__call__: repetition_processor, then "
               "frequency_processor (db931fc, read); its frequency divides the count by the "
               "padded length, which no value names"),
      A(PENALTY_TOKENS) =
          SEEN("server/text_generation_server/models/flash_causal_lm.py generate_token: the "
               "chooser gets all_input_ids_tensor, the prompt and the output (db931fc, read)"),
      A(MIN_P_SCALE) = UNCONFIRMED("min_p is not offered (router/src/lib.rs GenerateParameters)"),
      A(MIN_P_ORDER) = UNCONFIRMED("min_p is not offered"),
      A(MIN_P_BOUNDARY) = UNCONFIRMED("min_p is not offered"),
      A(PENALTY_RANGE) =
          SEEN("router/src/validation.rs Validation::validate: repetition_penalty > 0, "
               "frequency_penalty in [-2, 2] (db931fc, read; no presence or min_p)"),
      A(PENALTY_OVERFLOW) =
          UNCONFIRMED("no value fits: unchecked torch arithmetic in the model's dtype (db931fc, "
               "read)")},
     ""},
    {NULL, NULL, {0}, {{NULL, 0}}, NULL},
};

const engine_profile *profile_find(const char *name) {
  for (const engine_profile *p = profiles; name && p->name; p++)
    if (strcmp(p->name, name) == 0)
      return p;
  return NULL;
}

/* "no value 'lt' of boundary (gt, ge)". */
static void no_value(int axis, const char *value, char *err, size_t len) {
  size_t at =
      (size_t)snprintf(err, len, "--rule: no value '%s' of %s (", value, sieve_axis_name(axis));
  for (int v = 0; v < sieve_axis_values(axis) && at < len; v++)
    at +=
        (size_t)snprintf(err + at, len - at, "%s%s", v ? ", " : "", sieve_axis_value_name(axis, v));
  if (at < len)
    snprintf(err + at, len - at, ")");
}

/* One "axis=value" of `len` characters onto the rule. */
static int parse_choice(const char *text, size_t len, sieve_rule *rule, char *err, size_t err_len) {
  char choice[96];
  snprintf(choice, sizeof choice, "%.*s", (int)len, text);
  char *eq = strchr(choice, '=');
  if (eq)
    *eq = '\0';
  int axis = sieve_axis_find(choice);
  int value = eq && axis >= 0 ? sieve_axis_value_find(axis, eq + 1) : SIEVE_ERULE;
  if (axis < 0)
    snprintf(err, err_len, "--rule: no axis '%s' (sieve axes lists them)", choice);
  else if (value < 0)
    no_value(axis, eq ? eq + 1 : "", err, err_len);
  return axis < 0 || value < 0 ? -1 : sieve_rule_set(rule, axis, value);
}

int profile_parse_rule(const char *text, sieve_rule *rule, char *err, size_t len) {
  while (text && *text) {
    size_t n = strcspn(text, ",");
    if (parse_choice(text, n, rule, err, len) != 0)
      return -1;
    text += n + (text[n] == ',');
  }
  return 0;
}

size_t profiles_fit_starts(fit_start *out, size_t max) {
  size_t n = 0;
  for (const engine_profile *p = profiles; p->name && n < max; p++) {
    out[n] = (fit_start){p->name, p->rule, 0};
    for (int a = 0; a < SIEVE_AXIS_COUNT; a++)
      out[n].unconfirmed |= (uint32_t)!p->why[a].confirmed << a;
    n++;
  }
  return n;
}
