"""The harness held to its promises, as `make test` runs it.

  check.py SIEVE MUTANTS_DIR C_ADAPTER.so PYTHON_ADAPTER.py

- The oracle passes every suite, as a built-in profile, through exec: and through lib: (the C
  adapter), and so do the faithful port (in float64 at precision float64, and built in float32 at
  precision float32) and the Python adapter (on the ops it offers).
- Every mutant of catalogue.json, built in float64 (run at precision float64) and in float32
  (at float32), fails the cases the catalogue names (at float32, those whose reading of the
  mutant separates there), and every fixture case it fails names its own bug: the hint of its
  reading, "[name]", from the fixture.
- Every fake implementation (crash, hang, garbage, wrong lengths, NaN, stale answers, ...) gets
  a clean report: exit status 1, a report that parses, the outcomes it should get; so does every
  library of broken_lib.c, which breaks the shared-library ABI, with a detail naming the problem.
- JUnit is well-formed XML, TAP counts its cases, shards partition the run, expectation files
  turn failures into expected ones and fail on a case that now passes, usage errors exit 2.

Prints one line per check and a closing "harness: N passed, N failed"; exit status 1 on any
failure.
"""

import json
import re
import os
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = []


def check(name, ok, detail=""):
    ok = bool(ok)  # `a and []` is falsy but not False: count it as the failure it is
    RESULTS.append(ok)
    print(f"{'ok  ' if ok else 'FAIL'} {name}{'' if ok else ': ' + detail}")


def run(sieve, impl, *args, env=None):
    """Runs sieve run with a JSON report; returns (exit status, report or None, stderr)."""
    return finish(start(sieve, impl, *args, env=env))


def start(sieve, impl, *args, env=None):
    """sieve run in the background: (process, its report file, the folder to remove)."""
    tmp = tempfile.TemporaryDirectory()
    out = Path(tmp.name) / "report.json"
    proc = subprocess.Popen([sieve, "run", "--impl", impl, "--format", "json", "--output",
                             str(out), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    return proc, out, tmp


def finish(started):
    proc, out, tmp = started
    _, err = proc.communicate(timeout=600)
    report = json.loads(out.read_text()) if out.exists() else None
    tmp.cleanup()
    return proc.returncode, report, err


def outcomes(report):
    return {c["id"]: c["outcome"] for c in report["cases"]}


def oracle_passes(sieve, mutants, c_adapter, py_adapter):
    """Every case passes through each kind of implementation, at the precision it declares or
    is given."""
    for impl, args, skips in (
            ("profile:deepinfer", [], False), (f"exec:{sieve} serve", [], False),
            (f"lib:{mutants}/libport-faithful.so", ["--precision", "float64"], False),
            (f"lib:{mutants}-f32/libport-faithful.so", ["--precision", "float32"], False),
            (f"lib:{c_adapter}", ["--precision", "float64"], False),
            (f"exec:{sys.executable} {py_adapter}", [], True)):
        status, report, err = run(sieve, impl, *args)
        if skips and report:  # the Python adapter offers filter and validate only
            report["cases"] = [c for c in report["cases"] if c["outcome"] != "skip"]
        bad = [c["id"] for c in report["cases"] if c["outcome"] != "pass"] if report else ["?"]
        at = f"at {report['precision']} ({report['precision_source']})" if report else ""
        check(f"{impl} passes every suite {at} ({len(report['cases']) if report else 0} cases)",
              status == 0 and not bad, f"exit {status}, not passing: {bad[:5]} {err[-300:]}")


def separating(fixtures, name, precision):
    """The ids of the cases that record reading `name` as separated at `precision`."""
    return {c["id"] for c in fixtures["cases"] for r in c.get("readings", [])
            if r["name"] == name and precision in r["precisions"]}


def judge_mutant(name, entry, precision, fixtures, result):
    """The named cases fail; every failed case names the mutant's reading; and, the converse,
    every case that records the reading fails, except validate cases: `sieve serve --lib`
    itself rejects values a library cannot be given (a null top_p, a top_k of 1.5)."""
    status, report, err = result
    got = {c["id"]: c for c in report["cases"]} if report else {}
    separated = separating(fixtures, name, precision)
    must = [i for i in entry["must_fail"] if precision == "float64" or i.startswith(
        "distribution/") or i in separated]
    missed = [i for i in must if got.get(i, {}).get("outcome") not in ("fail", "error")]
    failed = [c for c in got.values() if c["outcome"] in ("fail", "error")
              and not c["id"].startswith(("distribution/", "speculative-distribution/"))]
    unnamed = [f"{c['id']}: {c['detail'][:160]}" for c in failed if name not in c.get("causes", [])]
    ops = {c["id"]: c["request"]["op"] for c in fixtures["cases"]}
    passing = sorted(i for i in separated if ops[i] != "validate"
                     and got.get(i, {}).get("outcome") == "pass")
    check(f"mutant {name} at {precision} fails {', '.join(must)}", status == 1 and not missed,
          f"exit {status}, not failing: {missed} {err[-300:]}")
    check(f"mutant {name} at {precision}: each of its {len(failed)} failed cases names [{name}]",
          failed and not unnamed, f"{len(unnamed)} without it: {unnamed[:2]}")
    check(f"mutant {name} at {precision} fails every case that records its reading there",
          not passing, f"{len(passing)} pass: {passing[:3]}")


def mutants_fail(sieve, mutants):
    """Each mutant in both builds, two runs at a time."""
    catalogue = json.loads((HERE / "catalogue.json").read_text())
    fixtures = json.loads((HERE.parent.parent / "fixtures" / "sieve-fixtures.json").read_text())
    readings = {r["name"] for c in fixtures["cases"] for r in c.get("readings", [])}
    jobs = [(name, entry, build, precision) for name, entry in catalogue.items()
            if entry.get("must_fail") for build, precision in (("", "float64"), ("-f32", "float32"))]
    check("every mutant of the catalogue is a reading the fixtures record",
          all(j[0] in readings for j in jobs), str(sorted({j[0] for j in jobs} - readings)))
    unbuilt = [f"{mutants}{b}/lib{n}.so" for n, _, b, _ in jobs
               if not Path(f"{mutants}{b}/lib{n}.so").exists()]
    check("the Makefile built every mutant of the catalogue, in both builds", not unbuilt,
          f"missing {unbuilt[:3]}: does catalogue.json keep one entry a line?")
    for k in range(0, len(jobs), 2):
        started = [(job, start(sieve, f"lib:{mutants}{job[2]}/lib{job[0]}.so", "--precision",
                               job[3], "--jobs", "1")) for job in jobs[k:k + 2]]
        for (name, entry, _, precision), handle in started:
            judge_mutant(name, entry, precision, fixtures, finish(handle))


def rule_values(sieve):
    """Every axis value of oracle/sieve.h that is not DeepInfer's, as AXIS=VALUE."""
    axes = json.loads(subprocess.run([sieve, "axes", "--format", "json"], capture_output=True,
                                     text=True, check=True).stdout)
    return [f"{a['axis']}={v['name']}" for a in axes for v in a["values"][1:]]


def judge_rule(rule, fixtures, result):
    """A rule variant fails the cases that record the reading it is (rule, in the fixture), and
    every case it fails names that reading. draw=own is the one value no case can separate: a
    generator of the engine's own skips the cases that pin the hash's draws."""
    status, report, err = result
    got = {c["id"]: c for c in report["cases"]} if report else {}
    names = {r["name"] for c in fixtures["cases"] for r in c.get("readings", [])
             if r.get("rule") == rule}
    recording = {c["id"] for c in fixtures["cases"] for r in c.get("readings", [])
                 if r.get("rule") == rule and "float64" in r["precisions"]}
    failed = [c for c in got.values() if c["outcome"] in ("fail", "error")]
    if rule == "draw=own":
        check("rule variant draw=own fails no case (its draws are not the hash's)",
              status == 0 and not failed and not names, f"exit {status}, {len(failed)} failed")
        return
    name = next(iter(names), rule)
    unnamed = [f"{c['id']}: {c['detail'][:160]}" for c in failed if name not in c.get("causes", [])]
    passing = sorted(i for i in recording if got.get(i, {}).get("outcome") == "pass")
    check(f"rule variant {rule} is a reading the fixtures record ({len(recording)} cases)",
          len(names) == 1 and recording, f"readings {sorted(names)}")
    check(f"rule variant {rule}: each of its {len(failed)} failed cases names [{name}]",
          status == 1 and failed and not unnamed,
          f"exit {status}, {len(unnamed)} without it: {unnamed[:2]} {err[-200:]}")
    check(f"rule variant {rule} fails every case that records [{name}]", not passing,
          f"{len(passing)} pass: {passing[:3]}")


def rule_variants(sieve):
    """Each axis value's oracle variant, `sieve serve --rule AXIS=VALUE`: the mutant per value
    (suites/mutants/README.md). The fixtures catch it with its own hint, and the fingerprint
    names that value on that axis and DeepInfer's on every other."""
    fixtures = json.loads((HERE.parent.parent / "fixtures" / "sieve-fixtures.json").read_text())
    suites = [a for s in ("params ordering large-vocab logprobs engine-options uniform draw "
                          "sample position special-values speculative").split()
              for a in ("--suite", s)]
    rules, deepinfer = rule_values(sieve), profile_axes(sieve)["deepinfer"]
    for k in range(0, len(rules), 2):
        started = [(rule, start(sieve, f"rule:{rule}", *suites)) for rule in rules[k:k + 2]]
        for rule, handle in started:
            judge_rule(rule, fixtures, finish(handle))
    for rule in rules:
        axis, value = rule.split("=")
        p = subprocess.run([sieve, "fingerprint", "--impl", f"rule:{rule}", "--format", "json"],
                           capture_output=True, text=True)
        found = {a["axis"]: a["values"] for a in json.loads(p.stdout)["axes"]}
        others = {a: v for a, v in found.items() if a != axis and len(v) == 1
                  and v != [deepinfer[a]]}
        check(f"fingerprint of rule:{rule} finds {value} on {axis}, DeepInfer's elsewhere",
              found.get(axis) == [value] and not others, f"got {found.get(axis)}, {others}")


FAKES = {
    "crashes-after-hello.sh": "crash", "closes-stdout.sh": "crash",
    "wrong-length.sh": "fail", "nan-logprobs.sh": "fail", "extra-lines.sh": "fail",
    "exits-after-hello.sh": "crash",
}
# Fakes that cannot be greeted: a harness error (exit 2, no report) whose message names why.
UNGREETED = {
    "exits-at-once.sh": "exited with status 3", "garbage.sh": "did not answer hello",
    "hangs.sh": "did not answer hello", "stderr-only.sh": "stderr-only: got a request",
    "bad-precision.sh": "fp16", "protocol-2.sh": "hello answered protocol 2",
    "protocol-none.sh": "has no \"protocol\"", "protocol-string.sh": "protocol \"v1\"",
}


def fakes_report_cleanly(sieve):
    env = dict(os.environ, SIEVE_BIN=sieve)
    for fake, expected in FAKES.items():
        status, report, err = run(sieve, f"exec:{HERE / 'fakes' / fake}", "--suite", "smoke",
                                  "--timeout", "2", env=env)
        kinds = set(outcomes(report).values()) if report else set()
        check(f"fake {fake} gets a clean report with {expected} outcomes",
              status == 1 and expected in kinds and "pass" not in kinds - {"pass"}
              and "Traceback" not in err, f"exit {status}, outcomes {kinds}, stderr {err[-200:]}")
    for fake, words in UNGREETED.items():
        status, report, err = run(sieve, f"exec:{HERE / 'fakes' / fake}", "--suite", "smoke",
                                  "--timeout", "2", env=env)
        check(f"fake {fake} is a harness error (exit 2) naming why: {words}",
              status == 2 and report is None and words in err and "Traceback" not in err,
              f"exit {status}, stderr {err[-300:]}")


# Libraries that break the ABI (broken_lib.c), the "broken:" entries of catalogue.json: the
# outcome each case of theirs gets that the oracle passes, and words its detail must hold.
BROKEN = {name[len("broken:"):]: (e["outcome"], e["detail"]) for name, e in json.loads(
    (HERE / "catalogue.json").read_text()).items() if name.startswith("broken:")}


def broken_libraries(sieve, mutants):
    # Under make test SAN=1, ASan would catch the segfault and exit 1; the check is about how
    # sieve reports a child killed by a signal, so the child is left to die by it.
    no_segv_handler = dict(os.environ, ASAN_OPTIONS=":".join(
        filter(None, [os.environ.get("ASAN_OPTIONS"), "handle_segv=0"])))
    for name, (outcome, words) in BROKEN.items():
        lib = f"{mutants}/libbroken-{name}.so"
        status, report, err = run(sieve, f"lib:{lib}", "--suite", "smoke", "--timeout", "5",
                                  env=no_segv_handler)
        if outcome == "harness error":  # the library cannot be loaded: nothing answers hello
            check(f"lib:{Path(lib).name} is a harness error (exit 2): \"{words}\"",
                  status == 2 and report is None and words in err, f"exit {status}, {err[-300:]}")
            continue
        cases = report["cases"] if report else []
        hit = [c for c in cases if c["outcome"] == outcome and words in c["detail"]]
        wrong = [c["id"] for c in cases if c["outcome"] not in ("pass", "skip", outcome)]
        check(f"lib:{Path(lib).name} gets a clean report: {outcome}, \"{words}\"",
              status == 1 and hit and not wrong and "ERROR: AddressSanitizer" not in err,
              f"exit {status}, {len(hit)} cases with it, other outcomes {wrong[:3]}, "
              f"stderr {err[-300:]}")
    status, report, err = run(sieve, "lib:/nonexistent/libsampler.so", "--suite", "smoke")
    check("lib: of a missing file is a harness error (exit 2), naming the file and why",
          status == 2 and report is None and "cannot load /nonexistent/libsampler.so" in err
          and "No such file" in err, f"exit {status}, stderr {err[-200:]}")


def processes(parent=None, group=None):
    """The pids whose parent (or process group) is the one given, from /proc."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == parent or int(fields[2]) == group:
            found.append(int(entry))
    return found


def signals_end_children(sieve, signum, tmp):
    """An interrupted run ends its implementation processes (they lead their own process groups,
    out of reach of the terminal, so sieve must kill them; fakes/hangs.sh never answers) and
    leaves its --output file as it was."""
    report = Path(tmp) / "report.json"
    report.write_text("the previous report\n")
    p = subprocess.Popen([sieve, "run", "--impl", f"exec:{HERE / 'fakes' / 'hangs.sh'}",
                          "--suite", "smoke", "--timeout", "600", "--format", "json",
                          "--output", str(report)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    groups = []
    for _ in range(100):
        groups = processes(parent=p.pid)  # each child leads its own group
        if groups and all(processes(group=g) for g in groups):
            break
        time.sleep(0.05)
    members = [m for g in groups for m in processes(group=g)]
    p.send_signal(signum)
    p.wait(timeout=30)
    for _ in range(100):
        alive = [m for g in groups for m in processes(group=g)]
        if not alive:
            break
        time.sleep(0.05)
    for g in groups:
        if alive:
            os.killpg(g, signal.SIGKILL)
    name = signal.Signals(signum).name
    check(f"{name} to sieve run ends its implementation processes and sieve with {name}",
          members and not alive and p.returncode == -signum,
          f"processes {members}, still alive {alive}, sieve exit {p.returncode}")
    check(f"{name} to sieve run leaves its --output file as it was and no temporary beside it",
          report.read_text() == "the previous report\n" and os.listdir(tmp) == ["report.json"],
          f"files {os.listdir(tmp)}")


def renderings(sieve, mutants):
    with tempfile.TemporaryDirectory() as tmp:
        for impl, status_want in (("profile:deepinfer", 0), (f"lib:{mutants}/libge-boundary.so", 1)):
            junit = Path(tmp) / "junit.xml"
            p = subprocess.run([sieve, "run", "--impl", impl, "--suite", "ordering,distribution",
                                "--format", "junit", "--output", str(junit)],
                               capture_output=True, text=True)
            try:
                root = ET.parse(junit).getroot()
                cases = root.findall(".//testcase")
                failures = root.findall(".//failure")
                ok = p.returncode == status_want and cases and (bool(failures) == bool(status_want))
            except (ET.ParseError, FileNotFoundError) as e:
                ok, cases = False, str(e)
            check(f"junit from {impl} is well-formed XML with its failures", ok,
                  f"exit {p.returncode}")
            verdict = "sieve run FAILED" if status_want else "sieve run ok"
            named = not status_want or "unexpected fail ordering/strict-boundary-4-equal" in p.stderr
            check(f"--output leaves the verdict and the unexpected cases on stderr ({impl})",
                  verdict in p.stderr and named, p.stderr[-300:])
        umask = os.umask(0)
        os.umask(umask)
        mode = junit.stat().st_mode & 0o777
        check("--output writes a file with the mode the umask gives and leaves no temporary",
              mode == 0o666 & ~umask and os.listdir(tmp) == ["junit.xml"],
              f"mode {oct(mode)}, files {os.listdir(tmp)}")
        output_to_fifo(sieve, Path(tmp) / "fifo")
        tap = subprocess.run([sieve, "run", "--impl", "profile:deepinfer", "--suite", "position",
                              "--format", "tap"], capture_output=True, text=True).stdout.splitlines()
        plan = int(tap[1].split("..")[1]) if len(tap) > 1 and ".." in tap[1] else -1
        oks = [l for l in tap if l.startswith("ok ")]
        check("tap has a plan and one ok line per case", tap[0] == "TAP version 13" and
              plan == len(oks) > 0, f"{tap[:3]}")
        md = subprocess.run([sieve, "run", "--impl", "profile:deepinfer", "--suite", "position",
                             "--format", "markdown"], capture_output=True, text=True).stdout
        check("markdown has the suite table", "| position |" in md, md[:200])


def junit_as_ci_reads_it(sieve, mutants):
    """JUnit as Jenkins and GitLab read it: every counted failure is a <failure> element with a
    message, a listed failure is <skipped> with its reason, a listed case that passes is a
    <failure>, and every testcase and suite has a time."""
    impl = f"lib:{mutants}/libge-boundary.so"
    _, report, _ = run(sieve, impl, "--suite", "ordering")
    failing = [c["id"] for c in report["cases"] if c["outcome"] != "pass"]
    passing = next(c["id"] for c in report["cases"] if c["outcome"] == "pass")
    with tempfile.TemporaryDirectory() as tmp:
        expect, junit = Path(tmp) / "expect.json", Path(tmp) / "junit.xml"
        listed = {i: "known: we use >=" for i in failing[2:]} | {passing: "stale"}
        expect.write_text(json.dumps({"schema": "sieve-fixtures/2", "expected_failures": listed}))
        p = subprocess.run([sieve, "run", "--impl", impl, "--suite", "ordering", "--expect",
                            str(expect), "--format", "junit", "--output", str(junit)],
                           capture_output=True, text=True)
        root = ET.parse(junit).getroot()
        suite = root.find("testsuite")
        failures = suite.findall("testcase/failure")
        skipped = suite.findall("testcase/skipped")
        timed = all(c.get("time") for c in suite.findall("testcase")) and suite.get("time")
        check("junit: each counted failure is a <failure> with a message, stale ones too",
              p.returncode == 1 and int(suite.get("failures")) == len(failures) == 3
              and all(f.get("message") for f in failures)
              and any("passes" in f.get("message") for f in failures),
              f"exit {p.returncode}, failures={suite.get('failures')}, {len(failures)} elements")
        check("junit: a listed failure is <skipped> with its reason; every testcase has a time",
              int(suite.get("skipped")) == len(skipped) == len(failing) - 2 and timed
              and all("we use >=" in (e.text or "") for e in skipped),
              f"skipped={suite.get('skipped')}, {len(skipped)} elements, timed {timed}")
        crashed = Path(tmp) / "crashed.xml"
        subprocess.run([sieve, "run", "--impl", f"lib:{mutants}/libbroken-half-row.so", "--suite",
                        "smoke", "--format", "junit", "--output", str(crashed)],
                       capture_output=True, text=True)
        for report in (junit, crashed):
            valid, why = junit_schema_valid(report)
            check(f"junit: the report of {report.stem} validates against Jenkins' JUnit schema",
                  valid, why)


def markdown_says_what_fails(sieve, mutants):
    """The markdown report's words agree with its verdict: a stale expectation is not called an
    expected outcome, and a run with nothing unexpected points at no marked case. Its readings
    table puts first the reading no passing case rules out."""
    impl = f"lib:{mutants}/libge-boundary.so"
    _, report, _ = run(sieve, impl, "--suite", "ordering")
    failing = [c["id"] for c in report["cases"] if c["outcome"] != "pass"]
    passing = next(c["id"] for c in report["cases"] if c["outcome"] == "pass")
    with tempfile.TemporaryDirectory() as tmp:
        expect = Path(tmp) / "expect.json"
        expect.write_text(json.dumps({"schema": "sieve-fixtures/2", "expected_failures":
                                      {i: "known" for i in failing + [passing]}}))
        md = subprocess.run([sieve, "run", "--impl", impl, "--suite", "ordering", "--expect",
                             str(expect), "--format", "markdown"], capture_output=True, text=True)
        stale = next((line for line in md.stdout.splitlines() if passing in line), "")
        check("markdown calls a stale expectation an unexpected pass listed as a failure",
              "**unexpected** pass (listed as a failure)" in stale, stale[:160])
        expect.write_text(json.dumps({"schema": "sieve-fixtures/2", "expected_failures":
                                      {i: "known" for i in failing}}))
        md = subprocess.run([sieve, "run", "--impl", impl, "--suite", "ordering", "--expect",
                             str(expect), "--format", "markdown"], capture_output=True, text=True)
        check("markdown with nothing unexpected points at no marked case",
              md.returncode == 0 and "**0 unexpected**." in md.stdout
              and "marked so below" not in md.stdout, md.stdout[:300])
    # Two bugs at once: >= at the boundary and top-p after top-k. topp-inclusive-cumsum gives
    # the answer of every failure but passing cases rule it out; the two real ones they do not.
    text = subprocess.run([sieve, "run", "--impl", "rule:boundary=ge,topp_scope=after_topk",
                           "--suite", "ordering"], capture_output=True, text=True).stdout
    table = [line.split()[0] for line in text[text.find("rule it out"):].splitlines()[1:4]]
    check("the run's readings table puts first the readings no passing case rules out",
          table == ["ge-boundary", "topk-first-renormalized", "topp-inclusive-cumsum"], table)


def junit_schema_valid(report):
    """(valid, xmllint's message) for a report against Jenkins' junit-4.xsd, which make test
    fetches (the Makefile's JUNIT_XSD) and passes as $SIEVE_JUNIT_XSD."""
    xsd = os.environ.get("SIEVE_JUNIT_XSD", str(HERE.parent.parent / "build/schemas/jenkins-junit.xsd"))
    if not Path(xsd).is_file():
        return False, f"no schema at {xsd}: make test fetches it"
    p = subprocess.run(["xmllint", "--noout", "--schema", xsd, str(report)], capture_output=True,
                       text=True)
    return p.returncode == 0, p.stderr[-400:]


def python_template_traps(sieve):
    """The Python template converts protocol values before the user's function sees them, and
    reports the user's own exception with its type and message; a crash's stderr keeps its
    last line."""
    adapter = HERE.parent.parent / "harness" / "adapters" / "python_adapter.py"
    p = subprocess.run([sys.executable, str(adapter)], capture_output=True, text=True,
                       input='{"op":"filter","rows":[{"logits":[1,2,3],"params":{"top_k":2.0}}]}\n')
    check("python_adapter.py takes top_k 2.0 as the integer 2", '"logprobs": [null' in p.stdout,
          p.stdout[:200] + p.stderr[-200:])
    with tempfile.TemporaryDirectory() as tmp:
        broken = Path(tmp) / "broken.py"
        broken.write_text(adapter.read_text().replace(
            "    scaled = logits * (1.0 / temperature)  # a float32 multiply by 1/T",
            "    raise ZeroDivisionError('my sampler broke')"))
        _, report, _ = run(sieve, f"exec:{sys.executable} {broken}", "--suite", "smoke")
        details = [c["detail"] for c in report["cases"] if c["outcome"] == "error"]
        check("an exception in the user's function is reported with its type and message",
              details and all("ZeroDivisionError: my sampler broke" in d for d in details),
              str(details[:1]))
        loud = Path(tmp) / "loud.py"
        loud.write_text("import os, sys\nsys.stdin.readline()\n"
                        "os.write(2, b'x' * 5000 + b'\\nFinalError: the last line\\n')\n")
        status, _, err = run(sieve, f"exec:{sys.executable} {loud}", "--suite", "smoke")
        check("a crashed implementation's stderr keeps its last line", status == 2
              and "FinalError: the last line" in err, f"exit {status}: {err[-200:]}")


def output_to_fifo(sieve, fifo):
    """--output to something that is not a regular file (a FIFO here, /dev/null in bench.py)
    writes into it; renaming a temporary over it would replace the device with a file."""
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_text()), daemon=True)
    reader.start()
    p = subprocess.run([sieve, "run", "--impl", "profile:deepinfer", "--suite", "position",
                        "--format", "tap", "--output", str(fifo)], capture_output=True, text=True,
                       timeout=60)
    reader.join(timeout=60)
    check("--output to a FIFO writes into it and leaves it a FIFO",
          p.returncode == 0 and stat.S_ISFIFO(os.stat(fifo).st_mode) and got
          and got[0].startswith("TAP version 13"), f"exit {p.returncode}: {p.stderr[-200:]}")


def precisions(sieve, mutants):
    """Every report says the precision in use and where it came from; a hello that declares
    an unknown one fails every case, naming it."""
    for impl, args, want in (("profile:deepinfer", [], ("float64", "hello")),
                             (f"lib:{mutants}/libport-faithful.so", [], ("float32", "default")),
                             ("profile:deepinfer", ["--precision", "float32"],
                              ("float32", "--precision"))):
        _, report, _ = run(sieve, impl, "--suite", "position", *args)
        got = (report or {}).get("precision"), (report or {}).get("precision_source")
        check(f"sieve run --impl {impl} {' '.join(args)} reports precision {want[0]} ({want[1]})",
              got == want, f"got {got}")
        text = subprocess.run([sieve, "run", "--impl", impl, "--suite", "position", *args],
                              capture_output=True, text=True).stdout
        check(f"the text report of {impl} {' '.join(args)} names precision {want[0]}",
              f"at precision {want[0]} ({want[1]})" in text and f"(precision {want[0]})" in text,
              text[:200])
    env = dict(os.environ, SIEVE_BIN=sieve)
    status, report, err = run(sieve, f"exec:{HERE / 'fakes' / 'bad-precision.sh'}", "--suite",
                              "smoke", env=env)
    check("a hello declaring precision fp16 is a harness error (exit 2) naming the value",
          status == 2 and report is None
          and '"precision" must be "float32" or "float64", not fp16' in err, err[-300:])


def shards(sieve):
    whole = set(outcomes(run(sieve, "profile:deepinfer", "--suite", "params,position")[1]))
    parts = [set(outcomes(run(sieve, "profile:deepinfer", "--suite", "params,position",
                              "--shard", f"{i}/3")[1])) for i in (1, 2, 3)]
    disjoint = all(not (parts[a] & parts[b]) for a in range(3) for b in range(a + 1, 3))
    check("--shard 1/3, 2/3, 3/3 partition the run", set().union(*parts) == whole and disjoint,
          f"{len(whole)} cases, shards {[len(p) for p in parts]}")


def expectations(sieve, mutants):
    impl = f"lib:{mutants}/libge-boundary.so"
    _, report, _ = run(sieve, impl, "--suite", "ordering")
    failing = [c["id"] for c in report["cases"] if c["outcome"] != "pass"]
    passing = next(c["id"] for c in report["cases"] if c["outcome"] == "pass")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "expect.json"

        def status_with(ids, schema="sieve-fixtures/2"):
            path.write_text(json.dumps({"schema": schema, "expected_failures":
                                        {i: "known" for i in ids}}))
            return run(sieve, impl, "--suite", "ordering", "--expect", str(path))[0]

        check("an expectation file listing every failure makes the run pass",
              status_with(failing) == 0)
        check("a failure missing from the expectation file fails the run",
              status_with(failing[1:]) == 1)
        check("an expected failure that now passes fails the run",
              status_with(failing + [passing]) == 1)
        check("an expectation file for another fixture schema is a harness error (exit 2)",
              status_with(failing, "sieve-fixtures/0") == 2)
        check("an expectation file written for sieve-fixtures/1 (the same ids) is still read",
              status_with(failing, "sieve-fixtures/1") == 0)
        typo = failing[0] + "x"
        path.write_text(json.dumps({"schema": "sieve-fixtures/2", "expected_failures":
                                    {i: "known" for i in failing + [typo]}}))
        p = subprocess.run([sieve, "run", "--impl", impl, "--suite", "ordering", "--expect",
                            str(path)], capture_output=True, text=True)
        check("an expectation file naming an id that is no case is a harness error naming it",
              p.returncode == 2 and typo in p.stderr, f"exit {p.returncode}: {p.stderr[-300:]}")
        path.write_text(json.dumps({"schema": "sieve-fixtures/2", "expected_failures": {
            failing[0]: {"reason": "we use >=", "issue": "https://example.org/issues/1"},
            **{i: "known" for i in failing[1:]}}}))
        _, report, _ = run(sieve, impl, "--suite", "ordering", "--expect", str(path))
        note = next(c for c in report["cases"] if c["id"] == failing[0]).get("expected_note")
        check("an expectation may give a reason and an issue, which the report shows",
              note == "we use >= (https://example.org/issues/1)", f"note {note!r}")
        written = Path(tmp) / "written.json"
        status, _, err = run(sieve, impl, "--suite", "ordering", "--expect", str(path),
                             "--write-expect", str(written))
        entries = json.loads(written.read_text())["expected_failures"]
        check("--write-expect lists every failure, keeps --expect's notes and exits 0",
              status == 0 and sorted(entries) == sorted(failing)
              and entries[failing[0]]["issue"] == "https://example.org/issues/1",
              f"exit {status}, {len(entries)} entries, {err[-200:]}")
        fresh = Path(tmp) / "fresh.json"
        run(sieve, impl, "--suite", "ordering", "--write-expect", str(fresh))
        reasons = json.loads(fresh.read_text())["expected_failures"].values()
        check("--write-expect gives each new failure the readings whose answer it is as reason",
              reasons and all(r.startswith("fail: same answer as [") and "ge-boundary" in r
                              for r in reasons), str(list(reasons)[:2]))
        path.write_text(json.dumps({"schema": "sieve-fixtures/2", "expected_failures":
                                    {i: "known" for i in failing + [passing]}}))
        status, _, err = run(sieve, impl, "--suite", "ordering", "--expect", str(path),
                             "--update-expect")
        kept = json.loads(path.read_text())["expected_failures"]
        check("--update-expect removes the case that now passes, says which, and keeps the rest",
              status == 0 and passing not in kept and sorted(kept) == sorted(failing)
              and f"removed (they now pass): {passing} " in err,
              f"exit {status}, {len(kept)} kept, {err[-200:]}")


# What the fingerprint finds in the wrong ports: reversed-ties reverses every tie, so both
# cuts keep the highest ids; t0-argmax keeps the first maximum while validate still clamps, so
# no value of t0 fits both.
MUTANT_AXES = [("ge-boundary", "boundary", "ge"),
               ("topk-first-renormalized", "topp_scope", "after_topk"),
               ("reversed-ties", "topp_ties", "highest"),
               ("reversed-ties", "topk_ties", "by_id_desc"),
               ("topk-keeps-ties", "topk_ties", "keep_all"),
               ("temperature-after-filters", "temperature_at", "after"),
               ("topk-zero-is-off", "top_k_zero", "off"),
               ("raw-logprobs", "logprobs", "scaled"),
               ("mtp-offset-forgotten", "draw", "hash"),
               ("spec-accept-le", "spec_accept", "le"),
               ("spec-q-zero-rejects", "spec_q_zero", "reject"),
               ("spec-q-raw", "spec_q", "raw"),
               ("mix-with-increment", "draw", "own"),
               ("cdf-probability-order", "draw", "own"),
               ("t0-argmax", "t0", "no value fits")]


def fingerprint(sieve, impl):
    """Each axis's verdict ("ge", "argmax|topk1", "not determined (...)") and the profiles that
    match, from sieve fingerprint --format json."""
    out = subprocess.run([sieve, "fingerprint", "--impl", impl, "--format", "json"],
                         capture_output=True, text=True)
    report = json.loads(out.stdout)
    return {a["axis"]: a["verdict"] for a in report["axes"]}, report["matches"]


def profile_axes(sieve):
    """Each profile's choice on each axis, as `sieve profiles --format json` lists them."""
    out = subprocess.run([sieve, "profiles", "--format", "json"], capture_output=True, text=True,
                         check=True).stdout
    return {p["name"]: {a: c["value"] for a, c in p["axes"].items()} for p in json.loads(out)}


def blind_axes(rule):
    """The axes a profile's other choices hide from the probes: with top-p not applied its
    boundary, ties and the place of temperature do not show; when every tied token stays the
    boundary does not; when T = 0 is rejected a negative T is rejected either way; with a
    generator of its own, u is never the 0 at which an inclusive accept test shows."""
    hidden = set()
    if rule["topp_scope"] == "ignored":
        hidden |= {"boundary", "topp_ties", "temperature_at"}
    if rule["topp_ties"] == "all":
        hidden.add("boundary")
    if rule["t0"] == "reject":
        hidden.add("t0_below")
    if rule["draw"] == "own":
        hidden.add("spec_accept")
    return hidden


def fingerprints(sieve, mutants):
    for name, want in profile_axes(sieve).items():
        got, matches = fingerprint(sieve, f"exec:{sieve} serve --profile {name}")
        hidden = blind_axes(want)
        wrong = {a: (got.get(a), v) for a, v in want.items() if got.get(a) != v and not (
            a in hidden and (got.get(a, "").startswith("not determined")
                             or v in got.get(a, "").split("|")))}
        check(f"fingerprint names every axis of profile {name} (through exec:)",
              not wrong and name in matches, f"got/wanted {wrong}, matches {matches}")
    for name, axis, value in MUTANT_AXES:
        got, _ = fingerprint(sieve, f"lib:{mutants}/lib{name}.so")
        check(f"fingerprint finds {axis} = {value} in mutant {name}", got.get(axis) == value,
              f"got {got.get(axis)}")
    near = subprocess.run([sieve, "fingerprint", "--impl", f"lib:{mutants}/libge-boundary.so"],
                          capture_output=True, text=True).stdout
    check("fingerprint of a mutant no profile matches names the nearest and where it differs",
          "nearest: deepinfer: differs on boundary (profile gt, found ge)" in near, near[-300:])
    out = subprocess.run([sieve, "diff", "profile:deepinfer", "profile:vllm", "--suite",
                          "ordering"], capture_output=True, text=True)
    line = next((l for l in out.stdout.split("boundary (")[0].splitlines()
                 if "seed-examples/000-order-example-keeps-2 (values)" in l), "")
    check("sieve diff deepinfer vllm shows the (0.5, 0.3, 0.2) order example under topp_scope",
          out.returncode == 1 and "kept {0,1};" in line and "| kept {0};" in line,
          out.stdout[:300])
    empty = subprocess.run([sieve, "diff", f"exec:{HERE / 'fakes' / 'empty-answers.sh'}",
                            "profile:deepinfer", "--suite", "ordering"], capture_output=True,
                           text=True)
    check("sieve diff of an implementation answering {} finds every case different, either way",
          empty.returncode == 1 and re.search(r"differ on (\d+) of \1 cases", empty.stdout),
          empty.stdout[:200])
    same = subprocess.run([sieve, "diff", "profile:deepinfer", f"exec:{sieve} serve", "--suite",
                           "ordering"], capture_output=True, text=True)
    check("sieve diff of the oracle with itself finds nothing", same.returncode == 0,
          same.stdout[:200])


def survive_crashes(sieve, py_adapter):
    """fingerprint and diff survive implementations that crash on every request or exit after
    hello (the next write meets a closed pipe): no death by a signal, every axis without an
    answer says so, and the crashes are counted; diff skips the ops a side does not offer."""
    env = dict(os.environ, SIEVE_BIN=sieve)
    for fake in ("crashes-after-hello.sh", "exits-after-hello.sh"):
        impl = f"exec:{HERE / 'fakes' / fake}"
        p = subprocess.run([sieve, "fingerprint", "--impl", impl], capture_output=True,
                           text=True, env=env, timeout=300)
        n = len(json.loads(subprocess.run([sieve, "axes", "--format", "json"],
                                          capture_output=True, text=True).stdout))
        axes = [l for l in p.stdout.splitlines()[1:1 + n]]
        check(f"sieve fingerprint of {fake} reports every axis without an answer and ends",
              p.returncode == 0 and len(axes) == n and all("not determined" in a for a in axes)
              and "no axis determined" in p.stdout and "requests crashed" in p.stdout,
              f"exit {p.returncode}: {p.stdout[-300:]} {p.stderr[-200:]}")
        d = subprocess.run([sieve, "diff", "profile:deepinfer", impl, "--suite", "position"],
                           capture_output=True, text=True, env=env, timeout=300)
        check(f"sieve diff with {fake} reports each case's crash and ends",
              d.returncode == 1 and "crash: the implementation" in d.stdout and
              "each time restarted" in d.stdout, f"exit {d.returncode}: {d.stdout[:300]}")
    d = subprocess.run([sieve, "diff", "profile:deepinfer", f"exec:{sys.executable} {py_adapter}",
                        "--suite", "ordering", "--suite", "position"], capture_output=True, text=True,
                       timeout=300)
    check("sieve diff skips the ops an implementation does not offer, and says so",
          d.returncode == 0 and "differ on 0 of" in d.stdout and "cases skipped" in d.stdout,
          f"exit {d.returncode}: {d.stdout[:300]}")


def explain(sieve):
    with tempfile.TemporaryDirectory() as tmp:
        svg = Path(tmp) / "x.svg"
        out = subprocess.run([sieve, "explain", "seed-examples/000-panel2-top-p-0.8-top-k-2-keeps-mat-floor",
                              "--profile", "vllm", "--svg", str(svg)], capture_output=True,
                             text=True)
        try:
            bars = [r for r in ET.parse(svg).getroot().iter("{http://www.w3.org/2000/svg}rect")
                    if "bar" in (r.get("class") or "").split()]
        except (ET.ParseError, FileNotFoundError):
            bars = []
        check("sieve explain shows the panel 2 cut for both rules and writes an SVG",
              out.returncode == 0 and "deepinfer: keeps 2 tokens with full-softmax mass 0.6991"
              in out.stdout and "vllm: keeps 2 tokens" in out.stdout and len(bars) == 12,
              out.stdout[-300:] + out.stderr)


def progress_in_a_log(sieve):
    """With stderr not a terminal (a CI log), a plain progress line every 5 s names the pass
    and what it counts. The implementation is the oracle behind a proxy that holds its first
    answer after hello for 6 s, so the first pass outlasts 5 s."""
    proxy = ("import subprocess, sys, time\n"
             f"serve = subprocess.Popen([{sieve!r}, 'serve'], stdin=subprocess.PIPE, "
             "stdout=subprocess.PIPE, text=True)\n"
             "held = False\n"
             "for line in sys.stdin:\n"
             "    if '\"hello\"' not in line and not held:\n"
             "        time.sleep(6)\n"
             "        held = True\n"
             "    serve.stdin.write(line)\n"
             "    serve.stdin.flush()\n"
             "    sys.stdout.write(serve.stdout.readline())\n"
             "    sys.stdout.flush()\n")
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "slow.py"
        script.write_text(proxy)
        p = subprocess.run([sieve, "run", "--impl", f"exec:{sys.executable} {script}", "--suite",
                            "position", "--jobs", "1"], capture_output=True, text=True)
    check("a CI log gets a plain progress line naming the pass and what it counts",
          p.returncode == 0 and re.search(r"sieve run: pass 1 of 2 \(each case alone\), \d+ of "
                                          r"\d+ cases after \d+ s\n", p.stderr),
          f"exit {p.returncode}: {p.stderr[:300]}")


def explain_speculative(sieve, mutants):
    """sieve explain of a speculative case shows each accept test with p, q, p/q and u, where
    the chain stopped and the residual it drew from; --impl names a mutant's reading."""
    case = "speculative/one-draft-seed-40"
    out = subprocess.run([sieve, "explain", case], capture_output=True, text=True)
    check("sieve explain shows a speculative chain step by step, the stop and the residual",
          out.returncode == 0 and "draft 0 at position 280: token 4: p = 0, q = 0.0774" in out.stdout
          and "rejected" in out.stdout and "residual max(p - q, 0)" in out.stdout
          and "u (case 1)" in out.stdout, out.stdout[-400:] + out.stderr[-200:])
    impl = subprocess.run([sieve, "explain", case, "--impl",
                           f"lib:{mutants}/libspec-residual-from-p.so"], capture_output=True,
                          text=True)
    check("sieve explain --impl of a speculative case names the mutant's reading",
          "same answer as [spec-residual-from-p]" in impl.stdout, impl.stdout[-300:])


def diff_speculative(sieve, mutants):
    """sieve diff of speculate answers: the oracle's extras (p, q, margins) are left out, each
    step's u is compared, and a wrong accept test is found under the speculate axis."""
    same = subprocess.run([sieve, "diff", "profile:deepinfer",
                           f"lib:{mutants}/libport-faithful.so", "--suite", "speculative"],
                          capture_output=True, text=True)
    fixtures = json.loads((HERE.parent.parent / "fixtures" / "sieve-fixtures.json").read_text())
    n = sum(c["suite"] == "speculative" for c in fixtures["cases"])
    check(f"sieve diff finds no difference between the oracle and the faithful port's speculate "
          f"({n} cases)", f"differ on 0 of {n} cases" in same.stdout, same.stdout[-300:])
    wrong = subprocess.run([sieve, "diff", "profile:deepinfer",
                            f"lib:{mutants}/libspec-accept-le.so", "--suite", "speculative"],
                           capture_output=True, text=True)
    check("sieve diff files spec-accept-le's differences under the speculate axis",
          "speculate (2 cases)" in wrong.stdout and "u-zero-with-p-zero" in wrong.stdout,
          wrong.stdout[-400:])


def speculative_statistics(sieve):
    """The speculative-distribution suite passes a faithful verifier with its own generator
    (the oracle's draw=own rule and a Python one) and fails each known bug, every failed case
    naming it; the power table of STATISTICS.md is the one sieve computes."""
    fake = HERE / "fakes" / "own_speculate.py"
    for impl, bug in ((f"rule:draw=own", None), (f"exec:{sys.executable} {fake} rule", None),
                      *((f"exec:{sys.executable} {fake} {b}", b) for b in SPECDIST_BUGS)):
        status, report, err = run(sieve, impl, "--suite", "speculative-distribution", "--jobs",
                                  "4")
        cases = report["cases"] if report else []
        failed = [c for c in cases if c["outcome"] != "pass"]
        unnamed = [c["id"] for c in failed if c.get("causes") != [bug]]
        if bug is None:
            check(f"{impl} passes the speculative-distribution suite ({len(cases)} cases)",
                  status == 0 and len(cases) == 8 and not failed, f"exit {status} {failed[:1]}")
        else:
            check(f"own-generator bug {bug} fails the speculative-distribution suite, each failed "
                  f"case naming only [{bug}]", status == 1 and failed and not unnamed,
                  f"exit {status}, {len(failed)} failed, not naming it: {unnamed[:2]} {err[-200:]}")
    for variant, words in (("steps-missing", "so steps has"), ("ratio-doubled", "].ratio is"),
                           ("draft-tokens-short", "draft_tokens must hold")):
        status, report, err = run(sieve, f"exec:{sys.executable} {fake} {variant}", "--suite",
                                  "speculative-distribution", "--jobs", "4")
        failed = [c for c in (report["cases"] if report else []) if c["outcome"] == "fail"]
        check(f"a verifier answering with {variant} fails the speculative-distribution suite, "
              f"saying \"{words}\"", status == 1 and failed and
              all(words in c["detail"] for c in failed), f"exit {status} {failed[:1]}")
    table = subprocess.run([sieve, "explain", "speculative-distribution", "--markdown"],
                           capture_output=True, text=True).stdout
    doc = (HERE.parent.parent / "harness" / "STATISTICS.md").read_text()
    check("harness/STATISTICS.md holds the power table sieve explain computes", table and table in doc,
          "regenerate it: sieve explain speculative-distribution --markdown")
    lines = table.splitlines()
    bugs = [c.strip().strip("`") for c in lines[0].split("|")[2:-1]] if lines else []
    rows = [line.split("|")[2:-1] for line in lines if line.startswith("| `")]
    weak = [b for i, b in enumerate(bugs) if not any(r[i].strip().startswith("1 - ") for r in rows)]
    check(f"every known bug ({len(bugs)}) has a speculative-distribution case of power 1 - 1e-4 "
          "or more against it", rows and set(SPECDIST_BUGS) <= set(bugs) and not weak,
          f"weak against {weak}, columns {bugs}")


SPECDIST_BUGS = ("spec-q-raw", "spec-draft-bf16", "spec-token-match", "spec-no-bonus")


def engines_md_current(sieve):
    root = HERE.parent.parent
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "ENGINES.md"
        subprocess.run([sys.executable, str(root / "harness" / "engines_matrix.py"), sieve,
                        str(out), str(root / "harness" / "adapters" / "engines" / "runs")],
                       capture_output=True, check=True)
        same = out.read_text() == (root / "oracle" / "ENGINES.md").read_text()
    check("oracle/ENGINES.md is what make engines-matrix writes", same,
          "run make engines-matrix and commit the result")


def bad_fixture_files(sieve):
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in (("not-json", "{\"schema\": "), ("other-schema",
                           '{"schema":"sieve-fixtures/3","cases":[]}'), ("no-cases",
                           '{"schema":"sieve-fixtures/2"}')):
            path = Path(tmp) / f"{name}.json"
            path.write_text(text)
            p = subprocess.run([sieve, "run", "--impl", "profile:deepinfer", "--fixtures",
                                str(path)], capture_output=True, text=True)
            check(f"a fixture file that is {name} is a harness error naming the file",
                  p.returncode == 2 and str(path) in p.stderr, p.stderr[-200:])
        unreadable = Path(tmp) / "unreadable.json"
        unreadable.write_text("{}")
        unreadable.chmod(0)
        if os.geteuid() != 0:  # root reads anything
            p = subprocess.run([sieve, "run", "--impl", "profile:deepinfer", "--fixtures",
                                str(unreadable)], capture_output=True, text=True)
            check("an unreadable fixture file is a harness error", p.returncode == 2, p.stderr)


def refused_before_running(sieve):
    """Files sieve run cannot use are refused before the first case, naming the file and why.

    The implementation is fakes/hangs.sh with a 5 s time limit: a run that started would take
    minutes, so exiting 2 within 20 s with an empty stdout shows nothing ran."""
    with tempfile.TemporaryDirectory() as tmp:
        cases = (
            (["--fixtures", tmp], f"{tmp}: cannot read the fixture file: Is a directory"),
            (["--expect", tmp], f"{tmp}: cannot read the expectation file: Is a directory"),
            (["--expect", f"{tmp}/none.json"],
             f"{tmp}/none.json: cannot read the expectation file: No such file"),
            (["--output", f"{tmp}/nodir/report.json"],
             f"cannot write {tmp}/nodir/report.json: {tmp}/nodir: No such file"),
            (["--output", tmp], f"cannot write {tmp}: it is a directory"))
        for args, words in cases:
            try:
                p = subprocess.run([sieve, "run", "--impl", f"exec:{HERE / 'fakes' / 'hangs.sh'}",
                                    "--timeout", "5", *args], capture_output=True, text=True,
                                   timeout=20)
                ok = p.returncode == 2 and words in p.stderr and p.stdout == ""
                detail = f"exit {p.returncode}, stderr {p.stderr[-200:]}"
            except subprocess.TimeoutExpired:
                ok, detail = False, "it ran the cases first"
            check(f"sieve run {args[0]} {args[1].replace(tmp, 'TMP')} exits 2 before running, "
                  f"saying why", ok, detail)


def usage_errors(sieve):
    for args in (["--impl", "nonsense"], ["--impl", "profile:nope"], ["--suite", "x"],
                 ["--impl", "profile:deepinfer", "--shard", "4/3"],
                 ["--impl", "profile:deepinfer", "--format", "yaml"],
                 ["--impl", "profile:deepinfer", "--fixtures", "/nonexistent.json"]):
        status = subprocess.run([sieve, "run", *args], capture_output=True).returncode
        check(f"sieve run {' '.join(args)} exits 2", status == 2, f"exit {status}")
    for sub in ("serve", "run", "fingerprint", "diff", "explain", "profiles", "axes"):
        p = subprocess.run([sieve, sub, "--help"], capture_output=True, text=True)
        check(f"sieve {sub} --help prints its usage and exits 0",
              p.returncode == 0 and p.stdout.startswith("usage: sieve " + sub), p.stdout[:120])
    for args, named in ((["serve", "--rule", "nope=1"], "'nope'"),
                        (["serve", "--rule", "boundary=lt"], "'lt' of boundary (gt, ge)"),
                        (["fingerprint", "--impl", "profile:vllm", "--bogus", "1"], "'--bogus'"),
                        (["fingerprint", "--impl", "profile:vllm", "--profile", "nosuch"],
                         "'nosuch'"),
                        (["diff", "profile:vllm", "profile:sglang", "--format", "xml"], "xml"),
                        (["diff", "a", "b", "c"], "'c'"), (["profiles", "--x"], "'--x'"),
                        (["explain", "--svg"], "'--svg'")):
        p = subprocess.run([sieve, *args], capture_output=True, text=True)
        check(f"sieve {' '.join(args)} exits 2 naming {named}",
              p.returncode == 2 and named in p.stderr, f"exit {p.returncode}: {p.stderr[:200]}")


def engines_check_fails_when_it_should(sieve):
    """check_engines.py (make engines-check) on the oracle's own profile as the "engine": a run
    recorded from profile:vllm passes; the same check of an implementation that leaves the
    profile on one axis fails, naming the axis and the cases."""
    script = HERE.parent.parent / "harness" / "adapters" / "engines" / "check_engines.py"
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "vllm.json").write_text(json.dumps({"run": {"ci": True}}))
        env = dict(os.environ, SIEVE_ENGINE_RUNS=tmp)

        def engines_check(mode, impl):
            return subprocess.run([sys.executable, str(script), sieve, mode, "vllm", impl],
                                  capture_output=True, text=True, env=env)
        engines_check("record", "profile:vllm")
        same = engines_check("check", "profile:vllm")
        check("check_engines.py passes an engine that is its profile", same.returncode == 0,
              same.stdout[-600:])
        moved = engines_check("check", f"exec:{sieve} serve --profile vllm --rule boundary=gt")
        check("check_engines.py fails an engine that leaves its profile, naming the axis",
              moved.returncode == 1 and "boundary" in moved.stdout and "FAIL" in moved.stdout,
              moved.stdout[-600:])


def selection_and_replay(sieve, mutants):
    """--suite, --family and --case select the union of what they name; a family or glob that
    selects nothing is a harness error; sieve case prints a case and its request for replay;
    sieve explain --impl judges an implementation's answer to one case as sieve run does."""
    def ids(*args):
        status, report, err = run(sieve, "profile:deepinfer", *args)
        return status, {c["id"] for c in report["cases"]} if report else set(), err
    _, ordering, _ = ids("--suite", "ordering")
    _, smoke, _ = ids("--suite", "smoke")
    _, both, _ = ids("--suite", "ordering,smoke")
    check("--suite ordering,smoke runs the union of the two suites",
          both == ordering | smoke and len(both) < 300, f"{len(both)} cases")
    _, ties, _ = ids("--family", "ties")
    check("--family ties runs the ties family", ties and all(i.startswith("ties/") for i in ties),
          f"{sorted(ties)[:3]}")
    _, glob, _ = ids("--case", "ties/exact-tie-*", "--case", "seed-examples/000-order-example-keeps-2")
    check("--case takes globs and repeats", glob and "seed-examples/000-order-example-keeps-2"
          in glob and all(i.startswith(("ties/exact-tie-", "seed-")) for i in glob), str(glob))
    for args, words in ((["--family", "tie"], "no family 'tie'"),
                        (["--case", "nope/*"], "no case matches --case 'nope/*'"),
                        (["--suite", "ties"], "a family is --family")):
        status, _, err = ids(*args)
        check(f"sieve run {' '.join(args)} exits 2 naming the mistake", status == 2 and words in err,
              f"exit {status}: {err[-200:]}")
    case_id = "ties/exact-tie-5-top-k-2"
    request = subprocess.run([sieve, "case", case_id, "--request"], capture_output=True,
                             text=True).stdout
    answer = subprocess.run([sieve, "serve"], input=request, capture_output=True, text=True)
    shown = json.loads(subprocess.run([sieve, "case", case_id], capture_output=True,
                                      text=True).stdout)
    check("sieve case ID --request pipes to an implementation, and sieve case ID shows the case",
          '"logprobs"' in answer.stdout and shown["id"] == case_id and "expect" in shown
          and shown["readings"], answer.stdout[:200])
    out = subprocess.run([sieve, "explain", "ordering/strict-boundary-4-equal-top-p-2-of-4",
                          "--impl", f"lib:{mutants}/libge-boundary.so"], capture_output=True,
                         text=True)
    check("sieve explain ID --impl shows the implementation's answer, its verdict and the hint",
          out.returncode == 0 and "fail at float32" in out.stdout and "[ge-boundary]" in out.stdout,
          out.stdout[-400:] + out.stderr[-200:])


def main():
    sieve, mutants, c_adapter, py_adapter = (os.path.abspath(a) for a in sys.argv[1:5])
    oracle_passes(sieve, mutants, c_adapter, py_adapter)
    mutants_fail(sieve, mutants)
    fakes_report_cleanly(sieve)
    broken_libraries(sieve, mutants)
    for signum in (signal.SIGINT, signal.SIGTERM):
        with tempfile.TemporaryDirectory() as tmp:
            signals_end_children(sieve, signum, tmp)
    renderings(sieve, mutants)
    junit_as_ci_reads_it(sieve, mutants)
    markdown_says_what_fails(sieve, mutants)
    python_template_traps(sieve)
    precisions(sieve, mutants)
    shards(sieve)
    expectations(sieve, mutants)
    fingerprints(sieve, mutants)
    rule_variants(sieve)
    survive_crashes(sieve, py_adapter)
    explain(sieve)
    explain_speculative(sieve, mutants)
    progress_in_a_log(sieve)
    diff_speculative(sieve, mutants)
    speculative_statistics(sieve)
    selection_and_replay(sieve, mutants)
    engines_check_fails_when_it_should(sieve)
    engines_md_current(sieve)
    bad_fixture_files(sieve)
    refused_before_running(sieve)
    usage_errors(sieve)
    failed = RESULTS.count(False)
    print(f"harness: {len(RESULTS) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
