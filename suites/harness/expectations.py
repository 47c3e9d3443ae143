"""Expectation files (harness/CI.md): a file listing every failure makes the run pass, a failure
it misses or a listed case that now passes fails it, another schema or an id that is no case is a
harness error naming it, reasons and issues show in the report, and --write-expect and
--update-expect write the file the run gives. The gate notices a listed failure whose answer
changed, and does not invite the removal of one that passes while new failures may hide it."""

import json
import tempfile
from pathlib import Path


def checks(ctx):
    changed_and_masked(ctx)
    impl = f"lib:{ctx.mutants}/libge-boundary.so"
    failing, passing = ctx.failing_and_passing(impl, "ordering")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "expect.json"

        def status_with(ids, schema="sieve-fixtures/2"):
            path.write_text(json.dumps({"schema": schema, "expected_failures":
                                        {i: "known" for i in ids}}))
            return ctx.run(impl, "--suite", "ordering", "--expect", str(path))[0]

        ctx.check("an expectation file listing every failure makes the run pass",
                  status_with(failing) == 0)
        ctx.check("a failure missing from the expectation file fails the run",
                  status_with(failing[1:]) == 1)
        ctx.check("an expected failure that now passes fails the run",
                  status_with(failing + [passing]) == 1)
        ctx.check("an expectation file for another fixture schema is a harness error (exit 2)",
                  status_with(failing, "sieve-fixtures/0") == 2)
        ctx.check("an expectation file written for sieve-fixtures/1 (the same ids) is still read",
                  status_with(failing, "sieve-fixtures/1") == 0)
        typo = failing[0] + "x"
        path.write_text(json.dumps({"schema": "sieve-fixtures/2", "expected_failures":
                                    {i: "known" for i in failing + [typo]}}))
        p = ctx.cmd("run", "--impl", impl, "--suite", "ordering", "--expect", str(path))
        ctx.check("an expectation file naming an id that is no case is a harness error naming it",
                  p.returncode == 2 and typo in p.stderr, f"exit {p.returncode}: {p.stderr[-300:]}")
        path.write_text(json.dumps({"schema": "sieve-fixtures/2", "expected_failures": {
            failing[0]: {"reason": "we use >=", "issue": "https://example.org/issues/1"},
            **{i: "known" for i in failing[1:]}}}))
        _, report, _ = ctx.run(impl, "--suite", "ordering", "--expect", str(path))
        note = next(c for c in report["cases"] if c["id"] == failing[0]).get("expected_note")
        ctx.check("an expectation may give a reason and an issue, which the report shows",
                  note == "we use >= (https://example.org/issues/1)", f"note {note!r}")
        written = Path(tmp) / "written.json"
        status, _, err = ctx.run(impl, "--suite", "ordering", "--expect", str(path),
                                 "--write-expect", str(written))
        entries = json.loads(written.read_text())["expected_failures"]
        ctx.check("--write-expect lists every failure, keeps --expect's notes and exits 0",
                  status == 0 and sorted(entries) == sorted(failing)
                  and entries[failing[0]]["issue"] == "https://example.org/issues/1",
                  f"exit {status}, {len(entries)} entries, {err[-200:]}")
        fresh = Path(tmp) / "fresh.json"
        ctx.run(impl, "--suite", "ordering", "--write-expect", str(fresh))
        reasons = json.loads(fresh.read_text())["expected_failures"].values()
        ctx.check("--write-expect gives each new failure what the fit explains it by as reason, "
                  "and a digest of its answer",
                  reasons and all(r["reason"] == "fail: explained by [boundary=ge]"
                                  and len(r["answer"]) == 16 for r in reasons),
                  str(list(reasons)[:2]))
        path.write_text(json.dumps({"schema": "sieve-fixtures/2", "expected_failures":
                                    {i: "known" for i in failing + [passing]}}))
        status, _, err = ctx.run(impl, "--suite", "ordering", "--expect", str(path),
                                 "--update-expect")
        kept = json.loads(path.read_text())["expected_failures"]
        ctx.check("--update-expect removes the case that now passes, says which, and keeps the rest",
                  status == 0 and passing not in kept and sorted(kept) == sorted(failing)
                  and f"removed (they now pass): {passing} " in err,
                  f"exit {status}, {len(kept)} kept, {err[-200:]}")


def changed_and_masked(ctx):
    """Written for keep-all ties and >=, the file meets >= with the highest tied ids: the boundary
    failures change their answers, and the tie cases pass, hidden by the new failures."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "expect.json"
        args = ("--suite", "ordering", "--no-batches")
        ctx.run("rule:topk_ties=keep_all,boundary=ge", *args, "--write-expect", str(path))
        written = json.loads(path.read_text())
        now = "rule:boundary=ge,topp_ties=highest"
        status, report, err = ctx.run(now, *args, "--expect", str(path))
        cases = {c["id"]: c for c in report["cases"]}
        changed = [i for i, c in cases.items() if c.get("changed")]
        masked = [i for i, c in cases.items() if c.get("masked")]
        ctx.check("a listed failure whose answer changed fails the run, named as changed",
                  status == 1 and changed and all(cases[i]["outcome"] == "fail" for i in changed)
                  and "answer changed" in cases[changed[0]]["detail"] + err,
                  f"exit {status}, changed {changed[:3]}")
        lines = [line for line in err.splitlines() if line.startswith("unexpected ")]
        first_pass = next((k for k, line in enumerate(lines) if line.startswith("unexpected pass")),
                          len(lines))
        ctx.check("a listed case that passes while new failures appear is possibly masked, not "
                  "to be removed, and the new failures come first",
                  masked and all(not line.startswith("unexpected pass") for line in
                                 lines[:first_pass]) and "remove it" not in err
                  and "possibly masked" in ctx.cmd("run", "--impl", now, *args, "--expect",
                                                   str(path)).stdout,
                  f"masked {masked[:3]}, {lines[:3]}")
        ctx.run(now, *args, "--expect", str(path), "--update-expect")
        kept = json.loads(path.read_text())["expected_failures"]
        ctx.check("--update-expect keeps the possibly masked entries and the changed ones",
                  all(i in kept for i in masked + changed)
                  and all(kept[i]["answer"] == written["expected_failures"][i]["answer"]
                          for i in changed), f"{len(kept)} kept")
        _, _, err = ctx.run(now, *args, "--expect", str(path), "--update-expect", "--force")
        kept = json.loads(path.read_text())["expected_failures"]
        ctx.check("--update-expect --force removes them", not any(i in kept for i in masked),
                  err[-200:])
        path.write_text(json.dumps({"schema": "sieve-fixtures/2", "expected_failures":
                                    {changed[0]: {"reason": "r", "answer": "xyz"}}}))
        p = ctx.cmd("run", "--impl", now, *args, "--expect", str(path))
        ctx.check("an answer digest that is not 16 hex digits is a harness error naming the file",
                  p.returncode == 2 and str(path) in p.stderr, p.stderr[-200:])
