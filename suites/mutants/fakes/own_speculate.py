#!/usr/bin/env python3
"""A speculative verifier with a generator of its own, faithful or with one known bug, for the
speculative-distribution suite (harness/run/STATISTICS.md). Usage: own_speculate.py VARIANT, one of
rule, spec-q-raw, spec-draft-bf16, spec-token-match, spec-no-bonus, or a faithful answer with
one field wrong: steps-missing, ratio-doubled, draft-tokens-short.

The rows are filtered by the oracle's library (the sieve module); everything speculative is
written here: the drafts drawn from q, the accept test u < p / q, the residual max(p - q, 0),
the bonus from the last target row, each draw by the inverse CDF of a Python random.Random
seeded from the request's seed and position. Given draft tokens are verified as given."""
import functools
import json
import math
import random
import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "harness" / "python"))
import sieve  # noqa: E402

VARIANTS = ("rule", "spec-q-raw", "spec-draft-bf16", "spec-token-match", "spec-no-bonus",
            "steps-missing", "ratio-doubled", "draft-tokens-short")


def bfloat16(x):
    """x rounded to bfloat16 (nearest, ties to even), as a float32 value."""
    bits = struct.unpack("<I", struct.pack("<f", x))[0]
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def probs(row, params):
    return filtered(tuple(row), tuple(sorted(params.items())))


@functools.lru_cache(maxsize=64)
def filtered(row, params):
    """The row's probabilities under params; a suite's runs repeat their rows, so each is
    filtered once."""
    return [0.0 if lp == -math.inf else math.exp(lp) for lp in sieve.filter(list(row),
                                                                              **dict(params))]


def draw(p, u):
    """The first token whose cumulative mass exceeds u times the total."""
    total, target = sum(p), 0.0
    for t, x in enumerate(p):
        target += x
        if x > 0 and target > u * total:
            return t
    return max(t for t, x in enumerate(p) if x > 0)


def ratio_of(p, q):
    return 0.0 if p == 0 else "inf" if q == 0 else p / q


def verify(variant, req):
    target, draft = req["target"], req["draft"]
    tp, dp = target.get("params", {}), draft.get("params", {})
    rng = random.Random(int(req["seed"]) * 1000003 + int(req["position"]))
    n = len(draft["rows"])
    drafts, tokens, steps = list(draft.get("tokens", [])), [], []
    for j in range(len(drafts), n):
        row = draft["rows"][j]
        drawn_from = [bfloat16(x) for x in row] if variant == "spec-draft-bf16" else row
        drafts.append(draw(probs(drawn_from, dp), rng.random()))
    answer = {"draft_tokens": drafts} if "tokens" not in draft else {}
    for j in range(n):
        p = probs(target["rows"][j], tp)
        q = probs(draft["rows"][j], {} if variant == "spec-q-raw" else dp)
        x, u = drafts[j], rng.random()
        if variant == "spec-token-match":  # u draws the target's own token; no accept test
            y = draw(p, u)
            accepted, replacement = y == x, y
        else:
            accepted = u * q[x] < p[x]
            residual = [max(a - b, 0.0) for a, b in zip(p, q)]
            replacement = None if accepted else draw(residual if sum(residual) > 0 else p,
                                                     rng.random())
        steps.append({"accepted": accepted, "u": u, "ratio": ratio_of(p[x], q[x])})
        if not accepted:
            return {**answer, "accepted": j, "tokens": tokens + [replacement], "bonus": False,
                    "steps": steps}
        tokens.append(x)
    if variant != "spec-no-bonus":
        tokens.append(draw(probs(target["rows"][n], tp), rng.random()))
    return {**answer, "accepted": n, "tokens": tokens, "bonus": variant != "spec-no-bonus",
            "steps": steps}


def broken(variant, out):
    """The faithful answer with one field wrong, for the suite's answer checks."""
    if variant == "steps-missing":
        out.pop("steps")
    if variant == "ratio-doubled":
        out["steps"] = [{**st, "ratio": st["ratio"] * 2 if st["ratio"] != "inf" else "inf"}
                        for st in out["steps"]]
    if variant == "draft-tokens-short" and "draft_tokens" in out:
        out["draft_tokens"] = out["draft_tokens"][:-1]
    return out


def answer(variant, req):
    if req.get("op") == "hello":
        return {"protocol": 1, "name": "own-speculate-" + variant, "version": "1",
                "ops": ["speculate"], "rng": "own", "precision": "float64"}
    if req.get("op") == "bye":
        return {"bye": True}
    if req.get("op") != "speculate":
        return {"error": {"kind": "request", "field": "op",
                          "message": "this fake verifies speculative chains and does nothing else"}}
    if variant in VARIANTS[5:]:
        return broken(variant, verify("rule", req))
    return verify(variant, req)


def main():
    variant = sys.argv[1] if len(sys.argv) == 2 else ""
    if variant not in VARIANTS:
        sys.exit("usage: own_speculate.py " + "|".join(VARIANTS))
    for line in sys.stdin:
        out = answer(variant, json.loads(line))
        print(json.dumps(out), flush=True)
        if "bye" in out:
            return


if __name__ == "__main__":
    main()
