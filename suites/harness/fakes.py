"""Implementations that break, and the harness that survives them: every fake of
suites/mutants/fakes/ (crash, hang, garbage, wrong lengths, NaN, stale answers, answers that
change in a batch, ...) and every library of broken_lib.c (which breaks the shared-library ABI)
gets a clean report, exit status 1 with the outcomes it deserves, or a harness error (exit 2)
naming why; the Python template reports its user's exceptions; an interrupted run ends its
implementations and leaves its report file as it was."""

import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from sieve_cli import FAKES, catalogue, outcomes

FAKE_OUTCOMES = {
    "crashes-after-hello.sh": "crash", "closes-stdout.sh": "crash",
    "wrong-length.sh": "fail", "nan-logprobs.sh": "fail", "extra-lines.sh": "fail",
    "exits-after-hello.sh": "crash",
}
# Fakes that cannot be greeted: a harness error (exit 2, no report) whose message names why.
UNGREETED = {
    "exits-at-once.sh": "exited with status 3", "garbage.sh": "did not answer hello",
    "hangs.sh": "did not answer hello", "stderr-only.sh": "stderr-only: got a request",
    "bad-precision.sh": "fp16", "protocol-2.sh": "hello answered protocol 2",
    "protocol-none.sh": "has no \"protocol\"", "protocol-string.sh": "protocol \"v1\"",
}


def fakes_report_cleanly(ctx):
    for fake, expected in FAKE_OUTCOMES.items():
        status, report, err = ctx.run(f"exec:{FAKES / fake}", "--suite", "smoke", "--timeout",
                                      "2", env=ctx.env())
        kinds = set(outcomes(report).values()) if report else set()
        ctx.check(f"fake {fake} gets a clean report with {expected} outcomes",
                  status == 1 and expected in kinds and "Traceback" not in err,
                  f"exit {status}, outcomes {kinds}, stderr {err[-200:]}")
        if fake == "nan-logprobs.sh":
            unnamed = [c["detail"][:120] for c in (report or {}).get("cases", [])
                       if c["outcome"] == "fail" and "got NaN" not in c["detail"]
                       or "kept" in c["detail"] and "NaN at {" not in c["detail"]]
            ctx.check("fake nan-logprobs.sh: each failure says it got NaN, and a kept set names "
                      "the NaN ids apart from the kept ones", report and not unnamed,
                      f"{unnamed[:2]}")
    for fake, words in UNGREETED.items():
        status, report, err = ctx.run(f"exec:{FAKES / fake}", "--suite", "smoke", "--timeout",
                                      "2", env=ctx.env())
        ctx.check(f"fake {fake} is a harness error (exit 2) naming why: {words}",
                  status == 2 and report is None and words in err and "Traceback" not in err,
                  f"exit {status}, stderr {err[-300:]}")


def batches_find_what_changes_in_a_batch(ctx):
    """An answer that changes with the case's place in a batch fails as nondeterministic in the
    second pass; --no-batches leaves that pass out, and the report says so."""
    impl = f"exec:{ctx.python} {FAKES / 'batch-sensitive.py'}"
    status, report, err = ctx.run(impl, "--suite", "ordering", env=ctx.env())
    failed = [c for c in (report or {}).get("cases", []) if c["outcome"] == "fail"]
    ctx.check("an answer that changes in a batch fails its case as nondeterministic",
              status == 1 and failed and all(c["detail"].startswith("nondeterministic: the "
                                                                    "answer changed at row")
                                             for c in failed),
              f"exit {status}, {len(failed)} failed: {[c['detail'][:80] for c in failed[:2]]}")
    alone = ctx.cmd("run", "--impl", impl, "--suite", "ordering", "--no-batches", env=ctx.env())
    ctx.check("--no-batches sends each case alone only, and the report says batches were not sent",
              alone.returncode == 0 and "--no-batches" in alone.stdout,
              f"exit {alone.returncode}: {alone.stdout[:300]}")


# Libraries that break the ABI (broken_lib.c), the "broken:" entries of catalogue.json: the
# outcome each case of theirs gets that the oracle passes, and words its detail must hold.
def broken_libraries(ctx):
    broken = {name[len("broken:"):]: (e["outcome"], e["detail"])
              for name, e in catalogue().items() if name.startswith("broken:")}
    # Under make test SAN=1, ASan would catch the segfault and exit 1; the check is about how
    # sieve reports a child killed by a signal, so the child is left to die by it.
    no_segv_handler = dict(os.environ, ASAN_OPTIONS=":".join(
        filter(None, [os.environ.get("ASAN_OPTIONS"), "handle_segv=0"])))
    for name, (outcome, words) in broken.items():
        lib = f"{ctx.mutants}/libbroken-{name}.so"
        status, report, err = ctx.run(f"lib:{lib}", "--suite", "smoke", "--timeout", "5",
                                      env=no_segv_handler)
        if outcome == "harness error":  # the library cannot be loaded: nothing answers hello
            ctx.check(f"lib:{Path(lib).name} is a harness error (exit 2): \"{words}\"",
                      status == 2 and report is None and words in err,
                      f"exit {status}, {err[-300:]}")
            continue
        cases = report["cases"] if report else []
        hit = [c for c in cases if c["outcome"] == outcome and words in c["detail"]]
        wrong = [c["id"] for c in cases if c["outcome"] not in ("pass", "skip", outcome)]
        ctx.check(f"lib:{Path(lib).name} gets a clean report: {outcome}, \"{words}\"",
                  status == 1 and hit and not wrong and "ERROR: AddressSanitizer" not in err,
                  f"exit {status}, {len(hit)} cases with it, other outcomes {wrong[:3]}, "
                  f"stderr {err[-300:]}")
    status, report, err = ctx.run("lib:/nonexistent/libsampler.so", "--suite", "smoke")
    ctx.check("lib: of a missing file is a harness error (exit 2), naming the file and why",
              status == 2 and report is None and "cannot load /nonexistent/libsampler.so" in err
              and "No such file" in err, f"exit {status}, stderr {err[-200:]}")


def python_template_traps(ctx):
    """The Python template converts protocol values before the user's function sees them, and
    reports the user's own exception with its type and message; a crash's stderr keeps its
    last line."""
    adapter = Path(ctx.py_adapter)
    p = subprocess.run([ctx.python, str(adapter)], capture_output=True, text=True,
                       input='{"op":"filter","rows":[{"logits":[1,2,3],"params":{"top_k":2.0}}]}\n')
    ctx.check("python_adapter.py takes top_k 2.0 as the integer 2", '"logprobs": [null' in p.stdout,
              p.stdout[:200] + p.stderr[-200:])
    with tempfile.TemporaryDirectory() as tmp:
        broken = Path(tmp) / "broken.py"
        broken.write_text(adapter.read_text().replace(
            "    scaled = logits * (1.0 / temperature)  # a float32 multiply by 1/T",
            "    raise ZeroDivisionError('my sampler broke')"))
        _, report, _ = ctx.run(f"exec:{ctx.python} {broken}", "--suite", "smoke")
        details = [c["detail"] for c in report["cases"] if c["outcome"] == "error"]
        ctx.check("an exception in the user's function is reported with its type and message",
                  details and all("ZeroDivisionError: my sampler broke" in d for d in details),
                  str(details[:1]))
        loud = Path(tmp) / "loud.py"
        loud.write_text("import os, sys\nsys.stdin.readline()\n"
                        "os.write(2, b'x' * 5000 + b'\\nFinalError: the last line\\n')\n")
        status, _, err = ctx.run(f"exec:{ctx.python} {loud}", "--suite", "smoke")
        ctx.check("a crashed implementation's stderr keeps its last line", status == 2
                  and "FinalError: the last line" in err, f"exit {status}: {err[-200:]}")


def processes(parent=None, group=None):
    """The pids whose parent (or process group) is the one given, from /proc."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == parent or int(fields[2]) == group:
            found.append(int(entry))
    return found


def signals_end_children(ctx, signum, tmp):
    """An interrupted run ends its implementation processes (they lead their own process groups,
    out of reach of the terminal, so sieve must kill them; fakes/hangs.sh never answers) and
    leaves its --output file as it was."""
    report = Path(tmp) / "report.json"
    report.write_text("the previous report\n")
    p = subprocess.Popen([ctx.sieve, "run", "--impl", f"exec:{FAKES / 'hangs.sh'}",
                          "--suite", "smoke", "--timeout", "600", "--format", "json",
                          "--output", str(report)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    groups = []
    for _ in range(100):
        groups = processes(parent=p.pid)  # each child leads its own group
        if groups and all(processes(group=g) for g in groups):
            break
        time.sleep(0.05)
    members = [m for g in groups for m in processes(group=g)]
    p.send_signal(signum)
    p.wait(timeout=30)
    alive = []
    for _ in range(100):
        alive = [m for g in groups for m in processes(group=g)]
        if not alive:
            break
        time.sleep(0.05)
    for g in groups:
        if alive:
            os.killpg(g, signal.SIGKILL)
    name = signal.Signals(signum).name
    ctx.check(f"{name} to sieve run ends its implementation processes and sieve with {name}",
              members and not alive and p.returncode == -signum,
              f"processes {members}, still alive {alive}, sieve exit {p.returncode}")
    ctx.check(f"{name} to sieve run leaves its --output file as it was and no temporary beside it",
              report.read_text() == "the previous report\n" and os.listdir(tmp) == ["report.json"],
              f"files {os.listdir(tmp)}")


def checks(ctx):
    fakes_report_cleanly(ctx)
    batches_find_what_changes_in_a_batch(ctx)
    broken_libraries(ctx)
    python_template_traps(ctx)
    for signum in (signal.SIGINT, signal.SIGTERM):
        with tempfile.TemporaryDirectory() as tmp:
            signals_end_children(ctx, signum, tmp)
