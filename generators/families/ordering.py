"""Cases that tell ordering rules apart by a margin float32 cannot blur."""
import math

import torch

import fixture_format as ff
import float32 as fp32
import reference as ref

FAMILY = "ordering"
SUITE = "ordering"  # the suite of `sieve run` its cases belong to
DESCRIPTION = ("Where the rule differs from other engines' choices: top-p on the full "
               "distribution, not after top-k (000:25-28); > not >= at an exact boundary "
               "(000:17); stable tie order (000:16); temperature before the filters (000:15).")


def _log(ps):
    return [math.log(p) for p in ps]


# (probabilities, top_k, top_p): the rule keeps more tokens than top-k-then-renormalized top-p.
FULL_VS_RENORMALIZED = [
    ((0.5, 0.3, 0.2), 2, 0.55), ((0.4, 0.35, 0.25), 2, 0.45), ((0.6, 0.25, 0.15), 2, 0.65),
    ((0.3, 0.3, 0.2, 0.2), 3, 0.62), ((0.45, 0.25, 0.2, 0.1), 3, 0.72),
    ((0.35, 0.3, 0.2, 0.15), 2, 0.4), ((0.5, 0.2, 0.2, 0.1), 3, 0.72),
    ((0.25, 0.25, 0.25, 0.25), 2, 0.3), ((0.7, 0.2, 0.1), 2, 0.75), ((0.55, 0.3, 0.15), 2, 0.6),
]


def routes_off_the_boundary(n: int, top_p: float) -> list:
    """The float32 routes (float32.py) on which n equal logits do not keep the rule's tokens at
    top_p: where the probabilities round so that the mass before token j is not exactly j/n."""
    row = torch.full((n,), 0.25, dtype=torch.float32)
    want = list(range(ref.filter_row(row, ref.Params(1.0, top_p, -1)).kept))
    finite = torch.ones(n, dtype=torch.bool)
    return [r for r in fp32.ROUTES if fp32.route_kept(row, finite, top_p, -1, r) != want]


def boundary_description(n: int, j: int) -> str:
    p = j / n
    off = routes_off_the_boundary(n, p)
    text = f"{n} equal logits, top_p {p}: mass {p} before token {j} is not > top_p"
    if not off:
        return text + f": {j + 1} stay, on every float32 route."
    return text + f": {j + 1} stay ({j} on float32 routes that round it up)."


def cases():
    F, c = FAMILY, ff.filter_case
    out = []
    for i, (ps, k, p) in enumerate(FULL_VS_RENORMALIZED):
        out.append(c(f"{F}/top-p-on-full-distribution-{i}", F, "000:25-28",
                     f"p = {ps}, top_k {k}, top_p {p}: top-p on the full distribution keeps "
                     "more than on the top k.",
                     _log(ps), top_p=p, top_k=k, axis="topp_scope",
                     separates=("topk-first-renormalized",)))
    for n in (2, 4, 8, 16):
        for j in range(1, n):
            p = j / n
            exact = not routes_off_the_boundary(n, p)
            out.append(c(f"{F}/strict-boundary-{n}-equal-top-p-{j}-of-{n}", F, "000:17",
                         boundary_description(n, j), [0.25] * n, top_p=p, exact_boundary=True,
                         axis="boundary" if exact else "topp_ties" if j < n - 1 else "none"))
    ties = [
        ([1.0, 3.0, 1.0, 3.0, 3.0, 0.0], 1.0, 2), ([5.0, 5.0, 5.0, 5.0], 1.0, 3),
        ([0.0, 2.0, 2.0, 1.0, 2.0], 1.0, 1), ([2.0, 1.0, 2.0, 1.0, 2.0, 1.0], 1.0, 4),
        ([7.0] * 10, 1.0, 5), ([1.0, 1.0, 0.0, 0.0], 1.0, 3),
    ]
    for i, (row, p, k) in enumerate(ties):
        out.append(c(f"{F}/top-k-tie-keeps-lowest-ids-{i}", F, "000:16,000:18",
                     f"Logits {row}, top_k {k}: a cut in a tie keeps exactly k, lowest ids first.",
                     row, top_p=p,
                     top_k=k, axis="topk_ties"))
    for n, p in ((3, 0.5), (5, 0.5), (6, 0.3)):
        out.append(c(f"{F}/top-p-tie-keeps-lowest-ids-{n}", F, "000:16-17",
                     f"{n} equal logits, top_p {p}: the kept tokens are the lowest ids.",
                     [1.0] * n, top_p=p, axis="topp_ties"))
    # A block long enough that a sort stable on short rows (insertion sort below 16 elements)
    # shows its own order.
    out.append(c(f"{F}/top-k-tie-in-a-block-of-64", F, "000:16,000:18",
                 "64 equal logits, top_k 20: the 20 lowest ids stay.", [1.0] * 64, top_k=20,
                 axis="topk_ties"))
    out.append(c(f"{F}/top-p-tie-in-a-block-of-64", F, "000:16-17",
                 "64 equal logits, top_p 0.3: the 20 lowest ids stay.", [1.0] * 64, top_p=0.3,
                 axis="topp_ties"))
    for row, k in (([0.0, -1000.0, -2000.0, -1500.0], 3),
                   ([0.0, -1100.0, -1500.0, -1200.0, -1600.0, -1000.0, -1300.0], 4)):
        out.append(c(f"{F}/underflowed-probabilities-tie-in-token-order-top-k-{k}", F, "000:16",
                     f"{len(row)} logits 0 and -1000 or lower, top_k {k}: the p = 0 tokens tie "
                     "in token order.", row, top_k=k, axis="rank_key"))
    peaked = [20.0] + [0.0] * 1023
    out.append(c(f"{F}/top-p-one-with-top-k-keeps-the-tail", F, "000:17",
                 "20 then 1023 zeros, top_p 1, top_k 1024: top_p = 1 removes nothing, so all "
                 "1024 stay (a float32 cumsum cuts the tail).",
                 peaked, top_p=1.0, top_k=1024, axis="topp_one"))
    # Distinct tail logits, so that a float32 tail cut shows under every tie choice too (a cut
    # by value keeps every token tied with the last one kept: all the zeros above).
    sloped = [18.0] + [-i / 4096 for i in range(1023)]
    out.append(c(f"{F}/top-p-one-with-top-k-keeps-a-sloped-tail", F, "000:17",
                 "18 then 1023 logits from 0 down by 1/4096, top_p 1, top_k 1024: all 1024 "
                 "stay.", sloped, top_p=1.0, top_k=1024, axis="topp_one"))
    row = [2.0, 1.5, 1.0, 0.3, -0.2, -1.5]
    for t, p in ((0.5, 0.8), (2.0, 0.8), (0.5, 0.6), (3.0, 0.9), (0.7, 0.9), (0.3, 0.7)):
        scaled = ref.filter_row(ff.as_row(row), ref.Params(t, p, -1)).kept
        unscaled = ref.filter_row(ff.as_row(row), ref.Params(1.0, p, -1)).kept
        assert scaled != unscaled, (t, p)
        out.append(c(f"{F}/temperature-before-top-p-t{t}-p{p}", F, "000:15",
                     f"T {t} applies before top-p {p}: {scaled} tokens stay (top-p on the "
                     f"unscaled row keeps {unscaled}).", row, t=t, top_p=p,
                     axis="temperature_at"))
    return out
