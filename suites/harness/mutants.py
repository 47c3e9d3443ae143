"""Every deliberately wrong port of suites/mutants/catalogue.json, built in float64 (run at
precision float64) and in float32 (at float32), fails the cases the catalogue names (at float32,
those whose reading of the mutant separates there), every fixture case it fails names its own bug
(the hint of its reading, "[name]", from the fixture), and every case that records its reading
fails.

Each mutant is run on every fixture suite but large-vocab, and on the statistical and large-vocab
cases its catalogue entry names or that record its reading, each case sent alone (--no-batches):
a mutant is port.c with one bug compiled in, and the faithful module puts port.c without it, in
both builds, through the batches and the whole large-vocab suite. The rest of the large-vocab
suite (nineteen twentieths of a run that asks all of it: rows of up to 262,144 tokens, answered
under each rule the fit weighs) would tell no more: a large-vocab case that records no reading of
a mutant gives it DeepInfer's answer, as the mutants passed all of them in both builds when last
tried (suites/harness/README.md)."""

from pathlib import Path

from sieve_cli import catalogue, fixture_suites, fixtures


def separating(cases, name, precision):
    """The ids of the cases that record reading `name` as separated at `precision`."""
    return {c["id"] for c in cases for r in c.get("readings", [])
            if r["name"] == name and precision in r["precisions"]}


def judge(ctx, cases, name, entry, precision, result):
    """The named cases fail; every failed case names the mutant's reading; and, the converse,
    every case that records the reading fails, except validate cases: `sieve serve --lib`
    itself rejects values a library cannot be given (a null top_p, a top_k of 1.5)."""
    status, report, err = result
    got = {c["id"]: c for c in report["cases"]} if report else {}
    separated = separating(cases, name, precision)
    must = [i for i in entry["must_fail"] if precision == "float64" or i.startswith(
        "distribution/") or i in separated]
    missed = [i for i in must if got.get(i, {}).get("outcome") not in ("fail", "error")]
    failed = [c for c in got.values() if c["outcome"] in ("fail", "error")
              and not c["id"].startswith(("distribution/", "speculative-distribution/"))]
    # A mutant that is an axis value is named as that value; one that no fixture case tells from
    # a combination of axis values (its catalogue entry's "axes") by values of that combination.
    names = {name} | {r["rule"] for c in cases for r in c.get("readings", [])
                       if r["name"] == name and "rule" in r}
    axes = set(entry.get("axes", []))
    unnamed = [f"{c['id']}: {c['detail'][:160]}" for c in failed
               if not (names & set(c["causes"]) or (axes and set(c["causes"]) <= axes
                                                     and c["causes"]))]
    ops = {c["id"]: c["request"]["op"] for c in cases}
    passing = sorted(i for i in separated if ops[i] != "validate"
                     and got.get(i, {}).get("outcome") == "pass")
    ctx.check(f"mutant {name} at {precision} fails {', '.join(must)}", status == 1 and not missed,
              f"exit {status}, not failing: {missed} {err[-300:]}")
    ctx.check(f"mutant {name} at {precision}: each of its {len(failed)} failed cases names "
              f"[{name}]", failed and not unnamed, f"{len(unnamed)} without it: {unnamed[:2]}")
    ctx.check(f"mutant {name} at {precision} fails every case that records its reading there",
              not passing, f"{len(passing)} pass: {passing[:3]}")


def checks(ctx):
    cases = fixtures()["cases"]
    readings = {r["name"] for c in cases for r in c.get("readings", [])}
    jobs = [(name, entry, build, precision) for name, entry in catalogue().items()
            if entry.get("must_fail") for build, precision in (("", "float64"), ("-f32", "float32"))]
    ctx.check("every mutant of the catalogue is a reading the fixtures record",
              all(j[0] in readings for j in jobs), str(sorted({j[0] for j in jobs} - readings)))
    unbuilt = [f"{ctx.mutants}{b}/lib{n}.so" for n, _, b, _ in jobs
               if not Path(f"{ctx.mutants}{b}/lib{n}.so").exists()]
    ctx.check("the Makefile built every mutant of the catalogue, in both builds", not unbuilt,
              f"missing {unbuilt[:3]}: does catalogue.json keep one entry a line?")
    def start(job):
        name, entry, build, precision = job
        drawn = [i for i in entry["must_fail"] if i.startswith(("distribution/",
                                                                 "speculative-distribution/",
                                                                 "large-vocab/"))]
        drawn += sorted(c["id"] for c in cases if c["suite"] == "large-vocab" and c["id"] not in
                        drawn and any(r["name"] == name for r in c.get("readings", [])))
        extra = ["--case", ",".join(drawn)] if drawn else []
        suites = ",".join(s for s in fixture_suites() if s != "large-vocab")
        return ctx.start(f"lib:{ctx.mutants}{build}/lib{name}.so", "--suite", suites, *extra,
                         "--precision", precision, "--jobs", "1", "--no-batches")

    ctx.in_pairs(jobs, start, lambda job, result: judge(ctx, cases, job[0], job[1], job[3], result))
