"""Tests of sieve.assert_conforms, for pytest and unittest alike (make test runs them).

The faithful filter is the oracle itself; the wrong ones are written with NumPy, each for the
cases it is run on, or are the oracle broken on one case."""

import copy
import ctypes
import json
import math
import os
import re
import sys
import tempfile
import unittest
from contextlib import contextmanager
from pathlib import Path

import numpy

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
import sieve  # noqa: E402

with open(sieve.fixtures_path(), encoding="utf-8") as _f:
    CASES = {c["id"]: c for c in json.load(_f)["cases"]}
BOUNDARY = "ordering/strict-boundary-4-equal-top-p-2-of-4"  # keeps 3 tokens; >= keeps 2
TIES = "ties/exact-tie-5-top-k-2"
NAN_TOP_P = "validation/filter-top-p-nan-before-top-k"
TEMPERATURE = "logprobs/processed-logprobs-include-temperature-t0.5"
NEGATIVE_T = "validation/filter-temperature-before-top-p"


def oracle(logits, temperature, top_k, top_p):
    return sieve.filter(logits, temperature, top_p, top_k)


def log_softmax(s):
    return s - numpy.logaddexp.reduce(s[numpy.isfinite(s)])


def topp_ge(logits, temperature, top_k, top_p):
    """Top-p with >= at the boundary, for rows without top_k at temperature 1."""
    s = numpy.asarray(logits, dtype=numpy.float64)
    p = numpy.exp(log_softmax(s))
    order = numpy.argsort(-p, kind="stable")
    before = numpy.cumsum(p[order]) - p[order]
    s[order[before >= top_p]] = -numpy.inf
    return log_softmax(s)


def topk_keeping_ties(logits, temperature, top_k, top_p):
    """Top-k that keeps every token tied with the k-th, for rows without top_p at T 1."""
    s = numpy.asarray(logits, dtype=numpy.float64)
    s[s < numpy.sort(s)[::-1][top_k - 1]] = -numpy.inf
    return log_softmax(s)


def ignoring_temperature(logits, temperature, top_k, top_p):
    return sieve.filter(logits, 1.0, top_p, top_k)


def float32_rounded(logits, temperature, top_k, top_p):
    """The oracle's answer off by a few float32 ulps."""
    return [x if math.isinf(x) else x * (1 + 2**-22) for x in oracle(logits, temperature, top_k,
                                                                      top_p)]


def broken_on(case_id):
    """The oracle, except that it answers the row of one case as >= would (two tokens kept)."""
    row = CASES[case_id]["request"]["rows"][0]

    def fn(logits, temperature, top_k, top_p):
        if logits == row["logits"] and top_p == row["params"]["top_p"]:
            return sieve.filter(logits, temperature, 1.0, 2)
        return oracle(logits, temperature, top_k, top_p)
    return fn


def recording(calls):
    def fn(*args):
        calls.append(args)
        return oracle(*args)
    return fn


def with_row(case_id, logits=None, expect=None, **params):
    """A copy of a case with its row, its parameters or its expectation changed."""
    case = copy.deepcopy(CASES[case_id])
    row = case["request"]["rows"][0]
    row["logits"] = row["logits"] if logits is None else logits
    row["params"].update(params)
    if expect is not None:
        case["expect"], case["readings"] = {"rows": [expect]}, []
    return case


@contextmanager
def temporary_json(data):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "file.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(data, f)
        yield path


def fixtures_of(*cases):
    """A fixture file of these cases (ids or case objects)."""
    return temporary_json({"schema": "sieve-fixtures/2",
                           "cases": [CASES[c] if isinstance(c, str) else c for c in cases]})


def failure_message(fn, *cases, **options):
    """The AssertionError's message when fn is run through these cases."""
    with fixtures_of(*cases) as path:
        try:
            sieve.assert_conforms(fn, fixtures=path, **options)
        except AssertionError as e:
            return str(e)
    raise AssertionError("assert_conforms passed")


class Selection(unittest.TestCase):
    def test_faithful_filter_passes_and_returns_what_ran(self):
        result = sieve.assert_conforms(oracle)
        self.assertGreater(result, 150)
        self.assertEqual(int(result), len(result.passed))
        self.assertEqual(result.expected_failures, {})

    def test_unknown_family_is_rejected(self):
        with self.assertRaises(ValueError) as e:
            sieve.assert_conforms(oracle, families=["ordring"])
        self.assertIn("'ordring'", str(e.exception))
        self.assertIn("ordering", str(e.exception).split("the fixtures have")[1])

    def test_selection_without_runnable_cases_is_rejected(self):
        with self.assertRaises(ValueError) as e:
            sieve.assert_conforms(oracle, families=["hash"])
        self.assertIn("hash", str(e.exception))

    def test_the_cases_of_min_p_and_the_penalties_are_not_asked(self):
        with self.assertRaises(ValueError) as e:
            sieve.assert_conforms(oracle, families=["penalties"])
        self.assertIn("min-p or penalties", str(e.exception))


class Conversion(unittest.TestCase):
    def test_top_k_arrives_as_int(self):
        calls = []
        with fixtures_of(with_row(TIES, top_k=2.0)) as path:
            sieve.assert_conforms(recording(calls), fixtures=path)
        self.assertIs(type(calls[0][2]), int)
        self.assertEqual(calls[0][2], 2)

    def test_fractional_top_k_is_rejected_before_fn_is_called(self):
        calls = []
        rejected = {"error": {"kind": "invalid_params", "field": "top_k", "code": "SIEVE_ETOPK"}}
        with fixtures_of(with_row(TIES, top_k=1.5, expect=rejected)) as path:
            sieve.assert_conforms(recording(calls), fixtures=path)
        self.assertEqual(calls, [])

    def test_nan_top_p_arrives_as_float(self):
        calls = []
        with fixtures_of(NAN_TOP_P) as path:
            sieve.assert_conforms(recording(calls), fixtures=path)
        (_, temperature, top_k, top_p), = calls
        self.assertIs(type(top_p), float)
        self.assertTrue(math.isnan(top_p))
        self.assertEqual((type(temperature), type(top_k)), (float, int))

    def test_logits_arrive_as_float32_values(self):
        calls = []
        logits = CASES[TEMPERATURE]["request"]["rows"][0]["logits"]
        nudged = [x + 1e-12 for x in logits]  # the same float32 values, not the same doubles
        with fixtures_of(with_row(TEMPERATURE, logits=nudged)) as path:
            sieve.assert_conforms(recording(calls), fixtures=path)
        self.assertEqual(calls[0][0], [ctypes.c_float(x).value for x in logits])
        self.assertEqual(calls[0][0], logits)


class FailureMessage(unittest.TestCase):
    def test_failure_message_names_the_reading(self):
        hint = next(r["hint"] for r in CASES[BOUNDARY]["readings"] if r["name"] == "ge-boundary")
        message = failure_message(topp_ge, BOUNDARY)
        self.assertIn(f"same answer as [ge-boundary]: {hint}", message)
        self.assertNotIn("no known misreading", message)

    def test_failure_message_shows_expected_got_and_the_first_difference_with_its_bound(self):
        message = failure_message(topp_ge, BOUNDARY)
        self.assertIn(CASES[BOUNDARY]["description"], message)
        self.assertIn("top_k=-1, top_p=0.5)", message)
        self.assertIn("expected kept {0,1,2}, logprobs [-1.0986122886681098", message)
        self.assertIn("got      kept {0,1}, logprobs [-0.6931471805599453", message)
        self.assertRegex(message, r"first difference: \[0\] expected -1.0986122886681098, got "
                                  r"-0.6931471805599453: off by 0.405, beyond the float32 bound "
                                  r"8.3e-07")

    def test_an_answer_no_reading_gives_says_so(self):
        message = failure_message(ignoring_temperature, TEMPERATURE)
        self.assertIn("no known misreading gives this answer", message)
        self.assertNotIn("same answer as", message)

    def test_a_reading_is_named_only_when_the_answer_is_its_answer(self):
        keeps_one = lambda logits, t, k, p: sieve.filter(logits, t, 1.0, 1)  # noqa: E731
        message = failure_message(keeps_one, BOUNDARY)
        self.assertIn("got      kept {0}, ", message)
        self.assertIn("no known misreading gives this answer", message)

    def test_float32_error_at_float64_is_put_down_to_float32_arithmetic(self):
        message = failure_message(float32_rounded, BOUNDARY, precision="float64")
        self.assertIn("float32 arithmetic: within the float32 bounds, not the float64 ones",
                      message)
        self.assertIn("beyond 1e-09 + 1e-09 relative", message)

    def test_an_expected_rejection_is_shown_with_its_error(self):
        accepting = lambda logits, t, k, p: oracle(logits, 1.0, k, 1.0)  # noqa: E731
        message = failure_message(accepting, NEGATIVE_T)
        self.assertIn("expected a rejection (invalid_params of temperature, SIEVE_ETEMPERATURE)",
                      message)
        self.assertIn("first difference: expected a rejection (ValueError), got logprobs",
                      message)

    def test_every_failure_is_listed_once_the_first_of_each_family_in_full(self):
        with self.assertRaises(AssertionError) as e:
            sieve.assert_conforms(ignoring_temperature)
        message = str(e.exception)
        failed = int(re.match(r"(\d+) of \d+ sieve fixture cases failed", message).group(1))
        listed = [line.strip() for line in message.splitlines() if line.strip() in CASES]
        families = sorted({i.split("/")[0] for i in listed})
        shown = [i.split("/")[0] for i in listed[:len(families)]]
        self.assertGreater(failed, 20)
        self.assertEqual(len(listed), len(set(listed)))
        self.assertEqual(len(listed), failed)
        self.assertEqual(shown, families, "the first failure of each family comes first")
        self.assertEqual(listed[10:], sorted(listed[10:]), "the rest by id")

    def test_a_value_error_says_where_it_was_raised(self):
        def domain_error(logits, temperature, top_k, top_p):
            return [math.log(0.0)] * len(logits)
        with self.assertRaises(AssertionError) as e:
            sieve.assert_conforms(domain_error, families=["ordering"])
        self.assertRegex(str(e.exception), r"raised ValueError: math domain error "
                                           r"\(at test_assert_conforms\.py:\d+\)")

    def test_the_templates_checked_filter_conforms(self):
        sys.path.insert(0, str(ROOT / "harness" / "adapters"))
        import python_adapter
        self.assertGreater(sieve.assert_conforms(python_adapter.checked_filter), 150)

    def test_an_exception_other_than_value_error_names_the_case(self):
        def crashing(logits, temperature, top_k, top_p):
            raise TypeError("no such dtype")
        with fixtures_of(BOUNDARY) as path, self.assertRaises(AssertionError) as e:
            sieve.assert_conforms(crashing, fixtures=path)
        self.assertIn(f"{BOUNDARY}: TypeError: no such dtype", str(e.exception))
        self.assertIsInstance(e.exception.__cause__, TypeError)


class ExpectedFailures(unittest.TestCase):
    def test_expected_failure_does_not_fail(self):
        result = sieve.assert_conforms(broken_on(BOUNDARY),
                                       expected_failures={BOUNDARY: "we use >="})
        self.assertEqual(result.expected_failures, {BOUNDARY: "we use >="})
        self.assertNotIn(BOUNDARY, result.passed)

    def test_unlisted_failure_still_fails(self):
        with self.assertRaises(AssertionError) as e:
            sieve.assert_conforms(broken_on(BOUNDARY), expected_failures={TIES: "we keep ties"})
        self.assertIn(f"\n\n{BOUNDARY}\n", str(e.exception))

    def test_stale_expected_failure_fails(self):
        with self.assertRaises(AssertionError) as e:
            sieve.assert_conforms(oracle, expected_failures={
                BOUNDARY: {"reason": "we use >=", "issue": "#123"}})
        self.assertIn(f"{BOUNDARY}: now passes: remove it from the expectations "
                      "(listed: we use >= (#123))", str(e.exception))

    def test_unknown_expected_id_is_rejected(self):
        with self.assertRaises(ValueError) as e:
            sieve.assert_conforms(oracle, expected_failures={"ordering/no-such-case": "typo"})
        self.assertIn("ordering/no-such-case", str(e.exception))

    def test_expected_failure_outside_the_selection_is_ignored(self):
        result = sieve.assert_conforms(oracle, families=["ties"],
                                       expected_failures={BOUNDARY: "we use >="})
        self.assertEqual(result.expected_failures, {})

    def test_expectation_file_is_read_as_sieve_run_reads_it(self):
        for schema in ("sieve-fixtures/2", "sieve-fixtures/1"):
            entry = {"reason": "we use >=", "issue": "#123"}
            with temporary_json({"schema": schema,
                                 "expected_failures": {BOUNDARY: entry}}) as path:
                result = sieve.assert_conforms(broken_on(BOUNDARY), expected_failures=path)
            self.assertEqual(result.expected_failures, {BOUNDARY: "we use >= (#123)"})

    def test_expectation_file_of_another_schema_is_rejected(self):
        with temporary_json({"schema": "sieve-fixtures/3", "expected_failures": {}}) as path:
            with self.assertRaises(ValueError) as e:
                sieve.assert_conforms(oracle, expected_failures=path)
        self.assertIn("sieve-fixtures/3", str(e.exception))

    def test_malformed_expected_failure_is_rejected(self):
        with self.assertRaises(ValueError) as e:
            sieve.assert_conforms(oracle, expected_failures={BOUNDARY: {"why": "we use >="}})
        self.assertIn(BOUNDARY, str(e.exception))


class WrongFilters(unittest.TestCase):
    def test_top_k_keeping_ties_is_named(self):
        message = failure_message(topk_keeping_ties, TIES)
        self.assertIn("same answer as [topk-keeps-ties]", message)


if __name__ == "__main__":
    unittest.main()
