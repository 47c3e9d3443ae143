"""sieve's pytest plugin (the pytest11 entry point `sieve`): each fixture case is a test item.

    pytest --sieve-impl mysampler:filter
    pytest --sieve-impl mysampler:filter_batch --sieve-batched -k top-p --sieve-expect known.json
    pytest --sieve-impl mysampler:filter --sieve-params mysampler:check_params

The implementation under test is a Python function, MODULE:FUNCTION (run through sieve.adapter,
which says how it is called), or any implementation `sieve run --impl` takes (exec:, lib:,
profile:, rule:). Instead of --sieve-impl, a conftest.py may define a fixture `sieve_impl`
returning the function, its "MODULE:FUNCTION", or {"function": ..., "params": ..., "batched":
True, "arrays": "numpy"}: the cases are then collected beside that conftest. A function gets the
cases of the filter and validate ops (validate's skipped without --sieve-params: the engine's
parameter checks).

An item is named by its case id (test_conforms[ordering/strict-boundary-2-equal-top-p-1-of-2]),
under the case's family. The first item run asks `sieve run` for every selected item of its
conftest (of its family, under pytest-xdist: run it with --dist loadscope so that each family
goes to one worker) in one run; the function is called in that run's adapter process, so a crash
or a hang is a failed item, never the end of the session. A failure's message is sieve run's:
what was expected and got, the cause (the fitted rule's axis value, or a known misreading), and
how to replay the case. The items of an expectation file (--sieve-expect, as `sieve run --expect`
reads it) are xfail(strict=True): they must fail, and pass only once removed from the file.
"""

import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from . import _expectations, fixtures_path
from .command import binary

SIEVE_IMPLS = ("exec:", "lib:", "profile:", "rule:")
NOT_ASKED = ("smoke",)  # the suite sieve run leaves out by default: its cases repeat others


def pytest_addoption(parser):
    group = parser.getgroup("sieve", "sieve, the sampler conformance suite")
    group.addoption("--sieve-impl", metavar="IMPL",
                    help="the sampler under test: MODULE:FUNCTION, or an implementation of "
                         "sieve run --impl (exec:, lib:, profile:, rule:)")
    group.addoption("--sieve-batched", action="store_true",
                    help="FUNCTION takes a batch: logits [B, V] and parameters [B]")
    group.addoption("--sieve-params", metavar="MODULE:FUNCTION",
                    help="the engine's parameter checks, run on each row before FUNCTION "
                         "(python -m sieve.adapter --help)")
    group.addoption("--sieve-arrays", choices=("torch", "numpy", "list"), default="torch",
                    help="the arrays FUNCTION takes (default torch)")
    group.addoption("--sieve-precision", choices=("float32", "float64"),
                    help="the arithmetic answers are compared at (default: float32 for a "
                         "function, else what the implementation declares)")
    group.addoption("--sieve-expect", metavar="FILE",
                    help="an expectation file: its cases are xfail(strict=True)")
    group.addoption("--sieve-fixtures", metavar="FILE", help="another fixture file")


def pytest_configure(config):
    config.stash[JUDGE] = Judge(config)


def pytest_collect_file(file_path, parent):
    if file_path.name != "conftest.py" or parent.config.getoption("sieve_impl"):
        return None
    module = parent.config.pluginmanager.get_plugin(str(file_path))
    if module is None or not hasattr(module, "sieve_impl"):
        return None
    return ConftestCases.from_parent(parent, path=file_path)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items):
    """The items of --sieve-impl, before -k, --lf and xdist choose among them."""
    if config.getoption("sieve_impl"):
        items[:0] = list(collect_items(Cases.from_parent(session, name="sieve", nodeid="sieve")))


def collect_items(node):
    for child in node.collect():
        if isinstance(child, pytest.Item):
            yield child
        else:
            yield from collect_items(child)


@pytest.fixture
def sieve_impl(request):
    """The implementation under test; a conftest.py may override it."""
    return request.config.getoption("sieve_impl")


def test_conforms(request):
    """The fixture case of this item, as sieve run judges the implementation's answer."""
    judge = request.config.stash[JUDGE]
    impl = request.config.getoption("sieve_impl") or request.getfixturevalue("sieve_impl")
    outcome, message = judge.verdict(Impl(impl, request.config), request.node)
    if outcome == "skip":
        pytest.skip(message)
    if outcome != "pass":
        pytest.fail(message, pytrace=False)


# ----------------------------------------------------------------------------- collection


class Cases(pytest.Collector):
    """The fixture cases, a collector per family."""

    def collect(self):
        cases = self.config.stash[JUDGE].cases()
        families = {}
        for case in cases:
            families.setdefault(case["id"].split("/")[0], []).append(case)
        return [Family.from_parent(self, name=name, cases=members)
                for name, members in families.items()]


class ConftestCases(pytest.File, Cases):
    """The cases, collected beside a conftest.py that defines sieve_impl."""


class Family(pytest.Collector):
    def __init__(self, *, cases, **kwargs):
        super().__init__(**kwargs)
        self.cases = cases

    def collect(self):
        expected = self.config.stash[JUDGE].expected()
        items = []
        for case in self.cases:
            item = pytest.Function.from_parent(self, name=f"test_conforms[{case['id']}]",
                                               callobj=test_conforms, originalname="test_conforms")
            item.stash[CASE] = case["id"]
            if case["id"] in expected:
                reason = (f"{expected[case['id']]} (listed in "
                          f"{self.config.getoption('sieve_expect')}: remove it once it passes)")
                item.add_marker(pytest.mark.xfail(strict=True, reason=reason))
            items.append(item)
        return items


# ----------------------------------------------------------------------------- judging


class Impl:
    """An implementation as sieve run's --impl takes it, from --sieve-impl or sieve_impl."""

    def __init__(self, value, config):
        options = {"batched": config.getoption("sieve_batched"),
                   "arrays": config.getoption("sieve_arrays"),
                   "params": config.getoption("sieve_params")}
        if isinstance(value, dict):
            options.update({k: v for k, v in value.items() if k != "function"})
            value = value.get("function")
        value, checks = spec(value), spec(options["params"])
        if not isinstance(value, str) or not value:
            raise pytest.UsageError("sieve: no implementation: give --sieve-impl MODULE:FUNCTION "
                                    "or define a sieve_impl fixture in conftest.py")
        self.python = not value.startswith(SIEVE_IMPLS)
        precision = config.getoption("sieve_precision")
        if self.python:
            command = [sys.executable, "-m", "sieve.adapter", value, "--arrays", options["arrays"],
                       "--precision", precision or "float32"]
            command += ["--batched"] if options["batched"] else []
            command += ["--params", checks] if checks else []
            self.arg = "exec:" + shlex.join(command)
        else:
            self.arg = value
        self.precision = precision
        self.key = (self.arg, precision)


def spec(function):
    """MODULE:FUNCTION of a function, or the string given."""
    return f"{function.__module__}:{function.__qualname__}" if callable(function) else function


class Judge:
    """The verdicts of sieve run, per implementation and case id, asked a run at a time."""

    def __init__(self, config):
        self.config = config
        self.verdicts = {}  # Impl.key -> {case id: (outcome, message)}
        self.runs = []  # (Impl.arg, case count, report's diagnosis or None, problem or None)
        self._cases = None
        self._expected = None

    def fixture_file(self) -> str:
        return self.config.getoption("sieve_fixtures") or fixtures_path()

    def all_cases(self) -> list:
        if self._cases is None:
            with open(self.fixture_file(), encoding="utf-8") as f:
                self._cases = json.load(f)["cases"]
        return self._cases

    def cases(self) -> list:
        """The cases asked: for a Python function, those of the ops sieve.adapter answers (filter,
        and validate, which sieve skips without --sieve-params); for any other implementation,
        all but the smoke suite's."""
        impl = self.config.getoption("sieve_impl")
        ops = None if impl and impl.startswith(SIEVE_IMPLS) else ("filter", "validate")
        return [c for c in self.all_cases() if c["suite"] not in NOT_ASKED
                and (ops is None or c["request"]["op"] in ops)]

    def expected(self) -> dict:
        if self._expected is None:
            path = self.config.getoption("sieve_expect")
            try:
                self._expected = _expectations(path, self.all_cases()) if path else {}
            except (OSError, ValueError) as e:
                raise pytest.UsageError(f"--sieve-expect: {e}") from e
        return self._expected

    def verdict(self, impl: Impl, item) -> tuple:
        judged = self.verdicts.setdefault(impl.key, {})
        case = item.stash[CASE]
        if case not in judged:
            judged.update(self.run(impl, self.pending(impl, item)))
        return judged[case]

    def pending(self, impl: Impl, item) -> list:
        """The case ids to ask with this item's: the selected items of its collector (of its
        family under xdist) not yet judged."""
        judged = self.verdicts[impl.key]
        scope = item.parent if hasattr(self.config, "workerinput") else item.parent.parent
        ids = [i.stash[CASE] for i in item.session.items
               if CASE in i.stash and scope in i.listchain() and i.stash[CASE] not in judged]
        return ids or [item.stash[CASE]]

    def run(self, impl: Impl, ids: list) -> dict:
        with tempfile.TemporaryDirectory(prefix="sieve-pytest-") as tmp:
            out = Path(tmp) / "report.json"
            command = [binary(), "run", "--impl", impl.arg, "--fixtures", self.fixture_file(),
                       "--case", ",".join(ids), "--format", "json", "--output", str(out)]
            command += ["--precision", impl.precision] if impl.precision else []
            env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
            done = subprocess.run(command, capture_output=True, text=True, env=env)
            report = json.loads(out.read_text()) if out.exists() else None
        if report is None:
            problem = (f"sieve run ended with status {done.returncode} and no report: "
                       f"{done.stderr.strip()[-2000:]}")
            self.runs.append((impl.arg, len(ids), None, problem))
            return {i: ("error", problem) for i in ids}
        self.runs.append((impl.arg, len(ids), report.get("diagnosis"), None))
        verdicts = {c["id"]: (c["outcome"], failure_text(c, report, impl)) for c in report["cases"]}
        missing = f"sieve run gave no verdict for this case (status {done.returncode})"
        return {i: verdicts.get(i, ("error", missing)) for i in ids}


def fit_text(fit: dict) -> str:
    """The fitted rule in a line: its axis values that are not DeepInfer's, the axes some case
    bears on that the run leaves open (DeepInfer's value among others), and its misreadings."""
    spec = spec_rule()
    parts = [f"{a}={v}" for a, v in fit["rule"].items() if v is not None and v != spec.get(a)]
    parts += [f"{a} one of {' or '.join(x['candidates'])}" for a, x in fit.get("axes", {}).items()
              if fit["rule"].get(a) is None and len(x.get("candidates", [])) > 1
              and x.get("decided_by")]
    parts += [f"misreading {m}" for m in fit.get("misreadings", [])]
    return "; ".join(parts) or "DeepInfer's on every axis the cases determine"


def failure_text(case: dict, report: dict, impl: Impl) -> str:
    if case["outcome"] in ("pass", "skip"):
        return case.get("detail", "")
    seed = case.get("seed_ref", "-")
    lines = [f"{case['id']} ({case['outcome']}, seed {seed}): {case['detail']}"]
    fit = report.get("diagnosis")
    if fit:
        nearest = (fit.get("nearest_profiles") or [{}])[0]
        lines.append(f"the rule fitted over this run's {len(report['cases'])} cases: "
                     f"{fit_text(fit)}"
                     + (f" (nearest profile {nearest['name']})" if nearest.get("name") else ""))
    lines.append(f"replay: sieve run --impl {shlex.quote(impl.arg)} --case {case['id']}")
    return "\n".join(lines)


_SPEC = {}


def spec_rule() -> dict:
    """DeepInfer's value of each axis (the first value `sieve axes` lists)."""
    if not _SPEC:
        axes = json.loads(subprocess.run([binary(), "axes", "--format", "json"],
                                         capture_output=True, text=True, check=True).stdout)
        _SPEC.update({a["axis"]: a["values"][0]["name"] for a in axes})
    return _SPEC


def pytest_terminal_summary(terminalreporter, config):
    judge = config.stash.get(JUDGE, None)
    if not judge or not judge.runs:
        return
    terminalreporter.section("sieve")
    for arg, n, fit, problem in judge.runs:
        if problem:
            terminalreporter.write_line(f"{arg}: {n} cases: {problem}")
            continue
        said = (f"the rule fitted: {fit_text(fit)}; {fit['explained']} of {fit['failures']} "
                "failures explained" if fit else "no fit")
        terminalreporter.write_line(f"{arg}: {n} cases in one sieve run; {said}")


JUDGE = pytest.StashKey[Judge]()
CASE = pytest.StashKey[str]()
