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


def protocol_glue_takes_the_sampling_options_an_engine_applies(ctx):
    """engine_protocol.py, the Python engines' glue, with an engine that applies the repetition
    penalty alone: hello lists it, its value and the row's token ids reach the engine, another
    option is an invalid_params error naming it, and an engine that takes none rejects the ids."""
    import importlib.util
    import sys
    folder = ROOT / "harness" / "adapters" / "engines"
    spec = importlib.util.spec_from_file_location("engine_protocol", folder / "engine_protocol.py")
    ep = importlib.util.module_from_spec(spec)
    sys.modules["engine_protocol"] = ep
    spec.loader.exec_module(ep)
    seen = []

    class Repetition(ep.Engine):
        name, ops, sampling_options = "repetition-only", ("filter",), ("repetition_penalty",)

        def normalize(self, params):
            seen.append((params.options, params.output_ids, params.prompt_ids))
            return params

        def filter_row(self, logits, state):
            return [0.0] * len(logits)

    def answer(engine, request):
        return ep.Server(engine).answer(request)

    hello = answer(Repetition(), {"op": "hello", "protocol": 1})
    row = {"logits": [1, 2], "params": {"repetition_penalty": 1.5}, "output_ids": [1, 1],
           "prompt_ids": [0]}
    taken = answer(Repetition(), {"op": "filter", "rows": [row]})
    other = answer(Repetition(), {"op": "filter", "rows": [
        {"logits": [1, 2], "params": {"min_p": 0.5}}]})
    none = answer(type("NoOptions", (Repetition,), {"sampling_options": ()})(),
                  {"op": "filter", "rows": [{"logits": [1, 2], "output_ids": [1]}]})
    ctx.check("the engines' protocol glue lists the sampling options an engine applies, passes "
              "their values and the row's token ids to it, and rejects the others by name",
              hello.get("sampling_options") == ["repetition_penalty"]
              and seen[:1] == [({"repetition_penalty": 1.5}, (1, 1), (0,))]
              and "logprobs" in taken["rows"][0]
              and other["rows"][0]["error"]["field"] == "min_p"
              and none["rows"][0]["error"]["field"] == "output_ids",
              f"{hello} {seen} {taken} {other} {none}")


def checks(ctx):
    protocol_glue_takes_the_sampling_options_an_engine_applies(ctx)
    engines_check_fails_when_it_should(ctx)
    residual_groups_must_be_documented(ctx)
    recorded_fits_hold(ctx)
    engines_md_current(ctx)
