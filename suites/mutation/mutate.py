"""Source mutants of the oracle, and the share of them the Criterion suites (every golden fixture
among them) kill: `make mutation` (issue 26; suites/mutation/README.md).

  mutate.py ROOT BUILD --cflags FLAGS --link OBJECTS [--sample N --seed S] [--jobs N]
            [--file NAME]... [--list]

Each mutant changes one place of one file of oracle/*.c, the spec path and the fast path alike:
a relational operator (< <= > >= == != replaced, PIT's boundary and negation), an arithmetic one
(+ -, * /), a logical one (&& ||, a ! dropped), an integer constant (n to n + 1, 0 and 1 swapped),
a statement deleted, or two adjacent statements swapped (a step moved after its neighbour). The
code is clang-formatted, so a binary operator is one with a space on each side.

A mutant is compiled with the oracle's flags, linked into the Criterion test binary in place of
its file's object, and run (--fail-fast, one job; two mutants at a time by default). It is
killed when the suites fail, crash or take more than TIMEOUT seconds; it survives when they
pass; it is stillborn when it does not compile (not counted). The equivalent mutants of
equivalent.txt (an id and a reason a line) are not counted either. Prints the score and each
survivor (file, line, operator, the line as mutated), and writes BUILD/mutation.json.
"""

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

TIMEOUT = 120
# The suites in two passes: fast_path/ (14 s on one core, the fast path against the spec path on
# random rows) only for a mutant the others (17 s) leave alive.
PASSES = ("!(fast_path)/*", "fast_path/*")
RELATIONAL = {"<": ["<=", ">="], "<=": ["<", ">"], ">": [">=", "<="], ">=": [">", "<"],
              "==": ["!="], "!=": ["=="]}
ARITHMETIC = {"+": ["-"], "-": ["+"], "*": ["/"], "/": ["*"]}
LOGICAL = {"&&": ["||"], "||": ["&&"]}
BINARY = re.compile(r"(?<= )(<=|>=|==|!=|&&|\|\||<|>|\+|-|\*|/)(?= )")
INTEGER = re.compile(r"(?<![\w.])(\d+)(?![\w.])")
NOT = re.compile(r"!(?!=)")
DECLARATION = re.compile(r"^\s*(const\s+|static\s+|unsigned\s+)*[a-z_][a-z0-9_]*\s+\**[a-z_]\w*"
                         r"(\[.*\])?\s*(=|;)", re.I)


def masked(text: str) -> str:
    """The text with comments, strings and character literals blanked (line breaks kept)."""
    out, i, n = list(text), 0, len(text)
    while i < n:
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
        elif text[i] in "\"'":
            end = i + 1
            while end < n and text[end] != text[i]:
                end += 2 if text[end] == "\\" else 1
            end += 1
        else:
            i += 1
            continue
        for k in range(i, min(end, n)):
            out[k] = out[k] if text[k] == "\n" else " "
        i = end
    return "".join(out)


def statement(line: str) -> bool:
    """A simple statement that can be deleted or moved: it ends with ';', is no declaration,
    no return, no jump and no part of a for header."""
    s = line.strip()
    return (s.endswith(";") and not DECLARATION.match(line) and not s.startswith(
        ("return", "break", "continue", "goto", "for", "}", "case", "default", "typedef"))
        and "(" not in s[:1] and s.count("(") == s.count(")"))


def mutants_of(path: Path, root: Path):
    """(id, file, line number, operator, new text of the file, the mutated line) of one file."""
    text = path.read_text()
    lines, plain = text.split("\n"), masked(text).split("\n")
    name = path.relative_to(root).as_posix()
    for no, (line, bare) in enumerate(zip(lines, plain)):
        if bare.lstrip().startswith("#") or not bare.strip():
            continue
        changes = []
        for m in BINARY.finditer(bare):
            for table, op in ((RELATIONAL, "relational"), (ARITHMETIC, "arithmetic"),
                              (LOGICAL, "logical")):
                changes += [(op, m.start(), m.end(), r) for r in table.get(m.group(1), [])]
        changes += [("negation", m.start(), m.end(), "") for m in NOT.finditer(bare)]
        for m in INTEGER.finditer(bare):  # not an array's size
            value = int(m.group(1), 10)
            if not re.search(r"\[\s*$", bare[:m.start()]):
                other = 1 - value if value < 2 else value + 1
                changes.append(("constant", m.start(), m.end(), str(other)))
        if statement(bare):
            changes.append(("delete", 0, len(line), ""))
        for op, a, b, new in changes:
            mutated = line[:a] + new + line[b:]
            if op == "delete":
                mutated = re.match(r"\s*", line).group(0) + "; /* deleted */"
            yield (f"{name}|{op}|{line.strip()}|{a}|{new}", name, no + 1, op,
                   "\n".join(lines[:no] + [mutated] + lines[no + 1:]), mutated.strip())
        if statement(bare) and no + 1 < len(lines) and statement(plain[no + 1]) and \
                len(line) - len(line.lstrip()) == len(lines[no + 1]) - len(lines[no + 1].lstrip()):
            swapped = lines[:no] + [lines[no + 1], line] + lines[no + 2:]
            yield (f"{name}|swap|{line.strip()}|{lines[no + 1].strip()}", name, no + 1, "swap",
                   "\n".join(swapped), f"{lines[no + 1].strip()} before {line.strip()}")


def run_mutant(mutant, args, objects):
    """'killed', 'survived' or 'stillborn', and the seconds it took."""
    mid, name, _, _, text, _ = mutant
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="sieve-mutant-") as tmp:
        source, obj, tests = Path(tmp) / Path(name).name, Path(tmp) / "m.o", Path(tmp) / "tests"
        source.write_text(text)
        original = str(Path(args.build) / "obj" / name).replace(".c", ".o")
        built = subprocess.run(["cc", *args.cflags.split(), f"-I{args.root}/oracle", "-c",
                                str(source), "-o", str(obj)], capture_output=True)
        linked = built.returncode == 0 and subprocess.run(
            ["cc", "-o", str(tests), *[o for o in objects if o != original], str(obj),
             "-lcriterion", "-lcjson", "-lpthread", "-ldl", "-lm"], capture_output=True
        ).returncode == 0
        if not linked:
            return "stillborn", time.monotonic() - started
        verdict = "survived"
        for tests_asked in PASSES:
            try:
                ran = subprocess.run([str(tests), "--jobs", "1", "--fail-fast", "--filter",
                                      tests_asked], capture_output=True, timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                ran = None
            if ran is None or ran.returncode != 0:
                verdict = "killed"
                break
    return verdict, time.monotonic() - started


def equivalents(path: Path) -> dict:
    """{mutant id: why it is equivalent} of equivalent.txt: "id<TAB>reason" a line."""
    out = {}
    for line in path.read_text().splitlines() if path.exists() else []:
        if line.strip() and not line.startswith("#"):
            mid, _, why = line.partition("\t")
            out[mid] = why
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root")
    ap.add_argument("build")
    ap.add_argument("--cflags", required=True)
    ap.add_argument("--link", required=True, help="the objects of the test binary")
    ap.add_argument("--sample", type=int, default=0)
    ap.add_argument("--seed", type=int, default=26)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--file", action="append", default=[])
    ap.add_argument("--list", action="store_true", help="list the mutants, run none")
    args = ap.parse_args()
    root = Path(args.root)
    files = sorted((root / "oracle").glob("*.c"))
    files = [f for f in files if not args.file or f.name in args.file]
    mutants = [m for f in files for m in mutants_of(f, root)]
    equivalent = equivalents(Path(__file__).with_name("equivalent.txt"))
    asked = [m for m in mutants if m[0] not in equivalent]
    if args.sample:
        asked = random.Random(args.seed).sample(asked, min(args.sample, len(asked)))
    if args.list:
        for m in asked:
            print(f"{m[1]}:{m[2]}: {m[3]}: {m[5]}")
        print(f"mutation: {len(asked)} mutants ({len(mutants)} in all, {len(equivalent)} "
              "equivalent)")
        return 0
    objects = args.link.split()
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        verdicts = list(pool.map(lambda m: run_mutant(m, args, objects), asked))
    results = [{"id": m[0], "file": m[1], "line": m[2], "operator": m[3], "mutated": m[5],
                "verdict": v, "seconds": round(s, 2)} for m, (v, s) in zip(asked, verdicts)]
    counted = [r for r in results if r["verdict"] != "stillborn"]
    killed = sum(r["verdict"] == "killed" for r in counted)
    survivors = [r for r in counted if r["verdict"] == "survived"]
    for r in survivors:
        print(f"survived {r['file']}:{r['line']}: {r['operator']}: {r['mutated']}")
    score = killed / len(counted) if counted else 1.0
    summary = {"mutants": len(results), "stillborn": len(results) - len(counted),
               "killed": killed, "survived": len(survivors), "equivalent": len(equivalent),
               "score": round(score, 4), "seconds": round(time.monotonic() - started),
               "sample": args.sample, "seed": args.seed}
    Path(args.build, "mutation.json").write_text(json.dumps({"summary": summary,
                                                             "mutants": results}, indent=1))
    print(f"mutation: {killed} of {len(counted)} mutants killed ({100 * score:.1f}%), "
          f"{len(survivors)} survived, {summary['stillborn']} stillborn, "
          f"{len(equivalent)} equivalent not run; {summary['seconds']} s")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
