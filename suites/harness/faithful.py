"""Faithful implementations pass: the oracle (in process, as a profile, and as a child through
exec:), the C adapter and the faithful port (lib:, in float64 and built in float32) and the
Python template pass every suite, both passes, at the precision each declares or is given; sieve
diff finds the template's answers the oracle's, its validate echo included; and every report
says which precision it used and where it came from.

Under the sanitizers, the large-vocab and statistical suites, most of a run's time, are asked
only of the runs with sanitized code of their own to put through them: sieve serve and the port
in either build. The oracle in process runs serve's request code, reading recipe rows as the
ports' lib: children do, and the oracle that sieve serve runs; the C adapter forwards to that
oracle through the lib: path of the ports; the Python template is not sanitized, and the runner's
side of it (exec:, rows written out as arrays, float64 bounds) is that of the serve run. These
three pass the other suites there, and every suite in the plain build."""

import json

from sieve_cli import FAKES, fixture_suites

COSTLY_SUITES = ("large-vocab", "distribution", "speculative-distribution")


def every_suite_passes(ctx):
    m = ctx.mutants
    others = ",".join(s for s in fixture_suites() if s not in COSTLY_SUITES)
    for impl, args, skips, sanitized_code in (
            ("profile:deepinfer", [], False, False), (f"exec:{ctx.sieve} serve", [], False, True),
            (f"lib:{m}/libport-faithful.so", ["--precision", "float64"], False, True),
            (f"lib:{m}-f32/libport-faithful.so", ["--precision", "float32"], False, True),
            (f"lib:{ctx.c_adapter}", ["--precision", "float64"], False, False),
            (f"exec:{ctx.python} {ctx.py_adapter}", [], True, False)):
        whole = sanitized_code or not ctx.sanitized
        status, report, err = ctx.run(impl, *args, *(() if whole else ("--suite", others)))
        if skips and report:  # the Python adapter offers filter and validate only
            asked = [c for c in report["cases"] if c["id"].startswith("penalties/")]
            ctx.check(f"the Python template answers every case of min-p and the penalties "
                      f"({len(asked)}): its hello lists the sampling options",
                      asked and all(c["outcome"] != "skip" for c in asked),
                      str([c["id"] for c in asked if c["outcome"] == "skip"][:3]))
            report["cases"] = [c for c in report["cases"] if c["outcome"] != "skip"]
        bad = [c["id"] for c in report["cases"] if c["outcome"] != "pass"] if report else ["?"]
        at = f"at {report['precision']} ({report['precision_source']})" if report else ""
        suites = "every suite" if whole else f"every suite but {', '.join(COSTLY_SUITES)}"
        ctx.check(f"{impl} passes {suites} {at} ({len(report['cases']) if report else 0} cases)",
                  status == 0 and not bad, f"exit {status}, not passing: {bad[:5]} {err[-300:]}")


def template_answers_as_the_oracle(ctx):
    """The Python template gives the oracle's answers, its validate echo included (min_p where it
    is on, the penalties where one is named), so sieve diff finds no difference to explain. The
    plain build runs it: under the sanitizers it would put diff's code through what engines.py's
    diffs already do."""
    if ctx.sanitized:
        return
    p = ctx.cmd("diff", "profile:deepinfer", f"exec:{ctx.python} {ctx.py_adapter}", "--no-fit",
                "--suite", "params,penalties", "--format", "json")
    got = json.loads(p.stdout) if p.stdout.startswith("{") else {}
    ctx.check("sieve diff of DeepInfer's profile and the Python template finds every answer the "
              "same, validate's included",
              got.get("compared", 0) > 100 and got.get("differ") == 0
              and got.get("both_accepted") == 0, f"{p.stdout[:300]} {p.stderr[-300:]}")


def reports_name_their_precision(ctx):
    """Every report says the precision in use and where it came from; a hello that declares an
    unknown one is a harness error naming it."""
    for impl, args, want in (("profile:deepinfer", [], ("float64", "hello")),
                             (f"lib:{ctx.mutants}/libport-faithful.so", [], ("float32", "default")),
                             ("profile:deepinfer", ["--precision", "float32"],
                              ("float32", "--precision"))):
        _, report, _ = ctx.run(impl, "--suite", "position", *args)
        got = (report or {}).get("precision"), (report or {}).get("precision_source")
        ctx.check(f"sieve run --impl {impl} {' '.join(args)} reports precision {want[0]} "
                  f"({want[1]})", got == want, f"got {got}")
        text = ctx.cmd("run", "--impl", impl, "--suite", "position", *args).stdout
        ctx.check(f"the text report of {impl} {' '.join(args)} names precision {want[0]}",
                  f"at precision {want[0]} ({want[1]})" in text
                  and f"(precision {want[0]})" in text, text[:200])
    status, report, err = ctx.run(f"exec:{FAKES / 'bad-precision.sh'}", "--suite", "smoke",
                                  env=ctx.env())
    ctx.check("a hello declaring precision fp16 is a harness error (exit 2) naming the value",
              status == 2 and report is None
              and '"precision" must be "float32" or "float64", not fp16' in err, err[-300:])


def checks(ctx):
    every_suite_passes(ctx)
    template_answers_as_the_oracle(ctx)
    reports_name_their_precision(ctx)
