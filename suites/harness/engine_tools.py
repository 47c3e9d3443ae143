"""The engines' tools: check_engines.py (make engines-check) passes an engine that is its profile
and fails one that leaves it, naming the axis; oracle/ENGINES.md is what make engines-matrix
writes from the profiles and the recorded runs."""

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
    engines_md_current(ctx)
