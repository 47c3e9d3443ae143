"""Temperature extremes: the 1e-5 clamp, just above it, and very large T."""
import math

import numpy as np

import fixture_format as ff

FAMILY = "temperature"
SUITE = "ordering"  # the suite of `sieve run` its cases belong to
DESCRIPTION = ("Temperatures across the range (000:5, 000:7, 000:9, 000:11): the clamp at "
               "1e-5 and what it resets, values just above it, the float32 multiply by 1/T, and "
               "very large T.")

ROW = [2.0, 1.5, 1.0, 0.3, -0.2, -1.5, 0.7, 1.2]
TS = [0.0, 5e-324, 5e-8, 5e-7, 1e-6, math.nextafter(1e-5, 0.0), 1e-5, math.nextafter(1e-5, 1.0),
      2e-5, 1e-4, 1e-3, 0.01, 0.1, 0.3, 0.7, 1.0, 1.3, 2.0, 10.0, 100.0, 1e6, 1e30, 1e300]


def tie_made_by(op: str, t: float):
    """Two adjacent float32 logits just below 512 that one operation of step 1 ties at T and
    the others keep apart: times the float32 1/T (op "reciprocal", the rule of 000:11), divided
    by the float32 T (op "division", temperature_op=divide) or divided by the float64 T, the
    quotient rounded to float32 (op "float64-division", temperature_op=divide_float64; where T
    is a float32 it is the float32 division, and is not asked to differ from it)."""
    r, t32 = np.float32(1.0 / t), np.float32(t)
    b = np.float32(512.0)
    for _ in range(1 << 16):
        a = np.nextafter(b, np.float32(0.0), dtype=np.float32)
        ties = {"reciprocal": a * r == b * r, "division": a / t32 == b / t32,
                "float64-division": np.float32(float(a) / t) == np.float32(float(b) / t)}
        same = float(t32) == t  # then the two divisions give one quotient
        if all(tied == (name == op or (same and {name, op} == {"division", "float64-division"}))
               for name, tied in ties.items()):
            return float(a), float(b)
        b = a
    raise ValueError(f"no tie made by {op} at T = {t}")


def cases():
    F, c = FAMILY, ff.filter_case
    out = []
    for t in TS:
        if t <= 10.0:
            out.append(c(f"{F}/t-{t!r}-top-p-0.9-top-k-5", F, "000:9,000:11",
                         f"T = {t!r} with top_p 0.9 and top_k 5 (reset to 1 and -1 when "
                         "T < 1e-5).", ROW, t=t, top_p=0.9, top_k=5, axis=ff.TEMPERATURE))
        out.append(c(f"{F}/t-{t!r}-no-filter", F, "000:5,000:9",
                     f"T = {t!r} with no filter: the softmax of the scaled row (T < 1e-5 "
                     "clamped).", ROW, t=t, axis=ff.TEMPERATURE))
    for t in (0.7, 0.3, 3.0):
        out.append(c(f"{F}/multiply-by-float32-reciprocal-t{t}", F, "000:11",
                     f"Logits 5, 10 and 2.5 at T = {t}: each times the float32 1/T, an ulp "
                     "from dividing by T.",
                     [5.0, 10.0, 2.5, 0.0], t=t, axis="temperature_op"))
    for t in (1.3, 1.5, 3.0):
        a, b = tie_made_by("reciprocal", t)
        out.append(c(f"{F}/reciprocal-makes-a-tie-t{t}-top-k-1", F, "000:11,000:16",
                     f"Two logits below 512 at T = {t}: times the float32 1/T they tie, so "
                     "top_k 1 keeps token 0.",
                     [a, b, 0.0], t=t, top_k=1, axis="temperature_op"))
        out.append(c(f"{F}/reciprocal-makes-a-tie-t{t}-top-p-0.5", F, "000:11,000:17",
                     f"The same logits at T = {t}, top_p 0.5: tied at p = 0.5 exactly, both "
                     "stay.", [a, b], t=t, top_p=0.5,
                     exact_boundary=True, axis="temperature_op"))
    # A pair behind a larger logit, cut by top_k 2 rather than 1 (an engine may take top_k 1
    # as the argmax of the unscaled logits, where no scaling ties). T is exact in float32, so
    # that a quotient by the float64 T, rounded once, is the same.
    for t in (1.5, 3.0):
        a, b = tie_made_by("reciprocal", t)
        out.append(c(f"{F}/reciprocal-makes-a-tie-t{t}-top-k-2", F, "000:11,000:16",
                     f"Logit 520, then two below 512 at T = {t}: times the float32 1/T the two "
                     "tie, so top_k 2 keeps tokens 0 and 1.",
                     [520.0, a, b], t=t, top_k=2, axis="temperature_op"))
        a, b = tie_made_by("division", t)
        out.append(c(f"{F}/reciprocal-keeps-apart-a-pair-division-ties-t{t}-top-k-2", F,
                     "000:11,000:16", f"Logit 520, then two below 512 at T = {t}: times the "
                     "float32 1/T the two stay apart, so top_k 2 keeps tokens 0 and 2.",
                     [520.0, a, b], t=t, top_k=2, axis="temperature_op"))
    # transformers.js divides a Float32Array by the float64 T (temperature_op=divide_float64,
    # found by sieve fuzz): at a T that is no float32 it ties a pair the others keep apart.
    a, b = tie_made_by("float64-division", 1.1)
    out.append(c(f"{F}/reciprocal-keeps-apart-a-pair-float64-division-ties-t1.1-top-k-2", F,
                 "000:11,000:16", "Logit 520, two below 512 at T = 1.1: apart times 1/T or by the "
                 "float32 T (top_k 2 keeps 0 and 2), tied by the float64 T.",
                 [520.0, a, b], t=1.1, top_k=2, axis="temperature_op"))
    out.append(c(f"{F}/t-1e-3-underflowed-token-keeps-finite-logprob", F, "000:19",
                 "At T = 1e-3 a gap of 1 is 1000: the second token's p is 0, but its "
                 "processed logprob is a finite -1000.", [0.0, -1.0],
                 t=1e-3))
    return out
