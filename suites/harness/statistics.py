"""The statistical suites: the speculative-distribution suite passes a faithful verifier with its
own generator (the oracle's draw=own rule and a Python one) and fails each known bug, every
failed case naming it; a verifier whose answers break the protocol fails naming what; the power
table of harness/run/STATISTICS.md is the one sieve computes, with every known bug met by a case
of power 1 - 1e-4 or more."""

from sieve_cli import FAKES, ROOT

SPECDIST_BUGS = ("spec-q-raw", "spec-draft-bf16", "spec-token-match", "spec-no-bonus")


def checks(ctx):
    fake = FAKES / "own_speculate.py"
    for impl, bug in (("rule:draw=own", None), (f"exec:{ctx.python} {fake} rule", None),
                      *((f"exec:{ctx.python} {fake} {b}", b) for b in SPECDIST_BUGS)):
        status, report, err = ctx.run(impl, "--suite", "speculative-distribution", "--jobs", "4")
        cases = report["cases"] if report else []
        failed = [c for c in cases if c["outcome"] != "pass"]
        unnamed = [c["id"] for c in failed if c.get("causes") != [bug]]
        if bug is None:
            ctx.check(f"{impl} passes the speculative-distribution suite ({len(cases)} cases)",
                      status == 0 and len(cases) == 8 and not failed, f"exit {status} {failed[:1]}")
        else:
            ctx.check(f"own-generator bug {bug} fails the speculative-distribution suite, each "
                      f"failed case naming only [{bug}]", status == 1 and failed and not unnamed,
                      f"exit {status}, {len(failed)} failed, not naming it: {unnamed[:2]} "
                      f"{err[-200:]}")
    for variant, words in (("steps-missing", "so steps has"), ("ratio-doubled", "].ratio is"),
                           ("draft-tokens-short", "draft_tokens must hold")):
        status, report, err = ctx.run(f"exec:{ctx.python} {fake} {variant}", "--suite",
                                      "speculative-distribution", "--jobs", "4")
        failed = [c for c in (report["cases"] if report else []) if c["outcome"] == "fail"]
        ctx.check(f"a verifier answering with {variant} fails the speculative-distribution suite, "
                  f"saying \"{words}\"", status == 1 and failed and
                  all(words in c["detail"] for c in failed), f"exit {status} {failed[:1]}")
    table = ctx.cmd("explain", "speculative-distribution", "--markdown").stdout
    doc = (ROOT / "harness" / "run" / "STATISTICS.md").read_text()
    ctx.check("harness/run/STATISTICS.md holds the power table sieve explain computes",
              table and table in doc, "regenerate it: sieve explain speculative-distribution "
              "--markdown")
    lines = table.splitlines()
    bugs = [c.strip().strip("`") for c in lines[0].split("|")[2:-1]] if lines else []
    rows = [line.split("|")[2:-1] for line in lines if line.startswith("| `")]
    weak = [b for i, b in enumerate(bugs) if not any(r[i].strip().startswith("1 - ") for r in rows)]
    ctx.check(f"every known bug ({len(bugs)}) has a speculative-distribution case of power "
              "1 - 1e-4 or more against it", rows and set(SPECDIST_BUGS) <= set(bugs) and not weak,
              f"weak against {weak}, columns {bugs}")
