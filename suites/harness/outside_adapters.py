"""Samplers written for the fingerprint's joint reading, each through the Python template
(harness/adapters/python_adapter.py) as a user would write one, with DeepInfer's parameter
checks and one choice of its own:

    inclusive          top-p keeps the tokens whose mass with them stays at most top_p (at
                       least one): a top-p rule that no value of the boundary axis describes
    probability        answers in probability space: the log of its float64 probabilities,
                       so a kept token whose probability underflows comes back removed
    probability-logit  the same, ranking the tokens by their scaled logit
    divides-by-t       DeepInfer's rule without its temperature-0 rule: 1 / T raises at T = 0,
                       which the template answers as an error naming this file's line
    ge-tail-16         two departures: top-p removes a token whose mass before is >= top_p, and
                       top_p = 1 with a top-k compares a float32 cumulative sum whose total is
                       added in sixteen lanes (the oracle's variant adds eight), so its tail cut
                       falls elsewhere
    shrunk-top-p       two departures, one unnamed: top-p removes a token whose mass before is
                       >= 0.9 * top_p, a rule no value of the boundary axis describes, and
                       top-k keeps every token tied with the k-th (topk_ties=keep_all)
    int32-top-k        DeepInfer's rule but for one check in two places, as SGLang has it:
                       validate accepts any positive top_k, and filter puts top_k in an int32
                       tensor, which rejects one above 2^31 - 1 as DeepInfer does
    unchecked          DeepInfer's rule, dividing by T, with no check of the logits: a quotient
                       that overflows is an infinity, and NaN or +inf is softmaxed as it comes
                       (most engines do so)
    frequency-ignored  the template's min-p and penalties, but for the frequency penalty, which
                       it takes and never applies: a bug no axis describes
    presence-per-occurrence  the template's, but the presence penalty is taken once per
                       occurrence, as the frequency penalty is: a port's bug (presence-per-occurrence)
    min-p-on-logits    the template's penalties, but min-p keeps the tokens whose scaled logit is
                       at least min_p times the largest: a scale no value of min_p_scale names,
                       and with logits below 0 a bar no token reaches, so its answer is NaN

Run as `exec:/usr/bin/python3 suites/harness/outside_adapters.py NAME`.
"""

import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "harness", "adapters"))
import python_adapter as template  # noqa: E402


def ranked_probabilities(logits, temperature, top_k, top_p, engine, by_logit):
    """DeepInfer's checks, then the scaled row (a float32 multiply by 1/T), its float64
    probabilities and the finite tokens in rank order (stable: ties in token order)."""
    temperature, top_k, top_p = template.deepinfer_params(temperature, top_k, top_p)
    logits = template.deepinfer_logits(logits, engine or {}, temperature)
    scaled = logits * (1.0 / temperature)
    probs = torch.softmax(scaled.double(), dim=0)
    ids = torch.nonzero(~torch.isinf(scaled)).flatten()
    key = scaled.double()[ids] if by_logit else probs[ids]
    return scaled, probs, ids[torch.sort(key, descending=True, stable=True).indices], top_k, top_p


def in_probability_space(probs, ranked, kept):
    """The log of the kept tokens' renormalized probabilities: 0 logs to -inf."""
    out = torch.zeros_like(probs)
    out[ranked[:kept]] = probs[ranked[:kept]] / probs[ranked[:kept]].sum()
    return torch.log(out)


def inclusive(logits, temperature, top_k, top_p, engine=None):
    """Answers in logit space, as DeepInfer does: the log-softmax of the kept scaled logits."""
    scaled, probs, ranked, top_k, top_p = ranked_probabilities(logits, temperature, top_k,
                                                                top_p, engine, False)
    with_token = torch.cumsum(probs[ranked], 0)
    kept = max(1, int((with_token <= top_p).sum())) if top_p < 1 else len(ranked)
    kept = ranked[:min(kept, top_k) if top_k != -1 else kept]
    masked = torch.full_like(probs, -torch.inf)
    masked[kept] = scaled.double()[kept]
    return torch.log_softmax(masked, dim=0)


def probability_space(by_logit):
    def sampler(logits, temperature, top_k, top_p, engine=None):
        _, probs, ranked, top_k, top_p = ranked_probabilities(logits, temperature, top_k,
                                                               top_p, engine, by_logit)
        before = torch.cumsum(probs[ranked], 0) - probs[ranked]
        kept = int((before <= top_p).sum()) if top_p < 1 else len(ranked)
        return in_probability_space(probs, ranked, min(kept, top_k) if top_k != -1 else kept)
    return sampler


def divides_by_t(logits, temperature, top_k, top_p, engine=None):
    scale = 1.0 / temperature
    return torch.log_softmax(logits.double() * scale, dim=0)


def float32_tail(scaled, ranked, lanes):
    """How many ranks a float32 top-p at top_p = 1 keeps: the exps rounded to float32, their
    total added in token order in `lanes` lanes combined pairwise, a float64 running sum of the
    probabilities rounded to float32 at each rank; a rank goes once that sum minus its own
    probability is > 1."""
    finite = ~torch.isinf(scaled)
    e = torch.exp(scaled.double() - scaled[finite].max().double()).float()
    ids = sorted(ranked.tolist())
    parts = [e[ids[j::lanes]].sum(dtype=torch.float32) if ids[j::lanes] else torch.tensor(0.0)
             for j in range(lanes)]
    while len(parts) > 1:
        parts = [parts[i] + parts[i + 1] for i in range(0, len(parts), 2)]
    p = e[ranked] / parts[0]
    running = torch.cumsum(p.double(), 0).float()
    over = torch.nonzero((running - p)[1:] > 1.0).flatten()
    return int(over[0]) + 1 if len(over) else len(ranked)


def ge_tail_16(logits, temperature, top_k, top_p, engine=None):
    scaled, probs, ranked, top_k, top_p = ranked_probabilities(logits, temperature, top_k,
                                                                top_p, engine, False)
    before = torch.cumsum(probs[ranked], 0) - probs[ranked]
    if top_p < 1:
        kept = max(1, int((before < top_p).sum()))
    else:
        kept = float32_tail(scaled, ranked, 16) if top_k != -1 else len(ranked)
    kept = ranked[:min(kept, top_k) if top_k != -1 else kept]
    masked = torch.full_like(probs, -torch.inf)
    masked[kept] = scaled.double()[kept]
    return torch.log_softmax(masked, dim=0)


def shrunk_top_p(logits, temperature, top_k, top_p, engine=None):
    scaled, probs, ranked, top_k, top_p = ranked_probabilities(logits, temperature, top_k,
                                                                top_p, engine, False)
    before = torch.cumsum(probs[ranked], 0) - probs[ranked]
    kept = max(1, int((before < 0.9 * top_p).sum())) if top_p < 1 else len(ranked)
    if top_k != -1 and top_k < kept:
        kept = top_k + int((probs[ranked[top_k:kept]] == probs[ranked[top_k - 1]]).sum())
    masked = torch.full_like(probs, -torch.inf)
    masked[ranked[:kept]] = scaled.double()[ranked[:kept]]
    return torch.log_softmax(masked, dim=0)


def any_positive_top_k(temperature, top_k, top_p):
    """DeepInfer's checks with no largest top_k."""
    big = top_k is not None and top_k > 2**31 - 1
    t, k, p = template.deepinfer_params(temperature, 1 if big else top_k, top_p)
    return t, top_k if big and k == 1 else k, p


def int32_top_k(logits, temperature, top_k, top_p, engine=None):
    if top_k is not None and top_k > 2**31 - 1:
        raise template.Rejected("top_k", "top_k does not fit the int32 tensor of top_ks")
    return TEMPLATE_FILTER(logits, temperature, top_k, top_p, engine)


def unchecked(logits, temperature, top_k, top_p, engine=None):
    temperature, top_k, top_p = template.deepinfer_params(temperature, top_k, top_p)
    scaled = logits.float() / torch.tensor(temperature, dtype=torch.float32)
    probs = torch.softmax(scaled.double(), dim=0)
    ranked = torch.sort(probs, descending=True, stable=True).indices
    before = torch.cumsum(probs[ranked], 0) - probs[ranked]
    kept = int((before <= top_p).sum()) if top_p < 1 else len(ranked)
    kept = ranked[:min(kept, top_k) if top_k != -1 else kept]
    masked = torch.full_like(probs, -torch.inf)
    masked[kept] = scaled.double()[kept]
    return torch.log_softmax(masked, dim=0)


def frequency_ignored(logits, options):
    return TEMPLATE_PENALTIES(logits, {**options, "frequency_penalty": 0.0})


def presence_per_occurrence(logits, options):
    return TEMPLATE_PENALTIES(logits, {**options, "presence_penalty": 0.0,
                                       "frequency_penalty": options["frequency_penalty"]
                                       + options["presence_penalty"]})


def min_p_on_logits(logits, temperature, top_k, top_p, engine=None, options=None):
    temperature, top_k, top_p = template.sampler_params(temperature, top_k, top_p)
    options = template.sampler_options(options or {})
    logits = template.deepinfer_logits(logits, engine or {}, temperature, options)
    scaled = logits * (1.0 / temperature)
    probs = torch.softmax(scaled.double(), dim=0)
    ids = torch.nonzero(~torch.isinf(scaled)).flatten()
    ranked = ids[torch.sort(probs[ids], descending=True, stable=True).indices]
    before = torch.cumsum(probs[ranked], 0) - probs[ranked]
    kept = int((before <= top_p).sum()) if top_p < 1 else len(ranked)
    kept = min(kept, top_k) if top_k != -1 else kept
    if options["min_p"] > 0:
        bar = options["min_p"] * scaled.double()[ranked[0]]
        kept = min(kept, int((scaled.double()[ranked] >= bar).sum()))
    masked = torch.full_like(probs, -torch.inf)
    masked[ranked[:kept]] = scaled.double()[ranked[:kept]]
    return torch.log_softmax(masked, dim=0)


TEMPLATE_FILTER = template.filter_logprobs
TEMPLATE_PENALTIES = template.penalized_logits
SAMPLERS = {"inclusive": inclusive, "probability": probability_space(False),
            "probability-logit": probability_space(True), "divides-by-t": divides_by_t,
            "ge-tail-16": ge_tail_16, "shrunk-top-p": shrunk_top_p, "unchecked": unchecked,
            "int32-top-k": int32_top_k, "min-p-on-logits": min_p_on_logits,
            "frequency-ignored": TEMPLATE_FILTER, "presence-per-occurrence": TEMPLATE_FILTER}
PENALTIES = {"frequency-ignored": frequency_ignored,
             "presence-per-occurrence": presence_per_occurrence}

if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in SAMPLERS:
        sys.exit(f"usage: outside_adapters.py {'|'.join(SAMPLERS)}")
    if sys.argv[1] == "int32-top-k":
        template.sampler_params = any_positive_top_k
    template.penalized_logits = PENALTIES.get(sys.argv[1], TEMPLATE_PENALTIES)
    template.filter_logprobs = SAMPLERS[sys.argv[1]]
    if sys.argv[1] not in (*PENALTIES, "min-p-on-logits"):
        template.SAMPLING_OPTIONS = []  # min-p and the penalties are not its to answer
    template.main()
