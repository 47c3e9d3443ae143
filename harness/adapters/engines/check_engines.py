"""Real engines held to their profiles (README.md beside this file).

  check_engines.py SIEVE check NAME IMPL    what `make engines-check` runs for each npm engine
  check_engines.py SIEVE record NAME IMPL   writes runs/NAME.json's fingerprint (and, for an
                                            engine CI runs, runs/NAME.expected.json) anew

check fails, naming the axis and the case, when
- the engine's fingerprint differs from its profile (oracle/sieve.h axes, harness/profiles.c) on
  an axis the fingerprint determines, or from the fingerprint recorded in runs/NAME.json (a new
  release, or a changed adapter: the output says which axes moved);
- `sieve diff profile:NAME IMPL` finds a case of an engine axis (the fixture's "axis") where the
  two answer differently and the profile does not say why: values that differ, or tied ids that
  differ while the profile's tie order is not "unspecified". Differences outside the axes (one side
  rejects what the other answers: the engines validate little) are listed, not failed;
- `sieve run --impl IMPL --expect runs/NAME.expected.json` finds a failure that file does not
  list, or a listed case that now passes.
"""

import json
import subprocess
import sys
from pathlib import Path

RUNS = Path(__file__).resolve().parent / "runs"
FAILURES = []


def say(ok, text):
    print(f"{'ok  ' if ok else 'FAIL'} {text}")
    if not ok:
        FAILURES.append(text)


def sieve_json(sieve, *args):
    p = subprocess.run([sieve, *args, "--format", "json"], capture_output=True, text=True)
    try:
        return p.returncode, json.loads(p.stdout)
    except json.JSONDecodeError:
        return p.returncode, {"error": p.stderr[-400:]}


def fingerprint(sieve, name, impl):
    status, report = sieve_json(sieve, "fingerprint", "--impl", impl, "--profile", name)
    return status, report


def verdicts(report):
    return {a["axis"]: a["verdict"] for a in report.get("axes", [])}


def check_fingerprint(sieve, name, impl):
    status, report = fingerprint(sieve, name, impl)
    found = verdicts(report)
    say(status == 0 and found, f"{name}: the fingerprint agrees with profile {name} on every "
        f"axis it determines" + ("" if status == 0 else f": differs on {report.get('differs')}"))
    recorded = verdicts(json.loads((RUNS / f"{name}.json").read_text())["fingerprint"])
    moved = {a: (recorded.get(a), v) for a, v in found.items() if recorded.get(a) != v}
    say(not moved, f"{name}: the fingerprint is the one recorded in runs/{name}.json" +
        "".join(f"; {a}: was {old}, now {new}" for a, (old, new) in moved.items()))


def axes_of(sieve):
    _, axes = sieve_json(sieve, "axes")
    return {a["axis"] for a in axes}


def check_diff(sieve, name, impl):
    _, profiles = sieve_json(sieve, "profiles")
    rule = {a: c["value"] for p in profiles if p["name"] == name for a, c in p["axes"].items()}
    unspecified = "unspecified" in (rule.get("topp_ties"), rule.get("topk_ties"))
    engine_axes = axes_of(sieve)
    _, d = sieve_json(sieve, "diff", f"profile:{name}", impl)
    cases = d.get("cases", [])
    outside = [c for c in cases if c["axis"] not in engine_axes or c["kind"].startswith("error")]
    explained = [c for c in cases if c not in outside and c["kind"] == "tied ids" and unspecified]
    wrong = [c for c in cases if c not in outside and c not in explained]
    say("compared" in d and not wrong,
        f"{name}: sieve diff profile:{name} finds no unexplained difference on an engine axis "
        f"({d.get('compared', 0)} cases compared, {d.get('skipped', 0)} skipped, "
        f"{len(explained)} differ only in tied ids under an unspecified tie order, "
        f"{len(outside)} outside the axes)" + "".join(
            f"; {c['axis']}: {c['id']} ({c['kind']}): {c['a']} | {c['b']}" for c in wrong[:8]))
    for c in outside[:5]:
        print(f"     outside the axes: {c['id']} ({c['kind']}): {c['a']} | {c['b']}")


def check_run(sieve, name, impl):
    expected = RUNS / f"{name}.expected.json"
    p = subprocess.run([sieve, "run", "--impl", impl, "--expect", str(expected)],
                       capture_output=True, text=True)
    verdict = (p.stdout.strip().splitlines() or [""])[-1]
    say(p.returncode == 0, f"{name}: sieve run passes with runs/{expected.name} ({verdict})" +
        ("" if p.returncode == 0 else f"\n{p.stdout[-1500:]}{p.stderr[-400:]}"))


def record(sieve, name, impl):
    path = RUNS / f"{name}.json"
    data = json.loads(path.read_text()) if path.exists() else {"run": {}}
    _, data["fingerprint"] = fingerprint(sieve, name, impl)
    data["fingerprint"]["impl"] = data["run"].get("impl", data["fingerprint"]["impl"])
    path.write_text(json.dumps(data, indent=1) + "\n")
    print(f"record: wrote {path}")
    if not data["run"].get("ci"):
        return
    _, report = sieve_json(sieve, "run", "--impl", impl)
    failures = {c["id"]: f"{c['outcome']}: {c['detail'][:150]}" for c in report["cases"]
                if c["outcome"] not in ("pass", "skip")}
    expected = {"schema": report["fixtures_schema"], "expected_failures": failures}
    (RUNS / f"{name}.expected.json").write_text(json.dumps(expected, indent=1) + "\n")
    print(f"record: {len(failures)} expected failures in runs/{name}.expected.json")


def main():
    sieve, mode, name, impl = sys.argv[1:5]
    if mode == "record":
        record(sieve, name, impl)
        return 0
    check_fingerprint(sieve, name, impl)
    check_diff(sieve, name, impl)
    check_run(sieve, name, impl)
    print(f"engines-check {name}: {'FAILED' if FAILURES else 'ok'}")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
