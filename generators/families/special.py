"""Special logits: -inf entries, all -inf, NaN, +inf, V = 1, V = 0, float32 overflow."""
import math

import fixture_format as ff

FAMILY = "special-values"
SUITE = "special-values"  # the suite of `sieve run` its cases belong to
DESCRIPTION = ("Rows the rule must answer or reject without undefined behaviour (oracle/SPEC.md, "
               "'-inf, NaN and +inf logits'): -inf is allowed and never kept, NaN and +inf are "
               "errors, a row with no finite logit and V = 0 are errors.")

NINF, INF, NAN = -math.inf, math.inf, math.nan


def cases():
    F, c = FAMILY, ff.filter_case
    rows = {
        "minus-inf-entries": [NINF, 1.0, NINF, 0.5, 2.0, NINF],
        "minus-inf-first": [NINF, 0.0, 0.0],
        "one-finite-among-minus-inf": [NINF, NINF, 3.0, NINF],
        "all-minus-inf-is-an-error": [NINF, NINF, NINF],
        "nan-is-an-error": [0.0, NAN, 1.0],
        "plus-inf-is-an-error": [0.0, INF, 1.0],
        "nan-and-plus-inf-reports-nan-first": [INF, NAN],
        "v1": [-3.5],
        "v1-minus-inf-is-an-error": [NINF],
        "v0-is-an-error": [],
        "float32-max": [3.4028234663852886e38, 0.0],
        "float32-lowest": [-3.4028234663852886e38, 0.0],
        "denormals": [1e-45, 0.0, -1e-45],
        "huge-spread": [80.0, -80.0, 0.0],
    }
    out = []
    for name, row in rows.items():
        for t, p, k in ((1.0, 1.0, -1), (0.5, 0.5, 1)):
            out.append(c(f"{F}/{name}-t{t}-p{p}-k{k}", F, "000:13-19",
                         f"Logits {row} with T {t}, top_p {p}, top_k {k}.", row, t, p, k))
    out.append(c(f"{F}/scaled-overflow-is-an-error", F, "000:11",
                 "3e38 times 1/0.5 overflows float32: an invalid_logits error, never inf.",
                 [3e38, 0.0], t=0.5))
    out.append(c(f"{F}/scaled-negative-overflow-is-an-error", F, "000:11",
                 "-3e38 times 1/1e-5 overflows float32: an invalid_logits error.", [-3e38, 0.0],
                 t=0.0))
    return out
