"""The fit of `sieve run` (harness/run/README.md, "The fit") recovers the rule an implementation
follows. Served by the oracle under a rule, an implementation must get that rule back on every axis
the fixtures separate (an axis they do not separate may be undetermined, never wrong), no
misreading, and every failure explained:

- every built-in profile, on all the fixtures;
- a float32 PyTorch port of each profile's rule (rule_port.py: filter and validate, so the axes
  of sample and speculate stay undetermined), on every suite but large-vocab (its rows through
  Python's JSON cost three quarters of a port's run, and separate no axis value the others do
  not), and its fingerprint;
- `sieve fingerprint` of each of these rules names the rule's value on every axis it determines
  (several values only where one of them is the rule's, never "no value fits"), and never
  contradicts the fit of `sieve run`;
- 200 random rules of 3 to 8 axes off DeepInfer's (seeded, so a failure repeats), on the cases
  that separate an axis value (a fixture file of those; large-vocab and big batches left out:
  the profiles cover them, and they cost the most);
- a mutant that is no engine's choice gets its misreading, not an axis value that covers part of
  its failures, and a second bug beside an axis value gets both named."""

import json
import random
import tempfile
from pathlib import Path

from sieve_cli import fixture_suites, fixtures

RANDOM_RULES = 200
SEED = 23


def axes(ctx) -> dict:
    """{axis: [value names]}, DeepInfer's value first."""
    return {a["axis"]: [v["name"] for v in a["values"]] for a in ctx.json("axes")}


def random_rules(values) -> list:
    rng = random.Random(SEED)
    rules = []
    for _ in range(RANDOM_RULES):
        chosen = rng.sample(sorted(values), rng.randint(3, 8))
        rules.append({a: rng.choice(values[a][1:]) for a in chosen})
    return rules


def recovered(ctx, values, rule, report):
    """'' when the fit is the rule on every determined axis, explains every failure and adds no
    misreading; else what differs."""
    if not report or "diagnosis" not in report:
        return "no diagnosis in the report"
    fit = report["diagnosis"]
    wrong = {a: v for a, v in fit["rule"].items()
             if v is not None and v != rule.get(a, values[a][0])}
    problems = []
    if wrong:
        problems.append(f"wrong {wrong}")
    if fit["misreadings"]:
        problems.append(f"misreadings {fit['misreadings']}")
    if fit["explained"] != fit["failures"]:
        problems.append(f"{fit['explained']} of {fit['failures']} failures explained: "
                        f"{fit['unexplained'][:2]}")
    return "; ".join(problems)


def fingerprint_agrees(ctx, impl, values, rule, report) -> str:
    """'' when sieve fingerprint of impl finds the rule (or leaves an axis open with the rule's
    value among the candidates), its fit over the probes is the rule on every axis it
    determines, and it determines no axis otherwise than the run's fit; else what differs."""
    fitted = (report or {}).get("diagnosis", {}).get("rule", {})
    found = ctx.json("fingerprint", "--impl", impl)
    probes_fit = found.get("diagnosis", {}).get("rule", {})
    problems = [f"the fit over the probes: {a}={v}, the rule's {rule.get(a, values[a][0])}"
                for a, v in probes_fit.items() if v is not None and v != rule.get(a, values[a][0])]
    for a in found["axes"]:
        axis, names, want = a["axis"], a["values"], rule.get(a["axis"], values[a["axis"]][0])
        if a["verdict"].startswith("not determined"):
            continue
        if want not in names:
            problems.append(f"fingerprint {axis}: {a['verdict']}, the rule's {want}")
        elif len(names) == 1 and fitted.get(axis) not in (None, want):
            problems.append(f"fingerprint {axis}={want}, the run's fit {fitted[axis]}")
    return "; ".join(problems)


def profile_rules(ctx, values) -> dict:
    """{profile: {axis: value}}, each profile's departures from DeepInfer's rule."""
    return {p["name"]: {a: x["value"] for a, x in p["axes"].items() if x["value"] != values[a][0]}
            for p in ctx.json("profiles")}


def profiles(ctx, values):
    rules = profile_rules(ctx, values)
    names = list(rules)

    def judge(name, result):
        status, report, err = result
        problem = recovered(ctx, values, rules[name], report) if report else err[-300:]
        problem += fingerprint_agrees(ctx, f"profile:{name}", values, rules[name], report)
        nearest = report and report["diagnosis"]["nearest_profiles"][0]
        ctx.check(f"profile:{name} is fitted back: its rule on every determined axis, every "
                  "failure explained, itself the nearest profile; its fingerprint agrees",
                  not problem and nearest and nearest["name"] == name and not nearest["differs"],
                  problem or str(nearest))

    suites = ",".join(fixture_suites())
    ctx.in_pairs(names, lambda n: ctx.start(f"profile:{n}", "--suite", suites, "--no-batches",
                                            "--jobs", "1"), judge)


def float32_ports(ctx, values):
    rules = profile_rules(ctx, values)
    port = Path(__file__).resolve().parent / "rule_port.py"

    def impl(name):
        rule = ",".join(f"{a}={v}" for a, v in rules[name].items())
        return f"exec:/usr/bin/python3 {port} {rule}"

    def judge(name, result):
        status, report, err = result
        problem = recovered(ctx, values, rules[name], report) if report else err[-300:]
        problem += fingerprint_agrees(ctx, impl(name), values, rules[name], report)
        ctx.check(f"a float32 port of profile:{name} is fitted back: the profile's value on every "
                  "determined axis, every failure explained; its fingerprint agrees",
                  not problem, problem)

    suites = ",".join(s for s in fixture_suites() if s != "large-vocab")
    ctx.in_pairs(list(rules), lambda n: ctx.start(impl(n), "--suite", suites, "--no-batches",
                                                  "--jobs", "1"), judge)


def rows(case) -> int:
    request = case["request"]
    return len(request.get("rows", request.get("items", [None])))


def separating_fixtures(folder) -> str:
    """A fixture file of the cases that separate some axis value (they record a reading that is
    one), the large rows and the batches of more than 4 rows left out: every axis value is still
    separated, at a fifth of the cost of all the cases."""
    data = fixtures()
    data = dict(data, cases=[c for c in data["cases"] if c["suite"] != "large-vocab"
                             and rows(c) <= 4 and any("rule" in r for r in c.get("readings", []))])
    every = {r["rule"] for c in fixtures()["cases"] for r in c.get("readings", []) if "rule" in r}
    assert every == {r["rule"] for c in data["cases"] for r in c.get("readings", []) if "rule" in r}
    path = Path(folder) / "separating.json"
    path.write_text(json.dumps(data))
    return str(path)


def random_combinations(ctx, values):
    failures = []
    folder = tempfile.TemporaryDirectory()
    path = separating_fixtures(folder.name)
    suites = ",".join(dict.fromkeys(c["suite"] for c in json.loads(Path(path).read_text())["cases"]))

    def start(rule):
        text = ",".join(f"{a}={v}" for a, v in rule.items())
        return ctx.start(f"rule:{text}", "--fixtures", path, "--suite", suites, "--no-batches",
                         "--jobs", "1")

    def judge(rule, result):
        status, report, err = result
        problem = recovered(ctx, values, rule, report) if report else err[-300:]
        text = ",".join(f"{a}={v}" for a, v in rule.items())
        problem += fingerprint_agrees(ctx, f"rule:{text}", values, rule, report)
        if problem:
            failures.append(f"{rule}: {problem}")

    rules = random_rules(values)
    ctx.in_pairs(rules, start, judge)
    folder.cleanup()
    ctx.check(f"{len(rules)} random rules of 3 to 8 axes are each fitted back on every axis the "
              "fixtures separate, every failure explained, and their fingerprints agree",
              not failures,
              f"{len(failures)} not: {failures[:3]}")


def misreadings(ctx):
    # topk-off-by-one keeps k + 1: on ties that is what keeping every tied token gives, but the
    # misreading explains every failure and the axis value only some.
    _, report, _ = ctx.run(f"lib:{ctx.mutants}/libtopk-off-by-one.so", "--suite", "ordering,params",
                           "--no-batches", "--jobs", "1")
    fit = report["diagnosis"]
    ctx.check("a port that keeps k + 1 gets its misreading, not topk_ties=keep_all",
              fit["misreadings"] == ["topk-off-by-one"] and not ctx.departures(fit["rule"])
              and fit["explained"] == fit["failures"] > 0, str(fit)[:400])
    # Its k + 1-th token has probability 0 on the rank_key probes: keep_all keeps every such
    # token, and a float32 tail cannot cut between two of them (its sum does not move there).
    probes = ctx.json("fingerprint", "--impl", f"lib:{ctx.mutants}/libtopk-off-by-one.so")
    ctx.check("the fingerprint's fit over the probes of that port gives it no axis value (no "
              "float32 tail cut among tokens of probability 0)",
              not ctx.departures(probes["diagnosis"]["rule"]), str(probes["diagnosis"]["rule"]))


def checks(ctx):
    values = axes(ctx)
    misreadings(ctx)
    profiles(ctx, values)
    float32_ports(ctx, values)
    random_combinations(ctx, values)
