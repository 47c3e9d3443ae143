/*
 * Engine profiles; see profiles.h. Each choice cites where it was read
 * (2026-11-29); a choice not confirmed from the engine's own source is
 * marked so and keeps the spec's value, never a guess.
 */
#include "profiles.h"

#include <string.h>

const char *const axis_names[PROFILE_AXES] = {"topp_scope", "boundary", "topk_ties",
                                              "temperature_at", "t0", "top_k_zero",
                                              "logprobs", "draw"};

static const char *const value_names[PROFILE_AXES][3] = {
    {"full", "after_topk", NULL},       {"gt", "ge", NULL},
    {"by_id", "by_id_desc", "keep_all"}, {"before", "after", NULL},
    {"clamp", "argmax", "topk1"},       {"error", "off", NULL},
    {"processed", "scaled", "raw"},     {"hash", "own", NULL}};

const char *axis_value_name(int axis, int value) {
  if (axis < 0 || axis >= PROFILE_AXES || value < 0 || value >= axis_value_count(axis))
    return "?";
  return value_names[axis][value];
}

int axis_value_count(int axis) {
  int n = 0;
  while (n < 3 && value_names[axis][n])
    n++;
  return n;
}

int rule_axis(const sieve_rule *r, int axis) {
  const int values[PROFILE_AXES] = {r->topp_scope, r->boundary,   r->topk_ties, r->temperature_at,
                                    r->t0,         r->top_k_zero, r->logprobs,  r->draw};
  return values[axis];
}

#define SEEN(src) {src, 1}
#define UNCONFIRMED(src) {src, 0}

const engine_profile profiles[] = {
    {"deepinfer", "DeepInfer, the spec (seed 000)", SIEVE_RULE_DEEPINFER,
     {SEEN("seed 000:25-28, fused_sample.py:121-150"), SEEN("seed 000:17, fused_sample.py:139"),
      SEEN("seed 000:16 (stable sort), 000:18"), SEEN("seed 000:15, fused_sample.py:209"),
      SEEN("seed 000:9, sampling_params.py:76-79"), SEEN("seed 000:32, sampling_params.py:96-99"),
      SEEN("seed 000:70-72, fused_sample.py:51-52"),
      SEEN("seed 000:34-50, random_sampling.py:17-20")}},
    {"numpy-002", "the NumPy sampler of seed 002 (Hugging Face order)",
     {SIEVE_TOPP_AFTER_TOPK, SIEVE_BOUNDARY_GT, SIEVE_TIES_KEEP_ALL, SIEVE_TEMP_BEFORE,
      SIEVE_T0_ARGMAX, SIEVE_K0_OFF, SIEVE_LP_PROCESSED, SIEVE_DRAW_OWN},
     {SEEN("seed 002:99-107, 002:164 (top-p on the top-k-filtered logits)"),
      SEEN("seed 002:102-104 (cum > p, shifted right)"), SEEN("seed 002:89 (strict < keeps ties)"),
      SEEN("seed 002:55, 002:164"), SEEN("seed 002:48-49 (argmax)"),
      SEEN("seed 002:78-80 (top_k 0 selects the smallest logit as threshold: nothing removed)"),
      UNCONFIRMED("seed 002 returns no logprobs"), SEEN("seed 002:18, 002:140 (rng.random)")}},
    {"sglang-004", "SGLang as seed 004 describes it",
     {SIEVE_TOPP_AFTER_TOPK, SIEVE_BOUNDARY_GE, SIEVE_TIES_KEEP_ALL, SIEVE_TEMP_BEFORE,
      SIEVE_T0_TOPK1, SIEVE_K0_OFF, SIEVE_LP_PROCESSED, SIEVE_DRAW_OWN},
     {SEEN("seed 004:261-279, 004:301"), SEEN("seed 004:216-220 (stop once cumsum >= p)"),
      SEEN("seed 004:170 (x >= threshold)"), SEEN("seed 004:288"),
      SEEN("seed 004:54-56 (T = 1, top_k = 1)"), SEEN("seed 004:165, 004:290 (top_k > 0)"),
      UNCONFIRMED("seed 004 does not say"), SEEN("seed 004:297 (multinomial_sample)")}},
    {"vllm", "vLLM v1 (vllm-project/vllm)",
     {SIEVE_TOPP_AFTER_TOPK, SIEVE_BOUNDARY_GE, SIEVE_TIES_KEEP_ALL, SIEVE_TEMP_BEFORE,
      SIEVE_T0_ARGMAX, SIEVE_K0_ERROR, SIEVE_LP_RAW, SIEVE_DRAW_OWN},
     {SEEN("vllm/v1/sample/ops/topk_topp_sampler.py apply_top_k_top_p: softmax of the top-k "
           "masked logits"),
      SEEN("same: probs_sum <= 1 - p removed, i.e. mass before >= p"),
      SEEN("same: logits_sort < k-th value masked, ties kept"),
      SEEN("vllm/v1/sample/sampler.py Sampler docstring: temperature (7b) before top-k/top-p "
           "(7d)"),
      SEEN("vllm/v1/sample/sampler.py docstring 7f: greedy below 1e-5"),
      UNCONFIRMED("not read"),
      SEEN("vllm/v1/sample/sampler.py docstring step 1; TopKTopPSampler default logprobs_mode "
           "raw_logprobs"),
      SEEN("topk_topp_sampler.py random_sample (torch generators)")}},
    {"sglang", "SGLang's PyTorch sampler (sgl-project/sglang)",
     {SIEVE_TOPP_FULL, SIEVE_BOUNDARY_GT, SIEVE_TIES_BY_ID, SIEVE_TEMP_BEFORE, SIEVE_T0_TOPK1,
      SIEVE_K0_ERROR, SIEVE_LP_PROCESSED, SIEVE_DRAW_OWN},
     {SEEN("python/sglang/srt/layers/sampler.py top_k_top_p_min_p_sampling_from_probs_torch: "
           "cumsum of the full sorted probabilities"),
      SEEN("same: (probs_sum - probs_sort) > top_p removed"),
      UNCONFIRMED("same: rank >= k removed after torch.sort, whose tie order is not stable"),
      UNCONFIRMED("temperature division before the softmax; not read in this file"),
      UNCONFIRMED("SamplingParams.normalize as seed 004:54-56 describes; not read"),
      UNCONFIRMED("not read"), UNCONFIRMED("not read"),
      SEEN("same: torch.multinomial")}},
    {"hf-transformers", "Hugging Face transformers generate() warpers",
     {SIEVE_TOPP_AFTER_TOPK, SIEVE_BOUNDARY_GE, SIEVE_TIES_KEEP_ALL, SIEVE_TEMP_BEFORE,
      SIEVE_T0_ARGMAX, SIEVE_K0_ERROR, SIEVE_LP_PROCESSED, SIEVE_DRAW_OWN},
     {UNCONFIRMED("warper order temperature, top-k, top-p per seed 002:166; not read from "
                  "generation/utils.py"),
      SEEN("src/transformers/generation/logits_process.py TopPLogitsWarper: cumulative_probs "
           "<= 1 - top_p removed"),
      SEEN("same file, TopKLogitsWarper: scores < k-th value removed, ties kept"),
      UNCONFIRMED("order of warpers not read from the source"),
      UNCONFIRMED("greedy decoding when do_sample is off; not read"),
      SEEN("same file, TopKLogitsWarper: top_k <= 0 raises ValueError"),
      UNCONFIRMED("not read"), UNCONFIRMED("torch.multinomial; not read")}},
    {"llama.cpp", "llama.cpp default sampler chain (ggml-org/llama.cpp)",
     {SIEVE_TOPP_AFTER_TOPK, SIEVE_BOUNDARY_GE, SIEVE_TIES_BY_ID, SIEVE_TEMP_AFTER,
      SIEVE_T0_ARGMAX, SIEVE_K0_ERROR, SIEVE_LP_PROCESSED, SIEVE_DRAW_OWN},
     {SEEN("src/llama-sampling.cpp llama_sampler_top_p_apply: softmax over the candidates "
           "top-k left"),
      SEEN("same: stops once cum_sum >= p, keeping that token"),
      UNCONFIRMED("top-k by partial sort: tie order not specified"),
      SEEN("common/common.h common_params_sampling::samplers: temperature last"),
      UNCONFIRMED("llama_sampler_temp_impl: argmax at temp <= 0, read in notes, not source"),
      UNCONFIRMED("not read"), UNCONFIRMED("not read"),
      SEEN("dist sampler: its own RNG")}},
    {"mlx-lm", "MLX-LM make_sampler (ml-explore/mlx-lm)",
     {SIEVE_TOPP_FULL, SIEVE_BOUNDARY_GE, SIEVE_TIES_BY_ID, SIEVE_TEMP_AFTER, SIEVE_T0_ARGMAX,
      SIEVE_K0_OFF, SIEVE_LP_PROCESSED, SIEVE_DRAW_OWN},
     {SEEN("mlx_lm/sample_utils.py make_sampler: top-p first, then min-p, then top-k on what "
           "is left"),
      SEEN("same file, apply_top_p: keeps cumulative (ascending) > 1 - top_p, i.e. removes "
           "when the mass before >= top_p"),
      UNCONFIRMED("apply_top_k uses argpartition: tie order not specified"),
      SEEN("same file, categorical_sampling: logprobs * (1 / temp) after the filters"),
      SEEN("make_sampler: temp == 0 returns argmax"), SEEN("make_sampler: top_k > 0 only"),
      UNCONFIRMED("not read"), SEEN("mx.random.categorical")}},
    {"ollama", "Ollama's Go sampler (ollama/ollama)",
     {SIEVE_TOPP_AFTER_TOPK, SIEVE_BOUNDARY_GT, SIEVE_TIES_BY_ID, SIEVE_TEMP_BEFORE,
      SIEVE_T0_ARGMAX, SIEVE_K0_OFF, SIEVE_LP_PROCESSED, SIEVE_DRAW_OWN},
     {UNCONFIRMED("top-k, temperature, softmax, top-p in sample/samplers.go; not read"),
      SEEN("sample/transforms.go topP: cuts once the running sum > p, keeping that token"),
      UNCONFIRMED("sample/transforms.go topK: a heap, tie order not specified"),
      UNCONFIRMED("order in sample/samplers.go not read"),
      UNCONFIRMED("greedy at temperature 0; not read"),
      SEEN("sample/transforms.go topK: k <= 0 keeps every token"), UNCONFIRMED("not read"),
      UNCONFIRMED("its own random source; not read")}},
    {"tensorrt-llm", "TensorRT-LLM top-k/top-p sampling kernel (NVIDIA/TensorRT-LLM)",
     {SIEVE_TOPP_AFTER_TOPK, SIEVE_BOUNDARY_GE, SIEVE_TIES_BY_ID, SIEVE_TEMP_BEFORE,
      SIEVE_T0_CLAMP, SIEVE_K0_ERROR, SIEVE_LP_PROCESSED, SIEVE_DRAW_OWN},
     {SEEN("cpp/tensorrt_llm/kernels/samplingTopKKernels.cu, stage-2 top-k sampling: u * top_p "
           "* (sum over the top k), so top-p on the top-k-renormalized mass"),
      SEEN("same: walks the top k subtracting each probability and stops at randNum <= 0, so a "
           "token is reachable while the mass before it is < top_p"),
      UNCONFIRMED("block max-reduction: tie order not specified"),
      UNCONFIRMED("temperature is applied by the logits processing before; not read"),
      UNCONFIRMED("not read"), UNCONFIRMED("not read"), UNCONFIRMED("not read"),
      SEEN("same: curand_uniform")}},
    {"flashinfer-top-k-first", "FlashInfer top_k_top_p_sampling, filter_apply_order=top_k_first",
     {SIEVE_TOPP_AFTER_TOPK, SIEVE_BOUNDARY_GT, SIEVE_TIES_BY_ID, SIEVE_TEMP_BEFORE,
      SIEVE_T0_CLAMP, SIEVE_K0_ERROR, SIEVE_LP_PROCESSED, SIEVE_DRAW_OWN},
     {SEEN("flashinfer/sampling.py top_k_top_p_sampling_from_logits: top_k_first renormalizes "
           "over the top k before top-p (as its callers document)"),
      UNCONFIRMED("kernel boundary not read"), UNCONFIRMED("kernel tie order not read"),
      UNCONFIRMED("temperature is the caller's"), UNCONFIRMED("the caller's"),
      UNCONFIRMED("not read"), UNCONFIRMED("returns tokens only"),
      SEEN("seed/offset Philox generator")}},
    {"flashinfer-joint", "FlashInfer top_k_top_p_sampling, filter_apply_order=joint",
     {SIEVE_TOPP_FULL, SIEVE_BOUNDARY_GT, SIEVE_TIES_BY_ID, SIEVE_TEMP_BEFORE, SIEVE_T0_CLAMP,
      SIEVE_K0_ERROR, SIEVE_LP_PROCESSED, SIEVE_DRAW_OWN},
     {SEEN("flashinfer/sampling.py: joint measures top-p on the full distribution (as SGLang's "
           "renorm_top_k_top_p documents)"),
      UNCONFIRMED("kernel boundary not read"), UNCONFIRMED("kernel tie order not read"),
      UNCONFIRMED("temperature is the caller's"), UNCONFIRMED("the caller's"),
      UNCONFIRMED("not read"), UNCONFIRMED("returns tokens only"),
      SEEN("seed/offset Philox generator")}},
    {NULL, NULL, SIEVE_RULE_DEEPINFER, {{NULL, 0}}},
};

const engine_profile *profile_find(const char *name) {
  for (const engine_profile *p = profiles; p->name; p++)
    if (strcmp(p->name, name) == 0)
      return p;
  return NULL;
}
