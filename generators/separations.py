"""Which wrong readings a case separates, and the answer each of them gives.

For every reading of readings.py that applies to a case, run it on the case's request, build the
answer an implementation with that misreading gives and the expectation of that answer, and keep
the reading when the case's expectation rejects its answer (at float64, and at float32 when the
float32 bounds do not absorb the difference). The harness hints a reading's cause only when an
answer matches the reading's expectation (fixtures/README.md, "Readings").
"""

from typing import Iterable, List, Optional

import torch

import fixture_format as ff
import matcher
import readings as rd
import reference as ref

EPS = ref.SAMPLING_EPS


def _error_answer(e: ref.SieveError) -> dict:
    return {"error": {"kind": e.kind, "field": e.field, "code": e.code}}


def _applies(reading: rd.Reading, op: str, params: List[ref.Params], engine: ref.Engine) -> bool:
    """False only where the reading cannot change the answer, to save the work of running it."""
    # A speculative step filters its rows, hashes its uniforms and draws its last token.
    if op not in reading.ops and not (op == "speculate" and
                                      set(reading.ops) & {"filter", "uniform", "draw"}):
        return False
    cut = any(p.top_p != 1.0 or p.top_k != -1 or p.min_p > 0.0 for p in params)
    counted = any(p.output_ids for p in params)
    cold = any(isinstance(p.temperature, float) and 0 <= p.temperature < EPS for p in params)
    top_p = any(p.top_p != 1.0 for p in params)
    top_k = any(p.top_k != -1 for p in params)
    numbers = [p.temperature for p in params if isinstance(p.temperature, float)]
    return {
        "rank_key=logit": cut, "topp_scope=ignored": top_p, "topp_ties=highest": top_p, "topp_ties=all": top_p,
        "topp_ties=unspecified": top_p, "topk_ties=by_id_desc": top_k,
        "topk_ties=unspecified": top_k, "t0_below=below_1e-6": cold, "t0_below=zero": cold,
        "t0_below=nonpositive": cold or any(t < 0 for t in numbers),
        "t0_below=below_1e-7": cold or any(t < 0 for t in numbers),
        "t0_below=zero_negative_scales": cold or any(t < 0 for t in numbers),
        "t0=topk1": cold, "t0=argmax": cold,
        "t0=reject": cold, "temperature_floor=0.01": any(EPS <= t < 0.01 for t in numbers),
        "top_k_minus_one=error": any(p.top_k == -1 and p.explicit_k for p in params),
        "explicit_top_p_one=error": any(p.top_p == 1.0 and p.explicit_p for p in params),
        "top_k_vocab=error": any(p.top_k != -1 for p in params),
        "top_k_max=none": any(rd.above_int32(p.top_k) for p in params),
        "param_precision=float32": any(rd.to_float32(x) != x for p in params
                                       for x in (p.temperature, p.top_p)),
        "topp_one=float32_tail": op == "filter" and any(
            p.top_p == 1.0 and p.top_k != -1 for p in params),
        "logprobs=raw": True, "logprobs=scaled": cut,
        "t0-argmax": cold, "t0-clamp-keeps-filters": cold, "validation-after-clamp": cold,
        "check_order=t0_rule_top_k_first": cold or any(
            rd.bad_top_p(p.top_p) and rd.bad_top_k(p.top_k) for p in params),
        "topk-zero-is-off": any(p.top_k == 0 for p in params),
        "ge-boundary": any(p.top_p != 1.0 for p in params),
        "topp-inclusive-cumsum": any(p.top_p != 1.0 for p in params),
        "topk-first-renormalized": any(p.top_p != 1.0 and p.top_k != -1 for p in params),
        "topk-keeps-ties": any(p.top_k != -1 for p in params),
        "reversed-ties": cut, "unrenormalized-logprobs": cut, "raw-logprobs": cut,
        "temperature-after-filters": cut and any(p.temperature != 1.0 for p in params),
        "divide-by-temperature": any(p.temperature != 1.0 for p in params),
        "blacklist-after-force-topk": bool(engine.force_topk and engine.blacklist),
        "force-topk-after-temperature": bool(engine.force_topk),
        "force-topk-after-softmax": bool(engine.force_topk),
        "blacklist-after-temperature": bool(engine.blacklist),
        "blacklist-after-softmax": bool(engine.blacklist),
        "topk-off-by-one": any(p.top_k not in (-1, 0) for p in params),
        "topp-one-still-cuts": op == "filter" and any(p.top_p == 1.0 for p in params),
        "penalty-after-temperature": counted and any(p.temperature != 1.0 for p in params),
        "presence-per-occurrence": counted, "repetition-divides-negative": counted,
        "penalty-window-ignored": any(p.penalty_last_n != -1 and p.output_ids for p in params),
        "penalty-ids-ignored": counted or any(p.prompt_ids for p in params),
        "min-p-absolute": any(p.min_p > 0.0 for p in params),
        "penalty_order=repetition_first": any(
            p.output_ids and p.repetition_penalty != 1.0 and
            (p.frequency_penalty != 0.0 or p.presence_penalty != 0.0) for p in params),
        "penalty_tokens=repetition_prompt": any(p.prompt_ids and p.repetition_penalty != 1.0
                                                for p in params),
        "penalty_tokens=prompt": any(p.prompt_ids for p in params),
        "min_p_scale=unscaled": any(p.min_p > 0.0 and p.temperature != 1.0 for p in params),
        "min_p_order=first": any(p.min_p > 0.0 and p.top_p < 1.0 for p in params),
        "min_p_boundary=remove_equal": any(p.min_p > 0.0 for p in params),
        "penalty_range=repetition_unbounded": any(p.repetition_penalty > 2.0 for p in params),
        "penalty_range=unchecked": any(_out_of_range(p) for p in params),
        "penalty_overflow=minus_inf": counted,
    }.get(reading.name, True)


def _out_of_range(p: ref.Params) -> bool:
    """Min-p or a penalty outside the rule's range (penalty_range)."""
    try:
        ref.check_params(ref.Params(**p.rest()))
        return False
    except ref.SieveError:
        return True


def records(op: str, expect: dict, run, params=(), engine=ref.Engine()) -> List[dict]:
    """The readings a case separates. `run(reading)` gives (answer, expectation) of the case
    under a reading (None: the rule, which must satisfy the case's expectation)."""
    answer, _ = run(None)
    assert matcher.matches(expect, answer, "float64"), "readings.py disagrees with the rule"
    out = []
    for reading in rd.READINGS:
        if not _applies(reading, op, list(params), engine):
            continue
        answer, reading_expect = run(reading.name)
        precisions = [p for p in ff.PRECISIONS if not matcher.matches(expect, answer, p)]
        if precisions:
            out.append({"name": reading.name, **({"rule": reading.rule} if reading.rule else {}),
                        "axis": reading.axis, "hint": reading.hint, "precisions": precisions,
                        "expect": reading_expect})
    return out


# ----------------------------------------------------------------------------- per op


def filter_run(logits: torch.Tensor, params: ref.Params, engine: ref.Engine, sparse: bool):
    at = ff.sample_points(ref.filter_row(logits, params, engine).ranked,
                          logits.shape[0]) if sparse else []

    def run(reading: Optional[str]):
        if reading == "topp-one-still-cuts":
            return one_still_cuts(logits, params, engine, at, sparse)
        if reading == "topp_one=float32_tail":
            return float32_tail(logits, params, engine, at, sparse)
        try:
            g = rd.filter_row(logits, params, engine, reading)
        except ref.SieveError as e:
            return {"rows": [_error_answer(e)]}, {"rows": [ff.error(e)]}
        answer = {"rows": [{"logprobs": ff.row_json(g.logprobs)}]}
        return answer, {"rows": [{"logprobs": ff.logprobs_matcher(g.logprobs, g.scaled, at,
                                                                   sparse, g.summed)}]}
    return run


TAIL_LANES = (8, 1, 16)  # the oracle's variant's, then other float32 sums a kernel might use


def float32_tail(logits, params, engine, at, sparse):
    """topp_one=float32_tail: the cut depends on the order the float32 total was added in, so
    the answer is the oracle's variant's (eight lanes) and the expectation accepts the cut of
    a sequential and of a sixteen-lane sum too."""
    try:
        rows = [rd.filter_row(logits, params, engine, "topp_one=float32_tail", lanes)
                for lanes in TAIL_LANES]
    except ref.SieveError as e:
        return {"rows": [_error_answer(e)]}, {"rows": [ff.error(e)]}
    answer = {"rows": [{"logprobs": ff.row_json(rows[0].logprobs)}]}
    unique = {}
    for g in rows:
        unique.setdefault(tuple(torch.isinf(g.logprobs).tolist()), g)
    options = [{"logprobs": ff.logprobs_matcher(g.logprobs, g.scaled, at, sparse)}
               for g in unique.values()]
    return answer, {"rows": [ff.any_of(options)]}


def one_still_cuts(logits, params, engine, at, sparse):
    """top-p at top_p = 1 on float32 masses: the answer of the route that cuts the most, and an
    expectation accepting the cut of every route that cuts."""
    try:
        f = ref.filter_row(logits, params, engine)
        sets = [k for k in rd.one_still_cuts(logits, params, engine)
                if k != f.ranked[:f.kept].tolist()]
    except ref.SieveError as e:
        return {"rows": [_error_answer(e)]}, {"rows": [ff.error(e)]}
    if not sets:
        sets = [f.ranked[:f.kept].tolist()]
    lps = [ff.kept_logprobs(f.scaled, kept) for kept in sets]
    fewest = min(range(len(sets)), key=lambda i: len(sets[i]))
    answer = {"rows": [{"logprobs": ff.row_json(lps[fewest])}]}
    options = [{"logprobs": ff.logprobs_matcher(lp, f.scaled, at, sparse)} for lp in lps]
    return answer, {"rows": [ff.any_of(options)]}


def _sample_row(r: dict, sample_case: int, tag: str, engine: ref.Engine, reading):
    params = ref.Params(r["t"], r["top_p"], r["top_k"], r["top_k"] != -1)
    logits = ff.as_row(r["logits"])
    try:
        returns_other = reading in ("raw-logprobs", "logprobs=raw", "logprobs=scaled")
        g = rd.filter_row(logits, params, engine, None if returns_other else reading)
        if not 0 <= r["n_top"] <= logits.shape[0]:
            raise ref.SieveError("SIEVE_ETOPLOGPROBS", "invalid_request", "top_logprobs")
        u = rd.uniform(r["seed"], r["pos"], sample_case, tag, reading)
    except ref.SieveError as e:
        return _error_answer(e), ff.error(e)
    token = rd.draw(torch.exp(g.logprobs), u, reading)
    returned = g
    if reading == "raw-logprobs":
        returned = rd.filter_row(logits, params, engine, reading)
    if reading == "logprobs=raw":
        returned = rd.filter_row(logits, ref.Params(), engine, None)
    if reading == "logprobs=scaled":
        returned = rd.filter_row(logits, params, engine, "raw-logprobs")
    # An engine returns its top_logprobs from the row its logprob comes from.
    top = ref.top_logprobs((returned if reading and reading.startswith("logprobs=") else g)
                           .logprobs, r["n_top"])
    bound = ff.fp32.logprob_bound(returned.logprobs, returned.scaled, returned.summed)
    logprob = float(returned.logprobs[token])
    answer = {"token": token, "logprob": ff.num(logprob),
              "top_logprobs": [[i, ff.num(x)] for i, x in top]}
    expect = {"token": token, "logprob": ff.approx(logprob, f32_abs=bound),
              "top_logprobs": {"$approx_array": [[i, ff.num(x)] for i, x in top],
                               **ff.LOGPROB_TOL, "f32_abs": bound}}
    return answer, expect


def sample_run(rows: Iterable[dict], sample_case: int, tag: str, engine: ref.Engine):
    def run(reading):
        pairs = [_sample_row(r, sample_case, tag, engine, reading) for r in rows]
        return {"rows": [a for a, _ in pairs]}, {"rows": [e for _, e in pairs]}
    return run


def validate_run(params: ref.Params):
    def run(reading):
        try:
            p = rd.check_params(params, reading)
        except ref.SieveError as e:
            return _error_answer(e), ff.error(e)
        values = {"temperature": p.temperature, "top_p": p.top_p, "top_k": p.top_k}
        return {"params": values}, {"params": {"temperature": ff.exact(p.temperature),
                                               "top_p": ff.exact(p.top_p), "top_k": p.top_k}}
    return run


def uniform_run(items):
    def run(reading):
        try:
            u = [rd.uniform(s, p, c, t, reading) for s, p, c, t in items]
        except ref.SieveError as e:
            return _error_answer(e), ff.error(e)
        return {"u": u}, {"u": [ff.exact(x) for x in u]}
    return run


def draw_run(probs, seed, pos, sample_case, tag):
    def run(reading):
        try:
            u = rd.uniform(seed, pos, sample_case, tag, reading)
            p = torch.tensor([float(x) for x in probs], dtype=torch.float64)
            ref.draw(p, u)  # the checks of the probabilities
        except ref.SieveError as e:
            return _error_answer(e), ff.error(e)
        token = rd.draw(p, u, reading)
        return {"tokens": [token]}, {"tokens": [token]}
    return run


def position_run(mode, q, k, row):
    def run(reading):
        try:
            p = rd.position(mode, q, k, row, reading)
        except ref.SieveError as e:
            return _error_answer(e), ff.error(e)
        return {"position": p}, {"position": p}
    return run


def speculate_run(target, tokens, draft, tp, dp, seed, pos, engine, bound=0.0):
    """A reading's speculate answer, and the expectation of exactly that answer, its ratios
    within `bound` (relative) at float32: the rule's largest, the float32 error of p / q on
    rows like these."""
    def run(reading):
        try:
            a = rd.speculate(target, tokens, draft, tp, dp, seed, pos, engine, reading)
        except ref.SieveError as e:
            return _error_answer(e), ff.error(e)
        answer = {**a, "steps": [{**st, "ratio": ff.num(st["ratio"])} for st in a["steps"]]}
        expect = {**a, "steps": [{"accepted": st["accepted"], "u": ff.exact(st["u"]),
                                  "ratio": ff.ratio_matcher(st["ratio"], bound)}
                                 for st in a["steps"]]}
        return answer, expect
    return run
