"""The inverse CDF: zero runs, darts near the steps, bad probabilities (000:48-57)."""
import fixture_format as ff

FAMILY = "draw"
SUITE = "draw"  # the suite of `sieve run` its cases belong to
DESCRIPTION = ("The first token whose float64 running sum (token order) is > u * total "
               "(000:48-50, 000:55); zero-probability tokens are never drawn; draws within the "
               "band of a cdf step list both neighbours.")


def cases():
    F, d = FAMILY, ff.draw_case
    out = []
    rows = {
        "zero-runs": [0.0, 0.0, 0.3, 0.0, 0.0, 0.0, 0.5, 0.0, 0.2, 0.0],
        "leading-zeros": [0.0] * 7 + [1.0, 1.0],
        "trailing-zeros": [2.0, 1.0] + [0.0] * 7,
        "unnormalized": [3.0, 1.0, 4.0, 1.0, 5.0],
        "one-token": [0.7],
        "tiny-masses": [1e-300, 1e-300, 1e-300],
        "mixed-scale": [1e-12, 0.5, 1e-12, 0.5, 1e-12],
    }
    for name, probs in rows.items():
        for seed, pos in ((1, 0), (2, 10), (3, 200), (4, 4096)):
            out.append(d(f"{F}/{name}-seed-{seed}-pos-{pos}", F, "000:48-50,000:55",
                         f"probs {probs}, seed {seed}, position {pos}.", probs, seed, pos,
                         axis=ff.DRAW))
    out.append(d(f"{F}/u-zero-skips-leading-zero-probabilities", F, "000:55",
                 "Seed 0, position 0, case 0 gives u = 0 exactly: the first cdf > 0 is token "
                 "2's, not a p = 0 token before it.",
                 [0.0, 0.0, 0.6, 0.4], 0, 0, axis=ff.DRAW))
    for seed in (5, 6, 7):
        pos = ff.find_position(seed, 0.2, 0.8)
        u = ff.ref.uniform(seed, pos)
        for name, step in (("just-below", u + 1e-3), ("just-above", u - 1e-3), ("on", u)):
            probs = [step, 1.0 - step]
            out.append(d(f"{F}/step-{name}-u-seed-{seed}", F, "000:55",
                         f"A cdf step placed {name.replace('-', ' ')} u * total (u = {u!r}); "
                         "within the band both tokens are acceptable.", probs, seed, pos,
                         axis=ff.DRAW))
    for case, tag in ((1, "main"), (2, "main"), (0, "mtp"), (1, "mtp")):
        out.append(d(f"{F}/case-{case}-tag-{tag}", F, "000:52,000:59",
                     f"The draw with case {case} and tag {tag} uses that key's u.",
                     [0.25, 0.25, 0.25, 0.25], 9, 33, case, tag, axis=ff.DRAW))
    bad = {"all-zero-is-an-error": [0.0, 0.0], "negative-is-an-error": [0.5, -0.1],
           "nan-is-an-error": [0.5, float("nan")], "inf-is-an-error": [0.5, float("inf")],
           "sum-overflow-is-an-error": [1.7e308, 1.7e308]}
    for name, probs in bad.items():
        out.append(d(f"{F}/{name}", F, "000:48-50", f"probs {probs} cannot be drawn from.",
                     probs, 1, 1))
    return out
