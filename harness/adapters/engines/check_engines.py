"""Real engines held to their profiles (README.md beside this file).

  check_engines.py SIEVE check NAME IMPL    what `make engines-check` runs for each npm engine
  check_engines.py SIEVE record NAME IMPL   writes runs/NAME.json's fingerprint and the fit of
                                            a full sieve run (and, for an engine CI runs,
                                            runs/NAME.expected.json) anew
  check_engines.py SIEVE recorded           holds the fit recorded for each engine CI does not
                                            run (the Python engines) to its profile and to the
                                            residual groups its runs/NAME.json documents

check fails, naming the axis and the case, when
- the engine's fingerprint differs from its profile (oracle/sieve.h axes, harness/engines/profiles.c) on
  an axis the fingerprint determines, or from the fingerprint recorded in runs/NAME.json (a new
  release, or a changed adapter: the output says which axes moved);
- `sieve diff profile:NAME IMPL` compares no case, or finds a case of an engine axis (the
  fixture's "axis") where the two answer differently and the profile does not say why: values
  that differ, or tied ids that differ while the profile's tie order is not "unspecified".
  Differences where one side rejects what the other answers are listed, not failed, on every
  axis: the engines validate little (a top_p of 0, a NaN), profiles do not model validation, and
  the axes that are about which values are errors (t0, top_k_zero, top_k_minus_one) are held by
  the fingerprint instead;
- `sieve run --impl IMPL --expect runs/NAME.expected.json` finds a failure that file does not
  list, or a listed case that now passes or is skipped, or asks nothing at all;
- the fit of that run (harness/run/README.md, "The fit") differs from the profile on an axis it
  determines, or adds a misreading (the engine's departures are its choices, not a port's bugs);
- a failure the fit does not explain falls in a residual group whose kind (what its failures
  share, before the parameters they have in common) runs/NAME.json does not document under
  "residual", with why the engine answers so, or a kind documented there no longer occurs. The
  groups are printed with their reasons.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

# The recorded runs; SIEVE_ENGINE_RUNS points elsewhere (suites/harness/engine_tools.py tests
# this script on the oracle's profiles), and SIEVE_ENGINE_SUITES (comma-separated) limits the
# runs and diffs to those suites there, where the script's mechanism is tested, not an engine.
RUNS = Path(os.environ.get("SIEVE_ENGINE_RUNS", Path(__file__).resolve().parent / "runs"))
SUITES = [a for s in os.environ.get("SIEVE_ENGINE_SUITES", "").split(",") if s
          for a in ("--suite", s)]
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
    _, d = sieve_json(sieve, "diff", f"profile:{name}", impl, *SUITES)
    cases = d.get("cases", [])
    outside = [c for c in cases if c["axis"] not in engine_axes or c["kind"].startswith("error")]
    explained = [c for c in cases if c not in outside and c["kind"] == "tied ids" and unspecified]
    wrong = [c for c in cases if c not in outside and c not in explained]
    say(d.get("compared", 0) > 0 and not wrong,
        f"{name}: sieve diff profile:{name} finds no unexplained difference on an engine axis "
        f"({d.get('compared', 0)} cases compared, {d.get('skipped', 0)} skipped, "
        f"{len(explained)} differ only in tied ids under an unspecified tie order, "
        f"{len(outside)} outside the axes)" + "".join(
            f"; {c['axis']}: {c['id']} ({c['kind']}): {c['a']} | {c['b']}" for c in wrong[:8]))
    for c in outside[:5]:
        print(f"     outside the axes: {c['id']} ({c['kind']}): {c['a']} | {c['b']}")


def check_run(sieve, name, impl):
    expected = RUNS / f"{name}.expected.json"
    status, report = sieve_json(sieve, "run", "--impl", impl, "--expect", str(expected), *SUITES)
    cases = report.get("cases", [])
    asked = [c for c in cases if c["outcome"] != "skip"]
    skipped = [c["id"] for c in cases if c["outcome"] == "skip" and c["expected_failure"]]
    unexpected = [f"{c['id']} ({c['outcome']}): {c['detail'][:160]}" for c in cases
                  if (c["outcome"] not in ("pass", "skip")) != c["expected_failure"]
                  and c["outcome"] != "skip"]
    say(status == 0 and asked and not skipped,
        f"{name}: sieve run with runs/{expected.name}: {len(asked)} cases asked, nothing "
        f"unexpected" + "".join(f"; {u}" for u in unexpected[:6]) +
        (f"; listed but skipped: {skipped[:5]}" if skipped else "") +
        ("" if asked else f"; nothing asked {report.get('error', '')}"))
    check_fit(sieve, name, report.get("diagnosis", {}))


def compatible(axis, fitted, profiled):
    """An unstable sort ("unspecified" tie order) may keep the tied ids a stable one would on
    every row the fixtures have: the fit then finds that order, which the profile allows."""
    return fitted == profiled or (axis in ("topp_ties", "topk_ties") and profiled == "unspecified")


def check_fit(sieve, name, fit):
    _, profiles = sieve_json(sieve, "profiles")
    profile = next((p["axes"] for p in profiles if p["name"] == name), {})
    recorded = RUNS / f"{name}.json"
    documented = (json.loads(recorded.read_text())["run"].get("residual", {})
                  if recorded.exists() else {})
    wrong = {a: f"{v} (profile {profile.get(a, {}).get('value')})"
             for a, v in fit.get("rule", {}).items()
             if v is not None and not compatible(a, v, profile.get(a, {}).get("value"))}
    say(fit and profile and not wrong and not fit.get("misreadings"),
        f"{name}: the fit of sieve run is profile {name} on every axis it determines"
        + (f"; differs: {wrong}" if wrong else "")
        + (f"; misreadings {fit['misreadings']}" if fit.get("misreadings") else ""))
    groups = fit.get("unexplained", [])
    undocumented = [g for g in groups if g["kind"] not in documented]
    say(not undocumented,
        f"{name}: the fit explains {fit.get('explained')} of {fit.get('failures')} failures; every "
        f"other is in a residual group runs/{recorded.name} documents"
        + "".join(f"; not documented: {g['count']} x {g['kind']} (e.g. {g['cases'][0]})"
                  for g in undocumented))
    stale = sorted(set(documented) - {g["kind"] for g in groups})
    say(not stale, f"{name}: every residual kind runs/{recorded.name} documents still occurs"
        + "".join(f"; no longer: {k}" for k in stale))
    for group in groups:
        why = documented.get(group["kind"])
        print(f"       {group['count']:4}  {group['description']}"
              + (f"\n             why: {why}" if why else ""))


def recorded_fit(diagnosis):
    """The fit of a run as runs/NAME.json keeps it: what check_fit reads, three cases a group."""
    keep = ("rule", "explained", "failures", "misreadings", "nearest_profiles")
    return {**{k: diagnosis.get(k) for k in keep},
            "unexplained": [{**g, "cases": g["cases"][:3]} for g in diagnosis.get("unexplained", [])]}


def record(sieve, name, impl):
    path = RUNS / f"{name}.json"
    data = json.loads(path.read_text()) if path.exists() else {"run": {}}
    _, data["fingerprint"] = fingerprint(sieve, name, impl)
    data["fingerprint"]["impl"] = data["run"].get("impl") or data["fingerprint"].get("impl")
    _, report = sieve_json(sieve, "run", "--impl", impl, *SUITES)
    data["fit"] = recorded_fit(report.get("diagnosis", {}))
    path.write_text(json.dumps(data, indent=1) + "\n")
    print(f"record: wrote {path}")
    if data["run"].get("ci"):
        subprocess.run([sieve, "run", "--impl", impl, "--write-expect",
                        str(RUNS / f"{name}.expected.json"), *SUITES], stdout=subprocess.DEVNULL)


def check_recorded(sieve):
    for path in sorted(RUNS.glob("*.json")):
        data = json.loads(path.read_text())
        if path.name.endswith(".expected.json") or data["run"].get("ci"):
            continue
        name = path.stem
        say("fit" in data, f"{name}: runs/{path.name} records the fit of a sieve run")
        if "fit" in data:
            check_fit(sieve, name, data["fit"])


def main():
    if sys.argv[2:3] == ["recorded"]:
        check_recorded(sys.argv[1])
        print(f"engines-check recorded runs: {'FAILED' if FAILURES else 'ok'}")
        return 1 if FAILURES else 0
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
