"""Protocol v1 adapter around the installed Hugging Face transformers' own generate() sampling
code, for `sieve run --impl exec:`.

    sieve run --impl exec:"/usr/bin/python3 harness/adapters/engines/hf_transformers_adapter.py"

Environment:
    SIEVE_TRANSFORMERS_SRC      a transformers source checkout (its root, holding src/transformers/,
                                or the folder holding transformers/) put first on sys.path
    SIEVE_TRANSFORMERS_VERSION  the version to report instead of the package's
    SIEVE_HF_TOP_K_MINUS_ONE    "raw" (default): an explicit top_k = -1 is passed as -1, which
                                TopKLogitsWarper rejects, as transformers does; "off": passed as
                                top_k = 0, transformers' own "no top-k" (a top_k left out of the
                                request is always 0)
    SIEVE_HF_LOGPROBS           what `sample` returns as logprobs: "processed" (default), the
                                log_softmax of the scores after the warpers, i.e.
                                compute_transition_scores(normalize_logits=True) over output_scores;
                                "scores", the processed score itself (normalize_logits=False, the
                                method's default); "raw", the log_softmax of output_logits

What is transformers', called here (paths under src/transformers/generation/):
    configuration_utils.py GenerationConfig(do_sample=True, temperature, top_k, top_p, and
                              repetition_penalty and min_p where the request gives them): __init__
                              runs validate()
    utils.py GenerationMixin._get_logits_processor: builds the processors from the config, in its
                              order (RepetitionPenaltyLogitsProcessor when repetition_penalty !=
                              1, then the warpers: TemperatureLogitsWarper when T != 1,
                              TopKLogitsWarper when top_k != 0, TopPLogitsWarper when top_p < 1,
                              MinPLogitsWarper when min_p is set); their constructors are
                              transformers' parameter checks
    logits_process.py         the warpers, applied through the LogitsProcessorList it returns
What is glue: a stand-in `self` for _get_logits_processor (no model: it reads only
self.config.is_encoder_decoder, for a repetition penalty, and self._merge_criteria_processor_list),
the input_ids the processors see (the row's prompt_ids then output_ids, the decoder sequence
generate passes; only the repetition penalty reads them), and the sampling step of
GenerationMixin._sample, two lines: probs = nn.functional.softmax(next_token_scores, dim=-1) and
torch.multinomial(probs, num_samples=1), with torch.manual_seed per row (generate draws from the
global generator); top_logprobs are the n best entries, ties by token id (generate has none). Scores are float32, as _sample makes next_token_logits. top_k absent in a
request is passed as 0: GenerationConfig's own default is 50 (_get_default_generation_params),
which is not the protocol's default (no top-k).

filter answers the processed logprobs: log_softmax (float32) of the scores after the warpers.
"""

import os
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import engine_protocol as ep  # noqa: E402

LOGPROBS = ("processed", "scores", "raw")


class HFEngine(ep.Engine):
    name = "hf-transformers"
    ops = ("validate", "filter", "sample")
    sampling_options = ("min_p", "repetition_penalty")

    def __init__(self):
        try:
            config_utils, utils, logits_process = ep.import_engine(
                ["transformers.generation.configuration_utils", "transformers.generation.utils",
                 "transformers.generation.logits_process"], "transformers",
                "SIEVE_TRANSFORMERS_SRC", layouts=("src", ""))
            import transformers
        except Exception as e:
            self.unavailable = f"transformers is not importable: {type(e).__name__}: {e}"
            self.version = ep.package_version("transformers", env="SIEVE_TRANSFORMERS_VERSION")
            return
        self.version = ep.package_version("transformers", transformers,
                                          "SIEVE_TRANSFORMERS_VERSION")
        self.GenerationConfig = config_utils.GenerationConfig
        self.GenerationMixin = utils.GenerationMixin
        self.LogitsProcessorList = logits_process.LogitsProcessorList
        host = object.__new__(type("ModelStandIn", (utils.GenerationMixin,), {}))
        host.config = types.SimpleNamespace(is_encoder_decoder=False)
        self.host = host
        self.top_k_minus_one = os.environ.get("SIEVE_HF_TOP_K_MINUS_ONE", "raw")
        self.logprobs = os.environ.get("SIEVE_HF_LOGPROBS", "processed")
        if self.top_k_minus_one not in ("off", "raw"):
            self.unavailable = "SIEVE_HF_TOP_K_MINUS_ONE must be off or raw"
        if self.logprobs not in LOGPROBS:
            self.unavailable = f"SIEVE_HF_LOGPROBS must be one of {', '.join(LOGPROBS)}"

    # -- parameters: GenerationConfig, then the warpers' constructors

    def normalize(self, params):
        top_k = params.top_k if "top_k" in params.given else 0
        if top_k == -1 and self.top_k_minus_one == "off":
            top_k = 0
        config = self.GenerationConfig(do_sample=True, temperature=params.temperature,
                                       top_k=top_k, top_p=params.top_p, **params.options)
        ids = params.prompt_ids + params.output_ids
        processors = self.GenerationMixin._get_logits_processor(
            self.host, generation_config=config, input_ids_seq_length=max(len(ids), 1),
            encoder_input_ids=None, prefix_allowed_tokens_fn=None,
            logits_processor=self.LogitsProcessorList(), device="cpu", model_kwargs={})
        return config, processors, torch.tensor([list(ids)], dtype=torch.long).view(1, -1)

    def public_params(self, state):
        """The config's values in the protocol's terms: top_k 0, transformers' 'no top-k', as
        the protocol's -1."""
        config = state[0]
        top_k = -1 if config.top_k == 0 else config.top_k
        return {"temperature": config.temperature, "top_p": config.top_p, "top_k": top_k}

    # -- the sampler

    def scores(self, logits, state):
        next_token_logits = logits.view(1, -1).to(torch.float32).clone()
        return next_token_logits, state[1](state[2], next_token_logits)

    def filter_row(self, logits, state):
        _, scores = self.scores(logits, state)
        return torch.log_softmax(scores, dim=-1)[0].tolist()

    def sample_row(self, logits, state, seed, n_top):
        raw, scores = self.scores(logits, state)
        torch.manual_seed(seed)
        probs = torch.nn.functional.softmax(scores, dim=-1)
        token = int(torch.multinomial(probs, num_samples=1).squeeze(1)[0])
        if self.logprobs == "processed":
            row = torch.log_softmax(scores, dim=-1)[0]
        elif self.logprobs == "scores":
            row = scores[0]
        else:
            row = torch.log_softmax(raw, dim=-1)[0]
        # generate() has no top-logprobs of its own: the n best, ties (and -inf) by token id
        values, ids = torch.sort(row, descending=True, stable=True)
        return token, float(row[token]), list(zip(ids[:n_top].tolist(), values[:n_top].tolist()))


if __name__ == "__main__":
    ep.main(HFEngine())
