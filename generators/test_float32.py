"""The float32 bounds hold for float32 computations, and cases claim only what they separate."""

import math
import sys
import unittest
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fixture_format as ff  # noqa: E402
import float32 as fp32  # noqa: E402
import matcher  # noqa: E402
import reference as ref  # noqa: E402


def random_rows(n, seed=7):
    gen = torch.Generator().manual_seed(seed)
    for _ in range(n):
        v = int(torch.randint(2, 3000, (1,), generator=gen))
        scale = float(torch.rand(1, generator=gen)) * 60
        yield (torch.randn(v, generator=gen) * scale).to(torch.float32)


class LogprobBound(unittest.TestCase):
    def test_float32_log_softmax_stays_within_the_bound(self):
        """torch's float32 log-softmax and a sequential float32 sum, at several temperatures."""
        for row in random_rows(300):
            for t in (1e-5, 0.3, 1.0, 7.0):
                s = row * (1.0 / t)
                want = torch.log_softmax(s.to(torch.float64), 0)
                bound = fp32.logprob_bound(want, s)
                torch_lp = torch.log_softmax(s, 0).to(torch.float64)
                m = s.max()
                seq = torch.tensor(0.0, dtype=torch.float32)
                for e in torch.exp(s - m):
                    seq = seq + e
                seq_lp = ((s - m) - torch.log(seq)).to(torch.float64)
                for got in (torch_lp, seq_lp):
                    self.assertLessEqual(float((got - want).abs().max()), bound)

    def test_the_bound_grows_with_magnitude_not_only_with_the_value(self):
        s = torch.tensor([1e5, 1e5 - 0.01], dtype=torch.float32)
        lp = torch.log_softmax(s.to(torch.float64), 0)
        self.assertGreater(fp32.logprob_bound(lp, s), 1e5 * 2**-24)


class ExactlyOrdered(unittest.TestCase):
    def test_float32_probabilities_keep_the_order_of_exactly_ordered_logits(self):
        """Adjacent and near float32 logits above 64: torch's float32 softmax and log-softmax,
        and exp(s - m) over a float32 sum, order the two as their logits."""
        gen = torch.Generator().manual_seed(11)
        checked = 0
        for _ in range(2000):
            top = float(torch.rand(1, generator=gen)) * 3000 + 130
            b = torch.tensor(top, dtype=torch.float32)
            a = b
            for _ in range(int(torch.randint(1, 40, (1,), generator=gen))):
                a = torch.nextafter(a, torch.tensor(0.0))
            tail = torch.randn(int(torch.randint(0, 50, (1,), generator=gen)), generator=gen)
            s = torch.cat([torch.stack([a, b]), b - 1 - tail.abs() * 30]).to(torch.float32)
            if not ff.exactly_ordered(float(a), float(b), float(b)):
                continue
            checked += 1
            m = s.max()
            e = torch.exp(s - m)
            for p in (torch.softmax(s, 0), torch.log_softmax(s, 0), e / e.sum()):
                self.assertLess(float(p[0]), float(p[1]))
        self.assertGreater(checked, 1000)

    def test_a_near_tie_between_small_logits_is_still_refused(self):
        a = float(torch.nextafter(torch.tensor(1.0), torch.tensor(0.0)))
        self.assertFalse(ff.exactly_ordered(a, 1.0, 1.0))
        with self.assertRaises(ff.NearBoundary):
            ff.filter_case("ordering/x", "ordering", "000:18", "two near-equal logits",
                           [a, 1.0], top_k=1)


class Matchers(unittest.TestCase):
    def test_f32_abs_counts_at_float32_only(self):
        m = ff.approx(-0.5, f32_abs=1e-6)
        self.assertTrue(matcher.matches(m, -0.5000005, "float32"))
        self.assertFalse(matcher.matches(m, -0.5000005, "float64"))


class Claims(unittest.TestCase):
    def test_a_case_claiming_an_axis_it_does_not_separate_is_refused(self):
        with self.assertRaises(ValueError):
            ff.filter_case("ordering/x", "ordering", "000:17", "two tokens, no filter",
                           [1.0, 0.0], axis="boundary")

    def test_a_case_records_the_readings_it_separates_with_their_answers(self):
        c = ff.filter_case("ordering/x", "ordering", "000:17", "4 equal, top_p 0.5",
                           [0.25] * 4, top_p=0.5, exact_boundary=True, axis="boundary")
        ge = next(r for r in c["readings"] if r["name"] == "ge-boundary")
        self.assertEqual(ge["precisions"], ["float32", "float64"])
        lp = ge["expect"]["rows"][0]["logprobs"]["$approx_array"]
        self.assertEqual([x is None for x in lp], [False, False, True, True])
        self.assertAlmostEqual(lp[0], -math.log(2))


class Routes(unittest.TestCase):
    def test_eight_equal_logits_round_above_an_eighth_on_one_route_only(self):
        row = torch.full((8,), 0.25, dtype=torch.float32)
        finite = torch.ones(8, dtype=torch.bool)
        off = [r for r in fp32.ROUTES if fp32.route_kept(row, finite, 0.5, -1, r) != list(range(5))]
        self.assertEqual(off, ["f64-exp-log-softmax"])
        f = ref.filter_row(row, ref.Params(1.0, 0.5, -1))
        self.assertEqual(f.kept, 5)


if __name__ == "__main__":
    unittest.main()
