"""make bench: the grid of oracle/PERFORMANCE.md in one run.

  bench.py BUILD_DIR [--reps N]

Times, on the same rows (fixture recipes): the oracle's fast path, its spec path and the floor
(build/sieve-bench), and generators/reference.py on PyTorch with one thread; then the harness's
own overhead (sieve run over every fixture, in process and through exec: sieve serve) and sieve
fuzz's throughput (rows and logits per second, the oracle against itself in process and through
exec: sieve serve). Prints a table of medians with the ratios fast/floor and PyTorch/fast, and
writes build/bench.json and build/bench.md.
"""

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "generators"))
import fixture_format as ff  # noqa: E402
import reference as ref  # noqa: E402
from make_fixtures import atomic_write  # noqa: E402

BATCH = 32
# sieve fuzz: a fixed seed and row count, about 10 to 30 s for each implementation here.
FUZZ_SEED = 3
FUZZ_ROWS = 30000
FUZZ_SUMMARY = re.compile(r"sieve fuzz (\w+): (\d+) rows \((\d+) logits\).*; ([0-9.]+) s \(seed")


def recipe(v, shape, index):
    """The row sieve-bench builds for (V, shape, index): the same integer recipe."""
    peaked = shape == "peaked"
    return {"kind": "irwin_hall4", "seed": str(1000 + 97 * index + (0 if peaked else 1)),
            "v": v, "bits": 20 if peaked else 2, "exp": -19 if peaked else -2,
            "spike_every": 40009 if peaked else 0, "spike_units": (1 << 23) if peaked else 0}


def torch_ms(rows, params, reps):
    """Median milliseconds of reference.filter_row over the rows, one thread."""
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        for row in rows:
            ref.filter_row(row, params)
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def c_grid(build, reps, default_malloc=False):
    env = dict(os.environ, SIEVE_BENCH_DEFAULT_MALLOC="1") if default_malloc else None
    out = subprocess.run([str(build / "sieve-bench"), str(reps)], capture_output=True, text=True,
                         check=True, env=env).stdout
    return [json.loads(line) for line in out.splitlines()]


def harness_overhead(build):
    result = {}
    for name, impl in (("sieve_run_profile_s", "profile:deepinfer"),
                       ("sieve_run_exec_serve_s", f"exec:{build / 'sieve'} serve")):
        start = time.perf_counter()
        subprocess.run([str(build / "sieve"), "run", "--impl", impl, "--format", "json",
                        "--output", os.devnull], capture_output=True)
        result[name] = round(time.perf_counter() - start, 2)
    return result


def fuzz_run(build, impl):
    """One sieve fuzz run: its verdict, rows, logits and seconds from its summary line, with the
    wall-clock seconds of the whole command beside them."""
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen([str(build / "sieve"), "fuzz", "--impl", impl, "--seed",
                                 str(FUZZ_SEED), "--rows", str(FUZZ_ROWS)], stdout=out, stderr=err,
                                text=True)
        # wait4 gives the largest resident set of sieve fuzz, and of its child when it has one.
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        out.seek(0), err.seek(0)
        stdout, stderr = out.read(), err.read()
    returncode = os.waitstatus_to_exitcode(status)
    found = [FUZZ_SUMMARY.search(line) for line in stdout.splitlines()]
    found = [m for m in found if m]
    if not found:
        sys.exit(f"bench: sieve fuzz --impl {impl} printed no summary (exit {returncode}):\n"
                 f"{stderr[-2000:]}")
    verdict, rows, logits, seconds = found[-1].groups()
    seconds = float(seconds) or wall  # printed to 0.1 s
    return {"impl": impl, "seed": FUZZ_SEED, "rows_asked": FUZZ_ROWS, "verdict": verdict,
            "rows": int(rows), "logits": int(logits), "seconds": seconds,
            "wall_s": round(wall, 2), "rows_per_s": round(int(rows) / seconds, 1),
            "logits_per_s": round(int(logits) / seconds), "max_rss_mb": usage.ru_maxrss // 1024}


def fuzz_throughput(build):
    """sieve fuzz's rows and logits per second: the oracle judged against itself in process
    (profile:deepinfer), and the same rows through exec: sieve serve (JSON over a pipe)."""
    return {"profile": fuzz_run(build, "profile:deepinfer"),
            "exec_serve": fuzz_run(build, f"exec:{build / 'sieve'} serve")}


def machine():
    model = ""
    try:
        model = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo")
                     if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"cpu": model or platform.processor(), "cores": os.cpu_count(),
            "python": platform.python_version(), "torch": torch.__version__,
            "date": time.strftime("%Y-%m-%d")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build", type=Path)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    torch.set_num_threads(1)
    grid = c_grid(args.build, args.reps)
    rows_cache = {}
    for point in grid:
        key = (point["v"], point["shape"])
        if key not in rows_cache:
            rows_cache[key] = [torch.from_numpy(ff.recipe_logits(recipe(key[0], key[1], i)))
                               for i in range(BATCH)]
        rows = rows_cache[key][:point["batch"]]
        params = ref.Params(point["temperature"], point["top_p"], point["top_k"])
        point["torch_ms"] = torch_ms(rows, params, 5 if point["batch"] == 1 else 1)
        point["fast_over_floor"] = point["fast_ms"] / point["floor_ms"]
        point["torch_over_fast"] = point["torch_ms"] / point["fast_ms"]
    for point, plain in zip(grid, c_grid(args.build, args.reps, default_malloc=True)):
        point["fast_default_malloc_ms"] = plain["fast_ms"]
    report = {"machine": machine(), "command": "make bench", "grid": grid,
              "harness": harness_overhead(args.build), "fuzz": fuzz_throughput(args.build)}
    print(f"{'V':>7} {'shape':>6} {'T/top_p/top_k':>15} {'batch':>5} {'fast ms':>9} "
          f"{'spec ms':>9} {'floor ms':>9} {'torch ms':>9} {'fast/floor':>10} {'torch/fast':>10}")
    for p in grid:
        params = f"{p['temperature']:g}/{p['top_p']:g}/{p['top_k']}"
        print(f"{p['v']:>7} {p['shape']:>6} {params:>15} {p['batch']:>5} {p['fast_ms']:>9.3f} "
              f"{p['spec_ms']:>9.3f} {p['floor_ms']:>9.3f} {p['torch_ms']:>9.1f} "
              f"{p['fast_over_floor']:>10.2f} {p['torch_over_fast']:>10.1f}")
    ratios = [p["torch_over_fast"] for p in grid]
    floors = [p["fast_over_floor"] for p in grid]
    print(f"median torch/fast {statistics.median(ratios):.1f}; "
          f"median fast/floor {statistics.median(floors):.2f}; "
          f"rows over 3x the floor: {sum(f > 3 for f in floors)} of {len(floors)}")
    plain = [p["torch_ms"] / p["fast_default_malloc_ms"] for p in grid]
    plain_floors = [p["fast_default_malloc_ms"] / p["floor_ms"] for p in grid]
    print(f"with glibc's default malloc thresholds: median torch/fast {statistics.median(plain):.1f}; "
          f"rows over 3x the floor: {sum(f > 3 for f in plain_floors)} of {len(plain_floors)}")
    print(f"harness: {report['harness']}")
    print(f"sieve fuzz --seed {FUZZ_SEED} --rows {FUZZ_ROWS}:")
    print(f"{'impl':>12} {'verdict':>7} {'rows':>7} {'logits':>10} {'s':>6} {'wall s':>7} "
          f"{'rows/s':>8} {'logits/s':>10} {'MB':>6}")
    for name, f in report["fuzz"].items():
        print(f"{name:>12} {f['verdict']:>7} {f['rows']:>7} {f['logits']:>10} {f['seconds']:>6.1f} "
              f"{f['wall_s']:>7.2f} {f['rows_per_s']:>8.0f} {f['logits_per_s']:>10.3g} "
              f"{f['max_rss_mb']:>6}")
    atomic_write({args.build / "bench.json": json.dumps(report, indent=1),
                  args.build / "bench.md": markdown(grid) + "\n" + fuzz_markdown(report["fuzz"])})
    print(f"bench: wrote {args.build / 'bench.json'} and {args.build / 'bench.md'}")


def markdown(grid):
    """The grid as the table of oracle/PERFORMANCE.md."""
    lines = ["| V | shape | T / top_p / top_k | batch | fast | spec | floor | PyTorch | "
             "fast/floor | PyTorch/fast | fast, default malloc |",
             "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for p in grid:
        lines.append(f"| {p['v']} | {p['shape']} | {p['temperature']:g} / {p['top_p']:g} / "
                     f"{p['top_k']} | {p['batch']} | {p['fast_ms']:.3f} | {p['spec_ms']:.2f} | "
                     f"{p['floor_ms']:.3f} | {p['torch_ms']:.1f} | {p['fast_over_floor']:.2f} | "
                     f"{p['torch_over_fast']:.1f} | {p['fast_default_malloc_ms']:.3f} |")
    return "\n".join(lines) + "\n"


def fuzz_markdown(fuzz):
    """sieve fuzz's throughput as the second table of oracle/PERFORMANCE.md."""
    lines = ["| sieve fuzz --impl | rows | logits | seconds | rows/s | logits/s | MB |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for f in fuzz.values():
        impl = f["impl"].replace(str(ROOT) + "/", "")
        lines.append(f"| `{impl}` | {f['rows']} | {f['logits']} | {f['seconds']:.1f} | "
                     f"{f['rows_per_s']:.0f} | {f['logits_per_s']:.3g} | {f['max_rss_mb']} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
