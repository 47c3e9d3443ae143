"""Every worked example of seeds 000, 002 and 004 that concerns this rule."""
import math

import torch

import fixture_format as ff

FAMILY = "seed-examples"
SUITE = None  # by op: draw and sample cases in those suites, the rest in ordering
DESCRIPTION = "The worked examples of seeds 000, 002 and 004, as far as they concern this rule."

MAT_ROW = [2.0, 1.5, 1.0, 0.3, -0.2, -1.5]  # mat, floor, rug, sofa, bed, chair: gap 0.5
ORDER_ROW = [math.log(0.5), math.log(0.3), math.log(0.2)]
S002_ROW = [1.0, 3.0, 2.0, 0.5, -1.0]  # the row behind 002:111-113 and 002:142
S004_ROW = [2.0, 1.0, 0.5]


def _log(ps):
    return [math.log(p) for p in ps]


def cases():
    c, F = ff.filter_case, FAMILY
    out = [
        c(f"{F}/000-panel2-top-p-0.8-keeps-3", F, "000:21-23",
          "Panel 2: top_p 0.8 alone keeps mat, floor and rug, whose mass is 0.859.",
          MAT_ROW, top_p=0.8, axis=ff.TOP_P),
        c(f"{F}/000-panel2-top-p-0.8-top-k-2-keeps-mat-floor", F, "000:23",
          "Panel 2: with top_k 2 after top_p 0.8 the kept set is {mat, floor}; floor's "
          "processed logprob is ln 0.3775 = -0.974.", MAT_ROW, top_p=0.8, top_k=2,
          axis=ff.TOP_K),
        c(f"{F}/000-ratio-1.65-at-t1", F, "000:7",
          "A logit gap of 0.5 is a probability ratio of exp(0.5) = 1.65 at T = 1.", MAT_ROW,
          axis=ff.TEMPERATURE),
        c(f"{F}/000-ratio-2.72-at-t0.5", F, "000:7",
          "The same gap is a ratio of exp(1.0) = 2.72 at T = 0.5.", MAT_ROW, t=0.5,
          axis=ff.TEMPERATURE),
        c(f"{F}/000-t0-gap-0.01-gives-probability-1", F, "000:9",
          "At T = 0 (clamped to 1e-5) a gap of 0.01 becomes 1000 and the best token gets "
          "probability 1.", [1.0, 0.99, 0.5], t=0.0, axis="t0"),
        c(f"{F}/000-t0-equal-logits-share", F, "000:9",
          "Exactly equal logits still share the probability at T = 0.", [2.0, 2.0, 1.0], t=0.0,
          axis="t0"),
        c(f"{F}/000-order-example-keeps-2", F, "000:25-28",
          "p = (0.5, 0.3, 0.2), top_k 2, top_p 0.55: the mass 0.5 before the second token "
          "is <= 0.55, so 2 stay.",
          ORDER_ROW, top_p=0.55, top_k=2, axis="topp_scope"),
        c(f"{F}/000-top-k-larger-than-v-keeps-all", F, "000:32",
          "A top_k larger than the vocabulary keeps all tokens.", MAT_ROW, top_k=1000,
          axis="top_k_vocab"),
        c(f"{F}/002-top-k-2-keeps-3-and-2", F, "002:84-85",
          "top_k 2 on logits (1, 3, 2, 0.5, -1) keeps the logits 3 and 2.", S002_ROW, top_k=2, axis=ff.TOP_K),
        c(f"{F}/002-top-p-0.9-keeps-1-2-0", F, "002:109-120",
          "top_p 0.9 keeps tokens 1, 2, 0 (mass 0.9374); the mass before token 3 is "
          "0.9374 > 0.9.", S002_ROW, top_p=0.9, axis=ff.TOP_P),
        c(f"{F}/004-top-k-2-gives-0.731-0.269", F, "004:177-187",
          "top_k 2 on logits (2, 1, 0.5) gives probabilities (0.731, 0.269, 0).", S004_ROW,
          top_k=2, axis=ff.TOP_K),
        c(f"{F}/004-top-p-0.7-on-0.4-0.3-0.2-0.1-is-on-the-boundary", F, "004:228-240",
          "p = (0.4, 0.3, 0.2, 0.1), top_p 0.7: the mass before token 2 is 0.7 in exact "
          "arithmetic, so 2 or 3 stay.",
          _log([0.4, 0.3, 0.2, 0.1]), top_p=0.7, axis=ff.TOP_P),
        c(f"{F}/004-top-p-0.7-on-0.8-keeps-1", F, "004:242-245",
          "p = (0.8, 0.1, 0.06, 0.04), top_p 0.7 keeps token 0 only.",
          _log([0.8, 0.1, 0.06, 0.04]), top_p=0.7, axis=ff.TOP_P),
        c(f"{F}/004-top-k-3-on-0.99-keeps-3", F, "004:253",
          "p = (0.99, 0.005, 0.003, 0.002), top_k 3 keeps 3 tokens.",
          _log([0.99, 0.005, 0.003, 0.002]), top_k=3, axis=ff.TOP_K),
        c(f"{F}/004-top-p-0.9-on-0.99-keeps-1", F, "004:253",
          "p = (0.99, 0.005, 0.003, 0.002), top_p 0.9 keeps 1 token.",
          _log([0.99, 0.005, 0.003, 0.002]), top_p=0.9, axis=ff.TOP_P),
    ]
    for t in (0.5, 1.0, 2.0):
        out.append(c(f"{F}/002-temperature-table-t{t}", F, "002:59-64",
                     f"Logits (1, 2, 3) at T = {t}: the table's probabilities.",
                     [1.0, 2.0, 3.0], t=t, axis=ff.TEMPERATURE))
        out.append(c(f"{F}/004-temperature-t{t}", F, "004:120-146",
                     f"Logits (2, 1, 0.5) at T = {t}: the probabilities of the example.",
                     S004_ROW, t=t, axis=ff.TEMPERATURE))
    out += _draws()
    out.append(ff.sample_case(
        f"{F}/000-top-logprobs-4-with-top-k-2", F, "000:74",
        "top_k 2 and top_logprobs 4: only two of the four entries are finite.",
        [dict(logits=MAT_ROW, t=1.0, top_p=0.8, top_k=2, seed=42, pos=7, n_top=4)],
        axis=ff.LOGPROBS))
    out.append(ff.sample_case(
        f"{F}/000-floor-drawn-returns-processed-logprob", F, "000:72",
        "Seed 42 at position 7 draws floor (u = 0.641 > 0.622); its logprob is the "
        "processed -0.974, not ln 0.264.",
        [dict(logits=MAT_ROW, t=1.0, top_p=0.8, top_k=2, seed=42, pos=7, n_top=0)],
        axis=ff.LOGPROBS))
    return out


def _draws():
    F = FAMILY
    out = []
    pos = ff.find_position(0, 0.69, 0.71)
    out.append(ff.draw_case(
        f"{F}/000-panel3-u-near-0.70-draws-floor", F, "000:57",
        f"Panel 3: kept (0.622, 0.378); seed 0 at position {pos} gives u near 0.70 > 0.622, "
        "so floor is drawn.", [0.622, 0.378], 0, pos, axis=ff.DRAW))
    darts = [(0.05, 0.04, 0.06), (0.5, 0.49, 0.51), (0.95, 0.945, 0.955), (0.999, 0.9985, 0.9995)]
    for r, lo, hi in darts:
        pos = ff.find_position(1, lo, hi)
        out.append(ff.draw_case(
            f"{F}/002-cdf-dart-{r}", F, "002:142-148",
            f"The dart r = {r} (seed 1, position {pos}: u in [{lo}, {hi})) lands in 002's "
            "segment of (0.0844, 0.6236, ...).",
            [0.0844, 0.6236, 0.2294, 0.0512, 0.0114], 1, pos, axis=ff.DRAW))
    return out
