"""Tests of the Python module (harness/python/sieve), run by make test."""

import json
import math
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import sieve  # noqa: E402

MAT = [2.0, 1.5, 1.0, 0.3, -0.2, -1.5]


class Types(unittest.TestCase):
    def test_a_list_gives_a_list_with_minus_inf_for_removed_tokens(self):
        lp = sieve.filter(MAT, top_p=0.8, top_k=2)
        self.assertIsInstance(lp, list)
        self.assertAlmostEqual(math.exp(lp[1]), 0.37754066879814546, places=12)
        self.assertEqual(lp[2:], [-math.inf] * 4)

    def test_numpy_in_numpy_out(self):
        import numpy
        lp = sieve.filter(numpy.array(MAT, dtype=numpy.float32), top_k=2)
        self.assertIsInstance(lp, numpy.ndarray)
        self.assertEqual(lp.dtype, numpy.float64)

    def test_torch_in_torch_out(self):
        import torch
        lp = sieve.filter(torch.tensor(MAT), top_k=2)
        self.assertIsInstance(lp, torch.Tensor)
        self.assertEqual(lp.dtype, torch.float64)


class Rule(unittest.TestCase):
    def test_bad_parameters_raise_value_error_naming_the_field(self):
        with self.assertRaises(ValueError) as e:
            sieve.filter(MAT, temperature=0.0, top_k=0)
        self.assertIn("top_k", str(e.exception))
        self.assertEqual(e.exception.code, "SIEVE_ETOPK")

    def test_validate_clamps_temperature_zero(self):
        self.assertEqual(sieve.validate(0.0, 0.3, 5), {"temperature": 1e-5, "top_p": 1.0,
                                                       "top_k": -1})

    def test_sample_returns_the_processed_logprob(self):
        s = sieve.sample(MAT, seed=42, position=7, top_p=0.8, top_k=2, top_logprobs=3)
        self.assertEqual(s["token"], 1)
        self.assertAlmostEqual(s["logprob"], -0.9740769841801067, places=12)
        self.assertEqual(s["top_logprobs"][2], (2, -math.inf))

    def test_uniform_draw_and_position(self):
        self.assertEqual(sieve.uniform(0, 0), 0.0)
        self.assertEqual(sieve.draw([0.0, 0.0, 0.6, 0.4], seed=0, position=0), 2)
        self.assertEqual(sieve.position("decode", 3, 10, row=2), 10)
        with self.assertRaises(ValueError):
            sieve.position("decode", 11, 10)


class Speculate(unittest.TestCase):
    def test_every_speculative_fixture_gets_its_expected_chain(self):
        with open(sieve.fixtures_path(), encoding="utf-8") as f:
            cases = [c for c in json.load(f)["cases"] if c["family"] == "speculative"]
        checked = 0
        for c in cases:
            r, want = c["request"], c["expect"]
            if "error" in want:
                with self.assertRaises(ValueError, msg=c["id"]):
                    self._speculate(r)
                continue
            got = self._speculate(r)
            last = want["tokens"][-1]
            allowed = last["$any_of"] if isinstance(last, dict) else [last]
            self.assertEqual(got["accepted"], want["accepted"], c["id"])
            self.assertEqual(got["tokens"][:-1], want["tokens"][:-1], c["id"])
            self.assertIn(got["tokens"][-1], allowed, c["id"])
            self.assertEqual([s["u"] for s in got["steps"]],
                             [s["u"]["$exact"] for s in want["steps"]], c["id"])
            checked += 1
        self.assertGreater(checked, 40)

    @staticmethod
    def _speculate(r):
        number = lambda x: float("-inf") if x is None else float(x)  # noqa: E731
        rows = lambda side: [[number(x) for x in row] for row in side["rows"]]  # noqa: E731
        return sieve.speculate(rows(r["target"]), r["draft"]["tokens"],
                               rows(r["draft"]) if "rows" in r["draft"] else None,
                               int(r["seed"]), r["position"], r["target"].get("params"),
                               r["draft"].get("params"))


class Conformance(unittest.TestCase):
    def test_the_oracle_itself_conforms(self):
        ran = sieve.assert_conforms(lambda logits, t, k, p: sieve.filter(logits, t, p, k))
        self.assertGreater(ran, 150)

    def test_a_ge_boundary_fails_and_the_ids_are_listed(self):
        def ge(logits, t, k, p):
            lp = sieve.filter(logits, t, p, k)
            if p < 1 and len(set(logits)) == 1 and (len(logits) & (len(logits) - 1)) == 0:
                kept = round(p * len(logits))  # >= drops the token the exact boundary keeps
                lp = [-math.log(kept) if i < kept else -math.inf for i in range(len(logits))]
            return lp
        with self.assertRaises(AssertionError) as e:
            sieve.assert_conforms(ge, families=["ordering"])
        self.assertIn("ordering/strict-boundary-4-equal-top-p-2-of-4", str(e.exception))

    def test_float32_rounding_passes_at_float32_and_fails_at_float64(self):
        def rounded(logits, t, k, p):  # the oracle's answer, off by a few float32 ulps
            return [x if math.isinf(x) else x * (1 + 2**-22)
                    for x in sieve.filter(logits, t, p, k)]
        self.assertGreater(sieve.assert_conforms(rounded, families=["ordering"]), 50)
        with self.assertRaises(AssertionError):
            sieve.assert_conforms(rounded, families=["ordering"], precision="float64")
        with self.assertRaises(ValueError):
            sieve.assert_conforms(rounded, precision="fp16")


if __name__ == "__main__":
    unittest.main()
