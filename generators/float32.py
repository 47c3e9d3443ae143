"""What float32 arithmetic can do to the rule's answers: error bounds and the routes engines use.

Engines compute the softmax, the masses and the log-softmax in float32. The scaled logits are
the same float32 values in every implementation (000:11: a float32 multiply by 1/T), so every
difference comes from the later steps. oracle/SPEC.md ("Tolerances") derives each bound; u is
the float32 unit roundoff 2^-24.

- logprob_bound: the largest error of a float32 log-softmax over a kept set of n tokens, any
  summation order.
- mass_width: the largest error of a float32 mass before a token at rank r, any order.
- gap_width: the relative gap below which two probabilities can swap order in float32.
- ROUTES: the computations of the masses engines really run; a top-p or tie decision that one
  of them takes differently is recorded with every outcome.
"""

import math

import numpy as np
import torch

U = 2.0**-24  # float32 unit roundoff
F32_EXP_UNDERFLOW = -87.0  # below this, a float32 exp(d) is subnormal or 0


def logprob_bound(logprobs: torch.Tensor, scaled: torch.Tensor, summed=None) -> float:
    """Max over kept i of u * (2 (|s_i| + |m| + |lp_i| + ln S) + 1.5 n + 4), n the terms of the
    log-softmax's sum: the kept tokens, unless `summed` says otherwise."""
    kept = ~torch.isinf(logprobs)
    n = int(kept.sum()) if summed is None else summed
    s = scaled.to(torch.float64)[kept]
    lp = logprobs[kept]
    m = float(s.max())
    ln_s = max(0.0, float(((s - m) - lp).max()))
    b = U * (2 * (s.abs() + abs(m) + lp.abs() + ln_s) + 1.5 * n + 4)
    return float(b.max())


def mass_width(rank: int, mass: float, top_p: float, finite: int) -> float:
    """u ((r + 1.4 V + 6) max(mass, top_p) + 0.4 r): the float32 probabilities of V finite
    tokens (their normalizing sum of V terms, exp, the division), the argument error of each
    exp (u |d| e^d <= u/e for each of the r terms), r of them summed, and top_p itself rounded
    to float32."""
    return U * ((rank + 1.4 * finite + 6) * max(mass, top_p) + 0.4 * rank)


def gap_width(s_a: float, s_b: float, m: float) -> float:
    """The relative gap below which float32 p_a, p_b can compare the other way: each p is off by
    u (|s - m| + 4) through exp, or by u (|s| + |lse| + 2) when an engine computes it as
    exp(s - lse); lse is at most |m| + ln V, taken as |m| + 64."""
    lse = abs(m) + 64
    return U * (2 * (abs(s_a) + abs(s_b) + 2 * lse) + abs(s_a - m) + abs(s_b - m) + 16)


# ----------------------------------------------------------------------------- routes


def _exclusive(cum: np.ndarray) -> np.ndarray:
    return np.concatenate([np.zeros(1, dtype=cum.dtype), cum[:-1]])


def _scan(x: np.ndarray) -> np.ndarray:
    """A Hillis-Steele inclusive scan in x's dtype: the order of a GPU prefix sum."""
    out, step = x.copy(), 1
    while step < len(out):
        shifted = np.concatenate([np.zeros(step, dtype=out.dtype), out[:-step]])
        out = out + shifted
        step *= 2
    return out


def _softmax32(s: torch.Tensor) -> torch.Tensor:
    return torch.softmax(s.to(torch.float32), 0)


def _exp_log_softmax32(s: torch.Tensor) -> torch.Tensor:
    return torch.exp(torch.log_softmax(s.to(torch.float32), 0))


def _exp_log_softmax64(s: torch.Tensor) -> torch.Tensor:
    return torch.exp(torch.log_softmax(s.to(torch.float64), 0))


def _seq(pr: np.ndarray) -> np.ndarray:
    return _exclusive(np.cumsum(pr))  # numpy sums float32 in float32, one term at a time


def _torch_cumsum(pr: np.ndarray) -> np.ndarray:
    return _exclusive(torch.cumsum(torch.from_numpy(pr), 0).numpy())  # float64 inside, on CPU


def _minus_p(pr: np.ndarray) -> np.ndarray:
    return np.cumsum(pr) - pr


def _scan_exclusive(pr: np.ndarray) -> np.ndarray:
    return _exclusive(_scan(pr))


def _f64_sums(pr: np.ndarray) -> np.ndarray:
    return _exclusive(np.cumsum(pr.astype(np.float64)))


# name: (probabilities from the scaled logits, masses before each ranked token, what it is, the
# precision whose arithmetic it is: its outcomes are acceptable there)
ROUTES = {
    "f32-softmax-sequential-cumsum": (_softmax32, _seq, "float32 softmax, masses summed one "
                                      "term at a time in float32", "float32"),
    "f32-softmax-torch-cumsum": (_softmax32, _torch_cumsum, "float32 softmax, torch.cumsum on a "
                                 "CPU (it sums in float64 and rounds each mass to float32)",
                                 "float32"),
    "f32-softmax-cumsum-minus-p": (_softmax32, _minus_p, "float32 softmax, the mass before as "
                                   "the inclusive float32 cumsum minus p", "float32"),
    "f32-softmax-pairwise-scan": (_softmax32, _scan_exclusive, "float32 softmax, masses by a "
                                  "parallel (Hillis-Steele) float32 scan, as on a GPU",
                                  "float32"),
    "f32-softmax-float64-sums": (_softmax32, _f64_sums, "float32 probabilities summed in "
                                 "float64", "float32"),
    "f32-exp-log-softmax": (_exp_log_softmax32, _seq, "probabilities as exp(log_softmax) in "
                            "float32, float32 masses", "float32"),
    "f64-exp-log-softmax": (_exp_log_softmax64, _seq, "probabilities as exp(log_softmax) in "
                            "float64, float64 masses", "float64"),
}


def route_kept(scaled: torch.Tensor, finite: torch.Tensor, top_p: float, top_k: int,
               route: str, skip_at_one=True) -> list:
    """The kept ids, in rank order, when the probabilities and masses go by one route: ranked by
    the route's probabilities (ties by id), top-p on its masses (> removes; skipped at
    top_p = 1, as the rule says, unless skip_at_one is False), then top-k."""
    probs_of, masses_of = ROUTES[route][:2]
    ids = torch.nonzero(finite).flatten()
    p = probs_of(scaled[ids])
    order = torch.sort(p, descending=True, stable=True).indices
    ranked = ids[order]
    pr = p[order].numpy()
    kept = len(ranked)
    if (top_p < 1.0 or not skip_at_one) and kept > 1:
        before = masses_of(pr)
        over = np.nonzero(before[1:] > np.array(top_p, dtype=before.dtype))[0]
        kept = int(over[0]) + 1 if len(over) else kept
    if top_k != -1:
        kept = min(kept, top_k)
    return ranked[:kept].tolist()


def width_kept_range(before: torch.Tensor, top_p: float, finite: int):
    """The kept counts top-p can give when every mass before may be off by its mass_width:
    (fewest, most)."""
    n = len(before)
    fewest = most = n
    for r in range(1, n):
        w = mass_width(r, float(before[r]), top_p, finite)
        if fewest == n and float(before[r]) + w > top_p:
            fewest = r
        if float(before[r]) - w > top_p:
            most = r
            break
    return fewest, most


def underflows(d: float) -> bool:
    return d < F32_EXP_UNDERFLOW and not math.isinf(d)
