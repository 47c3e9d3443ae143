"""Sample end to end, and batch invariance (000:34, 000:55-57, 000:70-74)."""
import torch

import fixture_format as ff

FAMILY = "sample"
SUITE = "sample"  # the suite of `sieve run` its cases belong to
DESCRIPTION = ("Filter, exp, hash uniform, inverse CDF, end to end; the same row in batches of "
               "other sizes and orders gets the same answer (000:34, random_sampling.py:17-20).")

PARAMS = [(1.0, 1.0, -1), (0.7, 0.9, 50), (1.0, 0.95, -1), (0.5, 0.8, 5), (1.3, 0.6, 3),
          (0.0, 1.0, -1), (2.0, 1.0, 10)]


def _random_row(gen: torch.Generator, v: int):
    row = torch.randn(v, generator=gen, dtype=torch.float64) * 2.0
    return [ff.f32(x) for x in row.tolist()]


def _ok(row):
    """A row whose sample cases have one filter outcome within float32 reach under every
    parameter set."""
    try:
        for t, p, k in PARAMS:
            ff.sample_expect(ff.as_row(row["logits"]), ff.ref.Params(t, p, k), 0, 0)
        return True
    except ff.NearBoundary:
        return False


def _rows(gen, n):
    rows = []
    while len(rows) < n:
        v = int(torch.randint(2, 300, (1,), generator=gen))
        t, p, k = PARAMS[len(rows) % len(PARAMS)]
        row = dict(logits=_random_row(gen, v), t=t, top_p=p, top_k=k,
                   seed=int(torch.randint(0, 2**62, (1,), generator=gen)) * 3,
                   pos=int(torch.randint(0, 2**40, (1,), generator=gen)), n_top=3)
        if _ok(row):
            rows.append(row)
    return rows


def cases():
    F = FAMILY
    gen = torch.Generator().manual_seed(20261129)
    out = []
    rows = _rows(gen, 95)
    for i, row in enumerate(rows[:75]):
        c, tag = (0, "main") if i % 5 else (i % 3, "mtp")
        out.append(ff.sample_case(
            f"{F}/random-{i:02d}", F, "000:34-57",
            f"A random row of {len(row['logits'])} logits, T {row['t']}, top_p {row['top_p']}, "
            f"top_k {row['top_k']}, case {c}, tag {tag}.", [row], c, tag))
    group = rows[75:83]
    for g, row in enumerate(group):
        others = [r for r in rows[83:] + group if r is not row]
        layouts = {"alone": [row], "first-of-4": [row] + others[:3],
                   "last-of-8": others[:7] + [row], "middle-of-12-reversed": list(reversed(
                       others[:6] + [row] + others[6:11]))}
        for name, batch in layouts.items():
            out.append(ff.sample_case(
                f"{F}/batch-invariance-group-{g}-{name}", F, "000:34",
                f"Group {g}: the same row {name.replace('-', ' ')} in a batch of {len(batch)}; "
                "every layout of the group gets the same answer for it.", batch))
    return out
