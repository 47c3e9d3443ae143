"""The fixture matchers in Python, as harness/run/check.c applies them (fixtures/README.md).

The generator uses it to decide which wrong readings a case separates: a reading separates at a
precision when its answer fails the case's expectation there.
"""

import math

import numpy as np


def _number(x):
    if x is None:
        return -math.inf
    if isinstance(x, str) and x in ("nan", "inf", "-inf"):
        return float(x)
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError("not a number")
    return float(x)


def _close(want, got, abs_tol, rel_tol):
    if math.isinf(want) or math.isnan(want):
        return want == got or (math.isnan(want) and math.isnan(got))
    return abs(got - want) <= abs_tol + rel_tol * abs(want)


def tolerance(m: dict, precision: str):
    """(abs, rel) of a matcher at a precision: float32 adds the matcher's derived bound."""
    if precision == "float32" and "f32_abs" in m:
        return m["abs"] + m["f32_abs"], m["rel"]
    return m["abs"], m["rel"]


PLAIN = {float, int, type(None)}


def _floats(xs):
    """A list of plain numbers and nulls as float64, null as -inf; None for any other list."""
    kinds = set(map(type, xs))
    if not kinds <= PLAIN:
        return None
    if type(None) in kinds:
        xs = [-math.inf if x is None else x for x in xs]
    return np.array(xs, dtype=np.float64)


def _approx_floats(w, g, abs_tol, rel_tol) -> bool:
    """_close over two float64 arrays at once, with the same arithmetic."""
    with np.errstate(invalid="ignore"):
        finite = np.isfinite(w)
        same = (w == g) | (np.isnan(w) & np.isnan(g))
        near = np.abs(g - w) <= abs_tol + rel_tol * np.abs(w)
    return bool(np.all(np.where(finite, near, same)))


def _approx(want, got, tol) -> bool:
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return False
        w, g = _floats(want), _floats(got)
        if w is not None and g is not None:
            return _approx_floats(w, g, *tol)
        return all(_approx(x, y, tol) for x, y in zip(want, got))
    try:
        return _close(_number(want), _number(got), *tol) and not isinstance(got, str)
    except TypeError:
        return False


def _sparse(spec, got, precision) -> bool:
    import fixture_format as ff

    if not isinstance(got, list) or len(got) != spec["length"]:
        return False
    lp = _floats(got)
    if lp is None:
        lp = np.array([-math.inf if x is None else float(x) for x in got])
    kept = np.nonzero(~np.isinf(lp))[0]
    if len(kept) != spec["kept_count"] or ff.mixsum64(kept) != spec["kept_mixsum64"]:
        return False
    tol = tolerance(spec, precision)
    return all(_approx(w, got[int(i)], tol) for i, w in spec["at"].items())


def matches(expect, got, precision: str) -> bool:
    """Whether an answer satisfies an expectation at "float64" or "float32"."""
    if isinstance(expect, dict):
        keys = [k for k in expect if k.startswith("$")]
        if keys:
            k = keys[0]
            if k == "$exact":
                return type(got) is type(expect[k]) and got == expect[k]
            if k in ("$approx", "$approx_array"):
                return _approx(expect[k], got, tolerance(expect, precision))
            if k == "$any_of":
                only = set(expect.get("float32_only", ())) if precision == "float64" else set()
                return any(matches(o, got, precision) for i, o in enumerate(expect[k])
                           if i not in only)
            if k == "$sparse":
                return _sparse(expect[k], got, precision)
            raise ValueError(f"unknown matcher {k}")
        if not isinstance(got, dict) or ("error" in got) != ("error" in expect):
            return False
        for key, want in expect.items():
            if key == "code" and key not in got:
                continue
            if key not in got or not matches(want, got[key], precision):
                return False
        return True
    if isinstance(expect, list):
        return (isinstance(got, list) and len(got) == len(expect)
                and all(matches(e, g, precision) for e, g in zip(expect, got)))
    return type(got) is type(expect) and got == expect
