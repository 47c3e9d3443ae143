"""mutate.py's bookkeeping: what a resumed run keeps from the journal, and which equivalent
mutants CI plants. Run by make test's layout stage."""

import json
import os
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mutate  # noqa: E402


def mutant(name, text):
    return (name, "oracle/x.c", 1, "delete", text, "; /* deleted */")


class Resumed(unittest.TestCase):
    def journal(self, records):
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        path = Path(folder.name, "journal.jsonl")
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        return path

    def test_keeps_final_verdicts_reached_on_the_same_sources_only(self):
        a, b, c, d = (mutant(n, f"text {n}") for n in "abcd")
        digest = mutate.text_digest
        log = self.journal([
            {"id": "a", "verdict": "killed", "text": digest(a), "sources": "S"},
            {"id": "b", "verdict": "killed", "text": digest(b), "sources": "T"},
            {"id": "c", "verdict": "survived", "text": digest(c), "sources": "S"},
            {"id": "d", "verdict": "killed", "text": "another text", "sources": "S"},
        ])
        self.assertEqual(sorted(mutate.resumed(log, [a, b, c, d], "S")), ["a", "c"])

    def test_a_survivor_still_alive_when_the_run_stopped_is_asked_again(self):
        a = mutant("a", "text")
        log = self.journal([{"id": "a", "verdict": "alive", "text": mutate.text_digest(a),
                             "sources": "S"}])
        self.assertEqual(mutate.resumed(log, [a], "S"), {})

    def test_the_last_verdict_of_a_mutant_is_the_one_kept(self):
        a = mutant("a", "text")
        record = {"id": "a", "text": mutate.text_digest(a), "sources": "S"}
        log = self.journal([dict(record, verdict="alive"), dict(record, verdict="killed")])
        self.assertEqual(mutate.resumed(log, [a], "S")["a"]["verdict"], "killed")


class Planted(unittest.TestCase):
    def coverage(self, seconds):
        """Mutant i on line i, executed by one test that took seconds[i]."""
        return {"tests": {f"t{i}": s for i, s in enumerate(seconds)},
                "code": {"oracle/x.c": list(range(1, len(seconds) + 1))},
                "executed_by": {f"oracle/x.c:{i + 1}": [f"t{i}"] for i in range(len(seconds))}}

    def mutants(self, n):
        return [(f"m{i}", "oracle/x.c", i + 1, "delete", "", "") for i in range(n)]

    def test_are_drawn_from_the_quickest_quarter_with_the_seed(self):
        seconds = [5.0, 0.1, 9.0, 0.2, 7.0, 8.0, 6.0, 4.0]
        known, cov = self.mutants(8), self.coverage(seconds)
        planted = mutate.to_plant(known, cov, 2, 26)
        self.assertEqual(sorted(m[0] for m in planted), ["m1", "m3"])
        self.assertEqual(planted, mutate.to_plant(known, cov, 2, 26))

    def test_leave_out_mutants_no_test_executes(self):
        cov = self.coverage([0.1, 0.2, 0.3, 0.4])
        cov["executed_by"].pop("oracle/x.c:1")
        planted = mutate.to_plant(self.mutants(4), cov, 1, 26)
        self.assertNotEqual(planted[0][0], "m0")


if __name__ == "__main__":
    unittest.main()


class Ordering(unittest.TestCase):
    COV = {"tests": {"s/quick": 0.1, "s/slow": 5.0, "s/killer": 2.0, "s/other": 0.2}}

    def test_the_tests_that_killed_a_mutant_of_the_line_or_near_it_come_first(self):
        killers = mutate.Killers()
        killers.add("oracle/x.c", 10, "s/killer")
        killers.add("oracle/x.c", 12, "s/other")
        killers.add("oracle/x.c", 20, "s/slow")
        killers.add("oracle/y.c", 10, "s/quick")
        asked = ["s/quick", "s/other", "s/killer", "s/slow"]
        first = killers.first("oracle/x.c", 10, set(asked))
        self.assertEqual(first, ["s/killer", "s/other"])
        self.assertEqual(mutate.test_groups(asked, self.COV, first),
                         [["s/killer", "s/other"], ["s/quick"], ["s/slow"]])

    def test_a_killer_not_asked_of_the_mutant_is_not_run(self):
        killers = mutate.Killers()
        killers.add("oracle/x.c", 10, "s/killer")
        self.assertEqual(killers.first("oracle/x.c", 10, {"s/quick"}), [])

    def test_every_test_asked_is_in_exactly_one_group(self):
        asked = ["s/quick", "s/other", "s/killer", "s/slow"]
        groups = mutate.test_groups(asked, self.COV, ["s/slow"])
        self.assertEqual(sorted(t for g in groups for t in g), sorted(asked))

    def test_the_journal_seeds_the_killers_of_mutants_the_code_still_has_at_their_lines_now(self):
        folder = tempfile.TemporaryDirectory()
        self.addCleanup(folder.cleanup)
        log = Path(folder.name, "journal.jsonl")
        log.write_text(json.dumps({"id": "a", "file": "oracle/x.c", "line": 3,
                                   "killer": "s/killer"}) + "\n" +
                       json.dumps({"id": "gone", "file": "oracle/x.c", "line": 40,
                                   "killer": "s/slow"}) + "\n")
        moved = ("a", "oracle/x.c", 40, "delete", "text", "; /* deleted */")
        killers = mutate.earlier_killers(log, [moved])
        self.assertEqual(killers.first("oracle/x.c", 40, {"s/killer", "s/slow"}), ["s/killer"])
