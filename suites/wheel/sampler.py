"""The sampler of the project suites/wheel/check_wheel.py plays: an engine team's own code, tested
with the installed wheel's pytest plugin. DeepInfer's rule in float32, as an engine writes it:
`filter_batch` on [B, V] (the batched template's arithmetic, harness/adapters/), `filter` on one
row through it, `check_params` the engine's parameter checks. `filter_ge` plants one bug: top-p
keeps a token while the mass before it is below top_p, not at most top_p (`>=` at the boundary).
`filter_crash` plants another beside it: it kills its process on rows of more than 100,000 tokens.
"""

import math
import os

import torch

from sieve import Rejected


def check_params(temperature, top_k, top_p):
    """DeepInfer's checks and clamp (seed 000:63): temperature, top_p, top_k, then T < 1e-5."""
    top_k = -1 if top_k is None else top_k
    if not math.isfinite(temperature) or temperature < 0:
        raise Rejected("temperature", "temperature must be a finite number >= 0")
    if not 0 < top_p <= 1:
        raise Rejected("top_p", "top_p must be in (0, 1]")
    if not (top_k == -1 or 1 <= top_k <= 2**31 - 1):
        raise Rejected("top_k", "top_k must be -1 or an integer in [1, 2^31-1]")
    if temperature < 1e-5:
        return 1e-5, -1, 1.0
    return temperature, top_k, top_p


def check_logits(logits, temperature):
    """DeepInfer's checks of the rows: no NaN or +inf, a finite logit, no overflow once scaled."""
    if logits.shape[1] == 0 or torch.isnan(logits).any() or torch.isposinf(logits).any():
        raise Rejected("logits", "a row is empty or has a NaN or +inf logit")
    finite = ~torch.isinf(logits)
    if not finite.any(dim=1).all():
        raise Rejected("logits", "no finite logit is left in a row")
    scaled = logits * (1.0 / temperature).to(torch.float32)[:, None]
    if torch.isinf(scaled[finite]).any():
        raise Rejected("logits", "a logit times 1/T overflows float32")


def filter_batch(logits, temperature, top_k, top_p, strict=True):
    check_logits(logits, temperature)
    scaled = logits * (1.0 / temperature).to(torch.float32)[:, None]
    probs = torch.softmax(scaled, dim=1)
    order = torch.sort(probs, dim=1, descending=True, stable=True).indices
    ranked = torch.gather(probs, 1, order)
    before = torch.cumsum(ranked, dim=1) - ranked
    rank = torch.arange(logits.shape[1]).expand_as(ranked)
    finite = torch.gather(~torch.isinf(scaled), 1, order)
    inside = before <= top_p[:, None] if strict else before < top_p[:, None]
    keep = finite & ((top_p[:, None] >= 1.0) | inside)
    keep &= (top_k[:, None] < 0) | (rank < top_k[:, None])
    kept = torch.zeros_like(keep).scatter(1, order, keep)
    return torch.log_softmax(torch.where(kept, scaled, -math.inf), dim=1)


def one_row(logits, temperature, top_k, top_p, strict=True):
    t, k, p = check_params(temperature, top_k, top_p)
    return filter_batch(logits[None, :], torch.tensor([t], dtype=torch.float64),
                        torch.tensor([k], dtype=torch.int64),
                        torch.tensor([p], dtype=torch.float32), strict)[0]


def filter(logits, temperature, top_k, top_p):
    return one_row(logits, temperature, top_k, top_p)


def filter_ge(logits, temperature, top_k, top_p):
    return one_row(logits, temperature, top_k, top_p, strict=False)


def filter_crash(logits, temperature, top_k, top_p):
    if len(logits) > 100_000:
        os.kill(os.getpid(), 9)
    return filter_ge(logits, temperature, top_k, top_p)


CALLS = os.environ.get("SAMPLER_CALLS")


def filter_batch_logged(logits, temperature, top_k, top_p):
    """filter_batch, writing each call's shape to $SAMPLER_CALLS."""
    with open(CALLS, "a") as f:
        f.write(f"{logits.shape[0]} {logits.shape[1]}\n")
    return filter_batch(logits, temperature, top_k, top_p)
