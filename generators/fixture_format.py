"""The fixture format, sieve-fixtures/2: cases, matchers, recipes, float32 bounds and readings.

A case is a protocol v1 request with the answer it must get. Expectations are shaped like the
response; a leaf that is a JSON object with a "$" key is a matcher that says how it is compared
(fixtures/README.md). Every expected float is inside a matcher, so its comparison is data.
"""

import math
from typing import Dict, List, Optional, Sequence

import numpy as np
import torch

import float32 as fp32
import reference as ref

SCHEMA = "sieve-fixtures/2"
PRECISIONS = ("float32", "float64")

# The float64 tolerance on processed logprobs: float64 arithmetic in another order differs by far
# less. At float32 a matcher adds its own derived bound, f32_abs (float32.py, oracle/SPEC.md).
LOGPROB_TOL = {"abs": 1e-9, "rel": 1e-9}

# A draw closer than this (relative to the total) to a cdf step lists both tokens: the float64
# cdf of another summation order, or a float32 one of a few tokens, can land either side.
DRAW_BAND = 1e-6

# A filter decision with more acceptable outcomes than this is too close to call; the family
# must change the case.
MAX_OUTCOMES = 8


class NearBoundary(Exception):
    """A constructed case whose decision float32 could flip beyond what a case records."""


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


def param_num(x: float):
    """A parameter: num, but -inf as the string "-inf" (null stands for -inf only in arrays,
    harness/protocol/PROTOCOL.md, "Values"; a null parameter is not a number at all)."""
    return "-inf" if x == -math.inf else num(x)


def row_json(values) -> list:
    """num of every value, made at once: a row of a request, an answer or a matcher."""
    a = np.asarray(values, dtype=np.float64)
    out = a.astype(object)
    out[np.isneginf(a)] = None
    out[np.isposinf(a)] = "inf"
    out[np.isnan(a)] = "nan"
    return out.tolist()


def exact(value) -> dict:
    return {"$exact": value}


def approx(x: float, tol=LOGPROB_TOL, f32_abs=None) -> dict:
    out = {"$approx": num(x), **tol}
    return out if f32_abs is None else {**out, "f32_abs": f32_abs}


def approx_array(xs, tol=LOGPROB_TOL, f32_abs=None) -> dict:
    out = {"$approx_array": row_json(xs), **tol}
    return out if f32_abs is None else {**out, "f32_abs": f32_abs}


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


def kept_logprobs(scaled: torch.Tensor, kept_ids) -> torch.Tensor:
    """Step 5 (000:19) on a given kept set: the float64 log-softmax of the scaled logits."""
    s64 = scaled.to(torch.float64)
    masked = torch.full_like(s64, float("-inf"))
    idx = torch.tensor(list(kept_ids), dtype=torch.int64)
    masked[idx] = s64[idx]
    return torch.log_softmax(masked, dim=0)


def logprobs_matcher(lp: torch.Tensor, scaled: torch.Tensor, sample_at, sparse: bool,
                     summed=None) -> dict:
    """Processed logprobs as a matcher with its float32 bound: the whole array, or for long rows
    the kept count, the kept ids' checksum and the entries at `sample_at`."""
    f32_abs = fp32.logprob_bound(lp, scaled, summed)
    if not sparse:
        return approx_array(lp.tolist(), f32_abs=f32_abs)
    kept_ids = torch.nonzero(~torch.isinf(lp)).flatten().to(torch.int64).numpy()
    at = {str(i): num(float(lp[i])) for i in sorted(set(sample_at))}
    return {"$sparse": {"length": len(lp), "kept_count": int(len(kept_ids)),
                        "kept_mixsum64": mixsum64(kept_ids), "at": at, **LOGPROB_TOL,
                        "f32_abs": f32_abs}}


def sample_points(ranked: torch.Tensor, v: int) -> list:
    return ranked[:32].tolist() + list(range(0, v, max(1, v // 32)))


def exactly_ordered(s_a: float, s_b: float, m: float) -> bool:
    """Whether every float32 arithmetic orders p_a and p_b as their scaled logits: both are
    positive and within a factor of 2 of the maximum m and of any lse (at most m + 64), so each
    s - m and s - lse is exact (Sterbenz), and the ratio of the two probabilities is
    exp(s_a - s_b) to within a few ulps, far from 1 when the logits are 16 ulps of 1 apart."""
    low = min(s_a, s_b)
    return low > 0 and m + 64 <= 2 * low and abs(s_a - s_b) > 16 * fp32.U


def check_cut(f: ref.Filtered) -> None:
    """A cut between two different probabilities that float32 could order the other way."""
    if f.kept < len(f.ranked):
        a, b = f.ranked[f.kept - 1], f.ranked[f.kept]
        pa, pb = float(f.probs[a]), float(f.probs[b])
        s = f.scaled.to(torch.float64)
        m, s_a, s_b = float(s[f.ranked[0]]), float(s[a]), float(s[b])
        near = pa - pb < fp32.gap_width(s_a, s_b, m) * pa and not exactly_ordered(s_a, s_b, m)
        if pa != pb and (near or fp32.underflows(s_a - m)):
            raise NearBoundary(f"near-tie at the cut: {pa!r} vs {pb!r}")


def check_min_p(f: ref.Filtered, p: ref.Params) -> None:
    """A min-p decision that float32 could take the other way: a token's probability within the
    float32 width (that of an order between two probabilities, float32.py gap_width) of min_p
    times the largest. A token at the largest logit is always kept (min_p <= 1)."""
    if p.min_p <= 0.0:
        return
    s = f.scaled.to(torch.float64)
    top = int(f.ranked[0])
    m, bar = float(s[top]), p.min_p * float(f.probs[top])
    for i in f.ranked.tolist():
        pi = float(f.probs[i])
        if float(s[i]) == m:  # a largest logit: its p is the largest in any arithmetic
            continue
        if abs(pi - bar) < (fp32.gap_width(float(s[i]), m, m) + 2 * fp32.U) * max(pi, bar):
            raise NearBoundary(f"min-p decision within float32 reach: {pi!r} vs {bar!r}")


def filter_kept_sets(logits, params: ref.Params, engine, f: ref.Filtered,
                     exact_boundary: bool) -> list:
    """Every kept set (ids in rank order) an implementation may give, with the precisions it is
    acceptable at: the rule's (both), each route's (at the route's precision), and every count
    within the float32 width of the masses (float32; none when the boundary is exact in every
    binary precision). Min-p then cuts each as the rule does (check_min_p refuses a decision it
    could not)."""
    p = ref.check_params(params)
    ranked = f.ranked.tolist()
    sets = [(ranked[:f.kept], set(PRECISIONS))]
    finite = ~torch.isinf(ref.apply_engine(logits.to(torch.float32), engine))
    min_p_kept = int((f.probs[f.ranked] >= p.min_p * float(f.probs[f.ranked[0]])).sum())
    for route, (*_, precision) in fp32.ROUTES.items():
        kept = fp32.route_kept(f.scaled, finite, p.top_p, p.top_k, route)[:min_p_kept]
        sets.append((kept, set(PRECISIONS) if precision == "float64" else {"float32"}))
    if p.top_p < 1.0 and not exact_boundary:
        pr = f.probs[f.ranked]
        before = torch.cat([torch.zeros(1, dtype=torch.float64), torch.cumsum(pr, 0)[:-1]])
        fewest, most = fp32.width_kept_range(before, p.top_p, len(ranked))
        k = min(len(ranked) if p.top_k == -1 else p.top_k, min_p_kept)
        sets += [(ranked[:min(n, k)], {"float32"}) for n in range(fewest, most + 1)]
    unique = {}
    for kept, precisions in sets:
        unique.setdefault(tuple(kept), set()).update(precisions)
    if len(unique) > MAX_OUTCOMES:
        raise NearBoundary(f"{len(unique)} kept sets are within float32 reach")
    return [(list(kept), precisions) for kept, precisions in unique.items()]


def filter_outcomes(logits, params, engine=ref.Engine(), exact_boundary=False):
    """(the rule's Filtered, [(kept ids, logprobs, precisions)] of every acceptable outcome), or
    raises."""
    f = ref.filter_row(logits, params, engine)
    check_cut(f)
    check_min_p(f, ref.check_params(params))
    outcomes = []
    for kept, precisions in filter_kept_sets(logits, params, engine, f, exact_boundary):
        lp = f.logprobs if kept == f.ranked[:f.kept].tolist() else kept_logprobs(f.scaled, kept)
        outcomes.append((kept, lp, precisions))
    return f, outcomes


def any_of_at(options: List[dict], precisions: List[set]) -> dict:
    """$any_of over outcomes, naming those acceptable at float32 only (float32_only)."""
    if len(options) == 1:
        return options[0]
    out = {"$any_of": options}
    only = [i for i, p in enumerate(precisions) if p == {"float32"}]
    return {**out, "float32_only": only} if only else out


def filter_expect(logits, params: ref.Params, engine=ref.Engine(), sparse=False,
                  exact_boundary=False) -> dict:
    """The expectation of a filter row: every outcome the rule allows in float64 and float32
    arithmetic (filter_kept_sets), or its error."""
    try:
        f, outcomes = filter_outcomes(logits, params, engine, exact_boundary)
    except ref.SieveError as e:
        return error(e)
    at = sample_points(f.ranked, logits.shape[0])
    return any_of_at([{"logprobs": logprobs_matcher(lp, f.scaled, at, sparse)}
                      for _, lp, _ in outcomes], [p for *_, p in outcomes])


def draw_tokens(probs: torch.Tensor, u: float, band: float = DRAW_BAND) -> List[int]:
    """The drawn token, and any token whose cdf interval lies within band * total of u * total."""
    d = ref.draw(probs, u)
    cdf = probs.to(torch.float64).cumsum(0)
    total = float(cdf[-1])
    target, width = u * total, band * total
    lo = torch.cat([torch.zeros(1, dtype=torch.float64), cdf[:-1]])
    near = (probs > 0) & (lo <= target + width) & (cdf > target - width)
    return sorted(set([d.token] + torch.nonzero(near).flatten().tolist()))


def token_expect(tokens: List[int]):
    return tokens[0] if len(tokens) == 1 else {"$any_of": tokens}


def sample_draw_band(lp: torch.Tensor, scaled: torch.Tensor) -> float:
    """The relative width around a cdf step where float32 probabilities exp(lp) could move the
    draw: twice the logprob bound, plus a float32 cdf of the kept tokens."""
    n = int((~torch.isinf(lp)).sum())
    return max(DRAW_BAND, 2 * fp32.logprob_bound(lp, scaled) + (n + 2) * fp32.U)


def sample_row_expect(lp, scaled, u, top) -> dict:
    """One sampled row: each token a draw within the band may give, its logprob, the top list."""
    f32_abs = fp32.logprob_bound(lp, scaled)
    tokens = draw_tokens(torch.exp(lp), u, sample_draw_band(lp, scaled))
    top_m = {"$approx_array": [[i, num(x)] for i, x in top], **LOGPROB_TOL, "f32_abs": f32_abs}
    return any_of([{"token": t, "logprob": approx(float(lp[t]), f32_abs=f32_abs),
                    "top_logprobs": top_m} for t in tokens])


def sample_expect(logits, params, seed, pos, n_top=0, sample_case=0, tag="main",
                  engine=ref.Engine()) -> dict:
    try:
        s = ref.sample(logits, params, seed, pos, n_top, sample_case, tag, engine)
    except ref.SieveError as e:
        return error(e)
    _, outcomes = filter_outcomes(logits, params, engine)
    if len(outcomes) > 1:
        raise NearBoundary("a top-p or tie decision within float32 reach in a sample case")
    return sample_row_expect(s.filtered.logprobs, s.filtered.scaled, s.u, s.top)


class NotSeparating(ValueError):
    """A case that does not separate what it claims to (make_fixtures refuses it)."""


# What a case of one stage is about: the first of these axes one of its readings has (case()).
TOP_P = ("topp_mass", "boundary", "topp_ties", "topp_scope", "topp_one")
TOP_K = ("topk_ties", "top_k_vocab")
TEMPERATURE = ("t0_below", "t0", "temperature_floor", "temperature_at", "temperature_op")
DRAW = ("draw", "hash")
LOGPROBS = ("logprobs",)


def case(cid: str, family: str, seed_ref: str, description: str, request: dict,
         expect: dict, readings=(), axis="none", separates=()) -> dict:
    """A case with the readings it separates. `axis` is what the case is about: an axis, which
    one of its readings must have; a tuple of axes, of which it takes the first one of its
    readings has, else none (a family's stage, where a case may give every reading of it the
    rule's answer); or "none". A reading of any other axis separates it only by the way: the fit
    must not blame that axis for a failure here. `separates` names the readings its description
    claims it tells from the rule, each of which must."""
    import readings as rd
    named = axis if isinstance(axis, tuple) else (axis,)
    unknown = [a for a in named if a != "none" and a not in rd.AXES]
    if unknown:
        raise ValueError(f"{cid}: no axis {', '.join(unknown)} (readings.AXES)")
    axes, found = [r["axis"] for r in readings], {r["name"] for r in readings}
    if isinstance(axis, tuple):
        axis = next((a for a in axis if a in axes), "none")
    if axis != "none" and axis not in axes:
        of_axis = [r.name for r in rd.READINGS if r.axis == axis]
        raise NotSeparating(f"{cid} claims axis {axis}, but none of its readings "
                            f"({', '.join(of_axis) or 'none'}) gives another answer here; it "
                            f"separates {', '.join(sorted(found)) or 'nothing'}")
    missed = [name for name in separates if name not in found]
    if missed:
        raise NotSeparating(f"{cid} claims to separate {', '.join(missed)} from the rule, but "
                            f"{'that reading gives' if len(missed) == 1 else 'those give'} the "
                            f"rule's answer here; it separates "
                            f"{', '.join(sorted(found)) or 'nothing'}")
    out = {"id": cid, "family": family, "seed_ref": seed_ref, "description": description,
           "axis": axis, "request": request, "expect": expect}
    if readings:
        out["readings"] = list(readings)
    return out


def _separations():
    import separations  # it builds on this module

    return separations


# ----------------------------------------------------------------------------- case builders


SAMPLING_OPTIONS = ("min_p", "frequency_penalty", "presence_penalty", "repetition_penalty",
                    "penalty_last_n")


def params_json(t=None, top_p=None, top_k=None, explicit_k=True, explicit_p=True,
                rest: ref.Params = ref.Params(), stated=()) -> dict:
    """Request parameters. top_k = -1 (off) is left out unless explicit_k, and top_p = 1 (off)
    unless explicit_p: an engine may reject an explicit -1 (the top_k_minus_one axis) or an
    explicit 1 (explicit_top_p_one), and only the cases about them should say so. Min-p and the
    penalties of `rest` are stated where they differ from their defaults (off), or are named
    in `stated`, so that a case names only the sampling options it needs (hello's
    "sampling_options")."""
    out = {name: param_num(getattr(rest, name)) if isinstance(getattr(rest, name), float)
           else getattr(rest, name) for name in SAMPLING_OPTIONS
           if name in stated or getattr(rest, name) != getattr(ref.Params(), name)}
    if t is not None:
        out["temperature"] = param_num(t) if isinstance(t, float) else t
    if top_p is not None and (explicit_p or top_p != 1.0):
        out["top_p"] = param_num(top_p) if isinstance(top_p, float) else top_p
    if top_k is not None and (explicit_k or top_k != -1):
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
                engine=ref.Engine(), recipe_spec=None, exact_boundary=False, axis="none",
                explicit_k=False, explicit_p=False, separates=(), rest=ref.Params()) -> dict:
    """A one-row filter case. With recipe_spec the row is sent as a recipe and the expected
    logprobs are sparse (kept-set checksum and sampled entries). `rest` holds min-p, the
    penalties and the ids they count (its temperature, top_p and top_k are not read)."""
    row = as_row(recipe_logits(recipe_spec) if recipe_spec else logits)
    logits_json = {"$recipe": recipe_spec} if recipe_spec else row_json(row)
    row_json_ = {"logits": logits_json,
                 "params": params_json(t, top_p, top_k, explicit_k, explicit_p, rest)}
    for name in ("output_ids", "prompt_ids"):
        if getattr(rest, name):
            row_json_[name] = list(getattr(rest, name))
    request = {"op": "filter", "rows": [row_json_]}
    if engine != ref.Engine():
        request["engine"] = engine_json(engine)
    params = ref.Params(t, top_p, top_k, explicit_k or top_k != -1, explicit_p or top_p != 1.0,
                        **rest.rest())
    sparse = recipe_spec is not None
    expect = {"rows": [filter_expect(row, params, engine, sparse=sparse,
                                     exact_boundary=exact_boundary)]}
    sep = _separations()
    found = sep.records("filter", expect, sep.filter_run(row, params, engine, sparse), [params],
                        engine)
    return case(cid, family, seed_ref, description, request, expect, found, axis, separates)


def validate_case(cid, family, seed_ref, description, t=1.0, top_p=1.0, top_k=-1,
                  axis="none", explicit_p=False, rest=ref.Params(), stated=(),
                  explicit_k=True) -> dict:
    """Every parameter stated but a top_p of 1, unless explicit_p (the cases about it), and a
    top_k of -1 unless not explicit_k; min-p and the penalties of `rest` where they are not off
    or are named in `stated`."""
    request = {"op": "validate", "params": params_json(t, top_p, top_k, explicit_k, explicit_p,
                                                       rest=rest, stated=stated)}
    try:
        p = ref.check_params(ref.Params(t, top_p, top_k, **rest.rest()))
        expect = {"params": {"temperature": exact(p.temperature), "top_p": exact(p.top_p),
                             "top_k": p.top_k}}
    except ref.SieveError as e:
        expect = error(e)
    params = ref.Params(t, top_p, top_k, explicit_k or top_k != -1,
                        explicit_p or top_p != 1.0, **rest.rest())
    sep = _separations()
    found = sep.records("validate", expect, sep.validate_run(params), [params])
    return case(cid, family, seed_ref, description, request, expect, found, axis)


def sample_row_json(logits, t, top_p, top_k, seed, pos, n_top) -> dict:
    row = {"logits": row_json(as_row(logits)),
           "params": params_json(t, top_p, top_k, explicit_k=False, explicit_p=False),
           "seed": str(seed), "position": pos}
    if n_top:
        row["top_logprobs"] = n_top
    return row


def sample_case(cid, family, seed_ref, description, rows: Sequence[dict], sample_case=0,
                tag="main", engine=ref.Engine(), axis="none") -> dict:
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
    expect, sep = {"rows": expect}, _separations()
    params = [ref.Params(r["t"], r["top_p"], r["top_k"], r["top_k"] != -1) for r in rows]
    found = sep.records("sample", expect, sep.sample_run(rows, sample_case, tag, engine), params,
                        engine)
    return case(cid, family, seed_ref, description, request, expect, found, axis)


def uniform_case(cid, family, seed_ref, description, items: Sequence[tuple],
                 axis="none") -> dict:
    """items: (seed, position, case, tag) tuples."""
    request = {"op": "uniform", "items": [
        {"seed": str(s), "position": p, "case": c, "tag": t} for s, p, c, t in items]}
    try:
        expect = {"u": [exact(ref.uniform(s, p, c, t)) for s, p, c, t in items]}
    except ref.SieveError as e:
        expect = error(e)
    sep = _separations()
    found = sep.records("uniform", expect, sep.uniform_run(items))
    return case(cid, family, seed_ref, description, request, expect, found, axis)


def draw_case(cid, family, seed_ref, description, probs, seed, pos, sample_case=0,
              tag="main", axis="none") -> dict:
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
    sep = _separations()
    found = sep.records("draw", expect, sep.draw_run(probs, seed, pos, sample_case, tag))
    return case(cid, family, seed_ref, description, request, expect, found, axis)


def position_case(cid, family, seed_ref, description, mode, q, k, row=0, axis="none") -> dict:
    request = {"op": "position", "mode": mode, "seqlen_q": q, "seqlen_k": k, "row": row}
    try:
        expect = {"position": ref.position(mode, q, k, row)}
    except ref.SieveError as e:
        expect = error(e)
    sep = _separations()
    found = sep.records("position", expect, sep.position_run(mode, q, k, row))
    return case(cid, family, seed_ref, description, request, expect, found, axis)


def find_position(seed: int, lo: float, hi: float, sample_case=0, tag="main") -> int:
    """The first position whose uniform falls in [lo, hi): lets a case aim the hash's dart."""
    for pos in range(1 << 20):
        if lo <= ref.uniform(seed, pos, sample_case, tag) < hi:
            return pos
    raise ValueError("no position found")


# ----------------------------------------------------------------------------- speculate


def ratio_matcher(ratio: float, bound_rel: float):
    """A step's p / q: +inf and 0 exactly, else within the float32 relative error of p and q."""
    if math.isinf(ratio) or ratio == 0.0:
        return exact(num(ratio))
    return approx(ratio, f32_abs=ratio * bound_rel)


class _Rows:
    """The processed rows of a speculate request, with each row's float32 logprob bound."""

    def __init__(self, target, draft, tokens, tp, dp, engine):
        v = target[0].shape[0]
        self.p, self.bp, self.q, self.bq = [], [], [], []
        for row in target:
            f = ref.filter_row(row, tp, engine)
            self.p.append(torch.exp(f.logprobs))
            self.bp.append(fp32.logprob_bound(f.logprobs, f.scaled))
            self.last = f
        for j, x in enumerate(tokens):
            if draft is None:
                self.q.append(torch.zeros(v, dtype=torch.float64).index_fill_(
                    0, torch.tensor([x]), 1.0))
                self.bq.append(0.0)
                continue
            g = ref.filter_row(draft[j], dp, engine)
            self.q.append(torch.exp(g.logprobs))
            self.bq.append(fp32.logprob_bound(g.logprobs, g.scaled))

    def ratio_bound(self, j: int) -> float:
        """The relative float32 error of p / q at step j."""
        return 1.01 * (self.bp[j] + self.bq[j]) + 4 * fp32.U

    def last_tokens(self, s: ref.Speculated) -> List[int]:
        """The tokens the last draw (the residual's or the bonus's) may give within float32
        reach: the float32 p and q move each cdf step by at most their bounds."""
        if s.bonus:
            f = self.last
            return draw_tokens(torch.exp(f.logprobs), s.u, sample_draw_band(f.logprobs, f.scaled))
        j = s.accepted
        r = torch.clamp(self.p[j] - self.q[j], min=0.0)
        if float(r.sum()) == 0.0:
            r = self.p[j]
        width = self.bp[j] + self.bq[j] + (r.shape[0] + 2) * fp32.U
        return draw_tokens(r, s.u, max(DRAW_BAND, width / float(r.sum())))


def speculate_expect_one(s: ref.Speculated, rows: _Rows) -> dict:
    return {"accepted": s.accepted, "tokens": s.tokens[:-1] + [token_expect(rows.last_tokens(s))],
            "bonus": s.bonus,
            "steps": [{"accepted": st.accepted, "u": exact(st.u),
                       "ratio": ratio_matcher(st.ratio, rows.ratio_bound(j))}
                      for j, st in enumerate(s.steps)]}


def speculate_expect(target, tokens, draft, tp, dp, seed, pos, engine=ref.Engine()) -> dict:
    """The answer of the rule, and where an accept test sits within float32 reach of u (its
    margin below the ratio's float32 error), the chain with that test turned the other way,
    acceptable at float32 only. A test within 1e-12 of u is refused: no case should rest on
    float64 rounding. Tests with p or q 0, or p = q (equal rows), are decided exactly."""
    try:
        s = ref.speculate(target, tokens, draft, tp, dp, seed, pos, engine)
    except ref.SieveError as e:
        return error(e)
    rows = _Rows(target, draft, tokens, tp, dp, engine)
    options, precisions = [speculate_expect_one(s, rows)], [{"float32", "float64"}]
    for j, st in enumerate(s.steps):
        if st.p == 0.0 or st.q == 0.0 or st.p == st.q:
            continue  # decided in any arithmetic: 0 < p, u q < 0, u p < p
        if st.margin < 1e-12 * max(1.0, st.ratio):
            raise NearBoundary(f"accept test {j} is within float64 reach of u")
        if st.margin <= st.ratio * rows.ratio_bound(j) + 2 * fp32.U:
            flipped = ref.speculate(target, tokens, draft, tp, dp, seed, pos, engine, flip=j)
            options.append(speculate_expect_one(flipped, rows))
            precisions.append({"float32"})
    return any_of_at(options, precisions)


def speculate_request(target, tokens, draft, tp, dp, seed, pos, engine=ref.Engine(),
                      sample_draft=False) -> dict:
    def side(rows, params):
        out = {"rows": [row_json(as_row(r)) for r in rows]} if rows is not None else {}
        p = params_json(params.temperature, params.top_p, params.top_k, explicit_k=False,
                        explicit_p=False)
        return {**out, "params": p} if p else out

    draft_side = side(draft, dp)
    if not sample_draft:
        draft_side = {"tokens": list(tokens), **draft_side}
    request = {"op": "speculate", "seed": str(seed), "position": pos,
               "target": side(target, tp), "draft": draft_side}
    if engine != ref.Engine():
        request["engine"] = engine_json(engine)
    return request


def speculate_case(cid, family, seed_ref, description, target, tokens, draft=None,
                   tp=ref.Params(), dp=ref.Params(), seed=0, pos=0, engine=ref.Engine(),
                   axis="none") -> dict:
    """target: n + 1 rows of logits; tokens: the n drafts; draft: their n rows, or None for
    greedy drafts."""
    target = [as_row(r) for r in target]
    draft = None if draft is None else [as_row(r) for r in draft]
    request = speculate_request(target, tokens, draft, tp, dp, seed, pos, engine)
    expect, sep = speculate_expect(target, tokens, draft, tp, dp, seed, pos, engine), _separations()
    try:
        rows = _Rows(target, draft, tokens, tp, dp, engine)
        bound = max(rows.ratio_bound(j) for j in range(len(tokens)))
    except (ref.SieveError, IndexError):
        bound = 0.0  # an error case: no ratio to compare
    found = sep.records("speculate", expect,
                        sep.speculate_run(target, tokens, draft, tp, dp, seed, pos, engine, bound),
                        [tp, dp], engine)
    return case(cid, family, seed_ref, description, request, expect, found, axis)
