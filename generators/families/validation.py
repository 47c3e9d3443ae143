"""Every boundary of temperature, top_p and top_k, the check order, NaN and infinite values."""
import math

import fixture_format as ff

FAMILY = "validation"
SUITE = "params"  # the suite of `sieve run` its cases belong to
DESCRIPTION = ("Parameter checks (000:11, 000:32, 000:63): each boundary, NaN and infinities, "
               "the order temperature, top_p, top_k, and the clamp after the checks (000:9); two "
               "errors of different kinds name the parameters, then the logits, then the "
               "request's own fields.")

INF, NAN = math.inf, math.nan
EPS = 1e-5

TEMPERATURES = [
    ("minus-1", -1.0, "000:11"), ("minus-tiny", -5e-324, "000:11"), ("minus-zero", -0.0, "000:9"),
    ("zero", 0.0, "000:9"), ("denormal", 5e-324, "000:9"), ("5e-8", 5e-8, "000:9"),
    ("5e-7", 5e-7, "000:9"), ("1e-6", 1e-6, "000:9"),
    ("just-below-eps", math.nextafter(EPS, 0.0), "000:9"), ("eps", EPS, "000:9"),
    ("just-above-eps", math.nextafter(EPS, 1.0), "000:9"), ("0.5", 0.5, "000:11"),
    ("1", 1.0, "000:63"), ("100", 100.0, "000:11"), ("1e308", 1e308, "000:11"),
    ("plus-inf", INF, "000:11"), ("minus-inf", -INF, "000:11"), ("nan", NAN, "000:11"),
]
TOP_PS = [
    ("zero", 0.0), ("minus-zero", -0.0), ("denormal", 5e-324), ("1e-12", 1e-12), ("0.5", 0.5),
    ("just-below-1", math.nextafter(1.0, 0.0)), ("1", 1.0), ("just-above-1", math.nextafter(1.0, 2.0)),
    ("1.5", 1.5), ("minus-0.5", -0.5), ("plus-inf", INF), ("minus-inf", -INF), ("nan", NAN),
]
TOP_KS = [
    ("minus-2", -2), ("minus-1", -1), ("zero", 0), ("1", 1), ("2", 2), ("int32-max", 2**31 - 1),
    ("int32-max-plus-1", 2**31), ("2-pow-53", 2**53), ("minus-2-pow-53", -(2**53)),
    ("int64-max-as-double", 9.3e18), ("non-integer", 1.5),
]


# What the cases of each parameter are about, where a reading has it.
TEMPERATURE = ("t0_below", "t0", "param_precision", "temperature_floor")
TOP_P = ("param_range", "param_precision", "explicit_top_p_one", "check_order")
TOP_K = ("top_k_zero", "top_k_minus_one", "top_k_max", "check_order")
ORDER = ("check_order",)


def _fmt(x):
    return repr(x)


def cases():
    F, v = FAMILY, ff.validate_case
    out = []
    for name, t, line in TEMPERATURES:
        for p, k in ((0.5, 3), (1.0, -1)):
            out.append(v(f"{F}/temperature-{name}-top-p-{p}-top-k-{k}", F, line,
                         f"temperature {_fmt(t)} with top_p {p}, top_k {k}.", t, p, k,
                         axis=TEMPERATURE))
    for name, p in TOP_PS:
        for t in (1.0, 0.0):
            out.append(v(f"{F}/top-p-{name}-t{t}", F, "000:32",
                         f"top_p {_fmt(p)} at temperature {t}.", t, p, -1, explicit_p=True,
                         axis=TOP_P))
    for name, k in TOP_KS:
        for t in (1.0, 0.0):
            out.append(v(f"{F}/top-k-{name}-t{t}", F, "000:32",
                         f"top_k {_fmt(k)} at temperature {t}.", t, 1.0, k, axis=TOP_K))
    order = [
        ("temperature-before-top-p", -1.0, 0.0, -1), ("temperature-before-top-k", -1.0, 1.0, 0),
        ("temperature-before-both", NAN, NAN, 0), ("top-p-before-top-k", 1.0, 2.0, 0),
        ("top-p-nan-before-top-k", 1.0, NAN, -5), ("t0-top-k-0-is-an-error", 0.0, 1.0, 0),
        ("t0-top-p-0-is-an-error", 0.0, 0.0, -1), ("t0-top-k-huge-is-an-error", 0.0, 1.0, 2**31),
        ("t-inf-top-k-0", INF, 1.0, 0),
    ]
    for name, t, p, k in order:
        out.append(v(f"{F}/order-{name}", F, "000:63",
                     f"temperature {_fmt(t)}, top_p {_fmt(p)}, top_k {k}: the first failing "
                     "check (T, top_p, top_k) names it.", t, p, k, axis=ORDER))
    row = [1.0, 2.0, 3.0]
    for name, t, p, k, axis in [o + (ORDER,) for o in order[:6]] + [
            ("clamp-resets-filters", 0.0, 0.2, 1, "t0"),
            ("negative-temperature", -1.0, 0.9, -1, "t0_below")]:
        out.append(ff.filter_case(f"{F}/filter-{name}", F, "000:63",
                                  f"The filter checks its parameters the same way: temperature "
                                  f"{_fmt(t)}, top_p {_fmt(p)}, top_k {k}.", row, t, p, k,
                                  explicit_k=True, axis=axis))
    out.append(ff.filter_case(f"{F}/filter-explicit-top-p-1", F, "000:32",
                              "An explicit top_p 1 on a filter row is accepted and removes "
                              "nothing.", row, 1.0, 1.0, -1, explicit_p=True,
                              axis="explicit_top_p_one"))
    out.append(ff.filter_case(f"{F}/filter-top-k-equal-to-v", F, "000:32",
                              "top_k 3 on 3 logits is accepted and keeps all three.", row, 1.0,
                              1.0, 3, axis="top_k_vocab"))
    out.append(ff.filter_case(f"{F}/filter-top-k-above-int32", F, "000:32",
                              "top_k 2147483648 on a filter row is an error: above the int32 "
                              "maximum.", row, 1.0, 1.0, 2**31, axis="top_k_max"))
    return out + _error_pairs(F)


def _error_pairs(F):
    """Two errors at once, of each pair of kinds: the parameters come first, then the logits,
    then the request's own fields (top_logprobs), in the library, sieve serve and the
    reference alike."""
    nan_row = [1.0, NAN, 3.0]

    def s(cid, description, logits, top_p, n_top):
        return ff.sample_case(f"{F}/{cid}", F, "000:63", description,
                              [dict(logits=logits, t=1.0, top_p=top_p, top_k=-1, seed=1, pos=0,
                                    n_top=n_top)])
    return [
        ff.filter_case(f"{F}/filter-top-p-before-a-nan-logit", F, "000:63",
                       "A filter row with top_p 0 and a NaN logit is a top_p error: parameters "
                       "before logits.", nan_row, 1.0, 0.0, -1),
        s("sample-top-p-before-a-nan-logit", "A sample row with top_p 0 and a NaN logit is a "
          "top_p error: parameters before logits.", nan_row, 0.0, 0),
        s("sample-top-p-before-top-logprobs", "top_p 0 and top_logprobs 9 on 3 logits is a top_p "
          "error: parameters before the request's own fields.", [1.0, 2.0, 3.0], 0.0, 9),
        s("sample-nan-logit-before-top-logprobs", "A NaN logit and top_logprobs 9 on 3 logits is a "
          "logits error: logits before the request's own fields.", nan_row, 1.0, 9),
    ]
