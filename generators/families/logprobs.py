"""Processed logprobs and top_logprobs (000:70-74)."""
import fixture_format as ff

FAMILY = "logprobs"
SUITE = "logprobs"  # the suite of `sieve run` its cases belong to
DESCRIPTION = ("Returned logprobs are processed (after temperature, top-p and top-k, 000:70-72); "
               "top_logprobs n gives the n best entries of the processed row, ties and -inf "
               "entries by token id (000:74).")

ROW = [2.0, 1.5, 1.0, 0.3, -0.2, -1.5]
TIED = [1.0, 3.0, 1.0, 3.0, 0.0, 3.0, 1.0]


def _row(logits, t, p, k, seed, pos, n):
    return dict(logits=logits, t=t, top_p=p, top_k=k, seed=seed, pos=pos, n_top=n)


def cases():
    F, s = FAMILY, ff.sample_case
    out = []
    for n in (0, 1, 2, 3, 4, 6):
        for t, p, k in ((1.0, 1.0, -1), (1.0, 0.8, 2), (0.5, 0.9, -1), (2.0, 1.0, 3)):
            out.append(s(f"{F}/top-logprobs-{n}-t{t}-p{p}-k{k}", F, "000:74",
                         f"top_logprobs {n} with T {t}, top_p {p}, top_k {k}: the best "
                         "entries of the processed row, -inf past the kept ones.",
                         [_row(ROW, t, p, k, 11, 3, n)], axis=ff.LOGPROBS))
    out.append(s(f"{F}/top-logprobs-7-above-v-is-an-error", F, "000:74",
                 "top_logprobs 7 on a row of 6 tokens is an error naming top_logprobs.",
                 [_row(ROW, 1.0, 1.0, -1, 11, 3, 7)]))
    for n in (3, 5, 7):
        out.append(s(f"{F}/top-logprobs-ties-by-token-id-{n}", F, "000:74",
                     f"Tied logits, top_logprobs {n}: equal entries come in token-id order.",
                     [_row(TIED, 1.0, 1.0, -1, 5, 9, n)]))
        out.append(s(f"{F}/top-logprobs-minus-inf-entries-by-token-id-{n}", F, "000:74",
                     f"top_k 2, top_logprobs {n}: the -inf entries past the kept two come in "
                     "token-id order.", [_row(TIED, 1.0, 1.0, 2, 5, 9, n)],
                     axis=ff.LOGPROBS))
    for t in (0.25, 0.5, 1.0, 1.7, 4.0):
        out.append(ff.filter_case(f"{F}/processed-logprobs-include-temperature-t{t}", F,
                                  "000:70", f"Processed logprobs at T {t}, no filter: the "
                                  "log-softmax of the scaled logits.", ROW, t=t,
                                  axis=ff.TEMPERATURE))
        out.append(ff.filter_case(f"{F}/processed-logprobs-renormalize-kept-t{t}", F,
                                  "000:19,000:70", f"T {t}, top_p 0.7, top_k 3: the kept "
                                  "tokens' logprobs are renormalized over the kept set.", ROW,
                                  t=t, top_p=0.7, top_k=3, axis=ff.LOGPROBS))
    return out
