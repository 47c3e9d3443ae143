"""A protocol v1 adapter around a plain Python sampling function, for `sieve run --impl exec:`.

To put your own sampler through sieve, replace `filter_logprobs` with a call into it (same
signature: float32 logits in, float64 processed logprobs out, -inf for removed tokens) and run

    sieve run --impl exec:"/usr/bin/python3 harness/adapters/python_adapter.py"

It answers hello, validate, filter and bye; sieve skips the suites of the other ops and says so.
Bad parameters are reported by raising ValueError(field, message).
"""

import json
import math
import sys

import torch

EPS = 1e-5


def check_params(temperature, top_k, top_p):
    """The checks and the clamp of seed 000:63, in that order."""
    if not math.isfinite(temperature) or temperature < 0:
        raise ValueError("temperature", "temperature must be a finite number >= 0")
    if not 0 < top_p <= 1:
        raise ValueError("top_p", "top_p must be in (0, 1]")
    if top_k != int(top_k) or not (top_k == -1 or 1 <= top_k <= 2**31 - 1):
        raise ValueError("top_k", "top_k must be -1 or an integer in [1, 2^31-1]")
    if temperature < EPS:
        return EPS, -1, 1.0
    return temperature, int(top_k), top_p


def filter_logprobs(logits: torch.Tensor, temperature: float, top_k: int, top_p: float):
    """The sampler under test: DeepInfer's rule, written the way an engine would write it."""
    temperature, top_k, top_p = check_params(temperature, top_k, top_p)
    scaled = logits * (1.0 / temperature)  # a float32 multiply by 1/T
    finite = ~torch.isinf(scaled)
    if torch.isinf(scaled[~torch.isinf(logits)]).any():
        raise ValueError("logits", "a logit times 1/T overflows float32")
    probs = torch.softmax(scaled.double(), dim=0)
    ids = torch.nonzero(finite).flatten()
    ranked = ids[torch.sort(probs[ids], descending=True, stable=True).indices]
    before = torch.cumsum(probs[ranked], 0) - probs[ranked]
    # top_p = 1 removes nothing: in float32 a late token's mass before can round above 1.0.
    kept = int((before <= top_p).sum()) if top_p < 1 else len(ranked)
    if top_k != -1:
        kept = min(kept, top_k)
    masked = torch.full_like(probs, -math.inf)
    masked[ranked[:kept]] = scaled.double()[ranked[:kept]]
    return torch.log_softmax(masked, dim=0)


def number(x):
    if x is None:
        return -math.inf
    if isinstance(x, str) and x in ("nan", "inf", "-inf"):
        return float(x)
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return float(x)
    raise ValueError("logits", "logits must be numbers or null")


def engine_logits(logits: torch.Tensor, engine: dict) -> torch.Tensor:
    """Engine options run before the sampler (seed 000:65-68): blacklist, then force_topk."""
    out = logits.clone()
    for token in engine.get("blacklist", []):
        if not 0 <= token < len(out):
            raise ValueError("blacklist", "a blacklist token id is outside [0, V)")
        out[token] = -math.inf
    n = engine.get("force_topk", 0)
    if n < 0:
        raise ValueError("force_topk", "force_topk must be >= 0")
    if 0 < n < len(out):
        out[torch.sort(out, descending=True, stable=True).indices[n:]] = -math.inf
    return out


def filter_row(row: dict, engine: dict) -> dict:
    params = row.get("params", {})
    t, k, p = (number(params.get(name, default)) for name, default in
               (("temperature", 1.0), ("top_k", -1), ("top_p", 1.0)))
    check_params(t, k, p)
    logits = torch.tensor([number(x) for x in row["logits"]], dtype=torch.float32)
    if len(logits) == 0 or torch.isnan(logits).any() or torch.isposinf(logits).any():
        raise ValueError("logits", "the row is empty or has a NaN or +inf logit")
    logits = engine_logits(logits, engine)
    if torch.isinf(logits).all():
        raise ValueError("logits", "no finite logit is left in the row")
    lp = filter_logprobs(logits, t, k, p).tolist()
    return {"logprobs": [None if x == -math.inf else x for x in lp]}


def error(field, message):
    kind = {"temperature": "invalid_params", "top_p": "invalid_params", "top_k": "invalid_params",
            "logits": "invalid_logits"}.get(field, "invalid_request")
    return {"error": {"kind": kind, "field": field, "message": message}}


def answer(request: dict) -> dict:
    op = request.get("op")
    if op == "hello":
        # The arithmetic of filter_logprobs below: say "float32" if your sampler's is float32.
        return {"protocol": 1, "name": "python-adapter", "version": torch.__version__,
                "precision": "float64", "ops": ["hello", "validate", "filter", "bye"]}
    if op == "validate":
        params = request.get("params", {})
        try:
            t, k, p = check_params(*(number(params.get(n, d)) for n, d in
                                     (("temperature", 1.0), ("top_k", -1), ("top_p", 1.0))))
        except ValueError as e:
            return error(*e.args)
        return {"params": {"temperature": t, "top_p": p, "top_k": k}}
    if op == "filter":
        rows = []
        for row in request.get("rows", []):
            try:
                rows.append(filter_row(row, request.get("engine", {})))
            except ValueError as e:
                rows.append(error(*e.args))
        return {"rows": rows}
    return {"error": {"kind": "unsupported_op", "field": "op", "message": f"no op {op}"}}


def main():
    torch.set_num_threads(1)
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if request.get("op") == "bye":
            print(json.dumps({"bye": True}), flush=True)
            return
        print(json.dumps(answer(request), allow_nan=False), flush=True)


if __name__ == "__main__":
    main()
