"""Facts about the families' cases that the fit of `sieve run` relies on."""

import json
import unittest
from pathlib import Path

import fixture_format as ff
import families.penalties as penalties

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "sieve-fixtures.json"


def reading(axis):
    return {"name": f"a-reading-of-{axis}", "axis": axis}


class CaseAxis(unittest.TestCase):
    """An unexplained failure in a case turns the fit against the case's axis ("no value fits"),
    so a case is about the axis its family names, never one a reading separates by the way."""

    def axis(self, readings, axis="none"):
        return ff.case("f/c", "f", "000:1", "A fact.", {}, {}, readings, axis)["axis"]

    def test_a_case_that_names_no_axis_is_about_none_whatever_its_readings_separate(self):
        self.assertEqual(self.axis([reading("topk_ties"), reading("hash")]), "none")

    def test_a_stage_takes_the_first_of_its_axes_a_reading_separates(self):
        found = [reading("logprobs"), reading("topp_scope"), reading("topp_mass")]
        self.assertEqual(self.axis(found, ff.TOP_P), "topp_mass")

    def test_a_stage_none_of_whose_axes_a_reading_separates_is_none(self):
        self.assertEqual(self.axis([reading("topk_ties")], ff.TOP_P), "none")

    def test_a_named_axis_no_reading_separates_is_refused(self):
        with self.assertRaises(ff.NotSeparating):
            self.axis([reading("topk_ties")], "boundary")

    def test_an_axis_that_does_not_exist_is_refused(self):
        with self.assertRaises(ValueError):
            self.axis([reading("topk_ties")], ("topk_ties", "top_k_ties"))


class Penalties(unittest.TestCase):
    def test_no_case_takes_the_axis_of_a_misreading_that_separates_it_by_the_way(self):
        # A penalty case tagged with top-k's ties would blame them for a penalty bug.
        cases = [c for c in json.loads(FIXTURES.read_text())["cases"]
                 if c["family"] == penalties.FAMILY]
        by_the_way = [c["id"] for c in cases if c["axis"] in ("topk_ties", "topp_mass", "logprobs")]
        self.assertGreater(len(cases), 60)
        self.assertEqual(by_the_way, [])


if __name__ == "__main__":
    unittest.main()
