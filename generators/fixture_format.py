"""The fixture format, sieve-fixtures/1: cases, matchers, recipes and the float32 error bands.

A case is a protocol v1 request with the answer it must get. Expectations are shaped like the
response; a leaf that is a JSON object with a "$" key is a matcher that says how it is compared
(fixtures/README.md). Every expected float is inside a matcher, so its comparison is data.
"""

import math
from typing import Dict, List, Optional, Sequence

import numpy as np
import torch

import reference as ref

SCHEMA = "sieve-fixtures/1"

# The tolerance on processed logprobs: float64 arithmetic in another order differs by far less.
LOGPROB_TOL = {"abs": 1e-9, "rel": 1e-9}

# Decisions closer than these to their boundary could go either way in float32 arithmetic; the
# generator avoids them or records every acceptable outcome.
TOPP_BAND = 1e-5  # |mass before - top_p|
GAP_BAND = 1e-5  # (p(last kept) - p(first removed)) / p(last kept), when not an exact tie
DRAW_BAND = 1e-6  # |u * total - cdf step| / total


class NearBoundary(Exception):
    """A constructed case whose decision the bands do not allow; the family must change it."""


# ----------------------------------------------------------------------------- values


def f32(x: float) -> float:
    """The float32 nearest to x, as the double it converts to (stored losslessly as JSON)."""
    return float(np.float32(x))


def num(x: float):
    """A float for a request or a matcher: null for -inf, a string for NaN and +inf."""
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return None if x < 0 else "inf"
    return float(x)


def row_json(values) -> list:
    return [num(float(x)) for x in values]


def exact(value) -> dict:
    return {"$exact": value}


def approx(x: float, tol=LOGPROB_TOL) -> dict:
    return {"$approx": num(x), **tol}


def approx_array(xs, tol=LOGPROB_TOL) -> dict:
    return {"$approx_array": [num(float(x)) for x in xs], **tol}


def any_of(options: List[dict]) -> dict:
    unique = []
    for o in options:
        if o not in unique:
            unique.append(o)
    return unique[0] if len(unique) == 1 else {"$any_of": unique}


def error(e: ref.SieveError) -> dict:
    return {"error": {"kind": e.kind, "field": e.field, "code": e.code}}


# ----------------------------------------------------------------------------- recipes

GOLDEN = ref.GOLDEN
MASK = np.uint64(0xFFFFFFFFFFFFFFFF)


def _mix64(z: np.ndarray) -> np.ndarray:
    """SplitMix64's finalizer on uint64 arrays (numpy wraps modulo 2^64)."""
    z = z ^ (z >> np.uint64(30))
    z = z * np.uint64(0xBF58476D1CE4E5B9)
    z = z ^ (z >> np.uint64(27))
    z = z * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def recipe_logits(recipe: dict) -> np.ndarray:
    """The float32 row a recipe describes (fixtures/README.md, "Recipes"): integer arithmetic
    only, so every implementation reproduces it bit for bit."""
    assert recipe["kind"] == "irwin_hall4"
    v, seed = recipe["v"], np.uint64(int(recipe["seed"]))
    i = np.arange(v, dtype=np.uint64)
    units = np.zeros(v, dtype=np.int64)
    with np.errstate(over="ignore"):
        for j in range(4):
            k = np.uint64(4) * i + np.uint64(j + 1)
            shift = np.uint64(64 - recipe["bits"])
            units += (_mix64(seed + k * np.uint64(GOLDEN)) >> shift).astype(np.int64)
    units -= 1 << (recipe["bits"] + 1)
    every = recipe["spike_every"]
    if every:
        units[np.arange(v) % every == 0] += recipe["spike_units"]
    assert np.abs(units).max() < 1 << 24, "a recipe row must stay exact in float32"
    return (units.astype(np.float64) * 2.0 ** recipe["exp"]).astype(np.float32)


def mixsum64(words: np.ndarray) -> str:
    """The checksum of a row of 32-bit words (float32 bits or uint32 token ids): the sum modulo
    2^64 of mix64(word_i XOR (i + 1) * golden), as 16 hex digits. Order-sensitive, and as easy
    to compute in C as with numpy."""
    w = words.astype(np.uint32).astype(np.uint64)
    i = np.arange(1, len(w) + 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        total = _mix64(w ^ (i * np.uint64(GOLDEN))).sum(dtype=np.uint64)
    return f"{int(total):016x}"


def recipe(kind_seed: int, v: int, bits: int, exp: int, spike_every: int = 0,
           spike_units: int = 0) -> dict:
    r = {"kind": "irwin_hall4", "seed": str(kind_seed), "v": v, "bits": bits, "exp": exp,
         "spike_every": spike_every, "spike_units": spike_units}
    row = recipe_logits(r)
    r["mixsum64"] = mixsum64(row.view(np.uint32))
    return r


# ----------------------------------------------------------------------------- expectations


def filter_outcome(f: ref.Filtered, v: int, sparse: bool) -> dict:
    """The expectation of one answered filter row."""
    lp = f.logprobs
    if not sparse:
        return {"logprobs": approx_array(lp.tolist())}
    kept_ids = torch.nonzero(~torch.isinf(lp)).flatten().to(torch.int64).numpy()
    at = {}
    for i in f.ranked[:32].tolist() + list(range(0, v, max(1, v // 32))):
        at[str(i)] = num(float(lp[i]))
    return {"logprobs": {"$sparse": {
        "length": v, "kept_count": int(len(kept_ids)),
        "kept_mixsum64": mixsum64(kept_ids),
        "at": dict(sorted(at.items(), key=lambda kv: int(kv[0]))), **LOGPROB_TOL}}}


def check_cut(f: ref.Filtered) -> None:
    if f.kept < len(f.ranked):
        a, b = float(f.probs[f.ranked[f.kept - 1]]), float(f.probs[f.ranked[f.kept]])
        if 0 < a - b < GAP_BAND * a:
            raise NearBoundary(f"near-tie at the cut: {a!r} vs {b!r}")


def filter_expect(logits, params: ref.Params, engine=ref.Engine(), sparse=False,
                  exact_boundary=False) -> dict:
    """The expectation of a filter row: its outcome, or every outcome a top-p decision within
    TOPP_BAND allows (evaluated at top_p moved across the band), or its error."""
    try:
        f = ref.filter_row(logits, params, engine)
    except ref.SieveError as e:
        return error(e)
    check_cut(f)
    v = logits.shape[0]
    if exact_boundary or f.topp_margin >= TOPP_BAND:
        return filter_outcome(f, v, sparse)
    outcomes = [filter_outcome(f, v, sparse)]
    p = ref.check_params(params)
    for top_p in (p.top_p - 2 * TOPP_BAND, min(1.0, p.top_p + 2 * TOPP_BAND)):
        if top_p > 0:
            moved = ref.Params(p.temperature, top_p, p.top_k)
            outcomes.append(filter_outcome(ref.filter_row(logits, moved, engine), v, sparse))
    return any_of(outcomes)


def draw_tokens(probs: torch.Tensor, u: float) -> List[int]:
    """The drawn token, and any token whose cdf interval lies within DRAW_BAND of u * total."""
    d = ref.draw(probs, u)
    cdf = probs.to(torch.float64).cumsum(0)
    total = float(cdf[-1])
    target, band = u * total, DRAW_BAND * total
    lo = torch.cat([torch.zeros(1, dtype=torch.float64), cdf[:-1]])
    near = (probs > 0) & (lo <= target + band) & (cdf > target - band)
    tokens = sorted(set([d.token] + torch.nonzero(near).flatten().tolist()))
    return tokens


def token_expect(tokens: List[int]):
    return tokens[0] if len(tokens) == 1 else {"$any_of": tokens}


def sample_expect(logits, params, seed, pos, n_top=0, sample_case=0, tag="main",
                  engine=ref.Engine()) -> dict:
    try:
        s = ref.sample(logits, params, seed, pos, n_top, sample_case, tag, engine)
    except ref.SieveError as e:
        return error(e)
    check_cut(s.filtered)
    if s.filtered.topp_margin < TOPP_BAND:
        raise NearBoundary("top-p decision within the band in a sample case")
    lp = s.filtered.logprobs
    tokens = draw_tokens(torch.exp(lp), s.u)
    top = {"$approx_array": [[i, num(x)] for i, x in s.top], **LOGPROB_TOL}
    options = [{"token": t, "logprob": approx(float(lp[t])), "top_logprobs": top}
               for t in tokens]
    return any_of(options)


def case(cid: str, family: str, seed_ref: str, description: str, request: dict,
         expect: dict) -> dict:
    return {"id": cid, "family": family, "seed_ref": seed_ref, "description": description,
            "request": request, "expect": expect}


# ----------------------------------------------------------------------------- case builders


def params_json(t=None, top_p=None, top_k=None) -> dict:
    out = {}
    if t is not None:
        out["temperature"] = num(t) if isinstance(t, float) else t
    if top_p is not None:
        out["top_p"] = num(top_p) if isinstance(top_p, float) else top_p
    if top_k is not None:
        out["top_k"] = top_k
    return out


def engine_json(engine: ref.Engine) -> dict:
    out = {}
    if engine.force_topk:
        out["force_topk"] = engine.force_topk
    if engine.blacklist:
        out["blacklist"] = list(engine.blacklist)
    return out


def as_row(logits) -> torch.Tensor:
    if isinstance(logits, torch.Tensor):
        return logits.to(torch.float32)
    return torch.tensor([float(x) for x in logits], dtype=torch.float32)


def filter_case(cid, family, seed_ref, description, logits, t=1.0, top_p=1.0, top_k=-1,
                engine=ref.Engine(), recipe_spec=None, exact_boundary=False) -> dict:
    """A one-row filter case. With recipe_spec the row is sent as a recipe and the expected
    logprobs are sparse (kept-set checksum and sampled entries)."""
    row = as_row(recipe_logits(recipe_spec) if recipe_spec else logits)
    logits_json = {"$recipe": recipe_spec} if recipe_spec else row_json(row.tolist())
    request = {"op": "filter",
               "rows": [{"logits": logits_json, "params": params_json(t, top_p, top_k)}]}
    if engine != ref.Engine():
        request["engine"] = engine_json(engine)
    expect = filter_expect(row, ref.Params(t, top_p, top_k), engine,
                           sparse=recipe_spec is not None, exact_boundary=exact_boundary)
    return case(cid, family, seed_ref, description, request, {"rows": [expect]})


def validate_case(cid, family, seed_ref, description, t=1.0, top_p=1.0, top_k=-1) -> dict:
    request = {"op": "validate", "params": params_json(t, top_p, top_k)}
    try:
        p = ref.check_params(ref.Params(t, top_p, top_k))
        expect = {"params": {"temperature": exact(p.temperature), "top_p": exact(p.top_p),
                             "top_k": p.top_k}}
    except ref.SieveError as e:
        expect = error(e)
    return case(cid, family, seed_ref, description, request, expect)


def sample_row_json(logits, t, top_p, top_k, seed, pos, n_top) -> dict:
    row = {"logits": row_json(as_row(logits).tolist()), "params": params_json(t, top_p, top_k),
           "seed": str(seed), "position": pos}
    if n_top:
        row["top_logprobs"] = n_top
    return row


def sample_case(cid, family, seed_ref, description, rows: Sequence[dict], sample_case=0,
                tag="main", engine=ref.Engine()) -> dict:
    """rows: dicts with logits, t, top_p, top_k, seed, pos, n_top."""
    request = {"op": "sample", "rows": [sample_row_json(**r) for r in rows]}
    if sample_case:
        request["case"] = sample_case
    if tag != "main":
        request["tag"] = tag
    if engine != ref.Engine():
        request["engine"] = engine_json(engine)
    expect = [sample_expect(as_row(r["logits"]), ref.Params(r["t"], r["top_p"], r["top_k"]),
                            r["seed"], r["pos"], r["n_top"], sample_case, tag, engine)
              for r in rows]
    return case(cid, family, seed_ref, description, request, {"rows": expect})


def uniform_case(cid, family, seed_ref, description, items: Sequence[tuple]) -> dict:
    """items: (seed, position, case, tag) tuples."""
    request = {"op": "uniform", "items": [
        {"seed": str(s), "position": p, "case": c, "tag": t} for s, p, c, t in items]}
    try:
        expect = {"u": [exact(ref.uniform(s, p, c, t)) for s, p, c, t in items]}
    except ref.SieveError as e:
        expect = error(e)
    return case(cid, family, seed_ref, description, request, expect)


def draw_case(cid, family, seed_ref, description, probs, seed, pos, sample_case=0,
              tag="main") -> dict:
    request = {"op": "draw", "rows": [{"probs": row_json(probs), "seed": str(seed),
                                       "position": pos}]}
    if sample_case:
        request["case"] = sample_case
    if tag != "main":
        request["tag"] = tag
    try:
        u = ref.uniform(seed, pos, sample_case, tag)
        p = torch.tensor([float(x) for x in probs], dtype=torch.float64)
        expect = {"tokens": [token_expect(draw_tokens(p, u))]}
    except ref.SieveError as e:
        expect = error(e)
    return case(cid, family, seed_ref, description, request, expect)


def position_case(cid, family, seed_ref, description, mode, q, k, row=0) -> dict:
    request = {"op": "position", "mode": mode, "seqlen_q": q, "seqlen_k": k, "row": row}
    try:
        expect = {"position": ref.position(mode, q, k, row)}
    except ref.SieveError as e:
        expect = error(e)
    return case(cid, family, seed_ref, description, request, expect)


def find_position(seed: int, lo: float, hi: float, sample_case=0, tag="main") -> int:
    """The first position whose uniform falls in [lo, hi): lets a case aim the hash's dart."""
    for pos in range(1 << 20):
        if lo <= ref.uniform(seed, pos, sample_case, tag) < hi:
            return pos
    raise ValueError("no position found")
