"""The fit of `sieve run` and the fingerprint, as diagnosis.py holds them to a profile's rule, on
200 random rules of 3 to 8 axes off DeepInfer's (seeded, so a failure repeats), on the cases
that separate an axis value (a fixture file of those; large-vocab and big batches left out: the
profiles cover them, and they cost the most). A module of its own, so that it runs beside
diagnosis.py's profiles and ports."""

import json
import random
import tempfile
from pathlib import Path

from diagnosis import axes, fingerprint_agrees, recovered
from sieve_cli import fixtures

RANDOM_RULES = 200
SEED = 23


def random_rules(values) -> list:
    rng = random.Random(SEED)
    rules = []
    for _ in range(RANDOM_RULES):
        chosen = rng.sample(sorted(values), rng.randint(3, 8))
        rules.append({a: rng.choice(values[a][1:]) for a in chosen})
    return rules


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


def checks(ctx):
    random_combinations(ctx, axes(ctx))
