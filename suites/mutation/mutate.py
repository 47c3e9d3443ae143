"""Source mutants of the oracle, and the share of them the Criterion suites (every golden fixture
among them) kill: `make mutation` (issue 26; suites/mutation/README.md).

  mutate.py ROOT BUILD --cflags FLAGS --link OBJECTS [--san-cflags FLAGS --san-link OBJECTS]
            [--sample N --seed S] [--plant N] [--jobs N] [--file NAME [--line N]]...
            [--resume] [--list]

Each mutant changes one place of one file of oracle/*.c, the spec path and the fast path alike:
a relational operator (< <= > >= == != replaced, PIT's boundary and negation), an arithmetic one
(+ -, * /), a logical one (&& ||, a ! dropped), an integer constant (n to n + 1, 0 and 1 swapped),
a statement deleted, or two adjacent statements swapped (a step moved after its neighbour). The
code is clang-formatted, so a binary operator is one with a space on each side.

Each mutant is asked only the tests that execute the lines it changes, as PIT does: the suites
are first run one test at a time on an -O0 --coverage build of the oracle, and gcov says which
lines each test executes (cached in BUILD/mutation/coverage.json, keyed by the sources). A test
that never executes a line cannot tell a change of it, so the verdict is the same as the whole
suite's. A line gcov holds no code for (a declaration at file scope, a statement spread over
lines) asks every test.

A mutant is compiled with the oracle's flags, linked into the Criterion test binary in place of
its file's object, and run (--fail-fast, one job; two mutants at a time by default), the quick
tests first. It is killed when a test fails, crashes or runs too long (GRACE, TIMEOUT); it
survives when they pass; it is stillborn when it does not compile (not counted). A mutant the
tests leave alive is then built with ASan and UBSan (--san-*: the objects of `make test SAN=1`,
which CI runs) and asked the ten quickest tests that execute it: a read past a buffer, a leak
or undefined behaviour that a sanitizer reports kills it there (a test failing or slower there
does not). The equivalent
mutants of equivalent.txt (an id and a reason a line) are not run. Prints the score and each
survivor (file, line, operator, the line as mutated), writes BUILD/mutation.json, and exits 1
when a mutant survives.

Each verdict is appended to BUILD/mutation/journal.jsonl as it comes (a survivor of the tests
first as "alive", then its verdict under the sanitizers), with the digest of the sources it was
reached on (the coverage key: oracle/, the test binary's objects, the fixtures). With --resume, a
mutant the journal has a final verdict for (killed, stillborn or survived), reached on these same
sources with the same mutated text, is not asked again: the verdict is the one a run would reach
now, so a run may be stopped and resumed, across sessions, and its score is the full run's. Any
change of those sources (a test added) starts the run afresh.

--plant N is CI's check that a survivor fails the run: it adds N equivalent mutants (chosen with
the seed among the quarter whose tests are quickest) as if they were not, and the run passes
only when exactly those survive, besides the known survivors of survivors.txt: mutants found
alive and not yet killed or shown equivalent (an id and what is known a line). They count as
survivors in the score; a new one fails the check.
"""

import argparse
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

TIMEOUT = 120
# A group of tests may take as long as its tests took one at a time on the coverage build (an -O0
# build, a process a test: about 3 times what the group takes on the oracle's build), GRACE
# seconds more, and TIMEOUT at most: a mutant that loops is killed there.
GRACE = 10
# A mutant the tests leave alive is asked again the SANITIZED quickest tests that execute it,
# built with the sanitizers: for a sanitizer's report, not for a test's verdict.
SANITIZED = 10
SANITIZED_TIMEOUT = 300
# A test that took longer than this on the coverage build runs in the second pass, only for a
# mutant the quick tests leave alive.
QUICK = 0.5
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
    seen = {}
    for no, (line, bare) in enumerate(zip(lines, plain)):
        if bare.lstrip().startswith("#") or not bare.strip():
            continue
        # A line's text names its mutants; a later line of the same text adds " #2", " #3".
        seen[line.strip()] = seen.get(line.strip(), 0) + 1
        where = line.strip() + (f" #{seen[line.strip()]}" if seen[line.strip()] > 1 else "")
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
            yield (f"{name}|{op}|{where}|{a}|{new}", name, no + 1, op,
                   "\n".join(lines[:no] + [mutated] + lines[no + 1:]), mutated.strip())
        if statement(bare) and no + 1 < len(lines) and statement(plain[no + 1]) and \
                len(line) - len(line.lstrip()) == len(lines[no + 1]) - len(lines[no + 1].lstrip()):
            swapped = lines[:no] + [lines[no + 1], line] + lines[no + 2:]
            yield (f"{name}|swap|{where}|{lines[no + 1].strip()}", name, no + 1, "swap",
                   "\n".join(swapped), f"{lines[no + 1].strip()} before {line.strip()}")


def test_names(binary: str) -> list:
    """The Criterion tests of the binary, as suite/name."""
    listed = subprocess.run([binary, "--list"], capture_output=True, text=True, check=True)
    names, suite = [], ""
    for line in listed.stdout.splitlines():
        head = re.match(r"^(\S+): \d+ tests?$", line)
        test = re.match(r"^\S+── (\S+)$", line)
        if head:
            suite = head.group(1)
        elif test:
            names.append(f"{suite}/{test.group(1)}")
    return names


def coverage_key(root: Path, objects: list) -> str:
    """A digest of everything a test's coverage depends on."""
    digest = hashlib.sha256()
    for path in [*sorted((root / "oracle").glob("*.[ch]")), *map(Path, objects),
                 root / "fixtures" / "sieve-fixtures.json"]:
        digest.update(path.read_bytes())
    return digest.hexdigest()


def lines_run(gcov_json: str, root: Path):
    """(executable lines, executed lines) of oracle/*.c, as {file: set} each, of gcov's JSON."""
    code, ran = {}, {}
    for doc in filter(None, gcov_json.splitlines()):
        for entry in json.loads(doc)["files"]:
            path = Path(entry["file"])
            if path.suffix != ".c" or path.parent != root / "oracle":
                continue
            name = path.relative_to(root).as_posix()
            code.setdefault(name, set()).update(ln["line_number"] for ln in entry["lines"])
            ran.setdefault(name, set()).update(ln["line_number"] for ln in entry["lines"]
                                               if ln["count"] > 0)
    return code, ran


def measure_coverage(args, objects, tmp: Path) -> dict:
    """Run each test alone on an -O0 --coverage build; what gcov says each executed."""
    root, objdir = Path(args.root), tmp / "obj"
    objdir.mkdir()
    covered = []
    for src in sorted((root / "oracle").glob("*.c")):
        covered.append(str(objdir / (src.stem + ".o")))
        subprocess.run(["cc", *args.cflags.split(), "-O0", "--coverage", f"-I{root}/oracle", "-c",
                        str(src), "-o", covered[-1]], check=True)
    binary = str(tmp / "tests")
    oracle = str(Path(args.build) / "obj" / "oracle")
    subprocess.run(["cc", "--coverage", "-o", binary,
                    *[o for o in objects if not o.startswith(oracle + "/")], *covered,
                    "-lcriterion", "-lcjson", "-lpthread", "-ldl", "-lm"], check=True)
    strip = str(len(objdir.parts) - 1)

    def one(index_name):
        index, name = index_name
        out = tmp / f"run{index}"
        out.mkdir()
        env = dict(os.environ, GCOV_PREFIX=str(out), GCOV_PREFIX_STRIP=strip)
        started = time.monotonic()
        ran = subprocess.run([binary, "--jobs", "1", "--filter", name], env=env,
                             capture_output=True, text=True)
        seconds = time.monotonic() - started
        if ran.returncode != 0:
            sys.exit(f"mutation: {name} fails on the unmutated oracle:\n{ran.stderr[-2000:]}")
        for note in objdir.glob("*.gcno"):
            (out / note.name).symlink_to(note)
        gcov = subprocess.run(["gcov", "--json-format", "--stdout", "-o", str(out),
                               *map(str, sorted(out.glob("*.gcda")))], cwd=out,
                              capture_output=True, text=True, check=True)
        return name, seconds, *lines_run(gcov.stdout, root)

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        runs = list(pool.map(one, enumerate(test_names(binary))))
    tests = {name: round(seconds, 3) for name, seconds, _, _ in runs}
    code, by_line = {}, {}
    for name, _, has_code, executed in runs:
        for file, lines in has_code.items():
            code.setdefault(file, set()).update(lines)
        for file, lines in executed.items():
            for line in lines:
                by_line.setdefault(f"{file}:{line}", []).append(name)
    return {"tests": tests, "code": {f: sorted(v) for f, v in code.items()},
            "executed_by": by_line}


def coverage(args, objects) -> dict:
    """measure_coverage's answer, from BUILD/mutation/coverage.json while the sources match."""
    cache = Path(args.build, "mutation", "coverage.json")
    key = coverage_key(Path(args.root), objects)
    if cache.exists():
        known = json.loads(cache.read_text())
        if known.get("key") == key:
            return known
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="sieve-coverage-") as tmp:
        measured = {"key": key, **measure_coverage(args, objects, Path(tmp))}
    cache.parent.mkdir(parents=True, exist_ok=True)
    write_json(cache, measured)
    print(f"mutation: coverage of {len(measured['tests'])} tests measured in "
          f"{time.monotonic() - started:.0f} s", flush=True)
    return measured


def tests_for(mutant, cov) -> list:
    """The tests that execute a line the mutant changes, the quick ones first; every test when a
    changed line holds no code gcov knows of."""
    _, name, line, op, _, _ = mutant
    changed = [line, line + 1] if op == "swap" else [line]
    code = set(cov["code"].get(name, []))
    if any(n not in code for n in changed):
        asked = set(cov["tests"])
    else:
        asked = {t for n in changed for t in cov["executed_by"].get(f"{name}:{n}", [])}
    return sorted(asked, key=lambda t: (cov["tests"][t], t))


SANITIZER_REPORTS = (b"ERROR: AddressSanitizer", b"ERROR: LeakSanitizer", b"runtime error:")


def build(mutant, cflags, objects, tmp: Path, extra=()):
    """The test binary with the mutant in place of its file's object, or None."""
    _, name, _, _, text, _ = mutant
    source, obj, tests = tmp / Path(name).name, tmp / "m.o", tmp / "tests"
    source.write_text(text)
    others = [o for o in objects if not o.endswith("/obj/" + name[:-len(".c")] + ".o")]
    assert len(others) == len(objects) - 1, f"no object of {name} among the objects to link"
    built = subprocess.run(["cc", *cflags.split(), "-c", str(source), "-o", str(obj)],
                           capture_output=True)
    linked = built.returncode == 0 and subprocess.run(
        ["cc", *extra, "-o", str(tests), *others, str(obj), "-lcriterion", "-lcjson",
         "-lpthread", "-ldl", "-lm"], capture_output=True).returncode == 0
    return tests if linked else None


FAILED = re.compile(rb"\[FAIL\] ([\w]+)::([\w]+)")


def killed_by_tests(tests: Path, groups, cov):
    """Whether a test of the groups (run in turn, each with --fail-fast) fails, crashes or
    outlasts its time (GRACE, TIMEOUT), and the test that failed ("" when none is named)."""
    for group in filter(None, groups):
        limit = min(TIMEOUT, sum(cov["tests"][t] for t in group) + GRACE)
        try:
            ran = subprocess.run([str(tests), "--jobs", "1", "--fail-fast", "--filter",
                                  "@(" + "|".join(group) + ")"], capture_output=True,
                                 timeout=limit)
        except subprocess.TimeoutExpired:
            return True, ""
        if ran.returncode != 0:
            failed = FAILED.search(ran.stdout + ran.stderr)
            return True, b"/".join(failed.groups()).decode() if failed else ""
    return False, ""


class Killers:
    """The tests that killed mutants so far, by file and line: a mutant asks those of its line
    and the lines near it first, as the likeliest to kill it too (PIT's ordering by earlier
    kills). The order only makes a kill come sooner; every test is still asked of a survivor."""
    NEAR = 3  # lines either side

    def __init__(self):
        self.lock = threading.Lock()
        self.by_line = {}

    def add(self, name, line, test):
        if test:
            with self.lock:
                self.by_line.setdefault((name, line), [])
                if test not in self.by_line[(name, line)]:
                    self.by_line[(name, line)].append(test)

    def first(self, name, line, asked) -> list:
        """The asked tests that killed a mutant on this line, then on the lines near it."""
        with self.lock:
            near = [t for d in sorted(range(-self.NEAR, self.NEAR + 1), key=abs)
                    for t in self.by_line.get((name, line + d), [])]
        return list(dict.fromkeys(t for t in near if t in asked))


def killed_by_sanitizers(tests: Path, group) -> bool:
    """Whether ASan, LSan or UBSan reports an error in a test of the group (a test that merely
    runs slower under them kills nothing)."""
    try:
        ran = subprocess.run([str(tests), "--jobs", "1", "--filter",
                              "@(" + "|".join(group) + ")"], capture_output=True,
                             timeout=SANITIZED_TIMEOUT)
    except subprocess.TimeoutExpired as slow:
        return any(r in (slow.stderr or b"") + (slow.stdout or b"") for r in SANITIZER_REPORTS)
    return any(r in ran.stderr + ran.stdout for r in SANITIZER_REPORTS)


def test_groups(asked, cov, first) -> list:
    """The groups of tests asked in turn: the likeliest killers (`first`), then the quick tests,
    then the others, each in the order of `asked`."""
    quick = [t for t in asked if cov["tests"][t] < QUICK and t not in first]
    return [first, quick, [t for t in asked if t not in quick and t not in first]]


def run_mutant(mutant, args, cov, killers):
    """The verdict of the tests ('killed', 'survived' or 'stillborn'), the seconds it took, the
    number of tests asked and the test that killed it."""
    started = time.monotonic()
    asked = tests_for(mutant, cov)
    verdict, killer = "stillborn", ""
    with tempfile.TemporaryDirectory(prefix="sieve-mutant-") as tmp:
        tests = build(mutant, f"{args.cflags} -I{args.root}/oracle", args.link.split(), Path(tmp))
        if tests:
            groups = test_groups(asked, cov, killers.first(mutant[1], mutant[2], set(asked)))
            killed, killer = killed_by_tests(tests, groups, cov)
            verdict = "killed" if killed else "survived"
    return verdict, time.monotonic() - started, len(asked), killer


def sanitized_verdict(mutant, args, cov) -> str:
    """'killed' when ASan, LSan or UBSan reports an error in one of the SANITIZED quickest tests
    that execute the mutant, else 'survived'."""
    asked = tests_for(mutant, cov)[:SANITIZED]
    with tempfile.TemporaryDirectory(prefix="sieve-mutant-") as tmp:
        tests = build(mutant, f"{args.san_cflags} -I{args.root}/oracle", args.san_link.split(),
                      Path(tmp), ["-fsanitize=address,undefined"])
        return "killed" if tests and asked and killed_by_sanitizers(tests, asked) else "survived"


def equivalents(path: Path) -> dict:
    """{mutant id: why it is equivalent} of equivalent.txt: "id<TAB>reason" a line."""
    out = {}
    for line in path.read_text().splitlines() if path.exists() else []:
        if line.strip() and not line.startswith("#"):
            mid, _, why = line.partition("\t")
            out[mid] = why
    return out


def text_digest(mutant) -> str:
    return hashlib.sha256(mutant[4].encode()).hexdigest()[:16]


def run_all(asked, args, cov, log: Path, killers) -> list:
    """Each mutant's result: the tests on every mutant, then the sanitizers on those the tests
    leave alive. Each final verdict is appended to `log` as it comes (a JSON line)."""
    results, done = {}, 0
    with ThreadPoolExecutor(max_workers=args.jobs) as pool, log.open("a") as journal:
        def record(r):
            results[r["id"]] = r
            # A survivor of the tests still faces the sanitizers: journaled as "alive" until
            # then, so that a run stopped before that phase still lists it.
            alive = r["verdict"] == "survived" and args.san_link
            journal.write(json.dumps(dict(r, verdict="alive") if alive else r) + "\n")
            journal.flush()

        futures = {pool.submit(run_mutant, m, args, cov, killers): m for m in asked}
        for future in as_completed(futures):
            m, (verdict, seconds, tests, killer) = futures[future], future.result()
            killers.add(m[1], m[2], killer)
            record({"id": m[0], "file": m[1], "line": m[2], "operator": m[3], "mutated": m[5],
                    "verdict": verdict, "killed_by": "tests" if verdict == "killed" else None,
                    "killer": killer, "tests": tests, "seconds": round(seconds, 2),
                    "text": text_digest(m), "sources": cov["key"]})
            done += 1
            if done % 50 == 0:
                print(f"mutation: {done} of {len(asked)} asked the tests", flush=True)
        alive = [m for m in asked if results[m[0]]["verdict"] == "survived"]
        if alive and args.san_link:
            print(f"mutation: {len(alive)} alive; now under the sanitizers", flush=True)
            futures = {pool.submit(sanitized_verdict, m, args, cov): m for m in alive}
            for future in as_completed(futures):
                m, verdict = futures[future], future.result()
                r = dict(results[m[0]], verdict=verdict,
                         killed_by="sanitizers" if verdict == "killed" else None)
                journal.write(json.dumps(r) + "\n")
                journal.flush()
                results[m[0]] = r
    return list(results.values())


def resumed(log: Path, asked, sources: str) -> dict:
    """The journal's final verdicts reached on these sources, of mutants whose text is the
    same: what a run would reach again."""
    digests = {m[0]: text_digest(m) for m in asked}
    out = {}
    for line in log.read_text().splitlines() if log.exists() else []:
        r = json.loads(line)
        if r.get("sources") == sources and digests.get(r["id"]) == r.get("text"):
            out[r["id"]] = r
    return {i: r for i, r in out.items() if r["verdict"] != "alive"}


def earlier_killers(log: Path, mutants) -> Killers:
    """The killers the journal names, of mutants the code still has, at their lines now: on
    any sources, as they only order the tests."""
    killers, line = Killers(), {m[0]: (m[1], m[2]) for m in mutants}
    for text in log.read_text().splitlines() if log.exists() else []:
        r = json.loads(text)
        if r["id"] in line:
            killers.add(*line[r["id"]], r.get("killer", ""))
    return killers


def write_json(path: Path, data: dict):
    """Writes the file whole or not at all."""
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(data, indent=1))
    partial.replace(path)


def to_plant(known, cov, count: int, seed: int) -> list:
    """COUNT equivalent mutants, chosen with the seed among the quarter that some test executes
    whose tests took the least time on the coverage build: a planted mutant shows that a survivor
    fails the run, which a quick one shows as well as any, and it runs its tests twice (plain and
    under the sanitizers)."""
    def cost(m):
        return sum(cov["tests"][t] for t in tests_for(m, cov))
    executed = sorted((m for m in known if tests_for(m, cov)), key=lambda m: (cost(m), m[0]))
    quick = executed[:max(count, len(executed) // 4)]
    if len(quick) < count:
        sys.exit(f"mutation: --plant {count}, but only {len(quick)} equivalent mutants are "
                 "executed by a test")
    return random.Random(seed).sample(quick, count)


def report(results, equivalent, to_triage, planted, args, seconds, out: Path, kept: int,
           sources: str) -> int:
    """Writes the summary and the results, prints them; the exit status."""
    counted = [r for r in results if r["verdict"] != "stillborn"]
    killed = sum(r["verdict"] == "killed" for r in counted)
    survivors = [r for r in counted if r["verdict"] == "survived"]
    score = killed / len(counted) if counted else 1.0
    summary = {"mutants": len(results), "stillborn": len(results) - len(counted),
               "killed": killed, "by_sanitizers": sum(r["killed_by"] == "sanitizers"
                                                      for r in counted),
               "survived": len(survivors), "equivalent": len(equivalent),
               "score": round(score, 4), "seconds": round(seconds), "sample": args.sample,
               "seed": args.seed, "resumed": args.resume, "kept": kept, "sources": sources,
               "test_seconds": round(sum(r["seconds"] for r in results)),
               "planted": [m[0] for m in planted]}
    write_json(out, {"summary": summary, "mutants": results})
    for r in survivors:
        mark = " (planted equivalent)" if r["id"] in summary["planted"] else \
            " (known, to triage: survivors.txt)" if r["id"] in to_triage else ""
        print(f"survived{mark} {r['file']}:{r['line']}: {r['operator']}: {r['mutated']}")
    print(f"mutation: {killed} of {len(counted)} mutants killed ({100 * score:.1f}%; "
          f"{summary['by_sanitizers']} by the sanitizers alone), {len(survivors)} survived, "
          f"{summary['stillborn']} stillborn, {len(equivalent)} equivalent not run; "
          f"{summary['seconds']} s" + (f" ({kept} verdicts from earlier parts of the run)"
                                       if kept else ""))
    if planted:
        caught = {r["id"] for r in survivors} - set(to_triage) == set(summary["planted"])
        print("mutation: the survivors are the planted equivalent mutants and known survivors, "
              "no new one" if caught else "mutation: FAILED: the survivors are not the planted "
              "equivalent mutants and known survivors (a new survivor, or a planted one killed)")
        return 0 if caught else 1
    return 1 if survivors else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("root")
    ap.add_argument("build")
    ap.add_argument("--cflags", required=True)
    ap.add_argument("--link", required=True, help="the objects of the test binary")
    ap.add_argument("--san-cflags", default="")
    ap.add_argument("--san-link", default="", help="the same, built with the sanitizers")
    ap.add_argument("--sample", type=int, default=0)
    ap.add_argument("--seed", type=int, default=26)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--file", action="append", default=[])
    ap.add_argument("--line", type=int, help="only the mutants of this line (with one --file)")
    ap.add_argument("--plant", type=int, default=0,
                    help="add N equivalent mutants, which must be the only survivors")
    ap.add_argument("--resume", action="store_true",
                    help="keep the journal's verdicts reached on these sources")
    ap.add_argument("--list", action="store_true", help="list the mutants, run none")
    args = ap.parse_args()
    root, out = Path(args.root), Path(args.build, "mutation.json")
    files = sorted((root / "oracle").glob("*.c"))
    files = [f for f in files if not args.file or f.name in args.file]
    mutants = [m for f in files for m in mutants_of(f, root) if args.line in (None, m[2])]
    equivalent = equivalents(Path(__file__).with_name("equivalent.txt"))
    every = {m[0] for f in sorted((root / "oracle").glob("*.c")) for m in mutants_of(f, root)}
    to_triage = equivalents(Path(__file__).with_name("survivors.txt"))
    stale = [i for i in [*equivalent, *to_triage] if i not in every]
    if stale:
        sys.exit(f"mutation: equivalent.txt or survivors.txt names {len(stale)} mutants the code "
                 "no longer has "
                 f"(review and remove them), the first: {stale[0]}")
    known = [m for m in mutants if m[0] in equivalent]
    if args.plant > len(known):
        sys.exit(f"mutation: --plant {args.plant}, but equivalent.txt lists {len(known)} mutants")
    started = time.monotonic()
    cov = coverage(args, args.link.split()) if args.plant or not args.list else None
    planted = to_plant(known, cov, args.plant, args.seed) if args.plant else []
    # The sample is drawn from every mutant, so that it changes only with the code.
    asked = random.Random(args.seed).sample(mutants, min(args.sample, len(mutants))) \
        if args.sample else mutants
    asked = [m for m in asked if m[0] not in equivalent]
    asked += planted
    if args.list:
        for m in asked:
            print(f"{m[1]}:{m[2]}: {m[3]}: {m[5]}")
        print(f"mutation: {len(asked)} mutants ({len(mutants)} in all, {len(equivalent)} "
              "equivalent)")
        return 0
    log = Path(args.build, "mutation", "journal.jsonl")
    log.parent.mkdir(parents=True, exist_ok=True)
    kept = resumed(log, asked, cov["key"]) if args.resume else {}
    if args.resume:
        print(f"mutation: {len(kept)} verdicts kept from the journal (reached on these sources)",
              flush=True)
    ran = {r["id"]: r for r in run_all([m for m in asked if m[0] not in kept], args, cov, log,
                                       earlier_killers(log, mutants))}
    results = [kept.get(m[0]) or ran[m[0]] for m in asked]
    return report(results, equivalent, to_triage, planted, args, time.monotonic() - started, out,
                  len(kept), cov["key"])


if __name__ == "__main__":
    sys.exit(main())
