"""The engines' tools: check_engines.py (make engines-check) passes an engine that is its profile
and fails one that leaves it, naming the axis; oracle/ENGINES.md is what make engines-matrix
writes from the profiles and the recorded runs."""

import contextlib
import io
import json
import os
import subprocess
import tempfile
from pathlib import Path

from sieve_cli import ROOT


def engines_check_fails_when_it_should(ctx):
    """check_engines.py (make engines-check) on the oracle's own profile as the "engine": a run
    recorded from profile:vllm passes; the same check of an implementation that leaves the
    profile on one axis fails, naming the axis and the cases (on the ordering and params suites:
    the script's mechanism is under test here, make engines-check runs every suite)."""
    script = ROOT / "harness" / "adapters" / "engines" / "check_engines.py"
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "vllm.json").write_text(json.dumps({"run": {"ci": True}}))
        env = dict(os.environ, SIEVE_ENGINE_RUNS=tmp, SIEVE_ENGINE_SUITES="ordering,params")

        def engines_check(mode, impl):
            return subprocess.run([ctx.python, str(script), ctx.sieve, mode, "vllm", impl],
                                  capture_output=True, text=True, env=env)
        engines_check("record", "profile:vllm")
        same = engines_check("check", "profile:vllm")
        ctx.check("check_engines.py passes an engine that is its profile", same.returncode == 0,
                  same.stdout[-600:])
        moved = engines_check("check", f"exec:{ctx.sieve} serve --profile vllm --rule boundary=gt")
        ctx.check("check_engines.py fails an engine that leaves its profile, naming the axis",
                  moved.returncode == 1 and "boundary" in moved.stdout and "FAIL" in moved.stdout,
                  moved.stdout[-600:])


def residual_groups_must_be_documented(ctx):
    """check_engines.py's fit check on a fit that leaves one failure unexplained: it fails until
    runs/NAME.json documents that group's kind under "residual", whatever parameters its cases
    share, and then prints the reason beside the group."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "check_engines", ROOT / "harness" / "adapters" / "engines" / "check_engines.py")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["SIEVE_ENGINE_RUNS"] = tmp
        try:
            tool = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(tool)
        finally:
            del os.environ["SIEVE_ENGINE_RUNS"]
        kind = "filter: an answer where the rule's is an error (invalid_params, field 'top_p')"
        fit = {"rule": {"boundary": "ge"}, "explained": 3, "failures": 4, "unexplained": [
            {"kind": kind, "description": kind + "; every one with temperature = 1", "count": 1,
             "cases": ["validation/x"]}]}
        runs = Path(tmp) / "vllm.json"
        outcomes = []
        for documented in ({}, {kind: "the engine checks no top_p"}):
            runs.write_text(json.dumps({"run": {"residual": documented}}))
            tool.FAILURES.clear()
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                tool.check_fit(ctx.sieve, "vllm", fit)
            outcomes.append((list(tool.FAILURES), out.getvalue()))
    (failed, text), (passed, documented_text) = outcomes
    ctx.check("check_engines.py fails a residual group runs/NAME.json does not document",
              len(failed) == 1 and "not documented: 1 x " + kind in failed[0], text)
    ctx.check("check_engines.py passes it once documented, printing why",
              not passed and "why: the engine checks no top_p" in documented_text,
              documented_text)


def recorded_fits_hold(ctx):
    """The Python engines CI cannot run: the fit each recorded run gave is its profile on every
    axis it determines, and its residual groups are documented (check_engines.py recorded)."""
    script = ROOT / "harness" / "adapters" / "engines" / "check_engines.py"
    p = subprocess.run([ctx.python, str(script), ctx.sieve, "recorded"], capture_output=True,
                       text=True)
    ctx.check("the recorded runs of the Python engines fit their profiles, every residual "
              "group documented", p.returncode == 0 and "FAIL" not in p.stdout,
              p.stdout[-800:] + p.stderr[-400:])


def engines_md_current(ctx):
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "ENGINES.md"
        subprocess.run([ctx.python, str(ROOT / "harness" / "engines" / "engines_matrix.py"),
                        ctx.sieve, str(out), str(ROOT / "harness" / "adapters" / "engines" / "runs")],
                       capture_output=True, check=True)
        same = out.read_text() == (ROOT / "oracle" / "ENGINES.md").read_text()
    ctx.check("oracle/ENGINES.md is what make engines-matrix writes", same,
              "run make engines-matrix and commit the result")


def checks(ctx):
    engines_check_fails_when_it_should(ctx)
    residual_groups_must_be_documented(ctx)
    recorded_fits_hold(ctx)
    engines_md_current(ctx)
