"""Vectors of the hash-based uniform (000:45-47, 000:52-54, 000:59)."""
import fixture_format as ff

FAMILY = "hash"
SUITE = "uniform"  # the suite of `sieve run` its cases belong to
DESCRIPTION = ("u = mix(seed + (seq XOR (seq << 13))) >> 11 times 2^-53, seq = (position * 3 + "
               "case) * 0x9E3779B97F4A7C15, modulo 2^64, with the mtp seed offset 1000000007. "
               "Values are exact.")

SEEDS = [0, 1, 2, 42, 1234567, 2**32 - 1, 2**63 - 1, 2**63, 2**64 - 1000000007, 2**64 - 1]
POSITIONS = [0, 1, 2, 3, 7, 1000, 65535, 2**32, 2**40 - 1, 2**40, 2**40 + 1]


def cases():
    F = FAMILY
    out = []
    for seed in SEEDS:
        for tag in ("main", "mtp"):
            for c in (0, 1, 2):
                items = [(seed, p, c, tag) for p in POSITIONS]
                out.append(ff.uniform_case(
                    f"{F}/seed-{seed}-{tag}-case-{c}", F, "000:45-47,000:52,000:59",
                    f"u for seed {seed}, tag {tag}, case {c} at positions 0 to 2^40 + 1.",
                    items, axis=("hash",)))
    bad = [("case-3-is-an-error", (1, 0, 3, "main")), ("case-minus-1-is-an-error", (1, 0, -1, "main")),
           ("tag-draft-is-an-error", (1, 0, 0, "draft"))]
    for name, item in bad:
        out.append(ff.uniform_case(f"{F}/{name}", F, "000:52,000:59",
                                   f"The item {item} is rejected.", [item]))
    return out
