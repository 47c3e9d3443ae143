"""The one helper the harness checks run sieve through, and the record of their verdicts.

Every module of this folder gets a Context: the paths of the build (sieve, the mutants, the C
adapter, the Python adapter) and whether it is the sanitized one, ways to run sieve (`run` with a
JSON report, `start`/`finish` for runs in the background, `cmd` for any subcommand) and `check`,
which records one verdict under the module's name, so that a failure names its module.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
MUTANTS_SRC = ROOT / "suites" / "mutants"
FAKES = MUTANTS_SRC / "fakes"
FIXTURES = ROOT / "fixtures" / "sieve-fixtures.json"


def fixtures() -> dict:
    return json.loads(FIXTURES.read_text())


def catalogue() -> dict:
    return json.loads((MUTANTS_SRC / "catalogue.json").read_text())


def fixture_suites() -> list:
    """The suites of the fixture cases, in file order (the statistical suites have none)."""
    return list(dict.fromkeys(c["suite"] for c in fixtures()["cases"]))


class Context:
    def __init__(self, module: str, sieve: str, mutants: str, c_adapter: str, py_adapter: str,
                 sanitized: bool = False):
        self.module = module
        self.sanitized = sanitized  # the build of make test SAN=1 (check.py --sanitized)
        self.sieve, self.mutants = sieve, mutants
        self.c_adapter, self.py_adapter = c_adapter, py_adapter
        self.python = sys.executable
        self.results = []  # (ok, line)
        self.started = time.monotonic()

    def check(self, name, ok, detail=""):
        ok = bool(ok)  # `a and []` is falsy but not False: count it as the failure it is
        line = f"{'ok  ' if ok else 'FAIL'} [{self.module}] {name}"
        self.results.append((ok, line + ("" if ok else f": {detail}")))
        return ok

    def env(self, **extra) -> dict:
        """The environment of a fake implementation: it finds sieve as $SIEVE_BIN."""
        return dict(os.environ, SIEVE_BIN=self.sieve, **extra)

    def cmd(self, *args, env=None, timeout=600, input=None) -> subprocess.CompletedProcess:
        """Any sieve subcommand, its output captured as text."""
        return subprocess.run([self.sieve, *args], capture_output=True, text=True, env=env,
                              timeout=timeout, input=input)

    def json(self, *args):
        """The JSON a subcommand prints with --format json."""
        return json.loads(self.cmd(*args, "--format", "json").stdout)

    def departures(self, rule) -> dict:
        """{axis: value} of a diagnosis's rule ({axis: value or null}) where it is determined and
        is not DeepInfer's."""
        spec = {a["axis"]: a["values"][0]["name"] for a in self.json("axes")}
        return {a: v for a, v in rule.items() if v is not None and v != spec[a]}

    def start(self, impl, *args, env=None):
        """sieve run in the background with a JSON report: (process, report file, its folder)."""
        tmp = tempfile.TemporaryDirectory()
        out = Path(tmp.name) / "report.json"
        proc = subprocess.Popen([self.sieve, "run", "--impl", impl, "--format", "json",
                                 "--output", str(out), *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env)
        return proc, out, tmp

    @staticmethod
    def finish(started):
        """(exit status, report or None, stderr) of a run started with start."""
        proc, out, tmp = started
        _, err = proc.communicate(timeout=600)
        report = json.loads(out.read_text()) if out.exists() else None
        tmp.cleanup()
        return proc.returncode, report, err

    def run(self, impl, *args, env=None):
        """sieve run with a JSON report: (exit status, report or None, stderr)."""
        return self.finish(self.start(impl, *args, env=env))

    def failing_and_passing(self, impl, suite):
        """The ids of the cases of a suite the implementation does not pass, and one it passes."""
        _, report, _ = self.run(impl, "--suite", suite)
        failing = [c["id"] for c in report["cases"] if c["outcome"] != "pass"]
        return failing, next(c["id"] for c in report["cases"] if c["outcome"] == "pass")

    def in_pairs(self, jobs, start, judge):
        """Starts two runs at a time (each with one implementation process, so two fill the two
        cores of make test) and judges each: start(job) -> handle, judge(job, result)."""
        for k in range(0, len(jobs), 2):
            started = [(job, start(job)) for job in jobs[k:k + 2]]
            for job, handle in started:
                judge(job, self.finish(handle))


def outcomes(report) -> dict:
    return {c["id"]: c["outcome"] for c in report["cases"]}
