#!/usr/bin/env python3
"""Every function, type or macro that oracle/SPEC.md names beside its file exists in that file,
and a function it names is not a wrapper of another (the rule lives where SPEC.md points).

SPEC.md names code in two shapes: `file.c` `name` (or `file.c` `a`, `b`) in its statement
tables, and `oracle/file.c` (`a`, `b`) in prose. Exit 1, naming each name that is gone or a
wrapper, when any is."""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
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


def main():
    text = (ROOT / "oracle" / "SPEC.md").read_text()
    problems = []
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
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
