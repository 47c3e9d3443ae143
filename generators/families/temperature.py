"""Temperature extremes: the 1e-5 clamp, just above it, and very large T."""
import math

import fixture_format as ff

FAMILY = "temperature"
DESCRIPTION = ("Temperatures across the range (000:5, 000:7, 000:9, 000:11): the clamp at "
               "1e-5 and what it resets, values just above it, the float32 multiply by 1/T, and "
               "very large T.")

ROW = [2.0, 1.5, 1.0, 0.3, -0.2, -1.5, 0.7, 1.2]
TS = [0.0, 5e-324, 1e-6, math.nextafter(1e-5, 0.0), 1e-5, math.nextafter(1e-5, 1.0), 2e-5, 1e-4,
      1e-3, 0.01, 0.1, 0.3, 0.7, 1.0, 1.3, 2.0, 10.0, 100.0, 1e6, 1e30, 1e300]


def cases():
    F, c = FAMILY, ff.filter_case
    out = []
    for t in TS:
        if t <= 10.0:
            out.append(c(f"{F}/t-{t!r}-top-p-0.9-top-k-5", F, "000:9,000:11",
                         f"T = {t!r} with top_p 0.9 and top_k 5 (reset to 1 and -1 when "
                         "T < 1e-5).", ROW, t=t, top_p=0.9, top_k=5))
        out.append(c(f"{F}/t-{t!r}-no-filter", F, "000:5,000:9",
                     f"T = {t!r} with no filter: the softmax of the scaled row; a very large T "
                     "flattens it, and T below 1e-5 is clamped.", ROW, t=t))
    for t in (0.7, 0.3, 3.0):
        out.append(c(f"{F}/multiply-by-float32-reciprocal-t{t}", F, "000:11",
                     f"Logits 5, 10 and 2.5 at T = {t}: each is multiplied by the float32 "
                     "value of 1/T, which can differ by an ulp from dividing by T.",
                     [5.0, 10.0, 2.5, 0.0], t=t))
    out.append(c(f"{F}/t-1e-3-underflowed-token-keeps-finite-logprob", F, "000:19",
                 "At T = 1e-3 a logit gap of 1 is 1000: the second token's probability is 0, "
                 "but as a kept token its processed logprob is a finite -1000.", [0.0, -1.0],
                 t=1e-3))
    return out
