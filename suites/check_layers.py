"""Includes point down: every C file of oracle/ and harness/ includes only its own folder's
headers and those of the folders its README lets it include.

  check_layers.py ROOT

A folder's rule is the line of its README.md that starts "May include:", naming folders in
backquotes (`oracle/`, `protocol/`); a folder without such a line takes the rule of the nearest
folder above it that has one. The rules must not let two folders include each other (directly or
round a cycle), so they order the layers. `#include "x.h"` is looked for beside the file, then in
harness/ and oracle/ (the Makefile's -I), and `<sieve.h>` and `<sieve_impl.h>` are the installed
copies of oracle/sieve.h and harness/protocol/sieve_impl.h.

Then the check tries itself: an include planted up a layer (protocol/jbuf.c including
cli/options.h) in a copy of the tree must be found. Exit status 1, naming each file and include,
when anything fails.

One more rule of the oracle's code: it reads an axis of a sieve_rule only through SIEVE__AXIS
(oracle/internal.h), which records the read for sieve_rule.consulted; a field read any other way
(`rule->boundary`) would let the fit of `sieve run` reuse an answer it must not.
"""

import re
import shutil
import sys
import tempfile
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
INSTALLED = {"sieve.h": "oracle/sieve.h", "sieve_impl.h": "harness/protocol/sieve_impl.h"}
PLANTED = ("harness/protocol/jbuf.c", '#include "cli/options.h"')


def folder_named(root: Path, name: str) -> str:
    """A folder as a README names it: a layer of harness/ (`protocol/`), else a top folder."""
    return f"harness/{name}" if (root / "harness" / name).is_dir() else name


def rules(root: Path) -> dict:
    """{folder: set of folders it may include}, from the READMEs that state a rule."""
    out = {}
    for top in ("oracle", "harness"):
        for readme in sorted((root / top).rglob("README.md")):
            for line in readme.read_text().splitlines():
                if line.startswith("May include:"):
                    folder = readme.parent.relative_to(root).as_posix()
                    out[folder] = {folder_named(root, f.rstrip("/"))
                                   for f in re.findall(r"`([a-z_/]+/)`", line)}
    return out


def layer_of(path: str, ruled: dict) -> str:
    """The folder whose rule covers a file: the nearest folder above it that states one."""
    folder = path.rsplit("/", 1)[0]
    while folder and folder not in ruled:
        folder = folder.rsplit("/", 1)[0] if "/" in folder else ""
    return folder


def resolve(root: Path, source: Path, kind: str, name: str):
    """The project file an include names (relative to root), "" for a system header, or None."""
    if kind == "<":
        return INSTALLED.get(name, "")
    for base in (source.parent, root / "harness", root / "oracle"):
        target = (base / name).resolve()
        if target.is_file() and root.resolve() in target.parents:
            return target.relative_to(root.resolve()).as_posix()
    return None


def cycles(ruled: dict) -> list:
    """Pairs of folders that may include each other, directly or through others."""
    def reach(start):
        seen, todo = set(), [start]
        while todo:
            for nxt in ruled.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen
    return [f"{a} and {b} may include each other" for a in sorted(ruled) for b in sorted(reach(a))
            if a < b and a in reach(b)]


def violations(root: Path) -> list:
    ruled = rules(root)
    problems = cycles(ruled)
    missing = [d.relative_to(root).as_posix() for d in sorted((root / "harness").iterdir())
               if d.is_dir() and any(d.glob("*.[ch]")) and d.relative_to(root).as_posix() not in ruled]
    problems += [f"{m}/README.md states no \"May include:\" rule" for m in missing]
    for top in ("oracle", "harness"):
        for source in sorted((root / top).rglob("*.[ch]")):
            path = source.relative_to(root).as_posix()
            mine = layer_of(path, ruled)
            for kind, name in INCLUDE.findall(source.read_text()):
                target = resolve(root, source, kind, name)
                if target is None:
                    problems.append(f"{path} includes \"{name}\", which is no file of the project")
                    continue
                theirs = layer_of(target, ruled) if target else ""
                if target and theirs != mine and theirs not in ruled.get(mine, set()):
                    problems.append(f"{path} includes {target}: {mine}/ may include "
                                    f"{', '.join(sorted(ruled.get(mine, ()))) or 'only itself'}")
    return problems


def unrecorded_axis_reads(root: Path) -> list:
    """Reads of a rule's axis field in oracle/*.c other than through SIEVE__AXIS."""
    header = (root / "oracle" / "sieve.h").read_text()
    fields = re.findall(r"^\s*X\([A-Z_0-9]+, ([a-z_0-9]+), ", header, re.M)
    read = re.compile(r"->\s*(" + "|".join(fields) + r")\b")
    out = []
    for source in sorted((root / "oracle").glob("*.c")):
        for n, line in enumerate(source.read_text().splitlines(), 1):
            if read.search(line) and "SIEVE__AXIS" not in line:
                out.append(f"oracle/{source.name}:{n} reads an axis without SIEVE__AXIS: "
                           f"{line.strip()}")
    return out if fields else ["oracle/sieve.h: no axis found in SIEVE_AXES"]


def finds_a_planted_include(root: Path) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp)
        for top in ("oracle", "harness"):
            shutil.copytree(root / top, copy / top, ignore=shutil.ignore_patterns("node_modules"))
        planted = copy / PLANTED[0]
        planted.write_text(PLANTED[1] + "\n" + planted.read_text())
        found = violations(copy)
    return len(found) == 1 and found[0].startswith(f"{PLANTED[0]} includes harness/cli/options.h")


def main() -> int:
    root = Path(sys.argv[1])
    problems = violations(root) + unrecorded_axis_reads(root)
    for p in problems:
        print(f"check_layers: {p}", file=sys.stderr)
    planted = finds_a_planted_include(root)
    if not planted:
        print(f"check_layers: an include planted up a layer ({PLANTED[1]} in {PLANTED[0]}) was "
              "not found", file=sys.stderr)
    n = len(rules(root))
    if not problems and planted:
        print(f"check_layers: every include of oracle/ and harness/ points down ({n} folders with "
              "a rule); a planted upward include is found")
    return 0 if not problems and planted else 1


if __name__ == "__main__":
    sys.exit(main())
