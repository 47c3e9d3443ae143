"""Facts about the families' cases that the fit of `sieve run` relies on."""

import json
import unittest
from pathlib import Path

import families.penalties as penalties

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sieve-fixtures.json"


class Penalties(unittest.TestCase):
    def test_no_case_takes_the_axis_of_a_misreading_that_separates_it_by_the_way(self):
        # An unexplained failure in a case turns the fit against the case's axis ("no value
        # fits"): a penalty case tagged with top-k's ties would blame them for a penalty bug.
        cases = [c for c in json.loads(FIXTURES.read_text())["cases"]
                 if c["family"] == penalties.FAMILY]
        by_the_way = [c["id"] for c in cases if c["axis"] in penalties.BY_THE_WAY]
        self.assertGreater(len(cases), 60)
        self.assertEqual(by_the_way, [])


if __name__ == "__main__":
    unittest.main()
