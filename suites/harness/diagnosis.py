"""The fit of `sieve run` (harness/run/README.md, "The fit") recovers the rule an implementation
follows. Served by the oracle under a rule, an implementation must get that rule back on every axis
the fixtures separate (an axis they do not separate may be undetermined, never wrong), no
misreading, and every failure explained:

- every built-in profile, on all the fixtures but the large-vocab cases that record none of its
  values (it gives them DeepInfer's answer: suites/harness/README.md);
- a float32 PyTorch port of each profile's rule (rule_port.py: filter and validate, so the axes
  of sample and speculate stay undetermined), on every suite but large-vocab (its rows through
  Python's JSON cost three quarters of a port's run, and separate no axis value the others do
  not), and its fingerprint;
- `sieve fingerprint` of each of these rules names the rule's value on every axis it determines
  (several values only where one of them is the rule's, never "no value fits"), and never
  contradicts the fit of `sieve run` (random_rules.py holds 200 random rules to the same);
- a mutant that is no engine's choice gets its misreading, not an axis value that covers part of
  its failures, and a second bug beside an axis value gets both named;
- an axis the rest of the fit hides (min-p's scale, with temperature after the filters) is
  undetermined, with the cases that would separate it named."""

from pathlib import Path

from sieve_cli import fixture_suites, fixtures

def axes(ctx) -> dict:
    """{axis: [value names]}, DeepInfer's value first."""
    return {a["axis"]: [v["name"] for v in a["values"]] for a in ctx.json("axes")}


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

    suites = ",".join(s for s in fixture_suites() if s != "large-vocab")
    large = [c for c in fixtures()["cases"] if c["suite"] == "large-vocab"]

    def start(name):
        taken = {f"{a}={v}" for a, v in rules[name].items()}
        asked = [c["id"] for c in large if taken & {r.get("rule") for r in c.get("readings", [])}]
        return ctx.start(f"profile:{name}", "--suite", suites,
                         *(("--case", ",".join(asked)) if asked else ()), "--no-batches",
                         "--jobs", "1")

    ctx.in_pairs(names, start, judge)


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


def hidden_axis(ctx):
    """An axis the rest of the fit hides is undetermined, and the report names the cases that
    separate it at DeepInfer's other choices, not 'no case'."""
    _, report, _ = ctx.run("rule:temperature_at=after", "--suite", "penalties", "--jobs", "1")
    x = report["diagnosis"]["axes"]["min_p_scale"]
    ctx.check("with temperature after the filters, min_p_scale is undetermined and hidden in the "
              "min-p scale cases, which the report names",
              report["diagnosis"]["rule"]["min_p_scale"] is None
              and any(i.startswith("penalties/min-p-on-scaled") for i in x.get("hidden_in", [])),
              str(x))
    _, report, _ = ctx.run("rule:temperature_at=after", "--suite", "params", "--jobs", "1")
    ctx.check("a run with no case separating min_p_scale names none as hiding it",
              "hidden_in" not in report["diagnosis"]["axes"]["min_p_scale"],
              str(report["diagnosis"]["axes"]["min_p_scale"]))


def checks(ctx):
    values = axes(ctx)
    misreadings(ctx)
    hidden_axis(ctx)
    profiles(ctx, values)
    float32_ports(ctx, values)
