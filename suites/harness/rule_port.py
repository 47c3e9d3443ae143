"""A float32 PyTorch port of any rule sieve's axes describe, written apart from the oracle from
the values' descriptions (`sieve axes`) the way an engine writes its sampler: float32 scaling,
a float32 softmax, a stable sort, float32 running masses. It answers hello, validate and filter
through the Python template (harness/adapters/python_adapter.py), so the axes of sample and
speculate (logprobs, draw, spec_*) are not its to answer, nor are min-p and the penalties (its
hello lists no sampling option), and the fixtures of those are skipped. It reads a top_p left out apart from an explicit 1, which the template does not.

    rule_port.py [AXIS=VALUE,...]     (DeepInfer's rule when none is given)

Run as `exec:/usr/bin/python3 suites/harness/rule_port.py RULE`: the diagnosis module holds the fit
of `sieve run` and the fingerprint to giving each profile's rule back from it.
"""

import math
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "harness", "adapters"))
import python_adapter as template  # noqa: E402
from python_adapter import Rejected  # noqa: E402

# DeepInfer's value of each axis this port answers; sample's and speculate's are not its own.
DEEPINFER = {"rank_key": "probability", "topp_scope": "full", "boundary": "gt",
             "topp_ties": "lowest", "topk_ties": "by_id", "temperature_at": "before",
             "temperature_op": "reciprocal", "t0_below": "below_1e-5", "t0": "clamp",
             "check_order": "checks_first", "temperature_floor": "none", "top_k_zero": "error",
             "top_k_minus_one": "off", "top_k_vocab": "all", "top_k_max": "int32",
             "param_precision": "float64", "explicit_top_p_one": "off", "topp_one": "off"}
RULE = dict(DEEPINFER)


def axis(name):
    return RULE[name]


# ------------------------------------------------------------------------------ parameters


def takes_t0_rule(t):
    below = axis("t0_below")
    limit = {"below_1e-5": t < 1e-5, "below_1e-6": t < 1e-6, "below_1e-7": t < 1e-7,
             "zero": t == 0, "zero_negative_scales": t == 0, "nonpositive": t <= 0}
    return limit[below]


def t0_rule(t, k, p):
    """What the temperature-0 rule makes of the parameters."""
    rule = axis("t0")
    if rule == "reject":
        raise Rejected("temperature", "the temperature is below what this engine samples at")
    return {"clamp": (1e-5, -1, 1.0), "argmax": (0.0, 1, 1.0), "topk1": (1.0, 1, p)}[rule]


def check_filters(k, p):
    bad_p = not 0 < p <= 1
    bad_k = not (k == -1 or 1 <= k <= 2**31 - 1 or (k >= 1 and axis("top_k_max") == "none"))
    if bad_k and (not bad_p or axis("check_order") == "t0_rule_top_k_first"):
        raise Rejected("top_k", "top_k must be -1 or an integer in [1, 2^31-1]")
    if bad_p:
        raise Rejected("top_p", "top_p must be in (0, 1]")


PLAIN_PARAMS = template.request_params


def request_params(params):
    """The template's reading of the parameters, with a top_p left out as None: this port tells
    it from an explicit 1."""
    t, k, p = PLAIN_PARAMS(params)
    return t, k, p if "top_p" in params else None


def rule_params(temperature, top_k, top_p):
    """The rule's checks and normalization, in its order; a greedy temperature is (0.0, 1, 1.0)."""
    left_out = top_p is None
    top_p = 1.0 if left_out else top_p
    if axis("param_precision") == "float32":
        temperature, top_p = (float(torch.tensor(x, dtype=torch.float32)) if math.isfinite(x)
                              else x for x in (temperature, top_p))
    if top_p == 1 and not left_out and axis("explicit_top_p_one") == "error":
        top_p = 0.0  # rejected where the rule checks top_p
    k = -1 if top_k is None else top_k
    if k == 0 and axis("top_k_zero") == "off":
        k = -1
    elif top_k == -1 and axis("top_k_minus_one") == "error":
        k = 0  # rejected where the rule checks top_k
    negative = axis("t0_below") in ("nonpositive", "zero_negative_scales", "below_1e-7")
    if not math.isfinite(temperature) or (temperature < 0 and not negative):
        raise Rejected("temperature", "temperature must be a finite number >= 0")
    t, t0 = temperature, takes_t0_rule(temperature)
    first = t0 and axis("check_order") != "checks_first"
    if first:
        t, k, top_p = t0_rule(t, k, top_p)
    check_filters(k, top_p)
    if t0 and not first:
        t, k, top_p = t0_rule(t, k, top_p)
    elif not t0 and 0 < t < 0.01 and axis("temperature_floor") == "0.01":
        t = 0.01
    return t, k, top_p


# ---------------------------------------------------------------------------------- filter


def scaled_row(logits, t):
    """The logits at temperature t in float32; an overflow is the logits' error."""
    finite = ~torch.isinf(logits)
    if axis("temperature_op") == "shifted":  # the largest subtracted first, at T = 1 too
        out = torch.where(finite, (logits - logits[finite].max()) * (1.0 / t), logits)
    elif t == 1.0:
        return logits.clone()
    elif axis("temperature_op") == "divide":
        out = logits / torch.tensor(t, dtype=torch.float32)
    elif axis("temperature_op") == "divide_float64":
        out = (logits.double() / t).float()
    else:
        out = logits * (1.0 / t)
    if torch.isinf(out[finite]).any():
        raise Rejected("logits", "a scaled logit overflows float32")
    return out


class Ranked:
    """The finite tokens in rank order (a stable sort: ties in token order) with their float32
    probabilities, and what ties them."""

    def __init__(self, scaled):
        ids = torch.nonzero(~torch.isinf(scaled)).flatten()
        self.probs = torch.softmax(scaled, dim=0)
        self.by_logit = axis("rank_key") == "logit"
        self.key = scaled if self.by_logit else self.probs
        order = torch.sort(self.key[ids], descending=True, stable=True).indices
        self.ids = ids[order].tolist()

    def tied(self, i, j):
        return bool(self.key[self.ids[i]] == self.key[self.ids[j]])

    def cut_ties(self, keep, n, choice):
        """Keeps `keep` of the first n ranks where the tokens tied with the last one kept run
        past it: the lowest ids, the highest, all of the run, or ids of a shuffle's choosing."""
        if keep == 0 or keep >= n or not self.tied(keep, keep - 1):
            return keep
        first, end = keep - 1, keep + 1
        while first > 0 and self.tied(first - 1, keep):
            first -= 1
        while end < n and self.tied(end, keep):
            end += 1
        if choice in ("all", "keep_all"):
            return end
        run = self.ids[first:end]
        if choice in ("highest", "by_id_desc"):
            run = run[::-1]
        elif choice == "unspecified":  # an unstable sort's order: a fixed shuffle
            shuffle = torch.randperm(len(run), generator=torch.Generator().manual_seed(7))
            run = [run[i] for i in shuffle]
        self.ids[first:end] = sorted(run[:keep - first]) + sorted(run[keep - first:])
        return keep

    def masses_before(self, n):
        p = self.probs[self.ids[:n]]
        return torch.cat([torch.zeros(1), torch.cumsum(p, 0)[:-1]]), p

    def top_p(self, n, top_p, renormalize):
        """How many of the first n ranks top-p keeps: a token goes when the float32 mass before
        it passes top_p (> or >=), or at top_p = 1 with the float32 tail, passes 1."""
        if axis("topp_scope") == "ignored":
            return n
        before, p = self.masses_before(n)
        if top_p >= 1:
            if axis("topp_one") != "float32_tail":
                return n
            over = before[1:] > 1.0
        else:
            share = before / p.sum() if renormalize else before
            over = share[1:] >= top_p if axis("boundary") == "ge" else share[1:] > top_p
        cut = torch.nonzero(over).flatten()
        keep = int(cut[0]) + 1 if len(cut) else n
        return self.cut_ties(keep, n, axis("topp_ties"))

    def top_k(self, kept, k):
        if k == -1 or k >= kept:
            return kept
        return self.cut_ties(k, kept, axis("topk_ties"))

    def keep(self, k, top_p):
        n = len(self.ids)
        if top_p >= 1 and k == -1:
            return n
        if axis("topp_scope") == "after_topk":
            return self.top_p(self.top_k(n, k), top_p, True)
        return self.top_k(self.top_p(n, top_p, False), k)


def port_filter(logits, temperature, top_k, top_p, engine=None):
    t, k, top_p = rule_params(temperature, top_k, top_p)
    greedy = t == 0.0
    after = greedy or (t != 1.0 and axis("temperature_at") == "after")
    logits = template.deepinfer_logits(logits, engine or {}, 1.0)  # scaled_row checks overflow
    if k != -1 and k >= len(logits) and axis("top_k_vocab") == "error":
        raise Rejected("top_k", "top_k must be below the vocabulary size")
    ranked = Ranked(scaled_row(logits, 1.0 if after else t))
    kept = ranked.ids[:1 if greedy else ranked.keep(k, top_p)]
    scaled = scaled_row(logits, 1.0 if greedy else t)
    masked = torch.full_like(scaled, -math.inf)
    masked[kept] = scaled[kept]
    return torch.log_softmax(masked, dim=0)


PLAIN_ANSWER = template.answer


def answer(request):
    """The template's answer; hello names the rule and declares float32."""
    reply = PLAIN_ANSWER(request)
    if request.get("op") == "hello":
        departures = ",".join(f"{a}={v}" for a, v in RULE.items() if v != DEEPINFER[a])
        reply.update(name="rule-port", version=departures or "deepinfer", precision="float32")
    return reply


if __name__ == "__main__":
    for pair in filter(None, (sys.argv[1] if len(sys.argv) > 1 else "").split(",")):
        name, _, value = pair.partition("=")
        if name in DEEPINFER:
            RULE[name] = value
    template.answer = answer
    template.request_params = request_params
    template.sampler_params = rule_params
    template.filter_logprobs = port_filter
    template.SAMPLING_OPTIONS = []  # min-p and the penalties are not its to answer
    template.main()
