"""The mutant per axis value: for each value of oracle/sieve.h's axes that is not DeepInfer's, the
oracle variant rule:AXIS=VALUE (answered in process). The fixtures catch it with its own hint
(it fails the cases that record the reading it is, each naming that reading), and the
fingerprint names that value on that axis and DeepInfer's on every other. The values are read
from `sieve axes`, so a new value is checked as soon as it is declared. As with the mutants, of the
large-vocab suite only the cases that record the value are asked (suites/harness/README.md says
why the others may be left out)."""

from sieve_cli import fixture_suites, fixtures


def rule_values(ctx):
    """Every axis value of oracle/sieve.h that is not DeepInfer's, as AXIS=VALUE."""
    return [f"{a['axis']}={v['name']}" for a in ctx.json("axes") for v in a["values"][1:]]


def judge(ctx, cases, rule, result):
    """A rule variant fails the cases that record the reading it is (rule, in the fixture), and
    every case it fails names that reading. draw=own is the one value no case can separate: a
    generator of the engine's own skips the cases that pin the hash's draws."""
    status, report, err = result
    got = {c["id"]: c for c in report["cases"]} if report else {}
    names = {r["name"] for c in cases for r in c.get("readings", []) if r.get("rule") == rule}
    recording = {c["id"] for c in cases for r in c.get("readings", [])
                 if r.get("rule") == rule and "float64" in r["precisions"]}
    failed = [c for c in got.values() if c["outcome"] in ("fail", "error")]
    if rule == "draw=own":
        ctx.check("rule variant draw=own fails no case (its draws are not the hash's)",
                  status == 0 and not failed and not names, f"exit {status}, {len(failed)} failed")
        return
    name = next(iter(names), rule)
    unnamed = [f"{c['id']}: {c['detail'][:160]}" for c in failed
               if name not in c.get("causes", []) and rule not in c.get("causes", [])]
    passing = sorted(i for i in recording if got.get(i, {}).get("outcome") == "pass")
    ctx.check(f"rule variant {rule} is a reading the fixtures record ({len(recording)} cases)",
              len(names) == 1 and recording, f"readings {sorted(names)}")
    ctx.check(f"rule variant {rule}: each of its {len(failed)} failed cases names [{name}]",
              status == 1 and failed and not unnamed,
              f"exit {status}, {len(unnamed)} without it: {unnamed[:2]} {err[-200:]}")
    ctx.check(f"rule variant {rule} fails every case that records [{name}]", not passing,
              f"{len(passing)} pass: {passing[:3]}")


def checks(ctx):
    cases = fixtures()["cases"]
    rules = rule_values(ctx)
    deepinfer = {a: c["value"] for p in ctx.json("profiles") if p["name"] == "deepinfer"
                 for a, c in p["axes"].items()}
    suites = ",".join(s for s in fixture_suites() if s != "large-vocab")

    def start(rule):
        large = [c["id"] for c in cases if c["suite"] == "large-vocab"
                 and any(r.get("rule") == rule for r in c.get("readings", []))]
        extra = ["--case", ",".join(large)] if large else []
        return ctx.start(f"rule:{rule}", "--suite", suites, *extra, "--jobs", "1", "--no-batches")

    ctx.in_pairs(rules, start, lambda rule, result: judge(ctx, cases, rule, result))
    for rule in rules:
        axis, value = rule.split("=")
        found = {a["axis"]: a["values"] for a in
                 ctx.json("fingerprint", "--impl", f"rule:{rule}")["axes"]}
        others = {a: v for a, v in found.items() if a != axis and len(v) == 1
                  and v != [deepinfer[a]]}
        ctx.check(f"fingerprint of rule:{rule} finds {value} on {axis}, DeepInfer's elsewhere",
                  found.get(axis) == [value] and not others, f"got {found.get(axis)}, {others}")
