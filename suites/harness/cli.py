"""The command line: every subcommand has its usage and one form of usage error (exit 2, naming
the argument at fault); --suite, --family and --case select the union of what they name and
--shard partitions it; files sieve run cannot use are refused before the first case; sieve case
replays a case and sieve explain shows one, with an implementation's answer judged as sieve run
judges it; a CI log gets plain progress lines."""

import json
import os
import re
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

from sieve_cli import FAKES, outcomes

SUBCOMMANDS = ("serve", "run", "fingerprint", "diff", "explain", "case", "profiles", "axes")


def usage_errors(ctx):
    for args in (["--impl", "nonsense"], ["--impl", "profile:nope"], ["--suite", "x"],
                 ["--impl", "profile:deepinfer", "--shard", "4/3"],
                 ["--impl", "profile:deepinfer", "--format", "yaml"],
                 ["--impl", "profile:deepinfer", "--fixtures", "/nonexistent.json"]):
        status = ctx.cmd("run", *args).returncode
        ctx.check(f"sieve run {' '.join(args)} exits 2", status == 2, f"exit {status}")
    listing = ctx.cmd("--help").stdout
    ctx.check("sieve --help lists every subcommand of the dispatch table",
              all(f"sieve {sub} " in listing for sub in SUBCOMMANDS), listing[:300])
    for sub in SUBCOMMANDS:
        p = ctx.cmd(sub, "--help")
        ctx.check(f"sieve {sub} --help prints its usage and exits 0",
                  p.returncode == 0 and p.stdout.startswith("usage: sieve " + sub), p.stdout[:120])
    for args, named in ((["serve", "--rule", "nope=1"], "'nope'"),
                        (["serve", "--rule", "boundary=lt"], "'lt' of boundary (gt, ge)"),
                        (["serve", "--lib", "x.so", "--profile", "vllm"], "--lib serves the library"),
                        (["fingerprint", "--impl", "profile:vllm", "--bogus", "1"], "'--bogus'"),
                        (["fingerprint", "--impl", "profile:vllm", "--profile", "nosuch"],
                         "'nosuch'"),
                        (["fingerprint", "--impl", "profile:vllm", "--timeout", "0"], "'0'"),
                        (["diff", "profile:vllm", "profile:sglang", "--format", "xml"], "'xml'"),
                        (["diff", "profile:vllm", "profile:sglang", "--suite", "ordring"],
                         "'ordring'"),
                        (["diff", "a", "b", "c"], "'c'"), (["profiles", "--x"], "'--x'"),
                        (["axes", "--format=yaml"], "'yaml'"), (["case", "--request=1"],
                                                                "'--request=1'"),
                        (["explain", "--svg"], "'--svg'"),
                        (["explain", "--logits", "1,x"], "'1,x'"),
                        (["explain", "--logits", "1,2", "--top-k", "two"], "'two'"),
                        (["explain", "ties/exact-tie-5-top-k-2", "--top-p", "0.5"],
                         "a case has its own parameters"),
                        (["explain", "ties/exact-tie-5-top-k-2", "--logits", "1,2"], "not both"),
                        (["explain", "--logits", "1,2,"], "'1,2,'"),
                        (["run", "--impl", "profile:vllm", "--impl", "profile:sglang"],
                         "given twice: '--impl'"),
                        (["run", "--impl", "profile:deepinfer", "--format", "xml"],
                         "--format is text|json|markdown|junit|tap|html, not 'xml'"),
                        (["run", "--impl", ""], "not ''"),
                        (["run", "--impl", "profile:deepinfer", "--jobs", "0"], "'0'"),
                        (["nonsense"], "'nonsense'")):
        p = ctx.cmd(*args)
        usage = args[0] == "nonsense" or f"usage: sieve {args[0]}" in p.stderr
        ctx.check(f"sieve {' '.join(args)} exits 2 naming {named}, with the usage",
                  p.returncode == 2 and named in p.stderr and usage,
                  f"exit {p.returncode}: {p.stderr[:200]}")
    inline = ctx.cmd("run", "--impl=profile:deepinfer", "--suite=position", "--format=tap")
    ctx.check("options take their value after '=' as well", inline.returncode == 0
              and inline.stdout.startswith("TAP version 13"), inline.stderr[-200:])
    seed = ctx.cmd("explain", "--logits", "2,1,0.5", "--seed", "18446744073709551615",
                   "--position", "3")
    ctx.check("sieve explain takes a seed up to 2^64 - 1", seed.returncode == 0
              and "draw: u = " in seed.stdout, seed.stderr[-200:])
    smoke = ctx.cmd("run", "--impl", "profile:deepinfer", "--suite", "smoke")
    ctx.check("a smoke run says it is no verdict on the sampler", smoke.returncode == 0
              and "the smoke suite checks that the implementation answers" in smoke.stdout,
              smoke.stdout[-300:])


def shards(ctx):
    args = ("--suite", "params,position")
    whole = set(outcomes(ctx.run("profile:deepinfer", *args)[1]))
    parts = [set(outcomes(ctx.run("profile:deepinfer", *args, "--shard", f"{i}/3")[1]))
             for i in (1, 2, 3)]
    disjoint = all(not (parts[a] & parts[b]) for a in range(3) for b in range(a + 1, 3))
    ctx.check("--shard 1/3, 2/3, 3/3 partition the run", set().union(*parts) == whole and disjoint,
              f"{len(whole)} cases, shards {[len(p) for p in parts]}")


def selection_and_replay(ctx):
    """--suite, --family and --case select the union of what they name; a family or glob that
    selects nothing is a harness error; sieve case prints a case and its request for replay;
    sieve explain --impl judges an implementation's answer to one case as sieve run does, and
    names the departures the fit finds for it."""
    def ids(*args):
        status, report, err = ctx.run("profile:deepinfer", *args)
        return status, {c["id"] for c in report["cases"]} if report else set(), err
    _, ordering, _ = ids("--suite", "ordering")
    _, smoke, _ = ids("--suite", "smoke")
    _, both, _ = ids("--suite", "ordering,smoke")
    ctx.check("--suite ordering,smoke runs the union of the two suites",
              both == ordering | smoke and len(both) < 300, f"{len(both)} cases")
    _, ties, _ = ids("--family", "ties")
    ctx.check("--family ties runs the ties family",
              ties and all(i.startswith("ties/") for i in ties), f"{sorted(ties)[:3]}")
    _, glob, _ = ids("--case", "ties/exact-tie-*", "--case",
                     "seed-examples/000-order-example-keeps-2")
    ctx.check("--case takes globs and repeats", glob and "seed-examples/000-order-example-keeps-2"
              in glob and all(i.startswith(("ties/exact-tie-", "seed-")) for i in glob), str(glob))
    for args, words in ((["--family", "tie"], "no family 'tie'"),
                        (["--case", "nope/*"], "no case matches --case 'nope/*'"),
                        (["--suite", "ties"], "a family is --family")):
        status, _, err = ids(*args)
        ctx.check(f"sieve run {' '.join(args)} exits 2 naming the mistake",
                  status == 2 and words in err, f"exit {status}: {err[-200:]}")
    case_id = "ties/exact-tie-5-top-k-2"
    request = ctx.cmd("case", case_id, "--request").stdout
    answer = ctx.cmd("serve", input=request)
    shown = json.loads(ctx.cmd("case", case_id).stdout or "{}")
    ctx.check("sieve case ID --request pipes to an implementation, and sieve case ID shows the case",
              '"logprobs"' in answer.stdout and shown.get("id") == case_id and "expect" in shown
              and shown.get("readings"), answer.stdout[:200])
    out = ctx.cmd("explain", "ordering/strict-boundary-4-equal-top-p-2-of-4", "--impl",
                  f"lib:{ctx.mutants}/libge-boundary.so")
    ctx.check("sieve explain ID --impl shows the implementation's answer, its verdict and the hint",
              out.returncode == 0 and "fail at float32" in out.stdout and "[ge-boundary]" in out.stdout,
              out.stdout[-400:] + out.stderr[-200:])
    out = ctx.cmd("explain", "ordering/strict-boundary-8-equal-top-p-2-of-8", "--impl",
                  "rule:boundary=ge,topp_ties=highest")
    ctx.check("sieve explain ID --impl names the departures the fit of sieve run finds for an "
              "answer two axis values give together",
              "explained by boundary=ge + topp_ties=highest" in out.stdout, out.stdout[-400:])
    out = ctx.cmd("explain", "temperature/reciprocal-makes-a-tie-t1.3-top-k-1", "--impl",
                  "rule:temperature_op=divide")
    ctx.check("sieve explain ID --impl, where several single departures give the answer, names "
              "them all and picks none",
              "one case cannot tell apart the departures" in out.stdout
              and "divide-by-temperature" in out.stdout and "topk_ties=by_id_desc" in out.stdout
              and "explained by" not in out.stdout.splitlines()[-1], out.stdout[-400:])


def bad_fixture_files(ctx):
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in (("not-json", "{\"schema\": "), ("other-schema",
                           '{"schema":"sieve-fixtures/3","cases":[]}'), ("no-cases",
                           '{"schema":"sieve-fixtures/2"}')):
            path = Path(tmp) / f"{name}.json"
            path.write_text(text)
            p = ctx.cmd("run", "--impl", "profile:deepinfer", "--fixtures", str(path))
            ctx.check(f"a fixture file that is {name} is a harness error naming the file",
                      p.returncode == 2 and str(path) in p.stderr, p.stderr[-200:])
        unreadable = Path(tmp) / "unreadable.json"
        unreadable.write_text("{}")
        unreadable.chmod(0)
        if os.geteuid() != 0:  # root reads anything
            p = ctx.cmd("run", "--impl", "profile:deepinfer", "--fixtures", str(unreadable))
            ctx.check("an unreadable fixture file is a harness error", p.returncode == 2, p.stderr)


def refused_before_running(ctx):
    """Files sieve run cannot use are refused before the first case, naming the file and why.

    The implementation is fakes/hangs.sh with a 5 s time limit: a run that started would take
    minutes, so exiting 2 within 20 s with an empty stdout shows nothing ran."""
    with tempfile.TemporaryDirectory() as tmp:
        cases = (
            (["--fixtures", tmp], f"{tmp}: cannot read the fixture file: Is a directory"),
            (["--expect", tmp], f"{tmp}: cannot read the expectation file: Is a directory"),
            (["--expect", f"{tmp}/none.json"],
             f"{tmp}/none.json: cannot read the expectation file: No such file"),
            (["--output", f"{tmp}/nodir/report.json"],
             f"cannot write {tmp}/nodir/report.json: {tmp}/nodir: No such file"),
            (["--output", tmp], f"cannot write {tmp}: it is a directory"))
        for args, words in cases:
            try:
                p = ctx.cmd("run", "--impl", f"exec:{FAKES / 'hangs.sh'}", "--timeout", "5",
                            *args, timeout=20)
                ok = p.returncode == 2 and words in p.stderr and p.stdout == ""
                detail = f"exit {p.returncode}, stderr {p.stderr[-200:]}"
            except subprocess.TimeoutExpired:
                ok, detail = False, "it ran the cases first"
            ctx.check(f"sieve run {args[0]} {args[1].replace(tmp, 'TMP')} exits 2 before running, "
                      f"saying why", ok, detail)


def explain(ctx):
    with tempfile.TemporaryDirectory() as tmp:
        svg = Path(tmp) / "x.svg"
        out = ctx.cmd("explain", "seed-examples/000-panel2-top-p-0.8-top-k-2-keeps-mat-floor",
                      "--profile", "vllm", "--svg", str(svg))
        try:
            bars = [r for r in ET.parse(svg).getroot().iter("{http://www.w3.org/2000/svg}rect")
                    if "bar" in (r.get("class") or "").split()]
        except (ET.ParseError, FileNotFoundError):
            bars = []
        ctx.check("sieve explain shows the panel 2 cut for both rules and writes an SVG",
                  out.returncode == 0 and "deepinfer: keeps 2 tokens with full-softmax mass 0.6991"
                  in out.stdout and "vllm: keeps 2 tokens" in out.stdout and len(bars) == 12,
                  out.stdout[-300:] + out.stderr)
    row = ctx.cmd("explain", "--logits", "2,1.5,1,0.3", "--top-p", "0.8", "--seed", "42",
                  "--position", "7")
    ctx.check("sieve explain --logits shows a row given on the command line, with its draw",
              row.returncode == 0 and "a row of 4 logits, T 1, top_p 0.8" in row.stdout
              and "draw: u = " in row.stdout, row.stdout[-300:] + row.stderr)
    for case, step in (("penalties/presence-reorders-top-k-2", "uses presence_penalty"),
                       ("engine-options/blacklist-both-maxima-p1.0-k-1", "the engine options")):
        out = ctx.cmd("explain", case)
        ctx.check(f"sieve explain refuses {case}, whose step it does not show, and says so",
                  out.returncode == 2 and step in out.stderr and "does not show yet" in out.stderr
                  and not out.stdout, out.stdout[-200:] + out.stderr[-300:])
    case = "speculative/one-draft-seed-40"
    out = ctx.cmd("explain", case)
    ctx.check("sieve explain shows a speculative chain step by step, the stop and the residual",
              out.returncode == 0 and "draft 0 at position 280: token 4: p = 0, q = 0.0774"
              in out.stdout and "rejected" in out.stdout and "residual max(p - q, 0)" in out.stdout
              and "u (case 1)" in out.stdout, out.stdout[-400:] + out.stderr[-200:])
    impl = ctx.cmd("explain", case, "--impl", f"lib:{ctx.mutants}/libspec-residual-from-p.so")
    ctx.check("sieve explain --impl of a speculative case names the mutant's reading",
              "same answer as [spec-residual-from-p]" in impl.stdout, impl.stdout[-300:])


def progress_in_a_log(ctx):
    """With stderr not a terminal (a CI log), a plain progress line every 5 s names the pass
    and what it counts. The implementation is the oracle behind a proxy that holds its first
    answer after hello for 6 s, so the first pass outlasts 5 s."""
    proxy = ("import subprocess, sys, time\n"
             f"serve = subprocess.Popen([{ctx.sieve!r}, 'serve'], stdin=subprocess.PIPE, "
             "stdout=subprocess.PIPE, text=True)\n"
             "held = False\n"
             "for line in sys.stdin:\n"
             "    if '\"hello\"' not in line and not held:\n"
             "        time.sleep(6)\n"
             "        held = True\n"
             "    serve.stdin.write(line)\n"
             "    serve.stdin.flush()\n"
             "    sys.stdout.write(serve.stdout.readline())\n"
             "    sys.stdout.flush()\n")
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "slow.py"
        script.write_text(proxy)
        p = ctx.cmd("run", "--impl", f"exec:{ctx.python} {script}", "--suite", "position",
                    "--jobs", "1")
    ctx.check("a CI log gets a plain progress line naming the pass and what it counts",
              p.returncode == 0 and re.search(r"sieve run: pass 1 of 2 \(each case alone\), \d+ of "
                                              r"\d+ cases after \d+ s\n", p.stderr),
              f"exit {p.returncode}: {p.stderr[:300]}")


def checks(ctx):
    usage_errors(ctx)
    shards(ctx)
    selection_and_replay(ctx)
    bad_fixture_files(ctx)
    refused_before_running(ctx)
    explain(ctx)
    progress_in_a_log(ctx)
