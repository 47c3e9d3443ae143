"""The DeepInfer sampling rule in PyTorch: a second, independent transcription of seed 000.

Written from ../shared/seeds/000_df0164f72d74ea24.txt (cited as 000:LINE), not from the C
oracle; where the seed leaves a choice open, this follows the choice stated in oracle/SPEC.md
("Choices the seed leaves open"). The penalties come from seed 004's pipeline
(../shared/seeds/004_2fe99828376cb770.txt, 004:LINE), and they and min-p follow oracle/SPEC.md
("Penalties and min-p") where the seeds are silent. The fixtures are computed here, and the differential run
compares this module with the C oracle row by row.

Conventions: logits are float32 tensors of shape [V]; processed logprobs are float64; a
rejected input raises SieveError with the oracle's error name and the protocol's kind and field.
"""

import math
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple

import torch

SAMPLING_EPS = 1e-5  # 000:9, sampling_params.py:10
TOP_K_MAX = 2**31 - 1  # 000:32
VOCAB_MAX = 2**31 - 1
MTP_SEED_OFFSET = 1000000007  # 000:59, fused_sample.py:15
GOLDEN = 0x9E3779B97F4A7C15  # 000:45
MASK64 = (1 << 64) - 1

CASE_SAMPLE, CASE_RESAMPLE, CASE_ACCEPT = 0, 1, 2  # 000:52


class SieveError(Exception):
    """A rejected input: the oracle's error name, the protocol kind and the field at fault."""

    def __init__(self, code: str, kind: str, fld: str):
        super().__init__(f"{code} ({kind}: {fld})")
        self.code, self.kind, self.field = code, kind, fld


def _params_error(code, fld):
    return SieveError(code, "invalid_params", fld)


def _logits_error(code, fld="logits"):
    return SieveError(code, "invalid_logits", fld)


def _request_error(code, fld):
    return SieveError(code, "invalid_request", fld)


# ----------------------------------------------------------------------------- parameters


@dataclass(frozen=True)
class Params:
    temperature: float = 1.0  # 000:63 defaults
    top_p: float = 1.0
    top_k: int = -1
    # Whether the request states top_k; -1 and a top_k left out are the same here, and only a
    # reading of readings.py (an engine that rejects an explicit -1) tells them apart.
    explicit_k: bool = field(default=True, compare=False)
    # Whether the request states top_p; 1 and a top_p left out are the same here, and only a
    # reading (an engine that rejects an explicit 1) tells them apart.
    explicit_p: bool = field(default=False, compare=False)
    # Ours (oracle/SPEC.md, "Penalties and min-p"): min-p, and seed 004's penalties (004:20-21).
    min_p: float = 0.0
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0
    repetition_penalty: float = 1.0
    penalty_last_n: int = -1
    # What the penalties count (the row's output_ids and prompt_ids), carried with the parameters
    # so that every reading of readings.py sees them.
    output_ids: Tuple[int, ...] = ()
    prompt_ids: Tuple[int, ...] = ()

    def rest(self) -> dict:
        """Min-p, the penalties and their ids: what the checks and the clamp leave as they are."""
        return dict(min_p=self.min_p, frequency_penalty=self.frequency_penalty,
                    presence_penalty=self.presence_penalty,
                    repetition_penalty=self.repetition_penalty,
                    penalty_last_n=self.penalty_last_n, output_ids=self.output_ids,
                    prompt_ids=self.prompt_ids)


def _check_rest(p: Params) -> None:
    """Ours, after top_k: min_p in [0, 1], the additive penalties in [-2, 2], repetition in
    (0, 2], penalty_last_n -1 or more, in that order (SGLang's ranges)."""
    if not 0.0 <= p.min_p <= 1.0:
        raise _params_error("SIEVE_EMINP", "min_p")
    if not -2.0 <= p.frequency_penalty <= 2.0:
        raise _params_error("SIEVE_EFREQUENCY", "frequency_penalty")
    if not -2.0 <= p.presence_penalty <= 2.0:
        raise _params_error("SIEVE_EPRESENCE", "presence_penalty")
    if not 0.0 < p.repetition_penalty <= 2.0:
        raise _params_error("SIEVE_EREPETITION", "repetition_penalty")
    if p.penalty_last_n < -1:
        raise _params_error("SIEVE_EPENALTYWINDOW", "penalty_last_n")


def check_params(p: Params) -> Params:
    """000:11, 000:32, 000:63: check temperature, top_p, top_k in that order, then ours, then
    clamp (the clamp leaves min-p and the penalties)."""
    t, top_p, top_k = p.temperature, p.top_p, p.top_k
    if t != t or t in (float("inf"), float("-inf")) or t < 0:
        raise _params_error("SIEVE_ETEMPERATURE", "temperature")
    if top_p != top_p or not 0 < top_p <= 1:
        raise _params_error("SIEVE_ETOPP", "top_p")
    if (isinstance(top_k, float) and not top_k.is_integer()) or not (
            top_k == -1 or 1 <= top_k <= TOP_K_MAX):
        raise _params_error("SIEVE_ETOPK", "top_k")
    _check_rest(p)
    if t < SAMPLING_EPS:  # 000:9: the clamp also resets both filters
        return Params(SAMPLING_EPS, 1.0, -1, **p.rest())
    return Params(float(t), float(top_p), int(top_k), **p.rest())


# ----------------------------------------------------------------------------- engine options


@dataclass(frozen=True)
class Engine:
    force_topk: int = 0  # 000:67, 0 = off
    blacklist: Tuple[int, ...] = ()  # 000:68


def apply_engine(logits: torch.Tensor, engine: Engine) -> torch.Tensor:
    """000:65-68: blacklist first (our order), then keep the force_topk largest, ties by id."""
    if engine.force_topk < 0:
        raise _request_error("SIEVE_EFORCETOPK", "force_topk")
    v = logits.shape[0]
    out = logits.clone()
    for token in engine.blacklist:
        if not 0 <= token < v:
            raise _request_error("SIEVE_EBLACKLIST", "blacklist")
        out[token] = float("-inf")
    n = engine.force_topk
    if 0 < n < v:
        order = torch.sort(out, descending=True, stable=True).indices
        out[order[n:]] = float("-inf")
    return out


# ----------------------------------------------------------------------------- penalties


def penalty_counts(p: Params, v: int) -> torch.Tensor:
    """How many times each token is counted: in the last penalty_last_n output tokens (-1: all,
    0: none), never in the prompt; every id, output's then prompt's, must lie in [0, V)."""
    for ids, code, fld in ((p.output_ids, "SIEVE_EOUTPUTTOKEN", "output_ids"),
                           (p.prompt_ids, "SIEVE_EPROMPTTOKEN", "prompt_ids")):
        if any(not 0 <= int(i) < v for i in ids):
            raise _request_error(code, fld)
    n, out = p.penalty_last_n, list(p.output_ids)
    counted = out if n == -1 else out[max(len(out) - n, 0):] if n else []
    return torch.bincount(torch.tensor(counted, dtype=torch.int64), minlength=v)


def apply_penalties(x: torch.Tensor, p: Params, minus_inf=False) -> torch.Tensor:
    """Seed 004's step 1 (004:255-287), after the engine options: a token counted c > 0 times
    (penalty_counts) loses c * frequency + presence (float64, rounded to float32), then is
    divided by repetition when >= 0, multiplied by it when < 0. minus_inf: overflow_checked's."""
    counts = penalty_counts(p, x.shape[0])
    hit = (counts > 0) & ~torch.isinf(x)
    if not bool(hit.any()):
        return x
    c = counts.to(torch.float64)
    shifted = (x.to(torch.float64) - (c * p.frequency_penalty + p.presence_penalty)).float()
    s64 = shifted.to(torch.float64)
    scaled = torch.where(s64 < 0, s64 * p.repetition_penalty, s64 / p.repetition_penalty).float()
    return overflow_checked(torch.where(hit, scaled, x), hit, minus_inf)


def overflow_checked(x: torch.Tensor, changed: torch.Tensor, minus_inf=False) -> torch.Tensor:
    """x, unless a logit the penalties changed left float32's range or is NaN (SIEVE_EOVERFLOW);
    with minus_inf (the penalty_overflow axis) one below the range is -inf and no error."""
    bad = ~torch.isfinite(x[changed])
    if minus_inf:
        bad &= x[changed] != -math.inf
    if bool(bad.any()):
        raise _logits_error("SIEVE_EOVERFLOW")
    return x


# ----------------------------------------------------------------------------- the filter


@dataclass
class Filtered:
    logprobs: torch.Tensor  # float64 [V], -inf where removed
    kept: int
    kept_mass: float
    topp_margin: float  # inf when top-p is off
    cut_gap: float  # inf when nothing ranked was removed
    minp_margin: float  # inf when min-p is off
    ranked: torch.Tensor = field(repr=False)  # token ids in rank order
    probs: torch.Tensor = field(repr=False)  # full-softmax p, float64 [V]
    scaled: torch.Tensor = field(repr=False)  # the float32 scaled logits [V]


def check_logits(logits: torch.Tensor) -> None:
    v = logits.shape[0]
    if not 1 <= v <= VOCAB_MAX:
        raise _logits_error("SIEVE_EVOCAB")
    if torch.isnan(logits).any():
        raise _logits_error("SIEVE_ENAN")
    if torch.isposinf(logits).any():
        raise _logits_error("SIEVE_EPOSINF")


def filter_row(logits: torch.Tensor, params: Params, engine: Engine = Engine()) -> Filtered:
    """Steps 1-5 of 000:13-19 on one row, after seed 004's penalties."""
    p = check_params(params)
    logits = logits.to(torch.float32)
    check_logits(logits)
    x = apply_penalties(apply_engine(logits, engine), p)
    finite = ~torch.isinf(x)
    if not bool(finite.any()):
        raise _logits_error("SIEVE_ENOFINITE")
    # Step 1 (000:11, fused_sample.py:209): a float32 multiply by 1/T, then softmax in float64.
    # A -inf logit stays -inf, also where 1/T rounds to 0 in float32 (SPEC.md).
    scaled = torch.where(finite, x * (1.0 / p.temperature), x)
    if bool(torch.isinf(scaled[finite]).any()):
        raise _logits_error("SIEVE_EOVERFLOW")
    s64 = scaled.to(torch.float64)
    probs = torch.softmax(s64, dim=0)
    # Step 2 (000:16): rank the finite tokens by p, largest first, ties in token order.
    ids = torch.nonzero(finite).flatten()
    ranked = ids[torch.sort(probs[ids], descending=True, stable=True).indices]
    pr = probs[ranked]
    # Step 3 (000:17): remove a token when the mass of all better tokens is > top_p.
    mass_before = torch.cat([torch.zeros(1, dtype=torch.float64), torch.cumsum(pr, 0)[:-1]])
    kept, margin = len(ranked), float("inf")
    if p.top_p < 1.0 and len(ranked) > 1:
        margin = float((mass_before[1:] - p.top_p).abs().min())
        kept = int((mass_before <= p.top_p).sum())
    # Step 4 (000:18, 000:32): remove rank >= k among the tokens left.
    if p.top_k != -1:
        kept = min(kept, p.top_k)
    # Ours: min-p removes a token whose p is below min_p times the largest, on the same order.
    minp_margin = float("inf")
    if p.min_p > 0.0:
        bar, left = p.min_p * float(pr[0]), kept
        kept = min(left, int((pr >= bar).sum()))
        near = pr[kept - 1:min(kept + 1, left)]  # its last kept and first removed of those left
        minp_margin = float(((near - bar).abs() / pr[0]).min())
    # Step 5 (000:19): log-softmax over the kept set, -inf elsewhere.
    masked = torch.full_like(s64, float("-inf"))
    masked[ranked[:kept]] = s64[ranked[:kept]]
    logprobs = torch.log_softmax(masked, dim=0)
    cut_gap = float(pr[kept - 1] - pr[kept]) if kept < len(ranked) else float("inf")
    return Filtered(logprobs, kept, float(pr[:kept].sum()), margin, cut_gap, minp_margin, ranked,
                    probs, scaled)


def top_logprobs(logprobs: torch.Tensor, n: int) -> List[Tuple[int, float]]:
    """000:74: the n best entries of the processed row; ties (and -inf entries) by token id."""
    v = logprobs.shape[0]
    if not 0 <= n <= v:
        raise _request_error("SIEVE_ETOPLOGPROBS", "top_logprobs")
    order = torch.sort(logprobs, descending=True, stable=True).indices[:n]
    return [(int(i), float(logprobs[i])) for i in order]


# ----------------------------------------------------------------------------- the uniform


def _i64(x: int) -> int:
    """A 64-bit pattern as the signed value an int64 tensor holds."""
    x &= MASK64
    return x - (1 << 64) if x >= 1 << 63 else x


def _lsr(z: torch.Tensor, s: int) -> torch.Tensor:
    """Logical right shift of int64 tensors: arithmetic shift, then mask off the sign copies."""
    return (z >> s) & ((1 << (64 - s)) - 1)


def _hash_to_uniform(z: torch.Tensor) -> torch.Tensor:
    """Our reading of random_sampling.py:58-67 (oracle/SPEC.md): the SplitMix64 finalizer."""
    z = z ^ _lsr(z, 30)
    z = z * _i64(0xBF58476D1CE4E5B9)
    z = z ^ _lsr(z, 27)
    z = z * _i64(0x94D049BB133111EB)
    z = z ^ _lsr(z, 31)
    return _lsr(z, 11).to(torch.float64) * 2.0**-53


def seed_tensor(seeds: Sequence[int], tag: str) -> torch.Tensor:
    """Seeds as int64, with the "mtp" offset added modulo 2^64 (000:59)."""
    offset = MTP_SEED_OFFSET if tag == "mtp" else 0
    if tag not in ("main", "mtp"):
        raise _request_error("SIEVE_ETAG", "tag")
    return torch.tensor([_i64(s + offset) for s in seeds], dtype=torch.int64)


def uniforms(seq_seeds: torch.Tensor, sample_positions: torch.Tensor, sample_case: int):
    """Lines 79-81 of random_sampling_ref (000:45-47): hash (seed, 3 * position + case) to u."""
    if sample_case not in (CASE_SAMPLE, CASE_RESAMPLE, CASE_ACCEPT):
        raise _request_error("SIEVE_ECASE", "case")
    positions = torch.tensor([_i64(int(x)) for x in sample_positions], dtype=torch.int64)
    seq = (positions * 3 + sample_case) * _i64(GOLDEN)
    combined = seq_seeds + (seq ^ (seq * (1 << 13)))
    return _hash_to_uniform(combined)


def uniform(seed: int, position: int, sample_case: int = 0, tag: str = "main") -> float:
    if sample_case not in (CASE_SAMPLE, CASE_RESAMPLE, CASE_ACCEPT):
        raise _request_error("SIEVE_ECASE", "case")
    return float(uniforms(seed_tensor([seed], tag), [position], sample_case)[0])


def random_sampling_ref(probs, seq_seeds, sample_positions, sample_case=0):
    """random_sampling_ref as printed in 000:36-50, with the case as a number (000:52)."""
    u = uniforms(seq_seeds, sample_positions, sample_case).unsqueeze(-1)
    cdf = probs.double().cumsum(dim=-1)
    target = u * cdf[:, -1:]
    return (cdf > target).long().argmax(dim=-1).int()


@dataclass
class Drawn:
    token: int
    u: float
    margin: float  # distance of u * total from the nearer cdf step around the token


def draw(probs: torch.Tensor, u: float) -> Drawn:
    """000:48-50, 000:55: the first token whose float64 running sum is > u * total."""
    probs = probs.to(torch.float64)
    if not 1 <= probs.shape[0] <= VOCAB_MAX:
        raise _logits_error("SIEVE_EVOCAB")
    if not 0.0 <= u < 1.0:
        raise _request_error("SIEVE_EUNIFORM", "u")
    if bool((~torch.isfinite(probs)).any()) or bool((probs < 0).any()):
        raise _logits_error("SIEVE_EPROBS", "probs")
    cdf = probs.cumsum(dim=0)
    total = float(cdf[-1])
    if total == float("inf"):
        raise _logits_error("SIEVE_EPROBS", "probs")
    if total == 0.0:
        raise _logits_error("SIEVE_EZEROMASS", "probs")
    target = u * total
    token = int((cdf > target).long().argmax())
    below = float(cdf[token - 1]) if token > 0 else 0.0
    return Drawn(token, u, min(target - below, float(cdf[token]) - target))


# ----------------------------------------------------------------------------- positions


def position(mode: str, seqlen_q: int, seqlen_k: int, row: int = 0) -> int:
    """000:59, prepare_sample.cpp:198-206."""
    if seqlen_q < 1 or seqlen_k < seqlen_q or row < 0 or mode not in ("prefill", "decode"):
        raise _request_error("SIEVE_EPOSITION", "position")
    if mode == "prefill":
        if row != 0:
            raise _request_error("SIEVE_EPOSITION", "position")
        return seqlen_k
    if row >= seqlen_q:
        raise _request_error("SIEVE_EPOSITION", "position")
    return seqlen_k - seqlen_q + 1 + row


# ----------------------------------------------------------------------------- sample


@dataclass
class Sampled:
    token: int
    logprob: float
    top: List[Tuple[int, float]]
    u: float
    draw_margin: float
    filtered: Filtered


def sample(logits, params: Params, seed: int, pos: int, n_top: int = 0, sample_case: int = 0,
           tag: str = "main", engine: Engine = Engine()) -> Sampled:
    """Filter, probs = exp(processed logprobs), draw (000:34-57, 000:70-74)."""
    check_params(params)
    if not 1 <= logits.shape[0] <= VOCAB_MAX:
        raise _logits_error("SIEVE_EVOCAB")
    f = filter_row(logits, params, engine)
    if not 0 <= n_top <= logits.shape[0]:
        raise _request_error("SIEVE_ETOPLOGPROBS", "top_logprobs")
    u = uniform(seed, pos, sample_case, tag)
    d = draw(torch.exp(f.logprobs), u)
    return Sampled(d.token, float(f.logprobs[d.token]), top_logprobs(f.logprobs, n_top), u,
                   d.margin, f)


# ----------------------------------------------------------------------------- speculate

DRAFT_MAX = 64


@dataclass
class Step:
    u: float  # the accept test's uniform: case 2, tag main, at t + j
    p: float  # the target's processed probability of the draft token
    q: float  # the draft's (1 for a greedy draft)
    ratio: float  # p / q; 0 when p is 0, inf when only q is 0
    margin: float  # |u - ratio|; inf when p or q is 0 (decided exactly)
    accepted: bool


@dataclass
class Speculated:
    accepted: int
    tokens: List[int]
    bonus: bool
    steps: List[Step]
    u: float  # the last token's uniform
    draw_margin: float
    residual_mass: float  # nan for the bonus


def speculate(target_rows, draft_tokens, draft_rows, target_params: Params, draft_params: Params,
              seed: int, pos: int, engine: Engine = Engine(), flip: int = -1) -> Speculated:
    """Speculative verification as oracle/SPEC.md "Speculative decoding" reads it (000:52,
    000:59): accept draft x_j when u * q(x_j) < p(x_j), u of case 2 at t + j; at the first
    rejection draw from max(p - q, 0) with case 1 at t + j (from p when that is 0 everywhere)
    and stop; after n acceptances the bonus is the normal sample of target row n. `flip` turns
    the test of draft `flip` the other way: the outcome float32 arithmetic could give there."""
    n = len(draft_tokens)
    if not 1 <= n <= DRAFT_MAX:
        raise _request_error("SIEVE_EDRAFT", "draft")
    check_params(target_params)
    if draft_rows is not None:
        check_params(draft_params)
    v = target_rows[0].shape[0]
    if not 1 <= v <= VOCAB_MAX:
        raise _logits_error("SIEVE_EVOCAB")
    target = [filter_row(r, target_params, engine) for r in target_rows]
    draft = [filter_row(r, draft_params, engine) for r in draft_rows] if draft_rows is not None \
        else None
    if any(not 0 <= x < v for x in draft_tokens):
        raise _request_error("SIEVE_EDRAFTTOKEN", "draft.tokens")
    steps = []
    for j, x in enumerate(draft_tokens):
        p = torch.exp(target[j].logprobs)
        q = torch.exp(draft[j].logprobs) if draft else torch.nn.functional.one_hot(
            torch.tensor(x), v).to(torch.float64)
        u = uniform(seed, (pos + j) & MASK64, 2)
        px, qx = float(p[x]), float(q[x])
        ratio = 0.0 if px == 0 else float("inf") if qx == 0 else px / qx
        accepted = (u * qx < px) != (j == flip)
        exact = qx == 0 or px == 0  # 0 < p and u q < 0 come out the same in any arithmetic
        steps.append(Step(u, px, qx, ratio, float("inf") if exact else abs(u - ratio), accepted))
        if not accepted:
            residual = torch.clamp(p - q, min=0.0)
            mass = float(residual.cumsum(0)[-1])
            u1 = uniform(seed, (pos + j) & MASK64, 1)
            d = draw(residual if mass > 0 else p, u1)
            return Speculated(j, list(draft_tokens[:j]) + [d.token], False, steps, u1, d.margin,
                              mass)
    s = sample(target_rows[n], target_params, seed, (pos + n) & MASK64, engine=engine)
    return Speculated(n, list(draft_tokens) + [s.token], True, steps, s.u, s.draw_margin,
                      float("nan"))


def speculate_draft(draft_rows, draft_params: Params, seed: int, pos: int,
                    engine: Engine = Engine()) -> List[int]:
    """The draft's own tokens: token j drawn from its processed row with case 0, tag mtp, at
    t + j (000:59, dflash.py:329)."""
    return [sample(r, draft_params, seed, (pos + j) & MASK64, 0, 0, "mtp", engine).token
            for j, r in enumerate(draft_rows)]
