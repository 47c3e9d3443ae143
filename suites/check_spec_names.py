#!/usr/bin/env python3
"""What oracle/SPEC.md's statement tables say, checked against the code and the suite.

- Every function, type or macro SPEC.md names beside its file exists in that file, and a
  function it names is not a wrapper of another (the rule lives where SPEC.md points). It names
  code in two shapes: `file.c` `name` (or `file.c` `a`, `b`) in its tables, and `oracle/file.c`
  (`a`, `b`) in prose.
- Every statement row names its plausible misreadings (the column "misread as"): each a mutant
  of suites/mutants/catalogue.json or an axis value AXIS=VALUE of oracle/sieve.h (the oracle's
  variant is its mutant), each recorded by at least one fixture case as a reading the case
  separates; and every mutant and every axis value misreads some row (draw=own, a generator of
  an engine's own, is checked by the statistical suites instead: no fixture can separate it).

Exit 1, naming each problem, when there is one."""
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "generators"))
import axes  # noqa: E402  (oracle/sieve.h's SIEVE_AXES, read from the header)

MISREAD = "misread as (suites/mutants)"
UNSEPARABLE = {"draw=own"}
NAMES = r"`\w+`(?:,\s*`\w+`)*"
TABLE = re.compile(r"`(?:oracle/)?(\w+\.[ch])`\s+(" + NAMES + ")")
PROSE = re.compile(r"`(?:oracle/)?(\w+\.[ch])`\s+\((" + NAMES + r")\)")


def named(text):
    """(file, name) pairs, in order, each once."""
    pairs = []
    for pattern in (TABLE, PROSE):
        for m in pattern.finditer(text):
            pairs += [(m.group(1), n) for n in re.findall(r"`(\w+)`", m.group(2))]
    return list(dict.fromkeys(pairs))


def definition(source, name):
    """The body of function `name` defined in `source` (its lines after the opening one), "" for
    a macro or type of that name, or None when the file defines no such thing."""
    if re.search(rf"^#define {name}\b|^typedef [^;]*\b{name}\b|^}} {name};", source, re.M):
        return ""
    m = re.search(rf"^[A-Za-z][^;\n]*\b{name}\([^;{{]*?\)\s*{{\n(.*?)^}}", source, re.M | re.S)
    one_line = re.search(rf"^[A-Za-z][^;\n]*\b{name}\([^;{{]*?\)\s*{{(.*)}}$", source, re.M)
    return m.group(1) if m else one_line.group(1) if one_line else None


def wrapped(body):
    """The function a body only delegates to (one `return other(...);`), or None."""
    m = re.fullmatch(r"\s*return (\w+)\([^;]*\);\s*", body)
    return m.group(1) if m else None


def misread_rows(text):
    """(statement, [misreadings]) for each row of a table with the misread-as column."""
    rows, column = [], None
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and MISREAD in cells:
            column = cells.index(MISREAD)
        elif column is not None and line.startswith("|---"):
            continue
        elif column is not None and line.startswith("| "):
            statement = " | ".join(cells[:2])[:90]
            rows.append((statement, re.findall(r"`([^`]+)`", cells[column])
                         if len(cells) > column else []))
        else:
            column = None
    return rows


def misreading_problems(text):
    catalogue = json.loads((ROOT / "suites" / "mutants" / "catalogue.json").read_text())
    mutants = {n for n, e in catalogue.items() if e.get("must_fail")}
    values = {f"{a}={v}" for a, _, vs in axes.AXES for v, _ in vs[1:]}
    fixtures = json.loads((ROOT / "fixtures" / "sieve-fixtures.json").read_text())
    recorded = {x for c in fixtures["cases"] for r in c.get("readings", [])
                for x in (r["name"], r.get("rule"))}
    rows, problems, named = misread_rows(text), [], set()
    for statement, names in rows:
        if not names:
            problems.append(f"oracle/SPEC.md: the row \"{statement}\" names no misreading")
        for n in names:
            named.add(n)
            if n not in mutants | values:
                problems.append(f"oracle/SPEC.md: \"{statement}\" names {n}, neither a mutant of "
                                "suites/mutants/catalogue.json nor an axis value of sieve.h")
            elif n not in recorded:
                problems.append(f"oracle/SPEC.md: no fixture case records {n}, a misreading of "
                                f"\"{statement}\"")
    by_rule = {r.get("rule"): r["name"] for c in fixtures["cases"] for r in c.get("readings", [])
               if r.get("rule")}
    for n in sorted((mutants | values) - UNSEPARABLE):
        if n not in named and by_rule.get(n) not in named:
            problems.append(f"{n} misreads no statement row of oracle/SPEC.md (its column "
                            f"\"{MISREAD}\")")
    return rows, problems, len(mutants), len(values)


def main():
    text = (ROOT / "oracle" / "SPEC.md").read_text()
    rows, problems, n_mutants, n_values = misreading_problems(text)
    pairs = named(text)
    for file, name in pairs:
        path = ROOT / "oracle" / file
        body = definition(path.read_text(), name) if path.exists() else None
        if body is None:
            problems.append(f"oracle/SPEC.md names {file} `{name}`, which oracle/{file} does "
                            "not define")
        elif wrapped(body):
            problems.append(f"oracle/SPEC.md names {file} `{name}`, which only calls "
                            f"`{wrapped(body)}`: name the function that holds the rule")
    for p in problems:
        print(p, file=sys.stderr)
    if not pairs:
        print("check_spec: oracle/SPEC.md names no code beside its files", file=sys.stderr)
        return 1
    if not problems:
        print(f"check_spec: all {len(pairs)} functions, types and macros that oracle/SPEC.md "
              "names exist where it says, none a wrapper")
        print(f"check_spec: each of {len(rows)} statement rows names its misreadings, among "
              f"{n_mutants} mutants and {n_values} axis values, each misreading some row and "
              "recorded by a fixture case")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
