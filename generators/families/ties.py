"""Exact ties and near-ties: where token order decides, and where the margin is wide enough."""
import fixture_format as ff

FAMILY = "ties"
SUITE = "ordering"  # the suite of `sieve run` its cases belong to
DESCRIPTION = ("Exact ties decided by token order (000:16) and near-ties whose gap is far "
               "above the float32 band, at the top-k and top-p cuts and away from them.")


def cases():
    F, c = FAMILY, ff.filter_case
    out = []
    for n in (2, 3, 5, 8, 13):
        for k in sorted({1, n // 2, n - 1} - {0}):
            out.append(c(f"{F}/exact-tie-{n}-top-k-{k}", F, "000:16,000:18",
                         f"{n} equal logits, top_k {k}: tokens 0..{k - 1} stay.", [0.5] * n,
                         top_k=k, axis=ff.TOP_K))
    for gap in (1e-3, 1e-2, 0.1):
        row = [1.0, 1.0 - gap, 1.0 - 2 * gap, 0.0]
        out.append(c(f"{F}/near-tie-gap-{gap}-top-k-2", F, "000:16,000:18",
                     f"Logits a gap of {gap} apart, top_k 2: the two largest stay; the gap is "
                     "far above the float32 band.", row, top_k=2, axis=ff.TOP_K))
        rev = list(reversed(row))
        out.append(c(f"{F}/near-tie-gap-{gap}-reversed-top-k-2", F, "000:16,000:18",
                     f"The same logits in reversed token order, top_k 2: the order is by "
                     "probability, not by token id.", rev, top_k=2, axis=ff.TOP_K))
    for k in (1, 2, 3):
        row = [0.0, 2.0, 1.0, 2.0, 1.0, 2.0]
        out.append(c(f"{F}/tie-block-in-the-middle-top-k-{k}", F, "000:16,000:18",
                     f"Logits {row}, top_k {k}: tied tokens 1, 3, 5 keep their id order.", row,
                     top_k=k, axis=ff.TOP_K))
    out.append(c(f"{F}/tie-straddles-top-p-cut", F, "000:16-17",
                 "Four tied logits after a leader, top_p 0.6: the cut falls inside the tie "
                 "and the lower ids stay.", [3.0, 1.0, 1.0, 1.0, 1.0], top_p=0.6, axis=ff.TOP_P))
    out.append(c(f"{F}/tie-with-minus-inf-neighbours", F, "000:16",
                 "Ties between finite logits ignore the -inf tokens around them.",
                 [float("-inf"), 1.0, float("-inf"), 1.0, 0.0], top_k=1, axis=ff.TOP_K))
    out.append(c(f"{F}/ties-at-t0-share-after-clamp", F, "000:9,000:16",
                 "Three equal maxima at T = 0 share the mass; top_k 1 is reset by the clamp.",
                 [4.0, 4.0, 1.0, 4.0], t=0.0, top_k=1, axis="t0"))
    return out
