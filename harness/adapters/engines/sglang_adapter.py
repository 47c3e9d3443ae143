"""Protocol v1 adapter around the installed SGLang's own sampler code, for `sieve run --impl exec:`.

    sieve run --impl exec:"/usr/bin/python3 harness/adapters/engines/sglang_adapter.py"

Environment:
    SIEVE_SGLANG_SRC      an SGLang source checkout (its root, holding python/sglang/, or the folder
                          holding sglang/) put first on sys.path
    SIEVE_SGLANG_VERSION  the version to report instead of the package's (say, a checkout's commit)
    SGLANG_RETURN_ORIGINAL_LOGPROB  SGLang's own switch, read by its sampler module: `sample`
                          then returns the logprobs of the logits before temperature

What is SGLang's, called here (paths under python/sglang/srt/):
    sampling/sampling_params.py SamplingParams   construction runs __post_init__ (temperature
                                              < _SAMPLING_EPS -> T = 1 and top_k = 1; top_k -1 ->
                                              TOP_K_ALL), then .verify(vocab_size)
    layers/sampler.py top_k_top_p_min_p_sampling_from_probs_torch   the PyTorch sampling backend
                                              (the one used without CUDA/FlashInfer, and always
                                              under deterministic inference)
    layers/sampler.py sampling_from_probs_torch   the draw when no filter is on
    sampling/penaltylib/ BatchedPenalizerOrchestrator with the four penalizers
                                              SamplingBatchInfo.from_schedule_batch builds
                                              (frequency, min_new_tokens, presence, repetition),
                                              fed each output token by cumulate_output_tokens,
                                              then accumulate_additive_penalties and
                                              accumulate_scaling_penalties, and
                                              repetition_penalty.py apply_scaling_penalties
What is glue, mirroring layers/sampler.py Sampler.forward and sampling/sampling_batch_info.py:
the per-request tensors (temperatures float32 of shape [1, 1], top_ps float32, top_ks int32,
min_ps float32, need_min_p_sampling when min_p > 0), the penalties as
SamplingBatchInfo.update_penalties and _apply_pre_grammar_logits_transforms apply them in the
overlap mode (a zero buffer the additive penalizers subtract from, added to the logits, then the
scaling penalties), before the greedy branch (is_all_greedy: top_k <= 1 -> torch.argmax of the logits), the
"simple sampling case" branch (no top-p, top-k or min-p), `logits.div_(temperatures)` then
torch.softmax (float32), and the returned logprobs: torch.log(probs) (after temperature, before the
filters), or log_softmax of the logits with SGLANG_RETURN_ORIGINAL_LOGPROB; a greedy batch
returns log_softmax of the logits; top_logprobs by torch.topk, as layers/logprob_processor.py
takes them. One row per call (a batch of one).

filter answers the distribution the sampler draws from: the log_softmax (float32) of the
temperature-scaled logits over the tokens top_k_top_p_min_p_sampling_from_probs_torch keeps. That
function returns only a token, so the kept set is read off the probabilities it hands to its
draw: it is called with a sampling seed, and its module's multinomial_with_seed is replaced for
that call by a function that records them (the function's own masking is untouched); with min-p,
which it runs only without a seed, torch.multinomial is replaced the same way for that call. Tokens whose
float32 probability underflowed to 0 are passed to it as the smallest float32 denormal, which
changes no sum or comparison it makes, so that "removed by a filter" is told apart from "too
improbable to be drawn". A greedy row is answered with torch.argmax's token alone (logprob 0).
"""

import os
import sys
import types

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import engine_protocol as ep  # noqa: E402

TINY = torch.finfo(torch.float32).tiny * torch.finfo(torch.float32).eps  # 2^-149


class Batch:
    """What the orchestrator reads of a ScheduleBatch: its requests and device (glue)."""

    def __init__(self, reqs):
        self.reqs, self.device = reqs, "cpu"


class SGLangEngine(ep.Engine):
    name = "sglang"
    ops = ("validate", "filter", "sample")
    sampling_options = ("min_p", "frequency_penalty", "presence_penalty", "repetition_penalty")

    def __init__(self):
        try:
            sampling_params, sampler, penaltylib, repetition = ep.import_engine(
                ["sglang.srt.sampling.sampling_params", "sglang.srt.layers.sampler",
                 "sglang.srt.sampling.penaltylib",
                 "sglang.srt.sampling.penaltylib.repetition_penalty"], "sglang",
                "SIEVE_SGLANG_SRC", layouts=("python", ""))
        except Exception as e:
            self.unavailable = f"sglang is not importable: {type(e).__name__}: {e}"
            self.version = ep.package_version("sglang", env="SIEVE_SGLANG_VERSION")
            return
        try:
            import sglang.version as module
        except Exception:
            module = None
        self.version = ep.package_version("sglang", module, "SIEVE_SGLANG_VERSION")
        self.SamplingParams = sampling_params.SamplingParams
        self.TOP_K_ALL = sampling_params.TOP_K_ALL
        self.sampler = sampler
        self.penaltylib = penaltylib
        self.apply_scaling_penalties = repetition.apply_scaling_penalties

    # -- parameters

    def normalize(self, params):
        given = {k: getattr(params, k) for k in ep.PARAM_FIELDS if k in params.given}
        sp = self.SamplingParams(**given, **params.options)
        sp.verify(vocab_size=2**31 - 1)  # the vocabulary matters only for logit_bias
        return ep.Normalized(sp, params)

    def public_params(self, req):
        """SamplingParams after normalization, in the protocol's terms: TOP_K_ALL, SGLang's 'no
        top-k' (1 << 30), as the protocol's -1."""
        sp = req.sp
        top_k = -1 if sp.top_k == self.TOP_K_ALL else sp.top_k
        return {"temperature": sp.temperature, "top_p": sp.top_p, "top_k": top_k}

    def penalized(self, logits, req):
        """The penalizers of a batch of one, fed the output tokens one step at a time (the
        scheduler's cumulate_output_tokens), applied as in the overlap mode."""
        lib, vocab = self.penaltylib, logits.shape[-1]
        batch = Batch([types.SimpleNamespace(sampling_params=req.sp)])  # kept alive: a weakref
        orchestrator = lib.BatchedPenalizerOrchestrator(
            vocab_size=vocab, batch=batch,
            penalizers={lib.BatchedFrequencyPenalizer, lib.BatchedMinNewTokensPenalizer,
                        lib.BatchedPresencePenalizer, lib.BatchedRepetitionPenalizer})
        if not orchestrator.is_required:
            return logits
        for token in req.row.output_ids:
            orchestrator.cumulate_output_tokens(torch.tensor([token], dtype=torch.int64))
        additive = torch.zeros((1, vocab), dtype=torch.float32)
        orchestrator.accumulate_additive_penalties(additive)
        scaling = orchestrator.accumulate_scaling_penalties()
        logits.add_(additive)
        if scaling is not None:
            self.apply_scaling_penalties(logits, scaling)
        return logits

    def batch_tensors(self, sp):
        """SamplingBatchInfo.from_schedule_batch for a batch of one."""
        try:
            top_ks = torch.tensor([sp.top_k], dtype=torch.int32)
        except Exception as e:  # top_k beyond int32: SGLang fails here, not in verify()
            raise ep.ParamError("top_k", f"sglang cannot build top_ks: {type(e).__name__}: {e}")
        return (torch.tensor([sp.temperature], dtype=torch.float).view(-1, 1),
                torch.tensor([sp.top_p], dtype=torch.float), top_ks,
                torch.tensor([sp.min_p], dtype=torch.float))

    def is_greedy(self, sp):
        return sp.top_k <= 1  # SamplingBatchInfo.is_all_greedy

    def is_simple(self, sp):
        return sp.top_p == 1.0 and sp.top_k == self.TOP_K_ALL and not sp.min_p > 0

    def probs(self, logits, temperatures):
        logits = logits.div_(temperatures)  # Sampler.forward, standard path
        return logits, torch.softmax(logits, dim=-1)

    def kept_by_engine(self, probs, top_ks, top_ps, min_ps):
        """The tokens top_k_top_p_min_p_sampling_from_probs_torch keeps (a bool mask by id)."""
        if float(min_ps[0]) > 0:
            return self.kept_with_min_p(probs, top_ks, top_ps, min_ps)
        seen = {}

        def record(logprobs, seed, positions):
            seen["logprobs"] = logprobs.clone()
            n, m = logprobs.shape
            return torch.arange(m).view(1, -1).expand(n, m)  # every rank: gather gives probs_idx

        module = self.sampler
        saved = module.multinomial_with_seed
        module.multinomial_with_seed = record
        try:
            order = module.top_k_top_p_min_p_sampling_from_probs_torch(
                probs, top_ks, top_ps, min_ps, False, torch.zeros(1, dtype=torch.int64),
                torch.zeros(1, dtype=torch.int64))
        finally:
            module.multinomial_with_seed = saved
        kept = torch.zeros(probs.shape[-1], dtype=torch.bool)
        kept[order.long()] = torch.isfinite(seen["logprobs"][0])
        return kept

    def kept_with_min_p(self, probs, top_ks, top_ps, min_ps):
        """The same with min-p, which the function runs only without a sampling seed: its
        torch.multinomial records the masked, sorted probabilities for that call."""
        seen = {}

        def record(probs_sort, num_samples):
            seen["probs"] = probs_sort.clone()
            return torch.zeros((probs_sort.shape[0], 1), dtype=torch.int64)

        saved = torch.multinomial
        torch.multinomial = record
        try:
            self.sampler.top_k_top_p_min_p_sampling_from_probs_torch(
                probs, top_ks, top_ps, min_ps, True, None, None)
        finally:
            torch.multinomial = saved
        order = torch.sort(probs, dim=-1, descending=True).indices[0]
        kept = torch.zeros(probs.shape[-1], dtype=torch.bool)
        kept[order] = seen["probs"][0] > 0
        return kept

    def filter_row(self, logits, req):
        sp = req.sp
        logits = self.penalized(logits.view(1, -1).to(torch.float32).clone(), req)
        vocab = logits.shape[-1]
        if self.is_greedy(sp):
            out = torch.full((vocab,), -float("inf"), dtype=torch.float32)
            out[int(torch.argmax(logits, -1)[0])] = 0.0
            return out.tolist()
        temperatures, top_ps, top_ks, min_ps = self.batch_tensors(sp)
        scaled, probs = self.probs(logits, temperatures)
        if self.is_simple(sp):
            return torch.log_softmax(scaled, dim=-1)[0].tolist()
        finite = torch.isfinite(scaled)
        probs = torch.where((probs == 0) & finite, torch.tensor(TINY, dtype=probs.dtype), probs)
        kept = self.kept_by_engine(probs, top_ks, top_ps, min_ps)
        masked = scaled[0].masked_fill(~kept, -float("inf"))
        return torch.log_softmax(masked, dim=-1).tolist()

    def sample_row(self, logits, req, seed, n_top):
        sp = req.sp
        logits = self.penalized(logits.view(1, -1).to(torch.float32).clone(), req)
        original = bool(getattr(self.sampler, "SGLANG_RETURN_ORIGINAL_LOGPROB", False))
        if self.is_greedy(sp):
            token = torch.argmax(logits, -1)
            logprobs = torch.nn.functional.log_softmax(logits, dim=-1)
        else:
            temperatures, top_ps, top_ks, min_ps = self.batch_tensors(sp)
            original_logprobs = torch.log_softmax(logits, dim=-1) if original else None
            scaled, probs = self.probs(logits, temperatures)
            torch.manual_seed(seed)  # torch.multinomial draws from the global generator
            if self.is_simple(sp):
                token = self.sampler.sampling_from_probs_torch(probs)
            else:
                token = self.sampler.top_k_top_p_min_p_sampling_from_probs_torch(
                    probs, top_ks, top_ps, min_ps, sp.min_p > 0, None, None)
            logprobs = original_logprobs if original else torch.log(probs)
        token = int(token.view(-1)[0])
        row = logprobs[0]
        values, ids = torch.topk(row, n_top)
        return token, float(row[token]), list(zip(ids.tolist(), values.tolist()))


if __name__ == "__main__":
    ep.main(SGLangEngine())
