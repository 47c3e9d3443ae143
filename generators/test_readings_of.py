"""readings_of.py rebuilds a request as sieve fuzz asks it: for the fixtures' own requests it
gives the readings, and the answers they expect, that the fixtures record; and it refuses,
with null, a request the case builders refuse."""

import json
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import readings_of  # noqa: E402

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sieve-fixtures.json"


def rebuildable(case: dict) -> bool:
    """A request sieve fuzz asks: one row of arrays (no recipe), or one without rows."""
    request = case["request"]
    rows = request.get("rows")
    if request["op"] not in readings_of.BUILDERS:
        return False
    if rows is None:
        return True
    return len(rows) == 1 and isinstance(rows[0].get("logits"), list)


class FixtureRequests(unittest.TestCase):
    def test_each_gives_the_readings_its_fixture_records(self):
        cases = [c for c in json.loads(FIXTURES.read_text())["cases"] if rebuildable(c)]
        self.assertGreater(len(cases), 150)
        for case in cases[::3]:
            with self.subTest(case=case["id"]):
                got = readings_of.readings_of(case["request"])
                self.assertIsNotNone(got)
                self.assertEqual([(r["name"], r["expect"]) for r in got],
                                 [(r["name"], r["expect"]) for r in case.get("readings", [])])


class Refused(unittest.TestCase):
    def test_a_sample_row_at_an_exact_top_p_boundary_gives_null(self):
        request = {"op": "sample", "rows": [{"logits": [0, 0], "params": {"top_p": 0.5},
                                             "seed": "607", "position": 4}]}
        self.assertIsNone(readings_of.readings_of(request))

    def test_a_value_it_cannot_read_gives_null(self):
        request = {"op": "filter", "rows": [{"logits": ["one"], "params": {}}]}
        self.assertIsNone(readings_of.readings_of(request))


if __name__ == "__main__":
    unittest.main()
