"""The matchers compare a list of plain numbers at once (matcher._approx_floats); each verdict must
be the one the element-by-element comparison (matcher._close) gives."""

import math
import random
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import matcher  # noqa: E402

VALUES = [0.0, -0.0, 1.0, -1.5, 1e-300, 5e-324, 1e308, math.inf, -math.inf, math.nan, None, 3, -7]


def one_by_one(want, got, tol):
    """The element-by-element verdict of matcher._approx on two lists."""
    try:
        return len(want) == len(got) and all(
            matcher._close(matcher._number(w), matcher._number(g), *tol)
            and not isinstance(g, str) for w, g in zip(want, got))
    except TypeError:
        return False


class ListsAtOnce(unittest.TestCase):
    def test_every_verdict_is_the_element_by_element_one(self):
        rng = random.Random(5)
        for _ in range(20000):
            n = rng.randint(0, 6)
            want = [rng.choice(VALUES + [rng.uniform(-50, 0)]) for _ in range(n)]
            got = []
            for w in want:
                base = -math.inf if w is None else w
                got.append(rng.choice([w, None, base + rng.choice([1e-12, 1e-9, 1e-6, -1e-9]),
                                       rng.choice(VALUES)]))
            tol = rng.choice([(0.0, 0.0), (1e-9, 1e-9), (1e-6, 0.0), (0.0, 1e-3)])
            self.assertEqual(matcher._approx(want, got, tol), one_by_one(want, got, tol),
                             (want, got, tol))

    def test_strings_and_booleans_take_the_element_by_element_way(self):
        self.assertTrue(matcher._approx(["nan", "-inf"], [math.nan, None], (0, 0)))
        self.assertFalse(matcher._approx([1.0], ["1.0"], (1, 0)))
        self.assertFalse(matcher._approx([1.0], [True], (1, 0)))


if __name__ == "__main__":
    unittest.main()
