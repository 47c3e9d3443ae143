"""The wheel as a Python engine team meets it (harness/python/README.md): a fresh virtual
environment, the wheel installed from its file with no index, then the project of sampler.py
tested with pytest through the plugin, and the wheel uninstalled.

  check_wheel.py WHEEL

Checks: the package imports and finds its bundled library, the `sieve` command runs the bundled
CLI on the bundled fixtures; one item per case with a JUnit testcase each; the planted `>=` fails
exactly the cases recording boundary=ge at float32, each naming it; an expectation file makes
those xfail (strict: a listed case that passes fails); -k, -x, --lf and xdist; a batched function
gets batches of several rows, of 32,000 tokens and more among them; a sampler that kills its
process fails its items and the session goes on; a conftest's sieve_impl fixture; a usage error
for an expectation file naming no case; uninstalling leaves the environment as it was. The venv
sees Debian's PyTorch and pytest (--system-site-packages): nothing is fetched.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent.parent / "fixtures" / "sieve-fixtures.json"
FAST = ["-p", "no:cacheprovider", "-q"]
PARAMS = ["--sieve-params", "sampler:check_params"]
results = []


def check(name, ok, detail=""):
    results.append(bool(ok))
    print(f"{'ok  ' if ok else 'FAIL'} wheel: {name}" + ("" if ok else f": {detail}"), flush=True)


def tree(folder: Path) -> set:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


class Project:
    """A user's project folder with sampler.py, tested with the venv's pytest."""

    def __init__(self, venv: Path, folder: Path):
        self.venv, self.folder = venv, folder
        folder.mkdir()
        shutil.copy(HERE / "sampler.py", folder)

    def pytest(self, *args, env=None):
        junit = self.folder / "junit.xml"
        junit.unlink(missing_ok=True)
        done = subprocess.run([str(self.venv / "bin" / "python"), "-m", "pytest", *args,
                               "--junitxml", str(junit)], cwd=self.folder, capture_output=True,
                              text=True, env=dict(os.environ, **(env or {})), timeout=600)
        cases = ET.parse(junit).getroot().iter("testcase") if junit.exists() else []
        return done, {re.sub(r"^test_conforms\[(.*)\]$", r"\1", c.get("name")): outcome(c)
                      for c in cases}


def outcome(testcase) -> str:
    for tag in ("failure", "error", "skipped"):
        node = testcase.find(tag)
        if node is not None:
            return "xfail" if node.get("type") == "pytest.xfail" else tag
    return "pass"


def sampling_options(case) -> bool:
    """Whether a case's params name min-p or a penalty, which the adapter does not declare."""
    request = case["request"]
    holders = [request] + request.get("rows", [])
    return any(name in (h.get("params") or {}) for h in holders
               for name in ("min_p", "frequency_penalty", "presence_penalty",
                            "repetition_penalty", "penalty_last_n"))


def cases():
    data = json.loads(FIXTURES.read_text())["cases"]
    asked = [c for c in data if c["suite"] != "smoke" and c["request"]["op"] in ("filter",
                                                                                   "validate")]
    ge = {c["id"] for c in asked for r in c.get("readings", [])
          if r.get("rule") == "boundary=ge" and "float32" in r["precisions"]}
    return asked, ge


def installed(venv: Path):
    py = str(venv / "bin" / "python")
    lib = subprocess.run([py, "-c", "import sieve; sieve.filter([1.0, 2.0]); "
                          "print(sieve._library()._name)"], capture_output=True, text=True)
    check("import sieve loads the bundled libsieve", lib.returncode == 0 and str(venv) in
          lib.stdout, lib.stdout + lib.stderr[-500:])
    run = subprocess.run([str(venv / "bin" / "sieve"), "run", "--impl", "profile:deepinfer",
                          "--suite", "smoke"], capture_output=True, text=True)
    check("the sieve command runs the bundled CLI on the bundled fixtures",
          run.returncode == 0 and "sieve run ok" in run.stderr + run.stdout, run.stderr[-500:])


def per_case(venv: Path, root: Path, asked, ge):
    project = Project(venv, root / "per-case")
    done, got = project.pytest("--sieve-impl", "sampler:filter_ge", *PARAMS, *FAST)
    engine = {c["id"] for c in asked if "engine" in c["request"]}
    options = {c["id"] for c in asked if c["id"] not in engine and sampling_options(c)}
    check(f"a row function: one JUnit testcase per case ({len(asked)}), the {len(engine)} of "
          f"engine options and the {len(options)} of min-p and the penalties skipped",
          sorted(got) == sorted(c["id"] for c in asked)
          and {i for i, o in got.items() if o == "skipped"} == engine | options,
          f"exit {done.returncode}, {len(got)} testcases: {done.stdout[-800:]}")
    failed = {i for i, o in got.items() if o == "failure"}
    messages = re.findall(r"^_+ [^\n]*test_conforms\[(\S+)\] _+\n(.*?)(?=^_+ |^=+ )", done.stdout,
                          re.M | re.S)
    unnamed = [i for i, text in messages if "boundary=ge" not in text]
    check(f"a planted >= fails exactly the {len(ge)} cases recording boundary=ge, each naming it",
          failed == ge and len(messages) == len(ge) and not unnamed,
          f"extra {sorted(failed - ge)[:3]}, missing {sorted(ge - failed)[:3]}, unnamed "
          f"{unnamed[:3]}: {done.stdout[-600:]}")


def expectations(venv: Path, root: Path, asked, ge):
    project = Project(venv, root / "expectations")
    known = project.folder / "known.json"
    known.write_text(json.dumps({"schema": "sieve-fixtures/2", "expected_failures": {
        i: {"reason": "top-p keeps below top_p, not at most", "issue": "#1"} for i in ge}}))
    select = ["-k", "strict-boundary or reciprocal-makes-a-tie or top-p-on-full"]
    done, got = project.pytest("--sieve-impl", "sampler:filter_ge", *PARAMS, *FAST, *select,
                               "--sieve-expect", str(known))
    check("an expectation file makes the planted bug's cases xfail, and the run passes",
          done.returncode == 0 and {i for i, o in got.items() if o == "xfail"} == ge
          and all(o in ("pass", "xfail") for o in got.values()), done.stdout[-600:])
    done, got = project.pytest("--sieve-impl", "sampler:filter", *PARAMS, *FAST, *select,
                               "--sieve-expect", str(known))
    check("the same file fails a fixed sampler: each listed case passes strictly (XPASS)",
          done.returncode == 1 and {i for i, o in got.items() if o == "failure"} == ge,
          done.stdout[-600:])
    known.write_text(json.dumps({"schema": "sieve-fixtures/2",
                                 "expected_failures": {"ordering/no-such-case": "typo"}}))
    done, _ = project.pytest("--sieve-impl", "sampler:filter", *FAST, "--sieve-expect", str(known))
    check("an expectation file naming no case is a usage error that names it",
          done.returncode == 4 and "ordering/no-such-case" in done.stderr, done.stderr[-400:])


def selection(venv: Path, root: Path, asked, ge):
    project = Project(venv, root / "selection")
    done, got = project.pytest("--sieve-impl", "sampler:filter_ge", *PARAMS, *FAST,
                               "-k", "strict-boundary-4")
    check("-k selects by case id", set(got) == {i for i in ge if "strict-boundary-4-" in i},
          sorted(got))
    done, got = project.pytest("--sieve-impl", "sampler:filter_ge", *PARAMS, *FAST, "-x",
                               "-k", "ordering")
    check("-x stops at the first failure", list(got.values()).count("failure") == 1
          and "stopping after 1 failures" in done.stdout, done.stdout[-400:])
    cache = ["-p", "cacheprovider", "-o", f"cache_dir={project.folder / 'cache'}", "-q"]
    project.pytest("--sieve-impl", "sampler:filter_ge", *PARAMS, *cache, "-k", "ordering")
    done, got = project.pytest("--sieve-impl", "sampler:filter_ge", *PARAMS, *cache, "--lf")
    check("--lf runs the failed items again, only them",
          set(got) == {i for i in ge if i.startswith("ordering/")}, sorted(got)[:5])
    done, got = project.pytest("--sieve-impl", "sampler:filter", *PARAMS, "-p",
                               "no:cacheprovider", "-v", "-n", "2", "--dist", "loadscope",
                               "-k", "strict-boundary or reciprocal-makes-a-tie")
    check("pytest-xdist (-n 2 --dist loadscope) runs the items on two workers, all passing",
          done.returncode == 0 and len(got) > 20 and set(got.values()) == {"pass"}
          and "[gw0]" in done.stdout and "[gw1]" in done.stdout, done.stdout[-400:])


def batches(venv: Path, root: Path, asked, ge):
    project = Project(venv, root / "batches")
    calls = project.folder / "calls.txt"
    done, got = project.pytest("--sieve-impl", "sampler:filter_batch_logged", "--sieve-batched",
                               *PARAMS, *FAST, env={"SAMPLER_CALLS": str(calls)})
    shapes = [tuple(map(int, line.split())) for line in calls.read_text().splitlines()]
    check("a batched function passes every case, called with batches of several rows, "
          "of 32,000 tokens and more among them", done.returncode == 0
          and len(got) == len(asked) and any(b > 1 and v >= 32000 for b, v in shapes),
          f"exit {done.returncode}, largest {max(shapes, key=lambda s: s[0] * s[1])}: "
          f"{done.stdout[-400:]}")
    done, got = project.pytest("--sieve-impl", "sampler:filter_crash", *PARAMS, *FAST,
                               "-k", "peaked-v262144-t0.7 or peaked-v32000-t0.7 "
                               "or strict-boundary-2-")
    big = {i for i in got if "large-vocab" in i and int(re.search(r"v(\d+)", i)[1]) > 100000}
    check("a sampler that kills its process fails those items (crash), the others are judged, "
          "and the session ends normally", done.returncode == 1 and big and
          {i for i, o in got.items() if o == "failure"} == big | {
              "ordering/strict-boundary-2-equal-top-p-1-of-2"} and "(crash" in done.stdout,
          done.stdout[-600:])


def conftest(venv: Path, root: Path, asked, ge):
    project = Project(venv, root / "conftest-project")
    (project.folder / "conftest.py").write_text(
        "import pytest\n\n\n@pytest.fixture\ndef sieve_impl():\n"
        '    return {"function": "sampler:filter", "params": "sampler:check_params"}\n')
    done, got = project.pytest(*FAST, "-k", "ordering")
    check("a conftest's sieve_impl fixture: the cases are collected beside it and pass",
          done.returncode == 0 and len(got) > 50 and set(got.values()) == {"pass"}
          and "conftest.py::ordering::test_conforms[" in subprocess.run(
              [str(venv / "bin" / "python"), "-m", "pytest", "--collect-only", "-q", *FAST[:2]],
              cwd=project.folder, capture_output=True, text=True).stdout, done.stdout[-400:])


def main():
    wheel = Path(sys.argv[1]).resolve()
    with tempfile.TemporaryDirectory(prefix="sieve-wheel-") as tmp:
        root = Path(tmp)
        venv = root / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                       check=True)
        before = tree(venv)
        pip = subprocess.run([str(venv / "bin" / "pip"), "install", "--no-index", str(wheel)],
                             capture_output=True, text=True)
        check("pip installs the wheel from its file, with no index", pip.returncode == 0,
              pip.stderr[-500:])
        if pip.returncode == 0:
            installed(venv)
            asked, ge = cases()
            # Each group has a project folder of its own; two at a time fill the two cores.
            with ThreadPoolExecutor(max_workers=2) as pool:
                for done in [pool.submit(group, venv, root, asked, ge) for group in
                             (per_case, batches, expectations, selection, conftest)]:
                    done.result()
        out = subprocess.run([str(venv / "bin" / "pip"), "uninstall", "-y", "sieve-conformance"],
                             capture_output=True, text=True)
        left = sorted(tree(venv) - before)
        check("pip uninstall leaves the environment as it was", out.returncode == 0 and not left,
              f"left {left[:5]}")
    print(f"wheel: {sum(results)} passed, {len(results) - sum(results)} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
