"""The sieve oracle from Python: the DeepInfer sampling rule (oracle/SPEC.md) through ctypes.

Standard library only; loads libsieve.so from $SIEVE_LIB, from the checkout this file is in
(build/libsieve.so), or from the system (an installed copy). Functions take Python lists,
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
from pathlib import Path

__all__ = ["filter", "sample", "uniform", "draw", "validate", "position", "assert_conforms",
           "SieveError"]


class SieveError(ValueError):
    """A rejected input: the oracle's error name (code) and message."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class _Params(ctypes.Structure):
    _fields_ = [("temperature", ctypes.c_double), ("top_p", ctypes.c_double),
                ("top_k", ctypes.c_int64)]


class _Engine(ctypes.Structure):
    _fields_ = [("force_topk", ctypes.c_int64), ("blacklist", ctypes.POINTER(ctypes.c_int64)),
                ("blacklist_len", ctypes.c_size_t)]


class _Info(ctypes.Structure):
    _fields_ = [("kept", ctypes.c_size_t), ("kept_mass", ctypes.c_double),
                ("topp_margin", ctypes.c_double), ("cut_gap", ctypes.c_double)]


class _Key(ctypes.Structure):
    _fields_ = [("seed", ctypes.c_uint64), ("position", ctypes.c_uint64),
                ("sample_case", ctypes.c_int), ("tag", ctypes.c_int)]


class _Top(ctypes.Structure):
    _fields_ = [("token", ctypes.c_int64), ("logprob", ctypes.c_double)]


class _Result(ctypes.Structure):
    _fields_ = [("token", ctypes.c_int64), ("logprob", ctypes.c_double), ("u", ctypes.c_double),
                ("draw_margin", ctypes.c_double), ("filter", _Info)]


_HERE = Path(__file__).resolve().parent
_lib = None


def _library():
    global _lib
    if _lib is None:
        candidates = [os.environ.get("SIEVE_LIB"), str(_HERE.parents[2] / "build" / "libsieve.so"),
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


def _fixtures_path():
    candidates = [os.environ.get("SIEVE_FIXTURES"),
                  str(_HERE.parents[2] / "fixtures" / "sieve-fixtures.json"),
                  "/usr/local/share/sieve/sieve-fixtures.json", "/usr/share/sieve/sieve-fixtures.json"]
    for c in candidates:
        if c and os.path.exists(c):
            return c
    raise OSError("sieve-fixtures.json not found: set SIEVE_FIXTURES")


def _number(x):
    return -math.inf if x is None else float(x)


def _close(want, got, abs_tol, rel_tol):
    if math.isinf(want) or math.isnan(want):
        return want == got or (math.isnan(want) and math.isnan(got))
    return abs(got - want) <= abs_tol + rel_tol * abs(want)


def _matches(expect, got, precision):
    """The fixture matchers (fixtures/README.md) for filter rows: $approx_array and $any_of, with
    the matcher's float32 bound added at precision float32."""
    if isinstance(expect, dict) and "$any_of" in expect:
        only = set(expect.get("float32_only", ())) if precision == "float64" else set()
        return any(_matches(e, got, precision) for i, e in enumerate(expect["$any_of"])
                   if i not in only)
    if "error" in expect:
        return got is None
    if got is None:
        return False
    m = expect["logprobs"]
    want = m["$approx_array"]
    tol = (m["abs"] + (m.get("f32_abs", 0.0) if precision == "float32" else 0.0), m["rel"])
    return len(want) == len(got) and all(
        _close(_number(w), float(g), *tol) for w, g in zip(want, got))


def assert_conforms(fn, fixtures=None, families=None, precision="float32"):
    """Runs `fn(logits, temperature, top_k, top_p) -> logprobs` through every filter fixture
    without engine options (logits as a list of float32 values); raises AssertionError listing
    the case ids that fail. `fn` reports a rejected input by raising ValueError. Values are
    compared at `precision` ("float32", the arithmetic of real samplers, or "float64"), as
    `sieve run --precision` compares them."""
    if precision not in ("float32", "float64"):
        raise ValueError(f"precision must be 'float32' or 'float64', not {precision!r}")
    with open(fixtures or _fixtures_path(), encoding="utf-8") as f:
        data = json.load(f)
    failed, ran = [], 0
    for case in data["cases"]:
        request = case["request"]
        if request["op"] != "filter" or "engine" in request or len(request["rows"]) != 1:
            continue
        if families and case["family"] not in families:
            continue
        row = request["rows"][0]
        if not isinstance(row["logits"], list):
            continue  # recipes: large rows are for sieve run
        params = row.get("params", {})
        args = [float(_number(x)) if not isinstance(x, str) else float(x) for x in row["logits"]]
        ran += 1
        try:
            got = fn(args, _number(params.get("temperature", 1.0)) if not isinstance(
                params.get("temperature", 1.0), str) else float(params["temperature"]),
                params.get("top_k", -1), params.get("top_p", 1.0))
            got = [float(x) for x in (got.tolist() if hasattr(got, "tolist") else got)]
        except ValueError:
            got = None
        if not _matches(case["expect"]["rows"][0], got, precision):
            failed.append(case["id"])
    if failed:
        shown = ", ".join(failed[:20]) + (f" and {len(failed) - 20} more" if len(failed) > 20 else "")
        raise AssertionError(f"{len(failed)} of {ran} sieve fixtures failed: {shown}")
    return ran
