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
from dataclasses import dataclass, replace
from typing import Optional

import numpy as np
import torch

import axes
import float32 as fp32
import reference as ref


@dataclass(frozen=True)
class Reading:
    name: str  # the mutant's name in suites/mutants/catalogue.json
    axis: str  # the axis (oracle/ENGINES.md) or the statement it misreads
    seed_ref: str
    hint: str  # what an implementation whose answer matches most likely does
    ops: tuple  # the ops whose answers it can change
    rule: Optional[str] = None  # the axis value (oracle/sieve.h) it is, "axis=value", if one


# The axes a case can discriminate: the engine axes of oracle/sieve.h, then the statements of
# seed 000 on which engines do not differ.
AXES = axes.NAMES + ("topp_mass", "param_range",
                     "engine_order", "hash", "position", "speculate", "penalty_at",
                     "penalty_formula", "min_p")

FILTER_OPS = ("filter", "sample")
READINGS = (
    Reading("ge-boundary", "boundary", "000:17", ">= instead of > at the top-p boundary (a token "
            "whose mass before equals top_p is removed)", FILTER_OPS, "boundary=ge"),
    Reading("topp-inclusive-cumsum", "topp_mass", "000:17", "top-p counts the token's own "
            "probability in its mass (the unshifted cumulative sum)", FILTER_OPS),
    Reading("topk-first-renormalized", "topp_scope", "000:25-28", "top-k applied first and top-p "
            "measured on the renormalized top-k mass", FILTER_OPS, "topp_scope=after_topk"),
    Reading("reversed-ties", "topk_ties", "000:16", "equal probabilities ranked by descending "
            "token id", FILTER_OPS),
    Reading("topk-keeps-ties", "topk_ties", "000:18", "top-k keeps every token tied with the "
            "k-th", FILTER_OPS, "topk_ties=keep_all"),
    Reading("topk-off-by-one", "topk_ties", "000:18", "top-k keeps k + 1 tokens (removes rank > k "
            "instead of rank >= k)", FILTER_OPS),
    Reading("topp-one-still-cuts", "topp_mass", "000:17", "top-p still applied at top_p = 1: "
            "float32 masses that round above 1.0 cut the tail (skip top-p when top_p is 1)",
            FILTER_OPS),
    Reading("temperature-after-filters", "temperature_at", "000:15", "top-p and top-k see the "
            "unscaled distribution (temperature applied after the filters)", FILTER_OPS,
            "temperature_at=after"),
    Reading("divide-by-temperature", "temperature_op", "000:11", "logits divided by the float32 "
            "T instead of multiplied by the float32 1/T, so no tie that the rounded 1/T makes",
            FILTER_OPS, "temperature_op=divide"),
    Reading("t0-argmax", "t0", "000:9", "T below 1e-5 keeps the first argmax alone (equal logits "
            "do not share)", FILTER_OPS),
    Reading("t0-clamp-keeps-filters", "t0", "000:9", "T below 1e-5 is clamped, but top_p and "
            "top_k are not reset to 1 and -1", FILTER_OPS + ("validate",)),
    Reading("validation-after-clamp", "check_order", "000:63", "the temperature clamp runs "
            "before the checks, so T = 0 hides a bad top_p or top_k", FILTER_OPS + ("validate",),
            "check_order=t0_rule_first"),
    Reading("topk-zero-is-off", "top_k_zero", "000:32", "top_k = 0 taken as off instead of an "
            "error", FILTER_OPS + ("validate",), "top_k_zero=off"),
    Reading("blacklist-after-force-topk", "engine_order", "000:67-68", "force_topk applied "
            "before the blacklist, so a blacklisted token takes one of its N places", FILTER_OPS),
    Reading("force-topk-after-temperature", "engine_order", "000:67", "force_topk ranks the "
            "scaled float32 logits (temperature applied first), so a tie that 1/T makes goes to "
            "the lower id", FILTER_OPS),
    Reading("force-topk-after-softmax", "engine_order", "000:67", "force_topk applied after "
            "the softmax over the whole row, so top-p measures mass against every token, not "
            "the N kept", FILTER_OPS),
    Reading("blacklist-after-temperature", "engine_order", "000:68", "the blacklist applied "
            "after the logits are scaled, so a blacklisted logit that overflows float32 is an "
            "error", FILTER_OPS),
    Reading("blacklist-after-softmax", "engine_order", "000:68", "the blacklist applied after "
            "the softmax over the whole row, so a blacklisted token's probability counts in "
            "top-p's mass", FILTER_OPS),
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
    Reading("multiply-by-temperature", "temperature_op", "000:7", "logits multiplied by T "
            "instead of by 1/T, so a lower temperature flattens the row", FILTER_OPS),
    Reading("top-p-zero-is-off", "param_range", "000:32", "top_p = 0 taken as off (1) instead "
            "of an error", FILTER_OPS + ("validate",)),
    Reading("topk-above-vocab-errors", "param_range", "000:32", "a top_k larger than the "
            "vocabulary is an error (as torch.topk raises) instead of keeping every token",
            FILTER_OPS),
    Reading("blacklist-to-lowest-float", "engine_order", "000:68", "the blacklist writes the "
            "lowest float32 (-3.4e38) instead of -inf, so a blacklisted token keeps a finite "
            "logprob", FILTER_OPS),
    Reading("position-ignored", "hash", "000:34", "the draw ignores the position (as a "
            "generator seeded per request by the seed alone): every position draws position 0's "
            "uniform", ("uniform", "draw", "sample")),
    Reading("seed-low-32-bits", "hash", "000:61", "the seed is cut to its low 32 bits (an "
            "int32 or uint32 seed), so seeds that differ above bit 31 draw alike",
            ("uniform", "draw", "sample")),
    # Speculative verification (oracle/SPEC.md, "Speculative decoding").
    Reading("spec-accept-le", "spec_accept", "000:52", "the accept test is inclusive, u <= p / q "
            "(transformers' r_i <= p_i / q_i, vLLM's target / draft >= uniform), instead of "
            "u * q < p, so u = 0 accepts a token the target removes (p = 0)", ("speculate",),
            "spec_accept=le"),
    Reading("spec-q-zero-rejects", "spec_q_zero", "000:52", "a draft token the draft's own "
            "filter removed (q = 0) is rejected instead of accepted (vLLM's draft_prob > 0 "
            "guard)", ("speculate",), "spec_q_zero=reject"),
    Reading("spec-q-raw", "spec_q", "000:52", "q is the draft's raw softmax (temperature 1, "
            "no top-p or top-k), not the distribution it was sampled from", ("speculate",),
            "spec_q=raw"),
    Reading("spec-accept-case-0", "speculate", "000:52", "the accept test reuses the case-0 "
            "uniform instead of case 2", ("speculate",)),
    Reading("spec-resample-case-0", "speculate", "000:52", "the new sample after a rejection "
            "uses the case-0 uniform instead of case 1", ("speculate",)),
    Reading("spec-residual-from-p", "speculate", "000:52", "the token after a rejection is "
            "drawn from p instead of max(p - q, 0)", ("speculate",)),
    Reading("spec-residual-unclamped", "speculate", "000:52", "the residual p - q is not "
            "clamped at 0, so its negative entries pull the running sum down", ("speculate",)),
    Reading("spec-no-bonus", "speculate", "000:52", "no bonus token from the last target row "
            "when every draft is accepted", ("speculate",)),
    Reading("spec-chain-not-stopped", "speculate", "000:52", "the drafts after a rejection are "
            "still tested, each rejection replaced by its residual's draw", ("speculate",)),
    Reading("spec-unreached-rows-unchecked", "speculate", "000:52", "only the rows the chain "
            "reaches are checked, so a bad row after the stop is answered instead of an error",
            ("speculate",)),
    Reading("penalty-after-temperature", "penalty_at", "004:255-287", "the penalties are "
            "applied to the scaled logits (after temperature), not before it", FILTER_OPS),
    Reading("presence-per-occurrence", "penalty_formula", "004:20-21", "the presence penalty "
            "is subtracted once per occurrence of a token, as the frequency penalty is, not once",
            FILTER_OPS),
    Reading("repetition-divides-negative", "penalty_formula", "004:20-21", "the repetition "
            "penalty divides a negative logit too, raising it, instead of multiplying it",
            FILTER_OPS),
    Reading("penalty-window-ignored", "penalty_formula", "004:284-286", "penalty_last_n is "
            "ignored: every output token is counted", FILTER_OPS),
    Reading("penalty-ids-ignored", "penalty_formula", "004:284-286", "an output or prompt id "
            "outside the vocabulary is skipped instead of being an error", FILTER_OPS),
    Reading("min-p-absolute", "min_p", "004:255-287", "min-p removes a token whose "
            "probability is below min_p itself, not below min_p times the largest", FILTER_OPS),
) + tuple(
    # The other engine choices of oracle/sieve.h, each named by its axis value; the oracle's
    # variant `sieve serve --rule AXIS=VALUE` gives the same answers.
    Reading(rule, rule.split("=")[0], seed_ref, hint, ops, rule)
    for rule, seed_ref, hint, ops in (
        ("rank_key=logit", "000:16", "tokens are ranked by logit, so those whose probability "
         "underflows to 0 keep their logit order instead of token order", FILTER_OPS),
        ("topp_scope=ignored", "000:17", "top-p is not applied at all", FILTER_OPS),
        ("topp_ties=highest", "000:16-17", "the tokens tied at the top-p cut that stay are the "
         "highest ids (an ascending sort cut from its end)", FILTER_OPS),
        ("topp_ties=all", "000:16-17", "every token tied with the last one top-p keeps stays "
         "(a cut by value)", FILTER_OPS),
        ("topp_ties=unspecified", "000:16-17", "the tokens tied at the top-p cut that stay are "
         "neither the lowest nor the highest ids (an unstable sort)", FILTER_OPS),
        ("topk_ties=by_id_desc", "000:16,000:18", "the tokens tied with the k-th that stay are "
         "the highest ids", FILTER_OPS),
        ("topk_ties=unspecified", "000:16,000:18", "the tokens tied with the k-th that stay are "
         "neither the lowest nor the highest ids (an unstable sort or partition)", FILTER_OPS),
        ("temperature_op=shifted", "000:11", "the row's largest logit is subtracted before "
         "the multiply by the float32 1/T, so the difference rounds first and can tie tokens far "
         "below it (exllamav2's softmax_cpu)", FILTER_OPS),
        ("temperature_op=divide_float64", "000:11", "logits divided by the float64 T, each "
         "quotient rounded to float32 (transformers.js: a Float32Array divided in JavaScript): "
         "a float32 step from the product where T is no float32", FILTER_OPS),
        ("t0_below=below_1e-6", "000:9", "only T below 1e-6 takes the temperature-0 rule",
         FILTER_OPS + ("validate",)),
        ("t0_below=zero", "000:9", "only T = 0 takes the temperature-0 rule",
         FILTER_OPS + ("validate",)),
        ("t0_below=nonpositive", "000:9,000:63", "a negative temperature is accepted and takes "
         "the temperature-0 rule", FILTER_OPS + ("validate",)),
        ("t0_below=below_1e-7", "000:9,000:63", "only T below 1e-7 takes the temperature-0 rule, "
         "and a negative temperature is accepted and takes it too (candle, mistral.rs)",
         FILTER_OPS + ("validate",)),
        ("t0_below=zero_negative_scales", "000:9,000:11", "only T = 0 takes the temperature-0 "
         "rule, and a negative temperature is accepted and scales the logits, reversing them "
         "(transformers.js)", FILTER_OPS + ("validate",)),
        ("t0=argmax", "000:9", "T below 1e-5 is greedy: the first maximum alone, the logits "
         "not scaled (vLLM's rule)", FILTER_OPS + ("validate",)),
        ("t0=topk1", "000:9", "T below 1e-5 becomes T = 1 with top_k = 1 (SGLang's rule)",
         FILTER_OPS + ("validate",)),
        ("t0=reject", "000:9", "T below 1e-5 is rejected as an invalid temperature",
         FILTER_OPS + ("validate",)),
        ("check_order=t0_rule_top_k_first", "000:63", "the temperature clamp runs before the "
         "checks, and a bad top_k is reported before a bad top_p (transformers builds its top-k "
         "warper first)", FILTER_OPS + ("validate",)),
        ("temperature_floor=0.01", "000:9", "a temperature in (0, 0.01) is raised to 0.01 "
         "(vLLM's floor)", FILTER_OPS + ("validate",)),
        ("top_k_minus_one=error", "000:32", "an explicit top_k = -1 is rejected (only leaving "
         "top_k out means off)", FILTER_OPS + ("validate",)),
        ("explicit_top_p_one=error", "000:32", "an explicit top_p = 1 is rejected (only leaving "
         "top_p out means off: TGI's validation)", FILTER_OPS + ("validate",)),
        ("param_precision=float32", "000:63", "temperature and top_p are rounded to float32 "
         "before the checks (TGI's router parses them as f32)", FILTER_OPS + ("validate",)),
        ("top_k_max=none", "000:32", "a top_k above the int32 maximum is accepted (no largest: "
         "vLLM, SGLang, transformers)", FILTER_OPS + ("validate",)),
        ("top_k_vocab=error", "000:32", "a top_k of the vocabulary size or more is an error "
         "(MLX-LM's apply_top_k needs 0 < top_k < V)", FILTER_OPS),
        ("topp_one=float32_tail", "000:17", "top_p = 1 with a top-k set still compares a float32 "
         "cumulative sum, which cuts the tail of a peaked row", FILTER_OPS),
        ("logprobs=scaled", "000:70-72", "the returned logprob and top_logprobs are taken after "
         "temperature only, before top-p and top-k", ("sample",)),
        ("logprobs=raw", "000:70-72", "the returned logprob and top_logprobs are the "
         "log-softmax of the raw logits (before temperature and the filters)", ("sample",)),
        ("spec_empty_residual=first_token", "000:52", "after a rejection whose residual "
         "max(p - q, 0) is 0 everywhere, token 0 is committed whether p keeps it or not (vLLM's "
         "argmax over an all-zero residual)", ("speculate",)),
        ("spec_empty_residual=last_token", "000:52", "after a rejection whose residual "
         "max(p - q, 0) is 0 everywhere, the vocabulary's last token is committed whether p "
         "keeps it or not (SGLang's fallback)", ("speculate",)),
        ("penalty_order=repetition_first", "004:255-287", "the repetition penalty is applied "
         "before the frequency and presence penalties (vLLM's, llama.cpp's order), so it "
         "scales the logit they have not lowered yet", FILTER_OPS),
        ("penalty_tokens=repetition_prompt", "004:284-286", "the repetition penalty counts the "
         "prompt's tokens too (vLLM), while frequency and presence count the output only",
         FILTER_OPS),
        ("penalty_tokens=prompt", "004:284-286", "every penalty counts the prompt's tokens and "
         "the output's, the window being the last n of both (llama.cpp's server, TGI)",
         FILTER_OPS),
        ("min_p_scale=unscaled", "004:255-287", "min-p compares the probabilities at T = 1, "
         "before temperature (llama.cpp's chain, mlx-lm)", FILTER_OPS),
        ("min_p_order=first", "004:255-287", "min-p is applied first, and top-p measures the "
         "mass renormalized over the tokens min-p keeps (vLLM's order)", FILTER_OPS),
        ("min_p_boundary=remove_equal", "004:255-287", "min-p removes a token whose p equals "
         "min_p times the largest (a <= where ours is <)", FILTER_OPS),
        ("penalty_range=repetition_unbounded", "004:284-286", "a repetition penalty above 2 is "
         "accepted (vLLM, transformers: any repetition above 0)", FILTER_OPS + ("validate",)),
        ("penalty_range=unchecked", "004:284-286", "no finite min_p or penalty is an error "
         "(llama.cpp's library, transformers.js): min_p above 1 keeps one token",
         FILTER_OPS + ("validate",)),
        ("penalty_overflow=minus_inf", "004:284-286", "a penalized logit below float32's range "
         "becomes -inf and its token goes, instead of an overflow error (float32 arithmetic, "
         "unchecked, as every engine read computes it)", FILTER_OPS),
    ))
BY_NAME = {r.name: r for r in READINGS}
BY_RULE = {r.rule: r for r in READINGS if r.rule}
assert all(r.axis in AXES for r in READINGS)
assert all(r.rule.split("=")[1] in axes.VALUES[r.axis] for r in BY_RULE.values())

NONE = None  # the rule itself: no reading switched on


# ----------------------------------------------------------------------------- parameters


def refused_in_transit(top_p, top_k) -> bool:
    """What the protocol refuses before any rule's checks (harness/protocol/PROTOCOL.md): a
    top_p of -inf, which a request carries as null, and a top_k that is not a whole number."""
    return top_p == -math.inf or (isinstance(top_k, float) and not (
        math.isfinite(top_k) and top_k.is_integer()))


def bad_top_p(top_p) -> bool:
    return top_p != top_p or not 0 < top_p <= 1


def above_int32(top_k) -> bool:
    """A whole top_k above the int32 maximum (the top_k_max axis)."""
    return isinstance(top_k, (int, float)) and math.isfinite(top_k) and float(top_k).is_integer() \
        and top_k > ref.TOP_K_MAX


def bad_top_k(top_k) -> bool:
    try:
        ref.check_params(ref.Params(1.0, 1.0, top_k))
        return False
    except ref.SieveError:
        return True


T0_BELOW = {"t0_below=below_1e-6": lambda t: t < 1e-6, "t0_below=zero": lambda t: t == 0,
            "t0_below=nonpositive": lambda t: t <= 0, "t0_below=below_1e-7": lambda t: t < 1e-7,
            "t0_below=zero_negative_scales": lambda t: t == 0}


T0_READINGS = tuple(T0_BELOW) + ("t0=topk1", "t0=reject", "t0=argmax", "temperature_floor=0.01")


def _filters_checked(t, top_p, top_k) -> ref.Params:
    """The checks of 000:63 without the clamp: the temperature checked on its own."""
    checked = ref.check_params(ref.Params(1.0, top_p, top_k))
    return ref.Params(float(t), checked.top_p, checked.top_k)


def _other_t0(p: ref.Params, reading) -> Optional[ref.Params]:
    """The parameters under a reading of the temperature-0 rule or the floor, or None when the
    reading does not change them."""
    t, eps = p.temperature, ref.SAMPLING_EPS
    if reading in ("t0_below=nonpositive", "t0_below=below_1e-7") and -math.inf < t < 0:
        ref.check_params(ref.Params(1.0, p.top_p, p.top_k))
        return ref.Params(eps, 1.0, -1)
    if reading == "t0_below=zero_negative_scales" and -math.inf < t < 0:
        return _filters_checked(t, p.top_p, p.top_k)
    checked = ref.check_params(p)  # raises as the rule does
    if reading in T0_BELOW and t < eps and not T0_BELOW[reading](t):
        return _filters_checked(t, p.top_p, p.top_k)
    if reading == "t0=topk1" and t < eps:
        return ref.Params(1.0, _filters_checked(t, p.top_p, p.top_k).top_p, 1)
    if reading == "t0=reject" and t < eps:
        raise ref.SieveError("SIEVE_ETEMPERATURE", "invalid_params", "temperature")
    if reading == "t0=argmax" and t < eps:
        return ref.Params(0.0, 1.0, 1)
    if reading == "temperature_floor=0.01" and eps <= t < 0.01:
        return ref.Params(0.01, checked.top_p, checked.top_k)
    return None


def to_float32(x):
    """A float parameter rounded to float32 (an infinity beyond its range), as an engine that
    reads parameters as float32 holds it; anything else as it is."""
    if not isinstance(x, float) or not math.isfinite(x):
        return x
    with np.errstate(over="ignore"):
        return float(np.float32(x))


def check_params(p: ref.Params, reading: Optional[str]) -> ref.Params:
    """The parameters under a reading, checked as it checks them: temperature, top_p and top_k,
    then min-p and the penalties (penalty_range), kept through any clamp."""
    first = _check_first(ref.Params(p.temperature, p.top_p, p.top_k, p.explicit_k, p.explicit_p),
                         reading)
    _check_rest(p, reading)
    return replace(first, **p.rest())


# The parameters whose range penalty_range sets, each with a value inside it.
RANGED = {"min_p": 0.0, "frequency_penalty": 0.0, "presence_penalty": 0.0,
          "repetition_penalty": 1.0}


def _check_rest(p: ref.Params, reading: Optional[str]) -> None:
    """Min-p and the penalties as the reading checks them: under penalty_range=unchecked only a
    NaN or infinite value is an error, under repetition_unbounded any finite repetition above 2
    is accepted too; the window as the rule checks it."""
    rest = p.rest()
    if reading == "penalty_range=unchecked":
        rest.update({n: inside for n, inside in RANGED.items() if math.isfinite(rest[n])})
    r = rest["repetition_penalty"]
    if reading == "penalty_range=repetition_unbounded" and math.isfinite(r) and r > 2.0:
        rest["repetition_penalty"] = 1.0
    ref.check_params(ref.Params(**rest))


def _check_first(p: ref.Params, reading: Optional[str]) -> ref.Params:
    if reading == "param_precision=float32":
        p, reading = replace(p, temperature=to_float32(p.temperature),
                             top_p=to_float32(p.top_p)), None
    t, top_p, top_k = p.temperature, p.top_p, p.top_k
    if reading == "top_k_minus_one=error" and top_k == -1 and p.explicit_k:
        ref.check_params(ref.Params(t, top_p, 1))
        raise ref.SieveError("SIEVE_ETOPK", "invalid_params", "top_k")
    if (reading == "explicit_top_p_one=error" and top_p == 1 and p.explicit_p
            and not refused_in_transit(top_p, top_k)):
        ref.check_params(ref.Params(t, 0.5, -1))  # the temperature is checked first
        raise ref.SieveError("SIEVE_ETOPP", "invalid_params", "top_p")
    other = _other_t0(p, reading) if reading in T0_READINGS else None
    if other is not None:
        return other
    t0_first = reading in ("validation-after-clamp", "check_order=t0_rule_top_k_first")
    if t0_first and 0 <= t < ref.SAMPLING_EPS and not refused_in_transit(top_p, top_k):
        t, top_p, top_k = ref.SAMPLING_EPS, 1.0, -1
    if (reading == "check_order=t0_rule_top_k_first" and bad_top_p(top_p) and bad_top_k(top_k)
            and not refused_in_transit(top_p, top_k)):
        ref.check_params(ref.Params(t, 1.0, top_k))  # the temperature, then top_k's error
    if reading == "top_k_max=none" and above_int32(top_k) and not refused_in_transit(top_p, top_k):
        checked = ref.check_params(ref.Params(t, top_p, ref.TOP_K_MAX))  # as many: every token
        return checked if checked.top_k == -1 else replace(checked, top_k=top_k)
    if reading == "topk-zero-is-off" and top_k == 0:
        top_k = -1
    if reading == "top-p-zero-is-off" and top_p == 0:
        top_p = 1.0
    if reading == "t0-clamp-keeps-filters" and 0 <= t < ref.SAMPLING_EPS:
        checked = ref.check_params(ref.Params(1.0, top_p, top_k))
        return ref.Params(ref.SAMPLING_EPS, checked.top_p, checked.top_k)
    return ref.check_params(ref.Params(t, top_p, top_k))


# ----------------------------------------------------------------------------- the filter


LOWEST_FLOAT32 = -3.4028234663852886e38


def _engine(logits: torch.Tensor, engine: ref.Engine, reading) -> torch.Tensor:
    if reading == "blacklist-to-lowest-float" and engine.blacklist:
        ref.apply_engine(logits, engine)  # the engine's checks, in their order
        out = logits.clone()
        out[list(engine.blacklist)] = LOWEST_FLOAT32
        return ref.apply_engine(out, ref.Engine(force_topk=engine.force_topk))
    if reading != "blacklist-after-force-topk" or not engine.force_topk:
        return ref.apply_engine(logits, engine)
    out = ref.apply_engine(logits, ref.Engine(force_topk=engine.force_topk))
    return ref.apply_engine(out, ref.Engine(blacklist=engine.blacklist))


# An engine step moved after the step that follows it: the step, and where it moves to.
MOVED_ENGINE_STEPS = {"force-topk-after-temperature": ("force_topk", "temperature"),
                      "force-topk-after-softmax": ("force_topk", "softmax"),
                      "blacklist-after-temperature": ("blacklist", "temperature"),
                      "blacklist-after-softmax": ("blacklist", "softmax")}


def _engine_steps(logits: torch.Tensor, engine: ref.Engine, t: float, reading):
    """(the row that temperature scales, the row after every engine step): the same row, but
    when the reading moves an engine step after temperature or the softmax (the blacklist then
    runs after force_topk)."""
    step, to = MOVED_ENGINE_STEPS.get(reading, (None, None))
    if step is None or not (engine.force_topk if step == "force_topk" else engine.blacklist):
        x = _engine(logits, engine, reading)
        return x, x
    ref.apply_engine(logits, engine)  # the engine's checks, in their order
    if step == "blacklist":
        before = ref.apply_engine(logits, ref.Engine(force_topk=engine.force_topk))
        return before, ref.apply_engine(before, ref.Engine(blacklist=engine.blacklist))
    before = ref.apply_engine(logits, ref.Engine(blacklist=engine.blacklist))
    key = scaled_row(before, t, None) if to == "temperature" and t != 0.0 else before
    after = before.clone()
    if engine.force_topk < len(before):
        after[torch.sort(key, descending=True, stable=True).indices[engine.force_topk:]] = -math.inf
    return before, after


def scaled_row(x: torch.Tensor, t: float, reading) -> torch.Tensor:
    """The float32 scaled logits: x * (float32)(1/T), x / (float32)T, x / T rounded to float32,
    or (x - max) times (float32)(1/T), as the reading scales."""
    finite = ~torch.isinf(x)
    if reading == "divide-by-temperature":
        s = x / torch.tensor(t, dtype=torch.float32)
    elif reading == "temperature_op=divide_float64":
        s = (x.double() / t).float()
    elif reading == "temperature_op=shifted":
        s = (x - x[finite].max()) * (1.0 / t)
    elif reading == "multiply-by-temperature":
        s = x * torch.tensor(t, dtype=torch.float32)
    else:
        s = x * (1.0 / t)
    return torch.where(finite, s, x)


def _rank(p: torch.Tensor, finite: torch.Tensor, reading) -> torch.Tensor:
    ids = torch.nonzero(finite).flatten()
    if reading == "reversed-ties":
        ids = ids.flip(0)
    return ids[torch.sort(p[ids], descending=True, stable=True).indices]


def _scrambled(ids: list) -> list:
    """The order of an unstable sort as the oracle's variant has it: by SplitMix64 of the id."""
    return sorted(ids, key=lambda i: _mix(i, None))


TIE_READINGS = {"topp_ties=highest": "desc", "topp_ties=all": "all",
                "topp_ties=unspecified": "scramble", "topk_ties=by_id_desc": "desc",
                "topk_ties=unspecified": "scramble", "topk-keeps-ties": "all"}


def _cut_ties(pr: torch.Tensor, ranked: list, keep: int, n: int, choice) -> int:
    """A cut keeping the first `keep` of `n` ranks whose tied tokens run past it: reorders that
    run of `ranked` in place (highest ids first, or scrambled), or keeps all of it."""
    if choice is None or keep == 0 or keep >= n or pr[ranked[keep]] != pr[ranked[keep - 1]]:
        return keep
    first, end = keep - 1, keep + 1
    while first > 0 and pr[ranked[first - 1]] == pr[ranked[keep]]:
        first -= 1
    while end < n and pr[ranked[end]] == pr[ranked[keep]]:
        end += 1
    if choice == "all":
        return end
    run = ranked[first:end]
    ranked[first:end] = sorted(run, reverse=True) if choice == "desc" else _scrambled(run)
    ranked[first:keep] = sorted(ranked[first:keep])  # the next cut makes its own tie choice
    return keep


def _lane_total(e: np.ndarray, ids: list, lanes: int) -> np.float32:
    """The float32 sum of e over ids in token order, in `lanes` lanes combined pairwise."""
    order = sorted(ids)
    parts = [np.cumsum(e[order[j::lanes]], dtype=np.float32)[-1] if order[j::lanes] else
             np.float32(0) for j in range(lanes)]
    while len(parts) > 1:
        parts = [np.float32(parts[i] + parts[i + 1]) for i in range(0, len(parts), 2)]
    return parts[0]


def _float32_tail(s: torch.Tensor, finite: torch.Tensor, ranked: list, n: int, lanes: int) -> int:
    """top_p = 1 as a float32 comparison (the oracle's variant, oracle/filter.c): a float32
    softmax total over the first n ranks' tokens, added in token order in `lanes` lanes; a
    float64 running sum rounded to float32 at each rank; a rank goes once that sum minus its
    own probability is > 1."""
    x = s.numpy().astype(np.float32)
    m = np.float32(x[finite.numpy()].max())
    shifted = np.where(finite.numpy(), x - m, np.float32(-np.inf)).astype(np.float64)
    e = np.exp(shifted).astype(np.float32)  # exp in float64, rounded: as oracle/filter.c
    total = _lane_total(e, ranked[:n], lanes)
    p = (e[ranked[:n]] / total).astype(np.float32)
    running = np.cumsum(p.astype(np.float64)).astype(np.float32)
    over = np.nonzero((running - p)[1:] > np.float32(1.0))[0]
    return int(over[0]) + 1 if len(over) else n


def _top_p_count(pr: torch.Tensor, top_p: float, reading) -> int:
    n = len(pr)
    if top_p >= 1.0 or n <= 1 or reading == "topp_scope=ignored":
        return n
    cum = torch.cumsum(pr, 0)
    before = torch.cat([torch.zeros(1, dtype=torch.float64), cum[:-1]])
    if reading == "ge-boundary":
        keep = (before < top_p) | (torch.arange(n) == 0)
    elif reading == "topp-inclusive-cumsum":
        keep = (cum <= top_p) | (torch.arange(n) == 0)
    else:
        keep = before <= top_p
    return int(keep.sum())


def _keep_count(p: torch.Tensor, ranked: list, params: ref.Params, reading, row,
                lanes=8) -> int:
    """How many ranks stay; tie readings reorder `ranked` in place. `row` is (scaled, finite)."""
    top_p, top_k, n = params.top_p, params.top_k, len(ranked)
    pr = p[ranked]
    if reading == "topk-first-renormalized":
        k = n if top_k == -1 else min(top_k, n)
        q = pr[:k] / pr[:k].sum()
        before = torch.cat([torch.zeros(1, dtype=torch.float64), torch.cumsum(q, 0)[:-1]])
        return int((before <= top_p).sum()) if top_p < 1.0 else k
    choice = TIE_READINGS.get(reading)
    kept = _top_p_count(pr, top_p, reading)
    kept = _cut_ties(p, ranked, kept, n, choice if reading.startswith("topp_ties") else None) \
        if reading else kept
    if reading == "topp_one=float32_tail" and top_p >= 1.0 and top_k != -1:
        kept = _float32_tail(*row, ranked, n, lanes)
    if top_k != -1 and top_k < kept:
        k = top_k + (reading == "topk-off-by-one")
        topk_choice = choice if reading and not reading.startswith("topp_ties") else None
        kept = _cut_ties(p, ranked, k, kept, topk_choice)
    return kept


def _last_n(p: ref.Params, ids: tuple, v: int) -> torch.Tensor:
    """How many times each token occurs in the last penalty_last_n of `ids` (-1: all)."""
    n = len(ids) if p.penalty_last_n < 0 else min(p.penalty_last_n, len(ids))
    counts = torch.zeros(v, dtype=torch.int64)
    for i in ids[len(ids) - n:]:
        counts[i] += 1
    return counts


def _engine_penalties(x: torch.Tensor, p: ref.Params, reading) -> torch.Tensor:
    """The penalties as another engine applies them (PENALTY_AXIS_READINGS): the repetition
    penalty first, each step rounded to float32; or the prompt's tokens counted, by the
    repetition penalty or by all three."""
    v = x.shape[0]
    ref.penalty_counts(p, v)  # the checks, as the rule makes them
    with_prompt = p.prompt_ids + p.output_ids
    counts = _last_n(p, with_prompt if reading == "penalty_tokens=prompt" else p.output_ids, v)
    repeats = _last_n(p, with_prompt, v) if reading == "penalty_tokens=repetition_prompt" \
        else counts
    additive = torch.where(counts > 0, counts.double() * p.frequency_penalty
                           + p.presence_penalty, torch.zeros(v, dtype=torch.float64))
    r = p.repetition_penalty

    def repeated(y):
        return torch.where(repeats > 0, torch.where(y < 0, y * r, y / r).float().double(), y)

    y = x.double()
    if reading == "penalty_order=repetition_first":
        y = (repeated(y) - additive).float().double()
    else:
        y = repeated((y - additive).float().double())
    finite = ~torch.isinf(x)
    return ref.overflow_checked(torch.where(finite, y.float(), x),
                                ((counts > 0) | (repeats > 0)) & finite)


# Other engines' penalties (oracle/sieve.h, penalty_order and penalty_tokens).
PENALTY_AXIS_READINGS = ("penalty_order=repetition_first", "penalty_tokens=repetition_prompt",
                         "penalty_tokens=prompt")


def _penalized(x: torch.Tensor, p: ref.Params, reading) -> torch.Tensor:
    """Seed 004's penalties as the reading computes them: the rule's (reference.py), another
    engine's (PENALTY_AXIS_READINGS), or with one of the misreadings of PENALTY_READINGS."""
    if reading in PENALTY_AXIS_READINGS:
        return _engine_penalties(x, p, reading)
    if reading not in PENALTY_READINGS:
        return ref.apply_penalties(x, p, minus_inf=reading == "penalty_overflow=minus_inf")
    v = x.shape[0]
    if reading == "penalty-ids-ignored":
        p = replace(p, output_ids=tuple(i for i in p.output_ids if 0 <= i < v),
                    prompt_ids=tuple(i for i in p.prompt_ids if 0 <= i < v))
    counts = ref.penalty_counts(p, v)  # the checks, as the rule makes them
    if reading == "penalty-window-ignored":
        counts = ref.penalty_counts(replace(p, penalty_last_n=-1), v)
    presence = counts.double() * p.presence_penalty if reading == "presence-per-occurrence" \
        else p.presence_penalty
    hit = (counts > 0) & ~torch.isinf(x)
    shifted = (x.double() - (counts.double() * p.frequency_penalty + presence)).float().double()
    negative = shifted < 0 if reading != "repetition-divides-negative" else torch.zeros_like(hit)
    out = torch.where(hit, torch.where(negative, shifted * p.repetition_penalty,
                                       shifted / p.repetition_penalty).float(), x)
    return ref.overflow_checked(out, hit)


# The misreadings of the penalty formula, the tokens it counts and its checks.
PENALTY_READINGS = ("presence-per-occurrence", "repetition-divides-negative",
                    "penalty-window-ignored", "penalty-ids-ignored")


def _min_p_count(probs: torch.Tensor, ranked: list, min_p: float, reading) -> int:
    """How many ranks min-p leaves (ours): those down to the first whose probability is below
    min_p times the largest. Misread, those at least min_p itself, and the first always; under
    min_p_boundary=remove_equal, down to the first at or below the bar. `probs` are the ones
    min-p compares (at T = 1 under min_p_scale=unscaled), `ranked` the filters' order."""
    pr = probs[ranked]
    if reading == "min-p-absolute":
        return max(1, int((pr >= min_p).sum()))
    bar = min_p * float(pr.max())
    goes = pr <= bar if reading == "min_p_boundary=remove_equal" else pr < bar
    goes[0] = False
    return int(goes.nonzero()[0]) if bool(goes.any()) else len(ranked)


def _min_p_first(probs: torch.Tensor, ranked: list, p: ref.Params, reading, row) -> int:
    """min_p_order=first: min-p on every rank, then top-p and top-k on what it keeps, top-p
    measuring the mass renormalized over it (the oracle's variant divides each mass before by
    the kept total)."""
    m = _min_p_count(probs, ranked, p.min_p, reading)
    if m == len(ranked) or p.top_p >= 1.0:
        return min(m, _keep_count(probs, ranked, p, None, row))
    pr = probs[ranked[:m]]
    before = torch.cat([torch.zeros(1, dtype=torch.float64), torch.cumsum(pr, 0)[:-1]])
    kept = int((before / float(torch.cumsum(pr, 0)[-1]) <= p.top_p).sum())
    return kept if p.top_k == -1 else min(kept, p.top_k)


@dataclass
class Filtered:
    logprobs: torch.Tensor  # float64 [V], -inf where removed
    scaled: torch.Tensor  # float32 [V], the scaled logits the logprobs come from
    summed: Optional[int] = None  # terms of the log-softmax's sum, when not the kept tokens


def filter_row(logits: torch.Tensor, params: ref.Params, engine: ref.Engine, reading,
               lanes=8) -> Filtered:
    """The filter under a reading; raises ref.SieveError as the rule does. For
    topp-one-still-cuts see one_still_cuts; `lanes` is the float32 total's for
    topp_one=float32_tail."""
    p = check_params(params, reading)
    logits = logits.to(torch.float32)
    ref.check_logits(logits)
    if reading == "topk-above-vocab-errors" and p.top_k > logits.shape[0]:
        raise ref.SieveError("SIEVE_ETOPK", "invalid_params", "top_k")
    if reading == "top_k_vocab=error" and p.top_k != -1 and p.top_k >= logits.shape[0]:
        raise ref.SieveError("SIEVE_ETOPK", "invalid_params", "top_k")
    before, x = _engine_steps(logits, engine, p.temperature, reading)
    late = reading == "penalty-after-temperature"
    if not late:
        before, x = _penalized(before, p, reading), _penalized(x, p, reading)
    finite = ~torch.isinf(x)
    if not bool(finite.any()):
        raise ref.SieveError("SIEVE_ENOFINITE", "invalid_logits", "logits")
    s = scaled_row(x, p.temperature, reading) if p.temperature != 0.0 else x
    if late:
        s = _penalized(s, p, reading)
    scaled_before = scaled_row(before, p.temperature, reading) if p.temperature != 0.0 else before
    if not bool(torch.isfinite(scaled_before[~torch.isinf(before)]).all()):
        raise ref.SieveError("SIEVE_EOVERFLOW", "invalid_logits", "logits")
    s64 = s.to(torch.float64)
    greedy = p.temperature == 0.0  # t0=argmax: the first maximum alone
    after = reading == "temperature-after-filters" or greedy
    ranking = x.to(torch.float64) if after else s64
    probs = torch.softmax(ranking, 0)
    if MOVED_ENGINE_STEPS.get(reading, (0, 0))[1] == "softmax" and not after:
        probs = torch.where(finite, torch.softmax(scaled_before.to(torch.float64), 0), 0.0)
    ranked = _rank(ranking if reading == "rank_key=logit" else probs, finite, reading).tolist()
    kept = 1 if greedy else _keep_count(probs, ranked, p, reading, (s, finite), lanes)
    if reading == "t0-argmax" and params.temperature < ref.SAMPLING_EPS:
        kept = 1
    if p.min_p > 0.0 and reading == "min_p_order=first" and not greedy:
        kept = _min_p_first(probs, ranked, p, reading, (s, finite))
    elif p.min_p > 0.0:
        unscaled = reading == "min_p_scale=unscaled" and not after
        compared = torch.where(finite, torch.softmax(x.double(), 0), 0.0) if unscaled else probs
        kept = min(kept, _min_p_count(compared, ranked, p.min_p, reading))
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
    if reading == "seed-low-32-bits":
        seed &= 0xFFFFFFFF
    if reading == "position-ignored":
        position = 0
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


# ----------------------------------------------------------------------------- speculate


def _parts(reading):
    """The reading as the filter, the hash and the draw of a speculative step see it: a reading
    of those ops changes the rows, the uniforms or the bonus draw (None where it does not)."""
    r = BY_NAME.get(reading)
    return tuple(reading if r and op in r.ops else None for op in ("filter", "uniform", "draw"))


def _residual_draw(p: torch.Tensor, q: torch.Tensor, u: float, reading, drawn) -> int:
    """The draw after a rejection, by the cdf in token order; a residual of total 0 is drawn
    from p by the draw (`drawn`, the draw's own reading)."""
    if reading == "spec-residual-from-p":
        return draw(p, u, None)
    clamped = torch.clamp(p - q, min=0.0)
    r = p - q if reading == "spec-residual-unclamped" else clamped
    if float(clamped.sum()) == 0.0 and reading == "spec_empty_residual=first_token":
        return 0
    if float(clamped.sum()) == 0.0 and reading == "spec_empty_residual=last_token":
        return len(p) - 1
    if float(clamped.sum()) == 0.0:
        return draw(p, u, drawn)
    cdf = r.cumsum(0)
    hit = cdf > u * float(clamped.cumsum(0)[-1])
    return int(hit.long().argmax()) if bool(hit.any()) else len(r) - 1


def speculate(target_rows, tokens, draft_rows, tp: ref.Params, dp: ref.Params, seed: int,
              pos: int, engine: ref.Engine, reading) -> dict:
    """The speculate answer under a reading (accepted, tokens, bonus, steps), written apart from
    reference.speculate; raises ref.SieveError as the rule does."""
    mask, v = ref.MASK64, target_rows[0].shape[0]
    filtered, hashed, drawn = _parts(reading)
    if not 1 <= len(tokens) <= ref.DRAFT_MAX:
        raise ref.SieveError("SIEVE_EDRAFT", "invalid_request", "draft")
    check_params(tp, filtered)
    if draft_rows is not None:
        check_params(dp, filtered)
    raw = ref.Params(1.0, 1.0, -1) if reading == "spec-q-raw" else dp

    def row_p(rows, j, params):
        return torch.exp(filter_row(rows[j], params, engine, filtered).logprobs)

    lazy = reading == "spec-unreached-rows-unchecked"  # rows filtered when the chain gets there
    target = None if lazy else [row_p(target_rows, j, tp) for j in range(len(target_rows))]
    draft = None if lazy or draft_rows is None else [
        row_p(draft_rows, j, raw) for j in range(len(draft_rows))]
    if any(not 0 <= x < v for x in tokens):
        raise ref.SieveError("SIEVE_EDRAFTTOKEN", "invalid_request", "draft.tokens")
    out, steps, accepted = [], [], 0
    for j, x in enumerate(tokens):
        p = target[j] if target else row_p(target_rows, j, tp)
        q = (draft[j] if draft else row_p(draft_rows, j, raw)) if draft_rows is not None else \
            torch.zeros(v, dtype=torch.float64).index_fill_(0, torch.tensor([x]), 1.0)
        u = uniform(seed, (pos + j) & mask, 0 if reading == "spec-accept-case-0" else 2, "main",
                    hashed)
        px, qx = float(p[x]), float(q[x])
        # The inclusive test as engines write it, a division: +inf at q = 0, NaN (rejects) at
        # p = q = 0.
        inclusive = px > 0 if qx == 0 else u <= px / qx
        ok = inclusive if reading == "spec-accept-le" else (u * qx < px)
        if reading == "spec-q-zero-rejects" and qx == 0:
            ok = False
        ratio = 0.0 if px == 0 else math.inf if qx == 0 else px / qx
        steps.append({"accepted": ok, "u": u, "ratio": ratio})
        if ok:
            accepted += 1
            out.append(x)
            continue
        u1 = uniform(seed, (pos + j) & mask, 0 if reading == "spec-resample-case-0" else 1, "main",
                     hashed)
        out.append(_residual_draw(p, q, u1, reading, drawn))
        if reading != "spec-chain-not-stopped":
            return {"accepted": accepted, "tokens": out, "bonus": False, "steps": steps}
    if steps[-1]["accepted"] and reading != "spec-no-bonus":
        n = len(tokens)
        last = torch.exp(filter_row(target_rows[n], tp, engine, filtered).logprobs)
        out.append(draw(last, uniform(seed, (pos + n) & mask, 0, "main", hashed), drawn))
        return {"accepted": accepted, "tokens": out, "bonus": True, "steps": steps}
    return {"accepted": accepted, "tokens": out, "bonus": False, "steps": steps}
