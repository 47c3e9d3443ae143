"""Sample positions for prefill and decode steps (000:59)."""
import fixture_format as ff

FAMILY = "positions"
SUITE = "position"  # the suite of `sieve run` its cases belong to
DESCRIPTION = ("Prefill samples at seqlen_k; decode row r at seqlen_k - seqlen_q + 1 + r "
               "(000:59, prepare_sample.cpp:198-206).")


def cases():
    F, p = FAMILY, ff.position_case
    out = []
    for q, k in ((1, 1), (5, 5), (3, 12), (128, 4096), (1, 2**40)):
        out.append(p(f"{F}/prefill-q{q}-k{k}", F, "000:59",
                     f"A prefill step of {q} tokens with seqlen_k {k} samples at {k}.",
                     "prefill", q, k))
    for q, k in ((1, 1), (1, 10), (4, 10), (8, 8), (3, 2**40)):
        for r in sorted({0, q - 1, q // 2}):
            out.append(p(f"{F}/decode-q{q}-k{k}-row{r}", F, "000:59",
                         f"Decode row {r} of {q} with seqlen_k {k} samples at "
                         f"{k - q + 1 + r}.", "decode", q, k, r, axis=("position",)))
    bad = [("decode-q0", "decode", 0, 5, 0), ("decode-q-above-k", "decode", 6, 5, 0),
           ("decode-row-past-q", "decode", 2, 5, 2), ("decode-negative-row", "decode", 2, 5, -1),
           ("prefill-row-1", "prefill", 2, 5, 1), ("prefill-q0", "prefill", 0, 0, 0)]
    for name, mode, q, k, r in bad:
        out.append(p(f"{F}/{name}-is-an-error", F, "000:59",
                     f"{mode} with seqlen_q {q}, seqlen_k {k}, row {r} is rejected.", mode, q,
                     k, r))
    return out
