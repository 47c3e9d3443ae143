"""The sieve oracle from Python: the DeepInfer sampling rule (oracle/SPEC.md) through ctypes.

Standard library only; loads libsieve.so from $SIEVE_LIB, from the wheel this file came in
(lib/), from the checkout this file is in (build/libsieve.so), from where `make install` put it
(_installed.py, written by the install), or from the system. Functions take Python lists,
NumPy arrays or PyTorch tensors and give back the same kind; bad parameters raise ValueError
with the oracle's message, which names the field.

    import sieve
    lp = sieve.filter([2.0, 1.5, 1.0], temperature=0.7, top_p=0.9, top_k=2)
    sieve.assert_conforms(my_filter)   # my_filter(logits, temperature, top_k, top_p) -> logprobs
"""

import ctypes
import ctypes.util
import json
import math
import os
import traceback
from pathlib import Path

__all__ = ["filter", "sample", "speculate", "uniform", "draw", "validate", "position",
           "assert_conforms", "Conformance", "SieveError", "Rejected", "fixtures_path"]


class SieveError(ValueError):
    """A rejected input: the oracle's error name (code) and message."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class Rejected(ValueError):
    """Raised by a sampler under test (sieve.adapter, the pytest plugin) for an input it rejects:
    its answer is an error naming `field` (temperature, top_p, top_k or logits), as
    harness/protocol/PROTOCOL.md's errors do."""

    def __init__(self, field, message):
        super().__init__(message)
        self.field = field


class _Params(ctypes.Structure):
    _fields_ = [("temperature", ctypes.c_double), ("top_p", ctypes.c_double),
                ("top_k", ctypes.c_int64), ("min_p", ctypes.c_double),
                ("penalties", ctypes.c_void_p)]


class _Engine(ctypes.Structure):
    _fields_ = [("force_topk", ctypes.c_int64), ("blacklist", ctypes.POINTER(ctypes.c_int64)),
                ("blacklist_len", ctypes.c_size_t)]


class _Info(ctypes.Structure):
    _fields_ = [("kept", ctypes.c_size_t), ("kept_mass", ctypes.c_double),
                ("topp_margin", ctypes.c_double), ("cut_gap", ctypes.c_double),
                ("minp_margin", ctypes.c_double)]


class _Key(ctypes.Structure):
    _fields_ = [("seed", ctypes.c_uint64), ("position", ctypes.c_uint64),
                ("sample_case", ctypes.c_int), ("tag", ctypes.c_int)]


class _Top(ctypes.Structure):
    _fields_ = [("token", ctypes.c_int64), ("logprob", ctypes.c_double)]


class _Result(ctypes.Structure):
    _fields_ = [("token", ctypes.c_int64), ("logprob", ctypes.c_double), ("u", ctypes.c_double),
                ("draw_margin", ctypes.c_double), ("filter", _Info)]


_HERE = Path(__file__).resolve().parent
try:
    from . import _installed  # the library's and the fixtures' paths, written by make install
except ImportError:
    _installed = None
_lib = None


def _library():
    global _lib
    if _lib is None:
        bundled = sorted(_HERE.glob("lib/libsieve.so.*"))
        candidates = [os.environ.get("SIEVE_LIB"), bundled and str(bundled[0]),
                      str(_HERE.parents[2] / "build" / "libsieve.so"),
                      _installed and _installed.LIB,
                      ctypes.util.find_library("sieve")]
        path = next((c for c in candidates if c and (os.path.exists(c) or "/" not in c)), None)
        if path is None:
            raise OSError("libsieve.so not found: build sieve (make) or set SIEVE_LIB")
        _lib = ctypes.CDLL(path)
        _lib.sieve_strerror.restype = ctypes.c_char_p
        _lib.sieve_err_name.restype = ctypes.c_char_p
    return _lib


def _check(rc):
    if rc != 0:
        lib = _library()
        raise SieveError(lib.sieve_err_name(rc).decode(), lib.sieve_strerror(rc).decode())


def _kind(x):
    module = type(x).__module__.split(".")[0]
    return module if module in ("numpy", "torch") else "list"


def _floats(x, ctype=ctypes.c_float):
    """A ctypes array of the values of a list, NumPy array or tensor (-inf, NaN kept)."""
    values = x.tolist() if hasattr(x, "tolist") else list(x)
    return (ctype * len(values))(*[float(v) for v in values]), len(values)


def _like(values, kind, like):
    if kind == "numpy":
        import numpy
        return numpy.asarray(values, dtype=numpy.float64)
    if kind == "torch":
        import torch
        return torch.tensor(values, dtype=torch.float64, device=like.device)
    return list(values)


def _params(temperature, top_p, top_k):
    return _Params(float(temperature), float(top_p), int(top_k))


def _engine(force_topk, blacklist):
    ids = (ctypes.c_int64 * len(blacklist))(*[int(i) for i in blacklist])
    return _Engine(int(force_topk), ids, len(blacklist)), ids


def validate(temperature=1.0, top_p=1.0, top_k=-1):
    """The checked and normalized parameters (seed 000:9, 000:32, 000:63)."""
    out = _Params()
    _check(_library().sieve_params_check(ctypes.byref(_params(temperature, top_p, top_k)),
                                         ctypes.byref(out)))
    return {"temperature": out.temperature, "top_p": out.top_p, "top_k": out.top_k}


def filter(logits, temperature=1.0, top_p=1.0, top_k=-1, force_topk=0, blacklist=()):
    """Processed logprobs of one row, -inf where removed; the same kind as `logits`."""
    row, n = _floats(logits)
    out = (ctypes.c_double * n)()
    engine, _keep = _engine(force_topk, blacklist)
    _check(_library().sieve_filter(row, ctypes.c_size_t(n),
                                   ctypes.byref(_params(temperature, top_p, top_k)),
                                   ctypes.byref(engine), out, None))
    return _like(list(out), _kind(logits), logits)


def _key(seed, position_, case, tag):
    if tag not in ("main", "mtp"):
        raise SieveError("SIEVE_ETAG", "tag must be main or mtp")
    return _Key(int(seed) % (1 << 64), int(position_) % (1 << 64), int(case),
                0 if tag == "main" else 1)


def sample(logits, seed, position, temperature=1.0, top_p=1.0, top_k=-1, top_logprobs=0,
           case=0, tag="main", force_topk=0, blacklist=()):
    """Filter, then draw with the hash uniform: token, its processed logprob, top_logprobs, u."""
    row, n = _floats(logits)
    top = (_Top * max(int(top_logprobs), 1))()
    result = _Result()
    engine, _keep = _engine(force_topk, blacklist)
    key = _key(seed, position, case, tag)
    _check(_library().sieve_sample(row, ctypes.c_size_t(n),
                                   ctypes.byref(_params(temperature, top_p, top_k)),
                                   ctypes.byref(engine), ctypes.byref(key),
                                   ctypes.c_size_t(int(top_logprobs)), top,
                                   ctypes.byref(result)))
    return {"token": result.token, "logprob": result.logprob, "u": result.u,
            "top_logprobs": [(top[i].token, top[i].logprob) for i in range(int(top_logprobs))]}


class _Speculation(ctypes.Structure):
    _fields_ = [("target_logits", ctypes.POINTER(ctypes.c_float)),
                ("draft_logits", ctypes.POINTER(ctypes.c_float)),
                ("draft_tokens", ctypes.POINTER(ctypes.c_int64)), ("n_draft", ctypes.c_size_t),
                ("vocab", ctypes.c_size_t), ("target_params", _Params), ("draft_params", _Params),
                ("seed", ctypes.c_uint64), ("position", ctypes.c_uint64)]


class _Step(ctypes.Structure):
    _fields_ = [("u", ctypes.c_double), ("p", ctypes.c_double), ("q", ctypes.c_double),
                ("ratio", ctypes.c_double), ("margin", ctypes.c_double), ("accepted", ctypes.c_int)]


class _Speculated(ctypes.Structure):
    _fields_ = [("accepted", ctypes.c_size_t), ("n_tokens", ctypes.c_size_t),
                ("n_steps", ctypes.c_size_t), ("bonus", ctypes.c_int), ("u", ctypes.c_double), ("draw_margin", ctypes.c_double),
                ("residual_mass", ctypes.c_double)]


def _rows(rows):
    """One float32 buffer of equal-length rows, and the rows' length."""
    lists = [r.tolist() if hasattr(r, "tolist") else list(r) for r in rows]
    if not lists or any(len(r) != len(lists[0]) for r in lists):
        raise ValueError("the rows must be a non-empty list of rows of one length")
    flat = [float(x) for r in lists for x in r]
    return (ctypes.c_float * len(flat))(*flat), len(lists[0])


def speculate(target_rows, draft_tokens, draft_rows=None, seed=0, position=0,
              target_params=None, draft_params=None, force_topk=0, blacklist=()):
    """Verifies a draft chain (oracle/SPEC.md, "Speculative decoding"): n + 1 target rows, n
    draft tokens and their n draft rows (None: greedy drafts). Params are dicts of temperature,
    top_p and top_k. Returns accepted, tokens, bonus, the steps (u, p, q, ratio, margin,
    accepted), u and draw_margin of the last draw, and residual_mass after a rejection."""
    target, v = _rows(target_rows)
    n = len(draft_tokens)
    draft, dv = _rows(draft_rows) if draft_rows is not None else (None, v)
    if dv != v:
        raise ValueError("the draft rows must have as many logits as the target rows")
    tokens = (ctypes.c_int64 * max(n, 1))(*[int(t) for t in draft_tokens])
    params = [_params(**{"temperature": 1.0, "top_p": 1.0, "top_k": -1, **(p or {})})
              for p in (target_params, draft_params)]
    spec = _Speculation(ctypes.cast(target, ctypes.POINTER(ctypes.c_float)),
                        ctypes.cast(draft, ctypes.POINTER(ctypes.c_float)) if draft else None,
                        tokens, n, v, params[0], params[1], int(seed) & (2**64 - 1),
                        int(position) & (2**64 - 1))
    steps, out, result = (_Step * max(n, 1))(), (ctypes.c_int64 * (n + 1))(), _Speculated()
    engine, _keep = _engine(force_topk, blacklist)
    _check(_library().sieve_speculate(ctypes.byref(spec), ctypes.byref(engine), steps, out,
                                      ctypes.byref(result)))
    ran = result.n_steps
    return {"accepted": result.accepted, "tokens": list(out[:result.n_tokens]),
            "bonus": bool(result.bonus),
            "steps": [{"u": s.u, "p": s.p, "q": s.q, "ratio": s.ratio, "margin": s.margin,
                       "accepted": bool(s.accepted)} for s in steps[:ran]],
            "u": result.u, "draw_margin": result.draw_margin,
            "residual_mass": result.residual_mass}


def uniform(seed, position, case=0, tag="main"):
    """The hash uniform of a draw key (seed 000:45-47)."""
    u = ctypes.c_double()
    _check(_library().sieve_uniform(ctypes.byref(_key(seed, position, case, tag)),
                                    ctypes.byref(u)))
    return u.value


def draw(probs, seed, position, case=0, tag="main"):
    """The token the inverse CDF gives for the key's uniform (seed 000:48-50)."""
    row, n = _floats(probs, ctypes.c_double)
    token = ctypes.c_int64()
    _check(_library().sieve_draw(row, ctypes.c_size_t(n),
                                 ctypes.c_double(uniform(seed, position, case, tag)),
                                 ctypes.byref(token), None))
    return token.value


def position(mode, seqlen_q, seqlen_k, row=0):
    """The sample position of a prefill or decode row (seed 000:59)."""
    if mode not in ("prefill", "decode"):
        raise SieveError("SIEVE_EPOSITION", "mode must be prefill or decode")
    out = ctypes.c_int64()
    _check(_library().sieve_position(0 if mode == "prefill" else 1, ctypes.c_int64(seqlen_q),
                                     ctypes.c_int64(seqlen_k), ctypes.c_int64(row),
                                     ctypes.byref(out)))
    return out.value


# ----------------------------------------------------------------------------- conformance

# The expectation-file schemas `sieve run --expect` accepts (harness/run/fixture.h): version 2 kept
# the case ids of version 1.
_EXPECT_SCHEMAS = ("sieve-fixtures/2", "sieve-fixtures/1")
# How many failures an AssertionError shows in full before it lists the rest by id.
_DETAILED = 10


def fixtures_path():
    """The fixture file: $SIEVE_FIXTURES, the wheel's, the checkout's or the installed one."""
    candidates = [os.environ.get("SIEVE_FIXTURES"),
                  str(_HERE / "share" / "sieve" / "sieve-fixtures.json"),
                  str(_HERE.parents[2] / "fixtures" / "sieve-fixtures.json"),
                  _installed and _installed.FIXTURES,
                  "/usr/local/share/sieve/sieve-fixtures.json", "/usr/share/sieve/sieve-fixtures.json"]
    for c in candidates:
        if c and os.path.exists(c):
            return c
    raise OSError("sieve-fixtures.json not found: set SIEVE_FIXTURES")


def _number(x):
    """A protocol number: a JSON number, null (-inf), or "nan", "inf", "-inf"."""
    if x is None:
        return -math.inf
    if isinstance(x, str) and x in ("nan", "inf", "-inf"):
        return float(x)
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return float(x)
    raise ValueError(f"{x!r} is not a number")


def _integer(x):
    value = _number(x)
    if not math.isfinite(value) or value != int(value):
        raise ValueError(f"top_k {x!r} is not an integer")
    return int(value)


def _arguments(row):
    """fn's arguments for a fixture row, converted as harness/adapters/python_adapter.py converts
    a request: logits as a list of float32 values (Python floats; null is -inf, "nan", "inf"
    and "-inf" their floats), temperature and top_p as floats, top_k as an int (2.0 is 2; -1
    when absent). Raises ValueError where that adapter rejects a value before its sampler runs:
    a value that is not a number, a top_k that is not an integer (1.5, "nan")."""
    params = row.get("params", {})
    values = [_number(x) for x in row["logits"]]
    return (list((ctypes.c_float * len(values))(*values)), _number(params.get("temperature", 1.0)),
            _integer(params.get("top_k", -1)), _number(params.get("top_p", 1.0)))


def _ask(fn, row):
    """The arguments fn gets for a row (None when the conversion rejects it) and its answer as
    a response row: {"logprobs": [...]}, or {"error": message} for a rejection."""
    try:
        args = _arguments(row)
    except ValueError as e:
        return None, {"error": f"{e}, so the adapter's conversion rejects it"}
    try:
        got = fn(*args)
    except ValueError as e:
        # Where it was raised: a math domain error is a ValueError too, not a rejection.
        where = traceback.extract_tb(e.__traceback__)[-1]
        return args, {"error": f"raised {type(e).__name__}: {e} (at {Path(where.filename).name}:"
                               f"{where.lineno})"}
    values = got.tolist() if hasattr(got, "tolist") else got
    return args, {"logprobs": [float(x) for x in values]}


def _outcomes(expect, precision):
    """The response rows an expected row accepts at `precision` (the options of an $any_of)."""
    if "$any_of" not in expect:
        return [expect]
    only = set(expect.get("float32_only", ())) if precision == "float64" else set()
    return [e for i, e in enumerate(expect["$any_of"]) if i not in only]


def _logprobs_difference(matcher, got, precision):
    """Where `got` first leaves an $approx_array matcher, with the bound; None when it meets it."""
    want = [_number(w) for w in matcher["$approx_array"]]
    if len(got) != len(want):
        return f"expected {len(want)} logprobs, got {len(got)}"
    f32 = matcher.get("f32_abs", 0.0) if precision == "float32" else 0.0
    for i, (w, g) in enumerate(zip(want, got)):
        if math.isinf(w) or not math.isfinite(g):
            if w != g:
                kept = " (which tokens are kept compares exactly)" if -math.inf in (w, g) else ""
                return f"[{i}] expected {w!r}, got {g!r}{kept}"
            continue
        bound = matcher["abs"] + f32 + matcher["rel"] * abs(w)
        if abs(g - w) > bound:
            beyond = (f"the float32 bound {bound:.3g}" if f32
                      else f"{matcher['abs']:g} + {matcher['rel']:g} relative")
            return f"[{i}] expected {w!r}, got {g!r}: off by {abs(g - w):.3g}, beyond {beyond}"
    return None


def _difference(outcome, answer, precision):
    """Where an answer first differs from one expected outcome; None when it matches."""
    if "error" in outcome:
        return None if "error" in answer else "expected a rejection (ValueError), got logprobs"
    if "error" in answer:
        return "expected logprobs, got a rejection"
    return _logprobs_difference(outcome["logprobs"], answer["logprobs"], precision)


def _matches(expect, answer, precision):
    """The fixture matchers of a filter row (fixtures/README.md), at `precision`: any ValueError
    is a rejection (which field it names is not checked here; sieve run checks it)."""
    return any(_difference(o, answer, precision) is None for o in _outcomes(expect, precision))


def _kept(logprobs):
    return [i for i, x in enumerate(logprobs) if x != -math.inf]


def _expected_logprobs(outcome):
    return [_number(x) for x in outcome["logprobs"]["$approx_array"]]


def _ids_text(ids):
    """{0,1,2}, or {0,1,...,9} (12 in all) past eight ids, as sieve run prints kept sets."""
    if len(ids) > 8:
        return "{" + ",".join(map(str, ids[:7])) + f",...,{ids[-1]}}} ({len(ids)} in all)"
    return "{" + ",".join(map(str, ids)) + "}"


def _row_text(values):
    """A row of numbers; past eight, its first six and its last."""
    if len(values) <= 8:
        return "[" + ", ".join(map(repr, values)) + "]"
    return f"[{', '.join(map(repr, values[:6]))}, ..., {values[-1]!r}] ({len(values)} in all)"


def _response_text(row):
    """An expected outcome or an answer, in one line."""
    if "error" in row:
        e = row["error"]
        if not isinstance(e, dict):
            return f"a rejection: {e}"
        return f"a rejection ({e['kind']} of {e['field']}{', ' + e['code'] if 'code' in e else ''})"
    lp = _expected_logprobs(row) if isinstance(row["logprobs"], dict) else row["logprobs"]
    return f"kept {_ids_text(_kept(lp))}, logprobs {_row_text(lp)}"


def _nearest(outcomes, answer):
    """The outcome to compare an answer with: the first with the answer's kept set, if any."""
    if "logprobs" in answer:
        kept = _kept(answer["logprobs"])
        for o in outcomes:
            if "logprobs" in o and _kept(_expected_logprobs(o)) == kept:
                return o
    return outcomes[0]


def _causes(case, answer, precision):
    """The recorded readings whose answer this is, the case's own axis first (as sieve run names
    them, harness/run/suites.c); or why none is named."""
    readings = [r for r in case.get("readings", ()) if precision in r["precisions"]
                and _matches(r["expect"]["rows"][0], answer, precision)]
    readings.sort(key=lambda r: r["axis"] != case["axis"])
    if readings:
        return [f"same answer as [{r['name']}]: {r['hint']}" for r in readings]
    if precision == "float64" and _matches(case["expect"]["rows"][0], answer, "float32"):
        return ["float32 arithmetic: within the float32 bounds, not the float64 ones"]
    return ["no known misreading gives this answer"]


def _failure_text(case, args, answer, precision):
    outcomes = _outcomes(case["expect"]["rows"][0], precision)
    call = (f"called fn({_row_text(args[0])}, temperature={args[1]!r}, top_k={args[2]!r}, "
            f"top_p={args[3]!r})" if args else "fn was not called")
    lines = [case["id"], f"  {case['description']}", f"  {call}"]
    lines += [f"  expected {'one of: ' if len(outcomes) > 1 else ''}{_response_text(outcomes[0])}"]
    lines += [f"        or {_response_text(o)}" for o in outcomes[1:]]
    lines += [f"  got      {_response_text(answer)}",
              f"  first difference: {_difference(_nearest(outcomes, answer), answer, precision)}"]
    return "\n".join(lines + [f"  {c}" for c in _causes(case, answer, precision)])


SAMPLING_OPTIONS = ("min_p", "frequency_penalty", "presence_penalty", "repetition_penalty",
                    "penalty_last_n")


def _runnable(case):
    """A case assert_conforms can ask: one filter row of listed logits, no engine options, no
    min-p nor penalties (fn takes neither)."""
    request = case["request"]
    row = request["rows"][0] if request["op"] == "filter" else {}
    return (request["op"] == "filter" and "engine" not in request and len(request["rows"]) == 1
            and isinstance(row["logits"], list)
            and not any(name in row.get("params", {}) for name in SAMPLING_OPTIONS))


def _selection(cases, families):
    """The runnable cases of `families` (all when None); ValueError for an unknown family or
    a selection with no runnable case."""
    known = sorted({c["family"] for c in cases})
    wanted = [families] if isinstance(families, str) else families
    unknown = [f for f in wanted or () if f not in known]
    if unknown:
        raise ValueError(f"unknown fixture families {', '.join(map(repr, unknown))}; the "
                         f"fixtures have {', '.join(known)}")
    chosen = [c for c in cases if _runnable(c) and (wanted is None or c["family"] in wanted)]
    if not chosen:
        what = f"families {wanted}" if wanted is not None else "the fixtures"
        raise ValueError(f"{what} have no case assert_conforms runs (a "
                         "filter request of one row of listed logits, without engine options, "
                         "min-p or penalties): "
                         "run them with sieve run")
    return chosen


def _note(entry):
    """An expected failure's "reason (issue)", or None when it is neither a reason nor
    {"reason": ..., "issue": ..., "answer": ...} with strings. The answer's digest is sieve run's
    (harness/CI.md); this module does not compare it."""
    if isinstance(entry, str):
        return entry
    if (not isinstance(entry, dict) or not isinstance(entry.get("reason"), str)
            or any(k not in ("reason", "issue", "answer") or not isinstance(v, str)
                   for k, v in entry.items())):
        return None
    return entry["reason"] + (f" ({entry['issue']})" if "issue" in entry else "")


def _expectation_file(path):
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    schema = data.get("schema") if isinstance(data, dict) else None
    if schema not in _EXPECT_SCHEMAS:
        raise ValueError(f"{path}: written for fixtures {schema or '(none)'}, these are "
                         f"{_EXPECT_SCHEMAS[0]}")
    if not isinstance(data.get("expected_failures"), dict):
        raise ValueError(f"{path}: expected_failures must be an object of case id: reason")
    return data["expected_failures"]


def _expectations(source, cases):
    """Case id -> note from a dict or an expectation file, checked as `sieve run --expect`
    checks it (harness/report/expect.c). Ids of sieve run's distribution suite, which the fixtures do
    not hold, are accepted and left to sieve run."""
    entries = _expectation_file(source) if isinstance(source, (str, os.PathLike)) else source or {}
    bad = [i for i, x in entries.items() if _note(x) is None]
    if bad:
        raise ValueError(f"expected_failures[{bad[0]!r}] must be a reason, or "
                         '{"reason": ..., "issue": ..., "answer": ...} with strings')
    ids = {c["id"] for c in cases}
    unknown = sorted(i for i in entries if i not in ids and not i.startswith("distribution/"))
    if unknown:
        raise ValueError("expected_failures names ids that are no case of the fixtures (a typo, "
                         f"or a retired case: fixtures/retired-ids.txt): {', '.join(unknown)}")
    return {i: _note(x) for i, x in entries.items()}


def _detail_order(ids):
    """The first failure of each family, then the rest, each part by id: the cases shown in full
    then span the families instead of repeating one bug."""
    firsts = {}
    for i in sorted(ids):
        firsts.setdefault(i.split("/")[0], i)
    return sorted(firsts.values()) + sorted(set(ids) - set(firsts.values()))


def _report(failures, now_passing, still_failing, ran, precision):
    """The AssertionError's message: the unexpected failures, the first of each family and then
    others in full, the rest by id."""
    ids = _detail_order(failures)
    counts = [f"{len(ids)} of {ran} sieve fixture cases failed"] if ids else []
    counts += [f"{len(now_passing)} listed in expected_failures passed"] if now_passing else []
    head = [" and ".join(counts) + f" at precision {precision}"
            + (f"; {still_failing} listed failed as expected" if still_failing else "") + ":"]
    body = [_failure_text(*failures[i], precision) for i in ids[:_DETAILED]]
    if len(ids) > _DETAILED:
        body.append(f"and {len(ids) - _DETAILED} more, by id:\n  "
                    + "\n  ".join(sorted(ids[_DETAILED:])))
    body += [f"{i}: now passes: remove it from the expectations (listed: {now_passing[i]})"
             for i in sorted(now_passing)]
    return "\n\n".join(head + body)


class Conformance(int):
    """What assert_conforms ran: the number of cases (an int, as it used to return), `passed`
    (their ids) and `expected_failures` (id -> note of the listed cases that failed)."""

    def __new__(cls, passed, expected_failures):
        self = super().__new__(cls, len(passed) + len(expected_failures))
        self.passed, self.expected_failures = tuple(passed), dict(expected_failures)
        return self

    def __repr__(self):
        return (f"Conformance({int(self)} cases: {len(self.passed)} passed, "
                f"{len(self.expected_failures)} expected failures)")


def assert_conforms(fn, fixtures=None, families=None, precision="float32",
                    expected_failures=None):
    """Runs `fn(logits, temperature, top_k, top_p) -> logprobs` through the filter fixtures of
    one row without engine options, min-p or penalties (those of `families` when given) and
    raises AssertionError when a case fails that `expected_failures` does not list, or a
    listed one passes.

    fn gets the values as the bundled adapter converts a request (logits a list of float32
    values, temperature and top_p floats, "nan" and "inf" included, top_k an int, -1 for none),
    does the rule's checks itself and reports a rejected input by raising ValueError; any other
    exception stops the run with the case id. Values are compared at `precision` ("float32",
    the arithmetic of real samplers, or "float64"), as `sieve run --precision` compares them.
    The message gives, per failure, what was expected and got, the first difference and its
    bound, and the known misreading whose answer it is (or that none is).

    `expected_failures` is a dict of case id -> reason (or {"reason": ..., "issue": ...}), or
    the path of a `sieve run --expect` file; as there, an id that is no case raises ValueError
    and a listed case outside the selection is ignored. An unknown family, or a selection with
    no case to run, raises ValueError. Returns a Conformance: the number of cases run."""
    if precision not in ("float32", "float64"):
        raise ValueError(f"precision must be 'float32' or 'float64', not {precision!r}")
    with open(fixtures or fixtures_path(), encoding="utf-8") as f:
        cases = json.load(f)["cases"]
    expected = _expectations(expected_failures, cases)
    failures, passed = {}, []
    for case in _selection(cases, families):
        try:
            args, answer = _ask(fn, case["request"]["rows"][0])
        except Exception as e:
            raise AssertionError(f"{case['id']}: {type(e).__name__}: {e} (fn must return the "
                                 "logprobs, or raise ValueError for a rejected input)") from e
        if _matches(case["expect"]["rows"][0], answer, precision):
            passed.append(case["id"])
        else:
            failures[case["id"]] = (case, args, answer)
    now_passing = {i: expected[i] for i in passed if i in expected}
    listed = {i: expected[i] for i in failures if i in expected}
    unexpected = {i: f for i, f in failures.items() if i not in expected}
    if unexpected or now_passing:
        raise AssertionError(_report(unexpected, now_passing, len(listed),
                                     len(passed) + len(failures), precision))
    return Conformance(passed, listed)
