"""Wrong readings of seed 000: how a port can misread a statement, each run as code.

A reading is a named misreading of one statement (its `axis`: an engine axis of oracle/ENGINES.md
or a statement of seed 000 that has none) with the hint sieve gives when an answer matches it.
Its name is the name of the mutant of suites/mutants/catalogue.json that implements it. The
generator runs every reading that applies on every case; a reading whose answer the case's
expectation rejects is recorded in the case with that answer, so the harness hints a cause only
when an implementation's answer is the one the reading gives (fixtures/README.md, "Readings").

This module is a third transcription: a small parametrized filter, written apart from
reference.py. With no reading switched on it must answer as reference.py does, and
make_fixtures.py checks that on every case.
"""

import math
from dataclasses import dataclass
from typing import Optional

import torch

import float32 as fp32
import reference as ref


@dataclass(frozen=True)
class Reading:
    name: str  # the mutant's name in suites/mutants/catalogue.json
    axis: str  # the axis (oracle/ENGINES.md) or the statement it misreads
    seed_ref: str
    hint: str  # what an implementation whose answer matches most likely does
    ops: tuple  # the ops whose answers it can change


# The axes a case can discriminate: the engine axes of oracle/ENGINES.md, then the statements of
# seed 000 on which engines do not differ.
AXES = ("topp_scope", "boundary", "topk_ties", "temperature_at", "t0", "top_k_zero", "logprobs",
        "draw", "topp_mass", "temperature_op", "check_order", "engine_order", "hash", "position")

FILTER_OPS = ("filter", "sample")
READINGS = (
    Reading("ge-boundary", "boundary", "000:17", ">= instead of > at the top-p boundary (a token "
            "whose mass before equals top_p is removed)", FILTER_OPS),
    Reading("topp-inclusive-cumsum", "topp_mass", "000:17", "top-p counts the token's own "
            "probability in its mass (the unshifted cumulative sum)", FILTER_OPS),
    Reading("topk-first-renormalized", "topp_scope", "000:25-28", "top-k applied first and top-p "
            "measured on the renormalized top-k mass", FILTER_OPS),
    Reading("reversed-ties", "topk_ties", "000:16", "equal probabilities ranked by descending "
            "token id", FILTER_OPS),
    Reading("topk-keeps-ties", "topk_ties", "000:18", "top-k keeps every token tied with the "
            "k-th", FILTER_OPS),
    Reading("topk-off-by-one", "topk_ties", "000:18", "top-k keeps k + 1 tokens (removes rank > k "
            "instead of rank >= k)", FILTER_OPS),
    Reading("topp-one-still-cuts", "topp_mass", "000:17", "top-p still applied at top_p = 1: "
            "float32 masses that round above 1.0 cut the tail (skip top-p when top_p is 1)",
            FILTER_OPS),
    Reading("temperature-after-filters", "temperature_at", "000:15", "top-p and top-k see the "
            "unscaled distribution (temperature applied after the filters)", FILTER_OPS),
    Reading("divide-by-temperature", "temperature_op", "000:11", "logits divided by T instead "
            "of multiplied by the float32 1/T", FILTER_OPS),
    Reading("t0-argmax", "t0", "000:9", "T below 1e-5 keeps the first argmax alone (equal logits "
            "do not share)", FILTER_OPS),
    Reading("t0-clamp-keeps-filters", "t0", "000:9", "T below 1e-5 is clamped, but top_p and "
            "top_k are not reset to 1 and -1", FILTER_OPS + ("validate",)),
    Reading("validation-after-clamp", "check_order", "000:63", "the temperature clamp runs "
            "before the checks, so T = 0 hides a bad top_p or top_k", FILTER_OPS + ("validate",)),
    Reading("topk-zero-is-off", "top_k_zero", "000:32", "top_k = 0 taken as off instead of an "
            "error", FILTER_OPS + ("validate",)),
    Reading("blacklist-after-force-topk", "engine_order", "000:67-68", "force_topk applied "
            "before the blacklist, so a blacklisted token takes one of its N places", FILTER_OPS),
    Reading("unrenormalized-logprobs", "logprobs", "000:19", "kept logprobs are the full-softmax "
            "log p, not renormalized over the kept set", FILTER_OPS),
    Reading("raw-logprobs", "logprobs", "000:70-72", "the returned logprob is taken after "
            "temperature only, before top-p and top-k", ("sample",)),
    Reading("cdf-probability-order", "draw", "000:48", "the cdf built over the tokens in "
            "probability order instead of token order", ("draw", "sample")),
    Reading("draw-ge", "draw", "000:55", "the draw takes the first token whose cdf is >= "
            "u * total instead of >", ("draw", "sample")),
    Reading("arithmetic-shifts", "hash", "000:54", "arithmetic (sign-extending) right shifts in "
            "the hash finalizer", ("uniform", "draw", "sample")),
    Reading("mix-with-increment", "hash", "000:54", "the SplitMix64 increment added again before "
            "the finalizer", ("uniform", "draw", "sample")),
    Reading("mtp-offset-forgotten", "hash", "000:59", "the mtp tag does not add 1000000007 to "
            "the seed", ("uniform", "draw", "sample")),
    Reading("decode-missing-plus-one", "position", "000:59", "the decode position is "
            "seqlen_k - seqlen_q, without the + 1", ("position",)),
)
BY_NAME = {r.name: r for r in READINGS}
assert all(r.axis in AXES for r in READINGS)

NONE = None  # the rule itself: no reading switched on


# ----------------------------------------------------------------------------- parameters


def check_params(p: ref.Params, reading: Optional[str]) -> ref.Params:
    t, top_p, top_k = p.temperature, p.top_p, p.top_k
    if reading == "validation-after-clamp" and 0 <= t < ref.SAMPLING_EPS:
        t, top_p, top_k = ref.SAMPLING_EPS, 1.0, -1
    if reading == "topk-zero-is-off" and top_k == 0:
        top_k = -1
    if reading == "t0-clamp-keeps-filters" and 0 <= t < ref.SAMPLING_EPS:
        checked = ref.check_params(ref.Params(1.0, top_p, top_k))
        return ref.Params(ref.SAMPLING_EPS, checked.top_p, checked.top_k)
    return ref.check_params(ref.Params(t, top_p, top_k))


# ----------------------------------------------------------------------------- the filter


def _engine(logits: torch.Tensor, engine: ref.Engine, reading) -> torch.Tensor:
    if reading != "blacklist-after-force-topk" or not engine.force_topk:
        return ref.apply_engine(logits, engine)
    out = ref.apply_engine(logits, ref.Engine(force_topk=engine.force_topk))
    return ref.apply_engine(out, ref.Engine(blacklist=engine.blacklist))


def scaled_row(x: torch.Tensor, t: float, reading) -> torch.Tensor:
    """The float32 scaled logits: x * (float32)(1/T), or x / (float32)T for that reading."""
    finite = ~torch.isinf(x)
    if reading == "divide-by-temperature":
        s = x / torch.tensor(t, dtype=torch.float32)
    else:
        s = x * (1.0 / t)
    return torch.where(finite, s, x)


def _rank(p: torch.Tensor, finite: torch.Tensor, reading) -> torch.Tensor:
    ids = torch.nonzero(finite).flatten()
    if reading == "reversed-ties":
        ids = ids.flip(0)
    return ids[torch.sort(p[ids], descending=True, stable=True).indices]


def _keep_count(pr: torch.Tensor, top_p: float, top_k: int, reading) -> int:
    n = len(pr)
    if reading == "topk-first-renormalized":
        k = n if top_k == -1 else min(top_k, n)
        q = pr[:k] / pr[:k].sum()
        before = torch.cat([torch.zeros(1, dtype=torch.float64), torch.cumsum(q, 0)[:-1]])
        return int((before <= top_p).sum()) if top_p < 1.0 else k
    kept = n
    if top_p < 1.0 and n > 1:
        cum = torch.cumsum(pr, 0)
        before = torch.cat([torch.zeros(1, dtype=torch.float64), cum[:-1]])
        if reading == "ge-boundary":
            keep = (before < top_p) | (torch.arange(n) == 0)
        elif reading == "topp-inclusive-cumsum":
            keep = (cum <= top_p) | (torch.arange(n) == 0)
        else:
            keep = before <= top_p
        kept = int(keep.sum())
    if top_k != -1 and top_k < kept:
        k = top_k + (reading == "topk-off-by-one")
        while reading == "topk-keeps-ties" and k < kept and pr[k] == pr[k - 1]:
            k += 1
        kept = k
    return kept


@dataclass
class Filtered:
    logprobs: torch.Tensor  # float64 [V], -inf where removed
    scaled: torch.Tensor  # float32 [V], the scaled logits the logprobs come from
    summed: Optional[int] = None  # terms of the log-softmax's sum, when not the kept tokens


def filter_row(logits: torch.Tensor, params: ref.Params, engine: ref.Engine, reading) -> Filtered:
    """The filter under a reading; raises ref.SieveError as the rule does. For
    topp-one-still-cuts see one_still_cuts."""
    p = check_params(params, reading)
    logits = logits.to(torch.float32)
    ref.check_logits(logits)
    x = _engine(logits, engine, reading)
    finite = ~torch.isinf(x)
    if not bool(finite.any()):
        raise ref.SieveError("SIEVE_ENOFINITE", "invalid_logits", "logits")
    s = scaled_row(x, p.temperature, reading)
    if bool(torch.isinf(s[finite]).any()):
        raise ref.SieveError("SIEVE_EOVERFLOW", "invalid_logits", "logits")
    s64 = s.to(torch.float64)
    ranking = x.to(torch.float64) if reading == "temperature-after-filters" else s64
    ranked = _rank(torch.softmax(ranking, 0), finite, reading)
    kept = _keep_count(torch.softmax(ranking, 0)[ranked], p.top_p, p.top_k, reading)
    if reading == "t0-argmax" and params.temperature < ref.SAMPLING_EPS:
        kept = 1
    if reading == "raw-logprobs":
        kept = len(ranked)
    masked = torch.full_like(s64, -math.inf)
    masked[ranked[:kept]] = s64[ranked[:kept]]
    lp = torch.log_softmax(masked, 0)
    if reading == "unrenormalized-logprobs":
        lp = torch.where(torch.isinf(lp), lp, torch.log_softmax(s64, 0))
        return Filtered(lp, s, len(ranked))
    return Filtered(lp, s)


def one_still_cuts(logits: torch.Tensor, params: ref.Params, engine: ref.Engine) -> list:
    """The kept sets top-p gives at top_p = 1 when it is not skipped: one per float32 route,
    whose masses can round above 1.0 on long rows (float32.py)."""
    p = check_params(params, None)
    x = _engine(logits.to(torch.float32), engine, None)
    finite = ~torch.isinf(x)
    s = scaled_row(x, p.temperature, None)
    return [fp32.route_kept(s, finite, 1.0, p.top_k, route, skip_at_one=False)
            for route in fp32.ROUTES]


# ----------------------------------------------------------------------------- the draw


def _mix(z: int, reading) -> int:
    mask = ref.MASK64

    def shr(v, k):
        if reading == "arithmetic-shifts" and v >> 63:
            return ((v >> k) | (mask << (64 - k))) & mask
        return v >> k

    if reading == "mix-with-increment":
        z = (z + ref.GOLDEN) & mask
    z = ((z ^ shr(z, 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ shr(z, 27)) * 0x94D049BB133111EB) & mask
    return z ^ shr(z, 31)


def uniform(seed: int, position: int, sample_case: int, tag: str, reading) -> float:
    """000:45-54 in Python integers, modulo 2^64."""
    if sample_case not in (0, 1, 2):
        raise ref.SieveError("SIEVE_ECASE", "invalid_request", "case")
    if tag not in ("main", "mtp"):
        raise ref.SieveError("SIEVE_ETAG", "invalid_request", "tag")
    if tag == "mtp" and reading != "mtp-offset-forgotten":
        seed += ref.MTP_SEED_OFFSET
    mask = ref.MASK64
    seq = ((position * 3 + sample_case) * ref.GOLDEN) & mask
    combined = (seed + (seq ^ ((seq << 13) & mask))) & mask
    return (_mix(combined, reading) >> 11) * 2.0**-53


def draw(probs: torch.Tensor, u: float, reading) -> int:
    probs = probs.to(torch.float64)
    order = torch.arange(len(probs))
    if reading == "cdf-probability-order":
        order = torch.sort(probs, descending=True, stable=True).indices
    cdf = probs[order].cumsum(0)
    target = u * float(cdf[-1])
    hit = cdf >= target if reading == "draw-ge" else cdf > target
    return int(order[int(hit.long().argmax())])


def position(mode: str, q: int, k: int, row: int, reading) -> int:
    p = ref.position(mode, q, k, row)
    return p - 1 if reading == "decode-missing-plus-one" and mode == "decode" else p
