"""sieve fuzz: the oracle and the faithful float32 port run clean (the port ranks its float32
probabilities, so rows whose probabilities underflow and tie come up); wrong ports are found,
through every op (filter, sample, uniform, position, speculate), and their minimal case names
the axis value when one explains every failing row kept; a
sampler whose batched path goes wrong only above 64 rows passes sieve run and is caught, shrunk
to a batch of 65; --save writes a fixture file that sieve run replays; an implementation that
crashes or writes debug lines is reported so and the run goes on; bad options are usage
errors."""

import json
import os
import re
import subprocess
import tempfile
import time

from sieve_cli import FAKES, ROOT

NONE = "no axis value alone gives"  # what a misreading's minimal case says
# Where no axis value explains a misreading, the generators' transcription of it names it.
NAMED = "of the misreadings of the seed (generators/readings.py)"
NAMES_ITS_READING = {"topp-inclusive-cumsum", "seed-low-32-bits", "decode-missing-plus-one"}
MUTANTS_FOUND = {"ge-boundary": "boundary=ge", "topk-keeps-ties": "topk_ties=keep_all",
                 "temperature-after-filters": "temperature_at=after",
                 "topk-first-renormalized": "topp_scope=after_topk",
                 "topp-inclusive-cumsum": NONE}

# Mutants whose bug shows in another op than filter, or only on rows of one family: the op (or
# family) that finds them, and what the minimal case says.
MUTANTS_BY_OP = {"raw-logprobs": ("--ops", "sample", "logprobs=scaled"),
                 "draw-ge": ("--ops", "sample", NONE),
                 "seed-low-32-bits": ("--ops", "uniform", NONE),
                 "decode-missing-plus-one": ("--ops", "position", NONE),
                 "spec-q-zero-rejects": ("--ops", "speculate", "spec_q_zero=reject"),
                 "spec-accept-le": ("--ops", "speculate", "spec_accept=le"),
                 "divide-by-temperature": ("--families", "collide", "temperature_op=divide")}


def fuzz(ctx, *args, env=None, timeout=600):
    return ctx.cmd("fuzz", *args, env=env, timeout=timeout)


def names_its_reading(ctx, name, stdout):
    """The first kind of failure's readings line names the mutant's misreading, with its count."""
    named = [line for line in stdout.splitlines() if "misreading" in line]
    ctx.check(f"... and the generators' transcription names its reading, {name}",
              named and NAMED in named[0] and re.search(rf": {name} gives \d+ of \d+: ", named[0]),
              "\n".join(named)[:600])


def verdicts(stdout):
    """The kinds of failure a fuzz report names, in its order."""
    return re.findall(r"^(kept set|token|value|key|error|malformed|batch|crash): ", stdout, re.M)


def untrusted(ctx, env):
    """A debug line before an answer, and a crash, are failures of their own; the run goes on,
    and the answers after them are judged against their own requests."""
    fake = f"exec:{ctx.python} {FAKES / 'debug-lines.py'}"
    p = fuzz(ctx, "--impl", fake, "--seed", "3", "--rows", "1000", "--ops", "uniform,position",
             env=env)
    summary = re.search(r"FAILED: (\d+) rows .* in (\d+) requests, .*, (\d+) failed", p.stdout)
    ctx.check("a debug line before every third uniform answer is a crash each time, and no answer "
              "after it is judged against another request",
              p.returncode == 1 and verdicts(p.stdout) == ["crash"] and summary
              and int(summary[1]) >= 1000 and int(summary[3]) > 3
              and "not a JSON object: debug" in p.stdout, p.stdout[-800:])
    p = fuzz(ctx, "--impl", fake, "--seed", "3", "--rows", "1000", "--ops", "filter", "--batch",
             "257", env=env)
    summary = re.search(r"FAILED: (\d+) rows .* in (\d+) requests", p.stdout)
    ctx.check("a crash on every filter batch above 64 rows is reported with its signal, and the "
              "run goes on to its rows", p.returncode == 1 and verdicts(p.stdout) == ["crash"]
              and "status 139" in p.stdout and summary and int(summary[1]) >= 1000,
              p.stdout[-800:])


def large_requests_end(ctx):
    """A request of more logits than the pipeline may hold (one row of 262,144 tokens, or any
    request beyond --max-logits) is asked and judged, and the run ends: it once waited forever,
    the next request held back until the one in hand was judged. The seed is on the output
    before the run ends."""
    for args in (["--vocab", "262144", "--rows", "5"], ["--max-logits", "10", "--rows", "300"]):
        try:
            p = fuzz(ctx, "--impl", "profile:deepinfer", "--seed", "5", *args, timeout=60)
            ok, out = p.returncode == 0 and "sieve fuzz passed" in p.stdout, p.stdout[-300:]
        except subprocess.TimeoutExpired:
            ok, out = False, "no end within 60 s"
        ctx.check(f"sieve fuzz {' '.join(args)} ends", ok, out)
    with tempfile.TemporaryFile("w+") as out:
        p = subprocess.Popen([str(ctx.sieve), "fuzz", "--impl", "profile:deepinfer", "--seed",
                              "8", "--time", "60"], stdout=out)
        time.sleep(2)
        p.kill()
        p.wait()
        out.seek(0)
        first = out.readline()
    ctx.check("the seed is written out first, before the run ends, even into a file",
              first.startswith("sieve fuzz: seed 8,"), first)


def reproducible(ctx, first):
    """The report of a seed and a row count is the same on every run, although the requests are
    made, asked and judged on threads of their own: only its seconds differ. `first` is the
    report of topp-inclusive-cumsum, --seed 7 --rows 3000 (checks())."""
    again = fuzz(ctx, "--impl", f"lib:{ctx.mutants}/libtopp-inclusive-cumsum.so", "--seed", "7",
                 "--rows", "3000")
    texts = [re.sub(r"[0-9.]+ s\b|after [0-9.]+", "", p.stdout) for p in (first, again)]
    ctx.check("a seed and a row count give the same report, failures, minimal cases, hints and "
              "readings, on every run", first.returncode == 1 and texts[0] == texts[1]
              and "topp-inclusive-cumsum gives" in texts[0], texts[0][-400:] + texts[1][-400:])


def checks(ctx):
    for impl, rows in (("profile:deepinfer", "5000"),
                       (f"lib:{ctx.mutants}-f32/libport-faithful.so", "8000")):
        p = fuzz(ctx, "--impl", impl, "--seed", "11", "--rows", rows)
        ctx.check(f"sieve fuzz of {impl} passes {rows} random rows, some within float reach",
                  p.returncode == 0 and "sieve fuzz passed" in p.stdout, p.stdout[-600:])
    p = fuzz(ctx, "--impl", f"lib:{ctx.mutants}-f32/libport-faithful.so", "--seed", "5",
             "--rows", "3000", "--families", "underflow", "--vocab", "4,17,129")
    ctx.check("the faithful float32 port passes rows whose float32 probabilities underflow and "
              "tie", p.returncode == 0 and re.search(r", [1-9]\d* within float reach", p.stdout),
              p.stdout[-400:])
    for name, value in MUTANTS_FOUND.items():
        # A misreading is told from the axis values by many failing rows, the rest by the first.
        length = ("--rows", "3000") if value.startswith("no ") else ("--time", "30", "--first")
        p = fuzz(ctx, "--impl", f"lib:{ctx.mutants}/lib{name}.so", "--seed", "7", *length)
        said = value if value.startswith("no ") else f"of the axis values, {value} gives"
        ctx.check(f"sieve fuzz finds mutant {name} and its minimal case says: {said}",
                  p.returncode == 1 and said in p.stdout, p.stdout[-600:])
        if name in NAMES_ITS_READING:
            names_its_reading(ctx, name, p.stdout)
        # The second run asks the same requests of the same code: the plain build runs it.
        if name == "topp-inclusive-cumsum" and not ctx.sanitized:
            reproducible(ctx, p)
    for name, (option, value, said) in MUTANTS_BY_OP.items():
        p = fuzz(ctx, "--impl", f"lib:{ctx.mutants}/lib{name}.so", "--seed", "1", "--time", "30",
                 "--first", option, value)
        hint = [line for line in p.stdout.splitlines() if "axis value" in line]
        ctx.check(f"sieve fuzz {option} {value} finds mutant {name} and its minimal case says "
                  f"{said}", p.returncode == 1 and hint and said in hint[0], p.stdout[-600:])
        if name in NAMES_ITS_READING:
            names_its_reading(ctx, name, p.stdout)
        if value == "uniform":
            request = re.search(r"^  request: (.*)$", p.stdout, re.M)
            items = json.loads(request[1])["items"] if request else []
            ctx.check("... and its uniform request shrinks to the one item that fails alone",
                      len(items) == 1, p.stdout[-600:])
    p = fuzz(ctx, "--impl", "rule:boundary=ge,topk_ties=keep_all", "--seed", "4", "--rows",
             "3000", "--ops", "filter")
    ctx.check("two departures at once are named together, not as a choice sieve has no name for",
              p.returncode == 1 and "two together do: boundary=ge with topk_ties=keep_all"
              in p.stdout, p.stdout[-600:])
    large_requests_end(ctx)
    env = dict(os.environ, SIEVE_BIN=str(ctx.sieve))
    untrusted(ctx, env)
    fake = f"exec:{ctx.python} {FAKES / 'drops-top-p-above-64.py'}"
    status, report, err = ctx.run(fake, "--suite", "ordering", env=env)
    ctx.check("a sampler that drops top_p in batches above 64 rows passes sieve run",
              status == 0, f"exit {status} {err[-300:]}")
    with tempfile.TemporaryDirectory() as tmp:
        p = fuzz(ctx, "--impl", fake, "--seed", "3", "--rows", "1100", "--batch", "1024",
                 "--ops", "filter", "--vocab", "2,3,17", "--save", tmp, env=env)
        ctx.check("sieve fuzz catches it and shrinks it to a batch of 65 rows naming "
                  "topp_scope=ignored", p.returncode == 1 and "row 0 of a batch of 65" in p.stdout
                  and "of the axis values, topp_scope=ignored gives" in p.stdout, p.stdout[-800:])
        saved = os.path.join(tmp, "fuzz-3.json")
        cases = json.load(open(saved))["cases"] if os.path.exists(saved) else []
        # The saved cases' family alone: without it the statistical suites, which need no
        # fixtures, would run too, and they replay nothing.
        replay = ctx.cmd("run", "--impl", fake, "--fixtures", saved, "--family", "fuzz", env=env)
        oracle = ctx.cmd("run", "--impl", "profile:deepinfer", "--fixtures", saved, "--family",
                         "fuzz")
        ctx.check("--save writes the minimal cases as fixtures: sieve run replays them, failing "
                  "the fake and passing the oracle",
                  cases and replay.returncode == 1 and oracle.returncode == 0,
                  f"{len(cases)} cases, exit {replay.returncode}/{oracle.returncode} "
                  f"{replay.stdout[-300:]} {oracle.stdout[-300:]}")
    batched = f"exec:{ctx.python} {ROOT / 'harness' / 'adapters' / 'python_batched_adapter.py'}"
    status, _, err = ctx.run(batched, "--suite", "ordering,params,special-values")
    p = fuzz(ctx, "--impl", batched, "--seed", "9", "--rows", "3000")
    ctx.check("the batched template (DeepInfer's rule in float32 PyTorch) passes sieve run and "
              "sieve fuzz", status == 0 and p.returncode == 0, f"exit {status} {err[-200:]} "
              f"{p.stdout[-400:]}")
    planted = f"exec:{ctx.python} {FAKES / 'batched-shared-top-p.py'}"
    status, _, err = ctx.run(planted, "--suite", "ordering,params")
    p = fuzz(ctx, "--impl", planted, "--seed", "4", "--batch", "1,257", "--vocab", "17", "--time",
             "60", "--first")
    ctx.check("with a bug planted above 64 rows it passes sieve run, and sieve fuzz catches it "
              "in a batch of 65 rows", status == 0 and p.returncode == 1
              and "of a batch of 65," in p.stdout, f"exit {status} {p.stdout[-600:]}")
    huge = f"exec:{ctx.python} {FAKES / 'huge-max-batch.py'}"
    p = fuzz(ctx, "--impl", huge, "--rows", "2000", "--seed", "2", env=env)
    ctx.check("a hello claiming a largest batch of 1e30 rows is held to 1024 and the run ends",
              p.returncode == 0 and "sieve fuzz passed" in p.stdout, p.stdout[-300:])
    logits = {}
    for shard in ("", "0/2", "1/2"):
        p = fuzz(ctx, "--impl", "profile:deepinfer", "--seed", "21", "--rows", "400",
                 *(("--shard", shard) if shard else ()))
        found = re.search(r"\((\d+) logits\)", p.stdout)
        logits[shard] = found.group(1) if found and p.returncode == 0 else p.stdout[-200:]
    ctx.check("--shard I/N asks other rows in each shard (shard 0 the seed's own) and says so",
              logits[""] == logits["0/2"] != logits["1/2"] and "--shard 1/2" in p.stdout,
              str(logits))
    for bad in (["--ops", "draw"], ["--shard", "2/2"], ["--rows", "0"], ["--families", "none"],
                ["--against", "exec:x"], ["--rows", "5", "--time", "5"], ["--jobs", "0"]):
        p = fuzz(ctx, "--impl", "profile:deepinfer", *bad)
        ctx.check(f"sieve fuzz {' '.join(bad)} is a usage error", p.returncode == 2,
                  p.stderr[-200:])
