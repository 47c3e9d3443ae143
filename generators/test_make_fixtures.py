"""make fixtures is all-or-nothing: interrupted while writing, it leaves fixtures/ as it was.

Each test runs make_fixtures.py in a child process with --out pointing at a scratch folder
that holds an older set of files, and interrupts it from inside its own writes (the second
os.fsync sends the signal to the process itself), so the signal lands after one temporary
file is complete and before any rename, every time. The child builds one small family: the
writes are the same whatever the cases (make check-fixtures builds them all).
"""

import math
import os
import signal
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
NAMES = ("sieve-fixtures.json", "README.md", "retired-ids.txt")

# The child takes SIGINT as a terminal's Ctrl-C would reach it, even when make test runs in the
# background, where the shell started it with SIGINT ignored.
CHILD = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
sys.path.insert(0, {here!r})
import make_fixtures
make_fixtures.ALL = [m for m in make_fixtures.ALL if m.FAMILY == "positions"]
real_fsync, calls = os.fsync, []
def fsync_then_signal(fd):
    real_fsync(fd)
    calls.append(fd)
    if len(calls) == 2 and {signum}:
        os.kill(os.getpid(), {signum})
os.fsync = fsync_then_signal
sys.argv = ["make_fixtures.py", "--out", {out!r}]
sys.exit(make_fixtures.main())
"""


class Interrupted(unittest.TestCase):
    def interrupt_with(self, signum):
        with tempfile.TemporaryDirectory() as out:
            before = {name: f"# an older {name}\n" for name in NAMES}
            before[NAMES[0]] = '{"cases": [], "note": "an older set"}\n'
            for name in NAMES:
                Path(out, name).write_text(before[name])
            code = CHILD.format(here=str(HERE), signum=int(signum), out=out)
            done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  timeout=300)
            after = {name: Path(out, name).read_text() for name in NAMES}
            left = sorted(os.listdir(out))
        return done, before, after, left

    def check(self, signum, want_status):
        done, before, after, left = self.interrupt_with(signum)
        self.assertEqual(done.returncode, want_status, done.stderr[-2000:])
        self.assertEqual(after, before, "an interrupted run changed fixtures/")
        self.assertEqual(left, sorted(NAMES), "an interrupted run left temporary files")

    def test_sigterm_leaves_every_file_as_it_was_and_no_temporary(self):
        self.check(signal.SIGTERM, 128 + signal.SIGTERM)

    def test_sighup_leaves_every_file_as_it_was_and_no_temporary(self):
        self.check(signal.SIGHUP, 128 + signal.SIGHUP)

    def test_ctrl_c_leaves_every_file_as_it_was_and_no_temporary(self):
        done, before, after, left = self.interrupt_with(signal.SIGINT)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("KeyboardInterrupt", done.stderr)
        self.assertEqual(after, before)
        self.assertEqual(left, sorted(NAMES))

    def test_an_uninterrupted_run_replaces_the_three_files(self):
        with tempfile.TemporaryDirectory() as out:
            code = CHILD.format(here=str(HERE), signum=0, out=out)
            done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                  timeout=300)
            self.assertEqual(done.returncode, 0, done.stderr[-2000:])
            self.assertEqual(sorted(os.listdir(out)), sorted(NAMES))
            for name in NAMES:
                self.assertEqual(oct(os.stat(Path(out, name)).st_mode & 0o777), "0o644")



class RetiredIds(unittest.TestCase):
    """An id retires only when the case was in git's HEAD (make_fixtures.committed_cases)."""

    def test_a_case_made_and_dropped_before_a_commit_does_not_retire_its_id(self):
        sys.path.insert(0, str(HERE))
        import make_fixtures as mf
        with tempfile.TemporaryDirectory() as repo:
            folder = Path(repo, "fixtures")
            folder.mkdir()
            case = lambda i: {"id": i, "family": "f", "suite": "s"}  # noqa: E731
            Path(folder, mf.DATA).write_text('{"cases": [%s]}' % '{"id": "f/committed"}')
            git = ["git", "-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"]
            subprocess.run(git[:3] + ["init", "-q"], check=True)
            subprocess.run(git + ["add", "."], check=True)
            subprocess.run(git + ["commit", "-qm", "fixtures"], check=True)
            Path(folder, mf.DATA).write_text(
                '{"cases": [{"id": "f/committed"}, {"id": "f/never-committed"}]}')
            committed = mf.committed_cases(folder, Path(repo))
            self.assertEqual([c["id"] for c in committed], ["f/committed"])
            mf.write_all(folder, [], [case("f/kept")], committed)
            self.assertEqual(mf.read_retired(folder), ["f/committed"])

    def test_outside_a_git_checkout_the_file_on_disk_stands_in(self):
        sys.path.insert(0, str(HERE))
        import make_fixtures as mf
        with tempfile.TemporaryDirectory() as out:
            Path(out, mf.DATA).write_text('{"cases": [{"id": "f/on-disk"}]}')
            self.assertEqual([c["id"] for c in mf.committed_cases(Path(out), Path(out))],
                             ["f/on-disk"])



class Separations(unittest.TestCase):
    """A case that does not separate what it claims is refused, naming the case and readings."""

    def setUp(self):
        sys.path.insert(0, str(HERE))
        import fixture_format
        self.ff = fixture_format

    def logits(self, probs):
        return [math.log(p) for p in probs]

    def test_a_case_whose_claimed_reading_gives_the_rules_answer_is_refused(self):
        # top_k 4 of 4 keeps everything, so top-p after top-k is top-p on the full distribution.
        with self.assertRaises(self.ff.NotSeparating) as caught:
            self.ff.filter_case("ordering/x", "ordering", "000:25-28", "d",
                                self.logits((0.45, 0.25, 0.2, 0.1)), top_p=0.72, top_k=4,
                                axis="topp_scope", separates=("topk-first-renormalized",))
        self.assertIn("ordering/x claims to separate topk-first-renormalized", str(caught.exception))

    def test_a_case_that_separates_nothing_of_its_axis_is_refused(self):
        with self.assertRaises(self.ff.NotSeparating) as caught:
            self.ff.filter_case("ordering/y", "ordering", "000:25-28", "d",
                                self.logits((0.5, 0.3, 0.2)), top_p=1.0, top_k=-1,
                                axis="topp_scope")
        self.assertIn("ordering/y claims axis topp_scope, but none of its readings "
                      "(topk-first-renormalized, topp_scope=ignored)", str(caught.exception))

    def test_the_order_example_separates_what_it_claims(self):
        c = self.ff.filter_case("ordering/z", "ordering", "000:25-28", "d",
                                self.logits((0.5, 0.3, 0.2)), top_p=0.55, top_k=2,
                                axis="topp_scope", separates=("topk-first-renormalized",))
        self.assertIn("topk-first-renormalized", [r["name"] for r in c["readings"]])



class Descriptions(unittest.TestCase):
    """The lint of make check-fixtures: a description is a fact of at most 120 characters."""

    def test_long_and_modal_descriptions_are_problems_and_facts_are_not(self):
        sys.path.insert(0, str(HERE))
        import make_fixtures as mf
        self.assertEqual(mf.description_problems("f/ok", "top_k 2 keeps 2 tokens."), [])
        self.assertIn("121 characters", mf.description_problems("f/long", "x" * 121)[0])
        self.assertIn('says "would"', mf.description_problems("f/m", ">= would keep 1.")[0])
        self.assertEqual(mf.description_problems("f/w", "the window keeps 1."), [])


if __name__ == "__main__":
    unittest.main()


class SemanticDiff(unittest.TestCase):
    def test_names_a_case_whose_axis_alone_changed(self):
        sys.path.insert(0, str(HERE))
        import make_fixtures
        old = {"id": "f/c", "axis": "topk_ties", "request": {}, "expect": {}}
        self.assertEqual(make_fixtures.semantic_diff([old], [{**old, "axis": "none"}]),
                         ['changed f/c: axis: "topk_ties" -> "none"'])
