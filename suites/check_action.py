"""Runs the steps of harness/action.yml as a GitHub runner would, since no runner is reachable
here: each step's `run` in bash, in a workspace holding a user's adapter, with the step's `env`
(the action's inputs substituted), GITHUB_ACTION_PATH, GITHUB_STEP_SUMMARY and GITHUB_OUTPUT.

The workspace is what harness/CI.md tells an engine team to keep: sieve-adapter.py (the bundled
template with one bug planted, `>=` at the top-p boundary) and sieve-expected.json, written from
a run with --write-expect. Checked: the job passes with the expectation file, with a JUnit
report that validates against Jenkins' schema and a markdown job summary; it fails without the
file, naming the bug; and a job whose adapter does not start stops at the smoke step. The fuzz
step, seeded with the run id, judges by the rule the conformance step fitted (the planted
`>=` passes as boundary=ge) and fails against DeepInfer's rule, with a JUnit testcase carrying
the minimal case and the case saved as a fixture file. The jobs
run the suites of SUITES (the action's `suite` input, which the report must keep to): the steps
are what is checked here, and the faithful module of suites/harness/ puts the template through
every suite.

    /usr/bin/python3 suites/check_action.py build/sieve
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
ACTION = ROOT / "harness" / "action.yml"
XSD = Path(os.environ.get("SIEVE_JUNIT_XSD", ROOT / "build" / "schemas" / "jenkins-junit.xsd"))
RESULTS = []
LINES = threading.local()  # each job's lines, printed in the jobs' order when all have run
SUITES = "ordering,params"
RUN_ID = "4242"


def check(name, ok, detail=""):
    RESULTS.append(bool(ok))
    line = f"{'ok  ' if ok else 'FAIL'} action: {name}" + ("" if ok else f": {detail}")
    if hasattr(LINES, "lines"):
        LINES.lines.append(line)
    else:
        print(line)


def substitute(text, inputs):
    """`${{ inputs.NAME }}` as the runner evaluates it; any other expression is an error here."""
    def value(m):
        name = re.fullmatch(r"inputs\.([a-z_-]+)", m.group(1).strip())
        if not name or name.group(1) not in inputs:
            raise ValueError(f"check_action.py cannot evaluate ${{{{ {m.group(1)} }}}}")
        return inputs[name.group(1)]
    return re.sub(r"\$\{\{(.*?)\}\}", value, str(text))


def job_inputs(action, given):
    """The inputs as the runner gives them: the workflow's `with`, else each input's default."""
    inputs = {}
    for name, spec in action["inputs"].items():
        if spec.get("required") and name not in given:
            raise ValueError(f"input {name} is required")
        inputs[name] = given.get(name, spec.get("default", ""))
    return inputs


def run_job(workspace, given):
    """Runs the steps in order until one fails; returns (steps run, last status, outputs, summary)."""
    action = yaml.safe_load(ACTION.read_text())
    inputs = job_inputs(action, given)
    summary, output = workspace / "step-summary.md", workspace / "github-output"
    summary.write_text("")
    output.write_text("")
    ran, status = [], 0
    for step in action["runs"]["steps"]:
        env = dict(os.environ, GITHUB_ACTION_PATH=str(ROOT / "harness"),
                   GITHUB_WORKSPACE=str(workspace), GITHUB_STEP_SUMMARY=str(summary),
                   GITHUB_OUTPUT=str(output), GITHUB_RUN_ID=RUN_ID)
        env.update({k: substitute(v, inputs) for k, v in step.get("env", {}).items()})
        p = subprocess.run([step["shell"], "-e", "-c", step["run"]], cwd=workspace, env=env,
                           capture_output=True, text=True, timeout=900)
        ran.append((step["name"], p))
        status = p.returncode
        if status != 0:
            break
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
    return ran, status, outputs, summary.read_text()


def write_workspace(workspace, sieve):
    """A user's repository: the template adapter with `>=` at the boundary, and its expectation
    file written by sieve run --write-expect."""
    template = (ROOT / "harness" / "adapters" / "python_adapter.py").read_text()
    planted = template.replace("(before <= top_p)", "(before < top_p)")
    assert planted != template, "python_adapter.py no longer has the line this check changes"
    (workspace / "sieve-adapter.py").write_text(planted)
    p = subprocess.run([sieve, "run", "--impl", "exec:/usr/bin/python3 sieve-adapter.py",
                        "--suite", SUITES, "--write-expect", "sieve-expected.json"], cwd=workspace,
                       capture_output=True, text=True, timeout=900)
    check("sieve run --write-expect writes the workspace's expectation file",
          p.returncode == 0 and (workspace / "sieve-expected.json").is_file(), p.stderr[-300:])


def schema_valid(report):
    p = subprocess.run(["xmllint", "--noout", "--schema", str(XSD), str(report)],
                       capture_output=True, text=True)
    return p.returncode == 0, p.stderr[-300:]


def gating_job_passes(workspace):
    """The job with a fuzz step of 2 s: by the rule the conformance step fitted, the planted
    `>=` is boundary=ge, and fuzzing finds nothing else."""
    ran, status, outputs, summary = run_job(workspace, {
        "impl": "exec:/usr/bin/python3 sieve-adapter.py", "expect": "sieve-expected.json",
        "suite": SUITES, "fuzz-seconds": "2"})
    names = [name for name, _ in ran]
    check("with the expectation file every step passes, the fuzz step judging by the fitted "
          "rule (boundary=ge) with the run id as its seed", status == 0 and len(names) == 4
          and f"## sieve fuzz: seed {RUN_ID}, against rule:boundary=ge" in summary
          and "sieve fuzz passed" in summary,
          f"{names}, exit {status}: {ran[-1][1].stdout[-300:]} {ran[-1][1].stderr[-300:]}")
    for name in ("junit", "fuzz-junit"):
        junit = workspace / outputs.get(name, "no-output")
        valid, why = schema_valid(junit) if junit.is_file() else (False, f"no {junit}")
        check(f"the job's output {name} is a JUnit report Jenkins' schema accepts", valid, why)
    html = workspace / outputs.get("html", "no-output")
    check("the job's output html is the HTML report of the conformance run",
          html.is_file() and html.read_text().startswith("<!DOCTYPE html>")
          and "sieve run:" in html.read_text(), f"outputs {outputs}")
    junit = workspace / outputs.get("junit", "sieve-junit.xml")
    suites = re.findall(r'<testsuite name="([a-z-]+)"', junit.read_text()) if junit.is_file() else []
    check("the conformance step runs the suites of the suite input, and no other",
          sorted(suites) == sorted(SUITES.split(",")), str(suites))
    check("the job summary is the markdown report with its verdict",
          summary.startswith("#") and "passed" in summary and "expected" in summary, summary[:200])
    p = subprocess.run(["bash", str(ROOT / "harness" / "ci" / "gate.sh"), "fuzz"], cwd=workspace,
                       env=dict(os.environ, SIEVE_IMPL="exec:x", SIEVE_FUZZ_SECONDS="0"),
                       capture_output=True, text=True, timeout=60)
    check("with fuzz-seconds 0 (the default) the fuzz step does nothing and passes",
          p.returncode == 0 and "no fuzz step" in p.stdout, p.stdout + p.stderr)
    summary = workspace / "shard-summary.md"
    p = subprocess.run(["bash", str(ROOT / "harness" / "ci" / "gate.sh"), "fuzz"], cwd=workspace,
                       env=dict(os.environ, SIEVE_IMPL="profile:deepinfer", SIEVE_FUZZ_SECONDS="1",
                                SIEVE_FUZZ_SHARD="1/2", SIEVE_FUZZ_AGAINST="profile:deepinfer",
                                SIEVE_FUZZ_JUNIT="shard.xml", GITHUB_RUN_ID=RUN_ID,
                                GITHUB_STEP_SUMMARY=str(summary)),
                       capture_output=True, text=True, timeout=120)
    junit = workspace / "shard.xml"
    check("with fuzz-shard 1/2 the fuzz step asks that shard and names its testcases by it",
          p.returncode == 0 and f"seed {RUN_ID}, shard 1/2" in summary.read_text()
          and f'name="fuzz/seed-{RUN_ID}-shard-1-of-2"' in junit.read_text(),
          p.stdout[-300:] + p.stderr[-300:])


def fuzz_step_fails_against_deepinfer(workspace):
    ran, status, outputs, summary = run_job(workspace, {
        "impl": "exec:/usr/bin/python3 sieve-adapter.py", "expect": "sieve-expected.json",
        "suite": SUITES, "fuzz-seconds": "2", "fuzz-against": "profile:deepinfer"})
    junit = workspace / outputs.get("fuzz-junit", "no-output")
    text = junit.read_text() if junit.is_file() else ""
    cases = workspace / outputs.get("fuzz-cases", "no-output") / f"fuzz-{RUN_ID}.json"
    check("against DeepInfer's rule the fuzz step fails (exit 1), its JUnit report carrying the "
          "minimal case and naming boundary=ge, the case saved as a fixture file",
          ran[-1][0] == "Fuzz" and status == 1 and schema_valid(junit)[0]
          and f'name="fuzz/seed-{RUN_ID}-kept-set"' in text and "boundary=ge" in text
          and cases.is_file(), f"exit {status}, outputs {outputs}: {text[:300]}")


def unlisted_bug_fails(workspace):
    ran, status, _, _ = run_job(workspace, {"impl": "exec:/usr/bin/python3 sieve-adapter.py",
                                            "suite": SUITES})
    err = ran[-1][1].stderr
    check("without the expectation file the conformance step fails (exit 1) naming the bug",
          ran[-1][0] == "Conformance" and status == 1
          and "explained by the fitted rule: boundary=ge" in err,
          f"step {ran[-1][0]}, exit {status}: {err[-300:]}")


def harness_error_is_said(workspace):
    ran, status, outputs, summary = run_job(workspace, {
        "impl": "exec:/usr/bin/python3 sieve-adapter.py", "expect": "sieve-expected.json",
        "suite": SUITES, "junit": "no-such-folder/sieve-junit.xml"})
    check("a harness error (exit 2) says so in the summary and sets no junit output",
          status == 2 and "harness error" in summary and "junit" not in outputs,
          f"exit {status}, outputs {outputs}, summary {summary[:120]!r}")


def broken_adapter_stops_at_smoke(workspace):
    ran, status, _, _ = run_job(workspace, {"impl": "exec:/usr/bin/python3 no-such-adapter.py"})
    check("an adapter that cannot start stops the job at the smoke step (exit 2)",
          ran[-1][0].startswith("Smoke") and status == 2,
          f"step {ran[-1][0]}, exit {status}")


def in_copy(job, workspace):
    """Runs job in its own copy of the workspace; the lines its checks printed."""
    LINES.lines = []
    copy = workspace.parent / job.__name__
    shutil.copytree(workspace, copy)
    job(copy)
    return LINES.lines


def main():
    sieve = str(Path(sys.argv[1]).resolve())
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "workspace"
        workspace.mkdir()
        write_workspace(workspace, sieve)
        jobs = (gating_job_passes, fuzz_step_fails_against_deepinfer, unlisted_bug_fails,
                harness_error_is_said, broken_adapter_stops_at_smoke)
        # Each job in a copy of the workspace, two at a time (the two cores of make test).
        with ThreadPoolExecutor(max_workers=2) as pool:
            done = list(pool.map(lambda job: in_copy(job, workspace), jobs))
        for lines in done:
            print("\n".join(lines))
    print(f"check_action: {sum(RESULTS)} passed, {len(RESULTS) - sum(RESULTS)} failed")
    return 0 if all(RESULTS) else 1


if __name__ == "__main__":
    sys.exit(main())
