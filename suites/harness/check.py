"""The harness held to its promises, as make test runs it: one module per concern, each a file of
this folder with a `checks(ctx)` and a docstring saying what it holds the harness to.

  check.py SIEVE MUTANTS_DIR C_ADAPTER.so PYTHON_ADAPTER.py [--only MODULE,...] [--parallel N]
           [--sanitized]

Modules run N at a time (2 by default, the two cores of make test; make test asks 3, since a run
of an exec: implementation keeps about one core busy between its two processes); each prints its
lines when it ends, every line naming its module ("FAIL [mutants] ..."), then its count and seconds. --only runs
a slice (make test SAN=1 runs the slice that exercises the sanitized binary on every kind of
implementation without repeating each mutant). --sanitized says the build is make test SAN=1's:
a module then leaves out the runs that would only put the same sanitized code through the same
requests again (faithful.py and fuzz.py say which), and the plain build keeps them. Exit status 1
on any failure.
"""

import argparse
import importlib
import os
import sys
import time
import traceback
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sieve_cli import Context  # noqa: E402

# The longest modules first (their seconds in make test of CI's fresh clone of 30d3b3f: diagnosis
# 303, fuzz 242, mutants 173, faithful 121, engines 97, random_rules 81, fakes 69, statistics 61,
# engine_tools 41, variants 38, cli 19, reports 11, expectations 6; diagnosis has since left out
# the large-vocab cases that record none of a profile's values, a third of its time), so that the
# modules running at once end close together.
MODULES = ("fuzz", "diagnosis", "mutants", "faithful", "engines", "random_rules", "fakes",
           "statistics", "engine_tools", "variants", "cli", "reports", "expectations")


def run_module(name, paths, sanitized):
    ctx = Context(name, *paths, sanitized=sanitized)
    try:
        importlib.import_module(name).checks(ctx)
    except Exception:  # a check that raises is a failure of its module, not of the others
        ctx.check("its checks ran to the end", False, traceback.format_exc()[-1200:])
    return ctx, time.monotonic() - ctx.started


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs=4, metavar="PATH")
    ap.add_argument("--only", default=",".join(MODULES))
    ap.add_argument("--parallel", type=int, default=2)
    ap.add_argument("--sanitized", action="store_true")
    args = ap.parse_args()
    paths = [os.path.abspath(p) for p in args.paths]
    chosen = args.only.split(",")
    unknown = [m for m in chosen if m not in MODULES]
    if unknown:
        ap.error(f"no module {', '.join(unknown)} (the modules: {', '.join(MODULES)})")
    totals = []
    with ThreadPoolExecutor(max_workers=args.parallel) as pool:
        futures = [pool.submit(run_module, name, paths, args.sanitized)
                   for name in MODULES if name in chosen]
        for future in futures:
            ctx, seconds = future.result()
            for _, line in ctx.results:
                print(line)
            failed = sum(not ok for ok, _ in ctx.results)
            totals.append((ctx.module, len(ctx.results) - failed, failed, seconds))
            print(f"harness [{ctx.module}]: {len(ctx.results) - failed} passed, {failed} failed "
                  f"in {seconds:.0f} s", flush=True)
    passed, failed = sum(t[1] for t in totals), sum(t[2] for t in totals)
    print(f"harness: {passed} passed, {failed} failed ("
          + ", ".join(f"{m} {p}/{p + f}" for m, p, f, _ in totals) + f"); the modules ran "
          f"{args.parallel} at a time, so their seconds overlap")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
