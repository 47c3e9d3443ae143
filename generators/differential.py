"""The differential run: the C oracle (through `sieve serve`) against reference.py, row by row.

  differential.py SIEVE [--rows N] [--seed S]

Generates N seeded random rows of mixed size, shape and parameters, asks both implementations
to filter and to sample each, and compares: kept sets and error kinds exactly, processed
logprobs within 1e-9 + 1e-9 relative, u bit for bit, tokens exactly. Both sides compute in
float64, so a kept set or token may differ only where the reference's own margin is below
1e-12 (a decision no float64 implementation can be held to); such rows are counted apart.
A failure prints the row and the first difference. Exit status 0 when nothing failed. With
--jobs N, N processes each check every N-th batch of rows; every process generates every row,
so the rows checked are the same.

Each row of at most SPECULATE_V tokens also heads a speculative chain (1 to 5 drafts, random
rows of the same size from a generator of their own): odd rows give greedy drafts, even rows
draft rows whose tokens the oracle draws itself (tag mtp), and `speculate` must give the
reference's drafts, accepted count, tokens and each test's u bit for bit and ratio within
1e-9; a test or draw within 1e-12 of its boundary is counted apart.

Each batch is followed by PENALIZED rows of seed 004's penalties and min-p (their own generator,
so the rows above stay the same): random frequency, presence and repetition penalties, windows,
min-p, and output and prompt ids (some outside the vocabulary, some parameters out of range),
filtered by both in float64 and compared as above.

With --f32-lib PATH (a float32 implementation served by `sieve serve --lib`, such as
build/mutants-f32/libport-faithful.so) the same rows also go through the float32 side: each
row's expectation as make_fixtures.py builds it (every outcome within float32 reach, the float32
bounds), and the answers of every float32 route of generators/float32.py and of that library
must satisfy it at precision float32. Rows the generator would refuse as too close are counted
apart.
"""

import argparse
import json
import math
import multiprocessing
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fixture_format as ff  # noqa: E402
import float32 as fp32  # noqa: E402
import matcher  # noqa: E402
import reference as ref  # noqa: E402

TOL_ABS = TOL_REL = 1e-9
UNDECIDABLE = 1e-12
BATCH = 64


EQUAL = 6
SPECULATE_V = 1024
PENALIZED = 16


def random_row(gen: torch.Generator, v: int):
    """A row of one of seven shapes, and its shape."""
    shape = int(torch.randint(0, 7, (1,), generator=gen))
    if shape == EQUAL:  # all equal: with V a power of two, top-p boundaries are exact
        row = torch.full((v,), 0.5, dtype=torch.float64)
    elif shape == 0:  # normal
        row = torch.randn(v, generator=gen, dtype=torch.float64) * 3
    elif shape == 1:  # peaked
        row = torch.randn(v, generator=gen, dtype=torch.float64)
        row[int(torch.randint(0, v, (1,), generator=gen))] += 12
    elif shape == 2:  # exact ties on a few levels
        row = torch.randint(0, 5, (v,), generator=gen).to(torch.float64) * 0.5
    elif shape == 3:  # -inf holes, never every token
        row = torch.randn(v, generator=gen, dtype=torch.float64)
        holes = torch.rand(v, generator=gen) < 0.4
        holes[int(torch.randint(0, v, (1,), generator=gen))] = False
        row[holes] = -math.inf
    elif shape == 4:  # flat with noise
        row = 1 + torch.randn(v, generator=gen, dtype=torch.float64) * 1e-3
    else:  # large magnitudes
        row = torch.randn(v, generator=gen, dtype=torch.float64) * 40
    return row.to(torch.float32), shape


def random_params(gen: torch.Generator, v: int, shape: int) -> ref.Params:
    r = torch.rand(4, generator=gen, dtype=torch.float64).tolist()
    t = [0.0, 1e-6, 1e-5, 0.05 + 3 * r[1], 1.0][int(r[0] * 5)]
    top_p = 1.0 if r[2] < 0.25 else max(1e-3, r[2])
    if shape == EQUAL and v >= 2 and v & (v - 1) == 0:
        t, top_p = 1.0, int(torch.randint(1, v, (1,), generator=gen)) / v
    top_k = -1 if r[3] < 0.3 else 1 + int(torch.randint(0, v + 3, (1,), generator=gen))
    return ref.Params(t, top_p, top_k)


def _pick(gen: torch.Generator, values):
    return values[int(torch.randint(0, len(values), (1,), generator=gen))]


def penalty_params(gen: torch.Generator, v: int, shape: int) -> ref.Params:
    """random_params with min-p and the penalties; about one in twenty out of range."""
    base = random_params(gen, v, shape)
    r = torch.rand(6, generator=gen, dtype=torch.float64).tolist()
    bad = r[5] < 0.05
    return ref.Params(base.temperature, base.top_p, base.top_k,
                      min_p=_pick(gen, [0.0, 0.5, 1.0, r[0], r[0] ** 4, 1.5 if bad else 0.1]),
                      frequency_penalty=_pick(gen, [0.0, 0.5, -1.25, 4 * r[1] - 2]),
                      presence_penalty=_pick(gen, [0.0, 0.75, -2.0, 4 * r[2] - 2]),
                      repetition_penalty=_pick(gen, [1.0, 2.0, 0.5, 0.05 + 1.95 * r[3],
                                                     0.0 if bad else 1.25]),
                      penalty_last_n=_pick(gen, [-1, -1, 0, 1, 3, -2 if bad else 8]))


def history(gen: torch.Generator, v: int):
    """Output and prompt ids, mostly among the first tokens so that they repeat; one id in
    fifty is outside [0, V)."""
    def ids(n):
        low = min(v, 4)
        out = [int(torch.randint(0, low if torch.rand(1, generator=gen) < 0.7 else v, (1,),
                                 generator=gen)) for _ in range(n)]
        return [v if torch.rand(1, generator=gen) < 0.02 else i for i in out]
    return ids(int(torch.randint(0, 12, (1,), generator=gen))), \
        ids(int(torch.randint(0, 4, (1,), generator=gen)))


def vocab(gen: torch.Generator, i: int) -> int:
    if i % 100 == 99:
        return int(torch.randint(8192, 65536, (1,), generator=gen))
    if i % 10 == 9:
        return int(torch.randint(512, 8192, (1,), generator=gen))
    if i % 10 == 4:
        return 2 ** int(torch.randint(1, 10, (1,), generator=gen))
    return int(torch.randint(1, 512, (1,), generator=gen))


def params_json(p: ref.Params) -> dict:
    out = {"temperature": p.temperature, "top_p": p.top_p, "top_k": p.top_k}
    defaults = ref.Params()
    for name in ("min_p", "frequency_penalty", "presence_penalty", "repetition_penalty",
                 "penalty_last_n"):
        if getattr(p, name) != getattr(defaults, name):
            out[name] = getattr(p, name)
    return out


class Oracle:
    def __init__(self, command):
        self.proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, bufsize=1 << 20)

    def ask(self, request: dict) -> dict:
        self.proc.stdin.write(json.dumps(request, allow_nan=False) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit("differential: sieve serve closed its output")
        return json.loads(line)

    def close(self):
        self.proc.stdin.write('{"op":"bye"}\n')
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def close(a: float, b: float) -> bool:
    if math.isinf(b) or math.isinf(a):
        return a == b
    return abs(a - b) <= TOL_ABS + TOL_REL * abs(b)


def compare_filter(got: dict, row: torch.Tensor, p: ref.Params, exact: bool):
    """None when they agree, "undecidable" for a decision within 1e-12 (unless the row's
    boundaries are exact, as for 2^k equal logits), else the difference."""
    try:
        want = ref.filter_row(row, p, ref.Engine())
    except ref.SieveError as e:
        err = got.get("error", {})
        same = (err.get("kind"), err.get("field"), err.get("code")) == (e.kind, e.field, e.code)
        return None if same else f"expected error {e.code}, got {json.dumps(got)[:200]}"
    if "error" in got:
        return f"expected an answer, got {got['error']}"
    lp = [(-math.inf if x is None else x) for x in got["logprobs"]]
    w = want.logprobs.tolist()
    kept_got = [i for i, x in enumerate(lp) if x != -math.inf]
    kept_want = [i for i, x in enumerate(w) if x != -math.inf]
    if kept_got != kept_want:
        gap = want.cut_gap / max(float(want.probs[want.ranked[want.kept - 1]]), 1e-300)
        if not exact and min(want.topp_margin, gap, want.minp_margin) < UNDECIDABLE:
            return "undecidable"
        first = next(i for i in range(len(w)) if (lp[i] == -math.inf) != (w[i] == -math.inf))
        return (f"kept sets differ at token {first}: oracle {lp[first]!r}, reference {w[first]!r} "
                f"(oracle keeps {len(kept_got)}, reference {len(kept_want)})")
    for i, (a, b) in enumerate(zip(lp, w)):
        if not close(a, b):
            return f"logprob of token {i}: oracle {a!r}, reference {b!r}"
    return None


def compare_sample(got: dict, row, p, seed, pos, n_top, exact: bool):
    try:
        want = ref.sample(row, p, seed, pos, n_top)
    except ref.SieveError as e:
        err = got.get("error", {})
        same = (err.get("kind"), err.get("field")) == (e.kind, e.field)
        return None if same else f"expected error {e.code}, got {json.dumps(got)[:200]}"
    if "error" in got:
        return f"expected an answer, got {got['error']}"
    if got["u"] != want.u:
        return f"u: oracle {got['u']!r}, reference {want.u!r}"
    if got["token"] != want.token:
        near = want.draw_margin < UNDECIDABLE or want.filtered.topp_margin < UNDECIDABLE
        if near and not exact:
            return "undecidable"
        return f"token: oracle {got['token']}, reference {want.token}"
    if not close(got["logprob"], want.logprob):
        return f"logprob: oracle {got['logprob']!r}, reference {want.logprob!r}"
    tops = [(i, -math.inf if x is None else x) for i, x in got["top_logprobs"]]
    for (gi, gx), (wi, wx) in zip(tops, want.top):
        if not close(gx, wx):
            return f"top_logprobs: oracle {(gi, gx)}, reference {(wi, wx)}"
    return None


def route_answer(row: torch.Tensor, p: ref.Params, route: str) -> dict:
    """A float32 engine along one route: its kept set, and a float32 log-softmax over it (-inf as
    a float, which the matchers read as they read null)."""
    q = ref.check_params(p)
    scaled = torch.where(torch.isinf(row), row, row * (1.0 / q.temperature))
    kept = fp32.route_kept(scaled, ~torch.isinf(row), q.top_p, q.top_k, route)
    masked = torch.full_like(scaled, -math.inf)
    masked[kept] = scaled[kept]
    return {"logprobs": torch.log_softmax(masked, 0).tolist()}


def compare_float32(got32: dict, row: torch.Tensor, p: ref.Params, exact: bool):
    """None when the float32 library and every route satisfy the row's expectation at float32,
    "refused" for a row the generator would not make a case of, else the difference."""
    try:
        expect = ff.filter_expect(row, p, exact_boundary=exact)
    except ff.NearBoundary:
        return "refused"
    if "error" in expect:
        return None
    answers = [("library", got32)]
    answers += [(route, route_answer(row, p, route)) for route in fp32.ROUTES]
    for name, answer in answers:
        if not matcher.matches(expect, answer, "float32"):
            return f"float32 {name} fails the expectation at float32: {json.dumps(answer)[:300]}"
    return None


def speculate_chain(gen: torch.Generator, row: torch.Tensor, p: ref.Params, i: int):
    """A chain headed by the row: (target rows, draft tokens or None, draft rows or None, draft
    params, seed, position)."""
    v, k = row.shape[0], 1 + i % 5
    target = [row] + [random_row(gen, v)[0] for _ in range(k)]
    seed = int(torch.randint(0, 2**62, (1,), generator=gen))
    pos = int(torch.randint(0, 2**40, (1,), generator=gen))
    if i % 2:
        tokens = torch.randint(0, v, (k,), generator=gen).tolist()
        return target, tokens, None, ref.Params(), seed, pos
    dp = random_params(gen, v, 0)
    return target, None, [random_row(gen, v)[0] for _ in range(k)], dp, seed, pos


def speculate_request(chain, p: ref.Params) -> dict:
    target, tokens, draft, dp, seed, pos = chain
    rows = lambda rs: [ff.row_json(r.double()) for r in rs]  # noqa: E731
    d = {"tokens": tokens} if tokens is not None else {"rows": rows(draft),
                                                       "params": params_json(dp)}
    return {"op": "speculate", "seed": str(seed), "position": pos,
            "target": {"rows": rows(target), "params": params_json(p)}, "draft": d}


def compare_speculate(got: dict, chain, p: ref.Params):
    """None when the oracle's answer is the reference's; "undecidable" when a test or the last
    draw sits within 1e-12 of its boundary; else the difference."""
    target, tokens, draft, dp, seed, pos = chain
    try:
        drafts = tokens if tokens is not None else ref.speculate_draft(draft, dp, seed, pos)
        want = ref.speculate(target, drafts, draft, p, dp, seed, pos)
    except ref.SieveError as e:
        code = got.get("error", {}).get("code")
        return None if code == e.code else f"expected {e.code}, got {json.dumps(got)[:200]}"
    if "error" in got:
        return f"expected an answer, got {got['error']}"
    close_call = any(st.margin < UNDECIDABLE for st in want.steps if st.p != st.q) or \
        want.draw_margin < UNDECIDABLE
    if tokens is None and got.get("draft_tokens") != drafts:
        return f"draft tokens {got.get('draft_tokens')}, expected {drafts}"
    diff = _speculate_difference(got, want)
    return None if diff is None else "undecidable" if close_call else diff


def _speculate_difference(got: dict, want) -> str:
    """The first field where the oracle's answer leaves the reference's, or None."""
    for key in ("accepted", "tokens", "bonus"):
        if got[key] != getattr(want, key):
            return f"{key} {got[key]}, expected {getattr(want, key)}"
    if len(got["steps"]) != len(want.steps):
        return f"{len(got['steps'])} steps, expected {len(want.steps)}"
    for j, (g, w) in enumerate(zip(got["steps"], want.steps)):
        if g["u"] != w.u or g["accepted"] != w.accepted or not close(_number(g["ratio"]), w.ratio):
            return (f"steps[{j}]: u {g['u']!r} accepted {g['accepted']} ratio {g['ratio']!r}, "
                    f"expected {w.u!r} {w.accepted} {w.ratio!r}")
    return None


def _number(x):
    return float("inf") if x == "inf" else float(x)


def report(kind, i, row, p, detail, extra=""):
    values = row.tolist()
    shown = values if len(values) <= 16 else values[:16] + ["..."]
    print(f"differential: FAIL {kind} row {i}: V={len(values)} T={p.temperature!r} "
          f"top_p={p.top_p!r} top_k={p.top_k}{extra}\n  logits: {shown}\n  {detail}",
          file=sys.stderr)


class Tally:
    def __init__(self):
        self.passed = self.failed = self.undecidable = self.refused = self.speculated = 0
        self.penalized = 0

    def add(self, other):
        for k, v in vars(other).items():
            setattr(self, k, getattr(self, k) + v)


def run(command, rows: int, seed: int, f32_command=None, shard=(0, 1)) -> Tally:
    """Checks the batches b with b % shard[1] == shard[0]; every row and chain is generated, so
    the shards check the rows the whole run would."""
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(seed)
    oracle = Oracle(command)
    port32 = Oracle(f32_command) if f32_command else None
    chains = torch.Generator().manual_seed(seed + 1)
    penalties = torch.Generator().manual_seed(seed + 2)
    t = Tally()
    for start in range(0, rows, BATCH):
        batch = []
        for i in range(start, min(rows, start + BATCH)):
            v = vocab(gen, i)
            row, shape = random_row(gen, v)
            p = random_params(gen, v, shape)
            s = int(torch.randint(0, 2**62, (1,), generator=gen)) * 4 + 3
            pos = int(torch.randint(0, 2**40, (1,), generator=gen))
            n_top = int(torch.randint(0, min(v, 8) + 1, (1,), generator=gen))
            exact = shape == EQUAL and v & (v - 1) == 0
            batch.append((i, row, p, s, pos, n_top, exact))
        specs = [speculate_chain(chains, b[1], b[2], b[0]) if b[1].shape[0] <= SPECULATE_V
                 else None for b in batch]
        penalized = []
        for _ in range(PENALIZED):
            v = int(torch.randint(1, 257, (1,), generator=penalties))
            row, shape = random_row(penalties, v)
            out, prompt = history(penalties, v)
            penalized.append((row, replace(penalty_params(penalties, v, shape),
                                           output_ids=tuple(out), prompt_ids=tuple(prompt))))
        if (start // BATCH) % shard[1] == shard[0]:
            check_batch(t, oracle, port32, batch, specs)
            check_penalized(t, oracle, penalized)
    oracle.close()
    if port32:
        port32.close()
    return t


def check_batch(t: Tally, oracle, port32, batch, specs):
    logits = [ff.row_json(row.double()) for _, row, *_ in batch]
    filtered = oracle.ask({"op": "filter", "rows": [
        {"logits": lg, "params": params_json(b[2])} for lg, b in zip(logits, batch)]})
    sampled = oracle.ask({"op": "sample", "rows": [
        {"logits": lg, "params": params_json(b[2]), "seed": str(b[3]), "position": b[4],
         "top_logprobs": b[5]} for lg, b in zip(logits, batch)]})
    spec_answers = [oracle.ask(speculate_request(c, b[2])) if c else None
                    for c, b in zip(specs, batch)]
    filtered32 = port32.ask({"op": "filter", "rows": [
        {"logits": lg, "params": params_json(b[2])} for lg, b in zip(logits, batch)]}) \
        if port32 else {"rows": [None] * len(batch)}
    for (i, row, p, s, pos, n_top, exact), fg, sg, f32g, chain, spg in zip(
            batch, filtered["rows"], sampled["rows"], filtered32["rows"], specs, spec_answers):
        results = [("filter", compare_filter(fg, row, p, exact), ""),
                   ("sample", compare_sample(sg, row, p, s, pos, n_top, exact),
                    f" seed={s} position={pos} top_logprobs={n_top}")]
        if chain:
            t.speculated += 1
            results.append(("speculate", compare_speculate(spg, chain, p),
                            f" chain of {len(chain[0]) - 1}"))
        if port32:
            f32 = compare_float32(f32g, row, p, exact)
            t.refused += f32 == "refused"
            results.append(("float32", None if f32 == "refused" else f32, ""))
        bad = [(k, d, x) for k, d, x in results if d not in (None, "undecidable")]
        if bad:
            t.failed += 1
            if t.failed <= 10:
                report(bad[0][0], i, row, p, bad[0][1], bad[0][2])
        elif any(d == "undecidable" for _, d, _ in results):
            t.undecidable += 1
        else:
            t.passed += 1


def check_penalized(t: Tally, oracle, rows):
    answers = oracle.ask({"op": "filter", "rows": [
        {"logits": ff.row_json(row.double()), "params": params_json(p),
         "output_ids": list(p.output_ids), "prompt_ids": list(p.prompt_ids)} for row, p in rows]})
    for (row, p), got in zip(rows, answers["rows"]):
        t.penalized += 1
        d = compare_filter(got, row, p, False)
        if d in (None, "undecidable"):
            t.passed += d is None
            t.undecidable += d == "undecidable"
            continue
        t.failed += 1
        if t.failed <= 10:
            report("penalties", t.penalized, row, p, d, f" output_ids={list(p.output_ids)} "
                   f"prompt_ids={list(p.prompt_ids)} {params_json(p)}")


def run_shard(args):
    return run(*args)


def summary(t: Tally, rows: int, seed: int, f32_command) -> int:
    if f32_command:
        print(f"differential: float32 side: {len(fp32.ROUTES)} routes and "
              f"{f32_command[-1]} on every row; {t.refused} rows within float32 reach of more "
              f"outcomes than a case records, not checked there")
    print(f"differential: {t.speculated} of the rows also head a speculative chain (speculate)")
    print(f"differential: {rows} rows (seed {seed}) through filter and sample, and "
          f"{t.penalized} with penalties and min-p through filter; {t.undecidable} decided within "
          "1e-12 of a boundary and accepted either way")
    checked, due = t.passed + t.undecidable + t.failed, rows + t.penalized
    print(f"differential: {t.passed + t.undecidable} passed, {t.failed} failed")
    if checked != due or t.penalized == 0:
        print(f"differential: FAIL only {checked} of the {due} rows were checked", file=sys.stderr)
    return 1 if t.failed or checked != due or t.penalized == 0 else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sieve", help="path to the sieve binary")
    ap.add_argument("--rows", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--f32-lib", help="a float32 implementation (sieve_impl.h) to check too")
    ap.add_argument("--jobs", type=int, default=1,
                    help="processes, each checking every N-th batch (the rows are the same)")
    args = ap.parse_args()
    f32 = [args.sieve, "serve", "--lib", args.f32_lib] if args.f32_lib else None
    shards = [([args.sieve, "serve"], args.rows, args.seed, f32, (k, args.jobs))
              for k in range(args.jobs)]
    total = Tally()
    if args.jobs == 1:
        total.add(run_shard(shards[0]))
    else:
        with multiprocessing.get_context("fork").Pool(args.jobs) as pool:
            for t in pool.map(run_shard, shards):
                total.add(t)
    return summary(total, args.rows, args.seed, f32)


if __name__ == "__main__":
    sys.exit(main())
