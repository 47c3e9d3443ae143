"""The reports of sieve run: JUnit is well-formed and as Jenkins and GitLab read it (valid
against Jenkins' junit-4.xsd), TAP counts its cases, markdown's words agree with its verdict, and
--output is written whole, with the umask's mode, into a FIFO as into a file, leaving the verdict
on stderr."""

import json
import os
import stat
import subprocess
import tempfile
import threading
import xml.etree.ElementTree as ET
from pathlib import Path

from sieve_cli import ROOT, fixture_suites


def junit_schema_valid(report):
    """(valid, xmllint's message) for a report against Jenkins' junit-4.xsd, which make test
    fetches (the Makefile's JUNIT_XSD) and passes as $SIEVE_JUNIT_XSD."""
    xsd = os.environ.get("SIEVE_JUNIT_XSD", str(ROOT / "build/schemas/jenkins-junit.xsd"))
    if not Path(xsd).is_file():
        return False, f"no schema at {xsd}: make test fetches it"
    p = subprocess.run(["xmllint", "--noout", "--schema", xsd, str(report)], capture_output=True,
                       text=True)
    return p.returncode == 0, p.stderr[-400:]


def output_to_fifo(ctx, fifo):
    """--output to something that is not a regular file (a FIFO here, /dev/null in bench.py)
    writes into it; renaming a temporary over it would replace the device with a file."""
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), daemon=True)
    reader.start()
    p = ctx.cmd("run", "--impl", "profile:deepinfer", "--suite", "position", "--format", "tap",
                "--output", str(fifo), timeout=60)
    reader.join(timeout=60)
    ctx.check("--output to a FIFO writes into it and leaves it a FIFO",
              p.returncode == 0 and stat.S_ISFIFO(os.stat(fifo).st_mode) and got
              and got[0].startswith("TAP version 13"), f"exit {p.returncode}: {p.stderr[-200:]}")


def renderings(ctx):
    with tempfile.TemporaryDirectory() as tmp:
        junit = Path(tmp) / "junit.xml"
        for impl, status_want in (("profile:deepinfer", 0),
                                  (f"lib:{ctx.mutants}/libge-boundary.so", 1)):
            p = ctx.cmd("run", "--impl", impl, "--suite", "ordering,distribution", "--format",
                        "junit", "--output", str(junit))
            try:
                root = ET.parse(junit).getroot()
                cases = root.findall(".//testcase")
                failures = root.findall(".//failure")
                ok = p.returncode == status_want and cases and (bool(failures) == bool(status_want))
            except (ET.ParseError, FileNotFoundError) as e:
                ok, cases = False, str(e)
            ctx.check(f"junit from {impl} is well-formed XML with its failures", ok,
                      f"exit {p.returncode}")
            verdict = "sieve run FAILED" if status_want else "sieve run ok"
            named = not status_want or "unexpected fail ordering/strict-boundary-4-equal" in p.stderr
            ctx.check(f"--output leaves the verdict and the unexpected cases on stderr ({impl})",
                      verdict in p.stderr and named, p.stderr[-300:])
        umask = os.umask(0)
        os.umask(umask)
        mode = junit.stat().st_mode & 0o777
        ctx.check("--output writes a file with the mode the umask gives and leaves no temporary",
                  mode == 0o666 & ~umask and os.listdir(tmp) == ["junit.xml"],
                  f"mode {oct(mode)}, files {os.listdir(tmp)}")
        output_to_fifo(ctx, Path(tmp) / "fifo")
    tap = ctx.cmd("run", "--impl", "profile:deepinfer", "--suite", "position", "--format",
                  "tap").stdout.splitlines()
    plan = int(tap[1].split("..")[1]) if len(tap) > 1 and ".." in tap[1] else -1
    oks = [line for line in tap if line.startswith("ok ")]
    ctx.check("tap has a plan and one ok line per case", tap[0] == "TAP version 13" and
              plan == len(oks) > 0, f"{tap[:3]}")
    md = ctx.cmd("run", "--impl", "profile:deepinfer", "--suite", "position", "--format",
                 "markdown").stdout
    ctx.check("markdown has the suite table", "| position |" in md, md[:200])


def junit_as_ci_reads_it(ctx):
    """JUnit as Jenkins and GitLab read it: every counted failure is a <failure> element with a
    message, a listed failure is <skipped> with its reason, a listed case that passes is a
    <failure>, and every testcase and suite has a time."""
    impl = f"lib:{ctx.mutants}/libge-boundary.so"
    failing, passing = ctx.failing_and_passing(impl, "ordering")
    with tempfile.TemporaryDirectory() as tmp:
        expect, junit = Path(tmp) / "expect.json", Path(tmp) / "junit.xml"
        listed = {i: "known: we use >=" for i in failing[2:]} | {passing: "stale"}
        expect.write_text(json.dumps({"schema": "sieve-fixtures/2", "expected_failures": listed}))
        p = ctx.cmd("run", "--impl", impl, "--suite", "ordering", "--expect", str(expect),
                    "--format", "junit", "--output", str(junit))
        suite = ET.parse(junit).getroot().find("testsuite")
        failures = suite.findall("testcase/failure")
        skipped = suite.findall("testcase/skipped")
        timed = all(c.get("time") for c in suite.findall("testcase")) and suite.get("time")
        ctx.check("junit: each counted failure is a <failure> with a message, stale ones too",
                  p.returncode == 1 and int(suite.get("failures")) == len(failures) == 3
                  and all(f.get("message") for f in failures)
                  and any("passes" in f.get("message") for f in failures),
                  f"exit {p.returncode}, failures={suite.get('failures')}, "
                  f"{len(failures)} elements")
        ctx.check("junit: a listed failure is <skipped> with its reason; every testcase has a time",
                  int(suite.get("skipped")) == len(skipped) == len(failing) - 2 and timed
                  and all("we use >=" in (e.text or "") for e in skipped),
                  f"skipped={suite.get('skipped')}, {len(skipped)} elements, timed {timed}")
        crashed = Path(tmp) / "crashed.xml"
        ctx.cmd("run", "--impl", f"lib:{ctx.mutants}/libbroken-half-row.so", "--suite", "smoke",
                "--format", "junit", "--output", str(crashed))
        for report in (junit, crashed):
            valid, why = junit_schema_valid(report)
            ctx.check(f"junit: the report of {report.stem} validates against Jenkins' JUnit "
                      "schema", valid, why)


def markdown_says_what_fails(ctx):
    """The markdown report's words agree with its verdict: a stale expectation is not called an
    expected outcome, and a run with nothing unexpected points at no marked case. Its readings
    table puts first the reading no passing case rules out."""
    impl = f"lib:{ctx.mutants}/libge-boundary.so"
    failing, passing = ctx.failing_and_passing(impl, "ordering")
    with tempfile.TemporaryDirectory() as tmp:
        expect = Path(tmp) / "expect.json"
        expect.write_text(json.dumps({"schema": "sieve-fixtures/2", "expected_failures":
                                      {i: "known" for i in failing + [passing]}}))
        md = ctx.cmd("run", "--impl", impl, "--suite", "ordering", "--expect", str(expect),
                     "--format", "markdown")
        stale = next((line for line in md.stdout.splitlines() if f"| `{passing}` |" in line), "")
        ctx.check("markdown calls a stale expectation an unexpected pass listed as a failure",
                  "**unexpected** pass (listed as a failure)" in stale, stale[:160])
        expect.write_text(json.dumps({"schema": "sieve-fixtures/2", "expected_failures":
                                      {i: "known" for i in failing}}))
        md = ctx.cmd("run", "--impl", impl, "--suite", "ordering", "--expect", str(expect),
                     "--format", "markdown")
        ctx.check("markdown with nothing unexpected points at no marked case",
                  md.returncode == 0 and "**0 unexpected**." in md.stdout
                  and "marked so below" not in md.stdout, md.stdout[:300])
    # Two departures at once: >= at the boundary and top-p after top-k. topp-inclusive-cumsum
    # gives the answer of many failures alone, but the fit of the two explains every one (on
    # the ordering suite alone no case tells >= from that reading: on all of them, some do).
    _, report, _ = ctx.run("rule:boundary=ge,topp_scope=after_topk", "--suite",
                           ",".join(fixture_suites()), "--no-batches")
    fit = report["diagnosis"]
    departures = ctx.departures(fit["rule"])
    named = {n for c in report["cases"] for n in c["causes"]}
    ctx.check("two departures at once: the fit names both and explains every failure by them",
              departures == {"boundary": "ge", "topp_scope": "after_topk"}
              and fit["explained"] == fit["failures"] > 0 and not fit["misreadings"]
              and named == {"boundary=ge", "topp_scope=after_topk"},
              f"{departures}, {fit['explained']} of {fit['failures']}, named {sorted(named)}")


def checks(ctx):
    renderings(ctx)
    junit_as_ci_reads_it(ctx)
    markdown_says_what_fails(ctx)
