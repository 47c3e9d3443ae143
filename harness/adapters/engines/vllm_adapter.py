"""Protocol v1 adapter around the installed vLLM's own V1 sampler code, for `sieve run --impl exec:`.

    sieve run --impl exec:"/usr/bin/python3 harness/adapters/engines/vllm_adapter.py"

Environment:
    SIEVE_VLLM_SRC            a vLLM source checkout (its root, holding vllm/) put first on sys.path
    SIEVE_VLLM_VERSION        the version to report instead of the package's (say, a checkout's commit)
    SIEVE_VLLM_LOGPROBS_MODE  the logprobs_mode whose logprobs `sample` returns; default: the
                              default of vllm.v1.sample.sampler.Sampler (raw_logprobs)

What is vLLM's, called here (paths under vllm/):
    sampling_params.SamplingParams            construction runs __post_init__: the temperature
                                              floor, the greedy reset, _verify_args (the ranges
                                              of min_p and the penalties too)
    v1/sample/ops/penalties.py apply_all_penalties   the penalties, as Sampler.apply_penalties
                                              calls it (model_executor/layers/utils.py
                                              apply_penalties, _custom_ops.py
                                              apply_repetition_penalties on a CPU tensor)
    v1/sample/logits_processor/builtin.py MinPLogitsProcessor   update_state and apply, after
                                              temperature, as Sampler.sample runs the
                                              argmax-invariant processors
    sampling_params.SamplingType              GREEDY when temperature < _SAMPLING_EPS
    v1/sample/sampler.py Sampler.apply_temperature, .greedy_sample, .compute_logprobs,
                                              .gather_logprobs (static methods)
    v1/sample/ops/topk_topp_sampler.py TopKTopPSampler.forward_native: apply_top_k_top_p, the
                                              processed logprobs (log_softmax in float32), the
                                              float32 softmax and random_sample
What is glue, mirroring vllm/v1/worker/gpu_input_batch.py (InputBatch.add_request and
_make_sampling_metadata): the per-request tensors (temperature and top_p float32, top_k int32; top_p
None when >= 1, top_k None unless 0 < top_k < vocab; the penalties float32, applied unless all three
are off (no_penalties), the prompt's ids padded with V), and one row per call (a batch of one), so
rows never share a batch: apply_top_k_top_p then always takes its PyTorch path (the Triton kernel
is for batches of 8 rows or more).

filter answers the processed logprobs: log_softmax (float32) of the penalized, temperature-scaled
logits after min-p and apply_top_k_top_p, as forward_native returns them in logprobs_mode
processed_logprobs. A greedy row (SamplingType.GREEDY, temperature 0 after normalization) is
answered with what vLLM samples: Sampler.greedy_sample's token of the penalized logits alone
(logprob 0), since greedy rows never reach the filters.
"""

import inspect
import os
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import engine_protocol as ep  # noqa: E402

LOGPROBS_MODES = ("raw_logprobs", "raw_logits", "processed_logprobs", "processed_logits")


class VLLMEngine(ep.Engine):
    name = "vllm"
    ops = ("validate", "filter", "sample")
    sampling_options = ("min_p", "frequency_penalty", "presence_penalty", "repetition_penalty")

    def __init__(self):
        try:
            sampling_params, topk_topp, sampler, penalties, builtin, interface = ep.import_engine(
                ["vllm.sampling_params", "vllm.v1.sample.ops.topk_topp_sampler",
                 "vllm.v1.sample.sampler", "vllm.v1.sample.ops.penalties",
                 "vllm.v1.sample.logits_processor.builtin",
                 "vllm.v1.sample.logits_processor.interface"], "vllm", "SIEVE_VLLM_SRC")
            import vllm
        except Exception as e:
            self.unavailable = f"vllm is not importable: {type(e).__name__}: {e}"
            self.version = ep.package_version("vllm", env="SIEVE_VLLM_VERSION")
            return
        self.version = ep.package_version("vllm", vllm, "SIEVE_VLLM_VERSION")
        self.SamplingParams = sampling_params.SamplingParams
        self.GREEDY = sampling_params.SamplingType.GREEDY
        self.TopKTopPSampler = topk_topp.TopKTopPSampler
        self.Sampler = sampler.Sampler
        self.apply_all_penalties = penalties.apply_all_penalties
        self.MinP = builtin.MinPLogitsProcessor
        self.BatchUpdate = interface.BatchUpdate
        default = inspect.signature(self.Sampler.__init__).parameters["logprobs_mode"].default
        self.logprobs_mode = os.environ.get("SIEVE_VLLM_LOGPROBS_MODE", default)
        if self.logprobs_mode not in LOGPROBS_MODES:
            self.unavailable = (f"SIEVE_VLLM_LOGPROBS_MODE={self.logprobs_mode!r} is none of "
                                f"{', '.join(LOGPROBS_MODES)}")

    # -- parameters: SamplingParams does the validation and normalization

    def normalize(self, params):
        given = {k: getattr(params, k) for k in ep.PARAM_FIELDS if k in params.given}
        return ep.Normalized(self.SamplingParams(**given, **params.options), params)

    def public_params(self, req):
        """SamplingParams after normalization, in the protocol's terms: a greedy request as the
        protocol states an argmax (T 0, top_p 1, top_k 1: what filter answers for it), and
        vLLM's top_k 0, its 'disable', as the protocol's -1."""
        sp = req.sp
        if self.greedy(sp):
            return {"temperature": 0.0, "top_p": 1.0, "top_k": 1}
        top_k = sp.top_k if not isinstance(sp.top_k, int) or sp.top_k > 0 else -1
        return {"temperature": sp.temperature, "top_p": sp.top_p, "top_k": top_k}

    def penalized(self, logits, req):
        """Sampler.apply_penalties, unless the row has none (InputBatch.no_penalties): the
        penalties as float32 tensors, the prompt's ids as an int64 row padded with V."""
        sp = req.sp
        if sp.presence_penalty == 0.0 and sp.frequency_penalty == 0.0 and \
                sp.repetition_penalty == 1.0:
            return logits
        one = lambda x: torch.tensor([x], dtype=torch.float32)  # noqa: E731
        prompt = torch.tensor([list(req.row.prompt_ids)], dtype=torch.int64).view(1, -1)
        return self.apply_all_penalties(logits, prompt, one(sp.presence_penalty),
                                        one(sp.frequency_penalty), one(sp.repetition_penalty),
                                        [list(req.row.output_ids)])

    def min_p(self, logits, sp):
        """MinPLogitsProcessor for a batch of one: the request added at index 0, then apply."""
        config = types.SimpleNamespace(scheduler_config=types.SimpleNamespace(max_num_seqs=1))
        processor = self.MinP(config, torch.device("cpu"), False)
        processor.update_state(self.BatchUpdate(batch_size=1, removed=[], moved=[],
                                                added=[(0, sp, None, None)]))
        return processor.apply(logits)

    def request_tensors(self, sp, vocab):
        """The per-request sampling tensors as InputBatch builds them for a batch of one."""
        temperature = torch.tensor([sp.temperature], dtype=torch.float32)
        top_p = torch.tensor([sp.top_p], dtype=torch.float32) if sp.top_p < 1 else None
        top_k = torch.tensor([sp.top_k], dtype=torch.int32) if 0 < sp.top_k < vocab else None
        return temperature, top_k, top_p

    # -- the sampler

    def greedy(self, sp):
        return sp.sampling_type == self.GREEDY

    def scaled_and_filtered(self, logits, sp, mode, generator):
        """Sampler.sample for a row that is not greedy: temperature, min-p, then
        forward_native."""
        temperature, top_k, top_p = self.request_tensors(sp, logits.shape[-1])
        logits = self.Sampler.apply_temperature(logits, temperature, True)  # all_random
        logits = self.min_p(logits, sp)
        sampler = types.SimpleNamespace(logprobs_mode=mode)
        return self.TopKTopPSampler.forward_native(sampler, logits, {0: generator}, top_k, top_p)

    def filter_row(self, logits, req):
        sp = req.sp
        logits = self.penalized(logits.view(1, -1).to(torch.float32).clone(), req)
        if self.greedy(sp):
            token = int(self.Sampler.greedy_sample(logits)[0])
            out = torch.full((logits.shape[-1],), -float("inf"), dtype=torch.float32)
            out[token] = 0.0
            return out.tolist()
        generator = torch.Generator().manual_seed(0)  # the draw made on the way is not used
        _, logprobs = self.scaled_and_filtered(logits, sp, "processed_logprobs", generator)
        return logprobs[0].tolist()

    def sample_row(self, logits, req, seed, n_top):
        sp = req.sp
        raw = logits.view(1, -1).to(torch.float32).clone()
        mode = self.logprobs_mode
        returned = None  # Sampler.forward, step 1: the raw logprobs or logits
        if mode == "raw_logprobs":
            returned = self.Sampler.compute_logprobs(raw)
        elif mode == "raw_logits":
            returned = raw.clone()
        raw = self.penalized(raw, req)  # apply_logits_processors
        if self.greedy(sp):
            token = self.Sampler.greedy_sample(raw)
            if mode == "processed_logits":
                returned = raw
            elif mode == "processed_logprobs":
                returned = self.Sampler.compute_logprobs(raw)
        else:
            generator = torch.Generator().manual_seed(seed)
            token, processed = self.scaled_and_filtered(raw.clone(), sp, mode, generator)
            if processed is not None:
                returned = processed
        token = token.long()
        gathered = self.Sampler.gather_logprobs(returned, n_top, token_ids=token)
        ids, values = gathered[0][0].tolist(), gathered[1][0].tolist()
        return ids[0], values[0], list(zip(ids[1:], values[1:]))


if __name__ == "__main__":
    ep.main(VLLMEngine())
