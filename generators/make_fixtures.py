"""Writes the golden fixtures, checks them, and says what an update changes.

  make_fixtures.py [--out DIR]   regenerate into DIR (default: fixtures/), atomically, printing
                                 per case id what changed in the expectations
  make_fixtures.py --check       regenerate into a temporary folder; fail on any byte difference
                                 from fixtures/, and lint fixtures/
  make_fixtures.py --lint [--out DIR]  schema, unique ids, retired ids, every family present, every
                                 expected float inside a matcher

The same sources give byte-identical files: no clocks, no unseeded randomness, one thread.
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

import fixture_format as ff  # noqa: E402
import float32 as fp32  # noqa: E402
import readings  # noqa: E402
from families import ALL  # noqa: E402

DATA = "sieve-fixtures.json"
README = "README.md"
RETIRED = "retired-ids.txt"
SCHEMA_FILE = "schema.json"


SUITE_BY_OP = {"draw": "draw", "sample": "sample"}


def with_suite(c: dict, suite) -> dict:
    """The case with the suite of `sieve run` it belongs to, after its family."""
    suite = suite or SUITE_BY_OP.get(c["request"]["op"], "ordering")
    out = {k: c[k] for k in ("id", "family")}
    out["suite"] = suite
    out.update((k, v) for k, v in c.items() if k not in out)
    return out


def build():
    """All cases, family by family, with ids checked unique."""
    torch.set_num_threads(1)
    families, cases, seen = [], [], set()
    for module in ALL:
        try:
            family_cases = [with_suite(c, module.SUITE) for c in module.cases()]
        except ff.NotSeparating as e:
            raise SystemExit(f"make_fixtures: {e}") from None
        for c in family_cases:
            if c["id"] in seen:
                raise SystemExit(f"make_fixtures: duplicate case id {c['id']}")
            if c["family"] != module.FAMILY or not c["id"].startswith(module.FAMILY + "/"):
                raise SystemExit(f"make_fixtures: case {c['id']} is not in family {module.FAMILY}")
            seen.add(c["id"])
        families.append({"name": module.FAMILY, "description": module.DESCRIPTION,
                         "cases": len(family_cases)})
        cases += family_cases
    return families, cases


def render_data(families, cases) -> str:
    dump = lambda x: json.dumps(x, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    lines = ["{", f' "schema": {dump(ff.SCHEMA)},',
             f' "arithmetic": {dump(arithmetic())},',
             ' "families": [']
    lines += [f"  {dump(f)}{',' if i + 1 < len(families) else ''}" for i, f in enumerate(families)]
    lines += [" ],", ' "cases": [']
    lines += [f"  {dump(c)}{',' if i + 1 < len(cases) else ''}" for i, c in enumerate(cases)]
    lines += [" ]", "}"]
    return "\n".join(lines) + "\n"


def arithmetic() -> dict:
    """What the file's tolerances assume (fixtures/README.md, "Precision")."""
    return {"precisions": list(ff.PRECISIONS), "float32_unit_roundoff": fp32.U,
            "float32_routes": list(fp32.ROUTES), "draw_band": ff.DRAW_BAND}


def render_readme(families, cases) -> str:
    template = (HERE / "fixtures-README.md").read_text()
    rows = "\n".join(f"| `{f['name']}` | {f['cases']} | {f['description']} |" for f in families)
    table = f"| family | cases | what it tests |\n|---|---|---|\n{rows}\n| all | {len(cases)} | |"
    routes = "\n".join(f"- `{name}` ({precision}): {about}"
                       for name, (_, _, about, precision) in fp32.ROUTES.items())
    return template.replace("{{FAMILIES}}", table).replace("{{ROUTES}}", routes)


def atomic_write(files: dict) -> None:
    """Write {path: text} as a set: every text to a temporary file beside its path, then the
    renames. A reader sees each file old or new and whole; an interruption (an exception,
    Ctrl-C, or SIGTERM/SIGHUP through stop_on_signals) before the renames leaves every file as
    it was, and no temporary file behind."""
    temporaries = {}
    try:
        for path, text in files.items():
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
            temporaries[path] = tmp
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o644)
        for path, tmp in temporaries.items():
            os.replace(tmp, path)
    except BaseException:
        for tmp in temporaries.values():
            if os.path.exists(tmp):
                os.unlink(tmp)
        raise


def stop_on_signals() -> None:
    """SIGTERM and SIGHUP end the program as Ctrl-C does, by an exception, so that the
    clean-up of atomic_write runs (Python's default for them ends it without clean-up)."""
    def stop(signum, _frame):
        raise SystemExit(128 + signum)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, stop)


# ----------------------------------------------------------------------------- semantic diff


def _walk_diff(old, new, path, out, limit=6):
    if len(out) >= limit:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for k in sorted(set(old) | set(new), key=str):
            if k not in old:
                out.append(f"{path}.{k}: added {json.dumps(new[k])[:80]}")
            elif k not in new:
                out.append(f"{path}.{k}: removed")
            else:
                _walk_diff(old[k], new[k], f"{path}.{k}", out, limit)
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new)):
            _walk_diff(a, b, f"{path}[{i}]", out, limit)
    elif old != new or type(old) is not type(new):
        out.append(f"{path}: {json.dumps(old)[:60]} -> {json.dumps(new)[:60]}")


def semantic_diff(old_cases, new_cases):
    """Lines saying, per case id, what an update adds, removes and changes."""
    old = {c["id"]: c for c in old_cases}
    new = {c["id"]: c for c in new_cases}
    lines = [f"added   {i}" for i in new if i not in old]
    lines += [f"removed {i} (its id is retired)" for i in old if i not in new]
    for i in new:
        if i in old and old[i] != new[i]:
            details = []
            for part in ("request", "expect", "description", "seed_ref", "axis", "readings"):
                _walk_diff(old[i].get(part), new[i].get(part), part, details)
            lines.append(f"changed {i}: " + "; ".join(details))
    return lines


def load_cases(folder: Path):
    path = folder / DATA
    if not path.exists():
        return []
    return json.loads(path.read_text(encoding="utf-8"))["cases"]


def read_retired(folder: Path):
    path = folder / RETIRED
    if not path.exists():
        return []
    return [line.strip() for line in path.read_text().splitlines()
            if line.strip() and not line.startswith("#")]


def committed_cases(folder: Path, root: Path = ROOT):
    """The cases of the fixtures in git's HEAD: only their ids retire when they go, so a case
    made and dropped again before a commit leaves no trace. Outside a git checkout (or for a
    folder outside it) the file on disk stands in for HEAD."""
    try:
        rel = folder.resolve().relative_to(root.resolve())
        shown = subprocess.run(["git", "-C", str(root), "show", f"HEAD:{rel / DATA}"],
                               capture_output=True, text=True, check=True).stdout
        return json.loads(shown)["cases"]
    except (ValueError, OSError, KeyError, subprocess.CalledProcessError):
        return load_cases(folder)


def write_all(folder: Path, families, cases, committed):
    """The three files, whole; the ids of `committed` cases that are gone are retired."""
    retired = read_retired(folder)
    new_ids = {c["id"] for c in cases}
    reused = new_ids & set(retired)
    if reused:
        raise SystemExit(f"make_fixtures: retired ids may not be reused: {sorted(reused)}")
    gone = [c["id"] for c in committed if c["id"] not in new_ids and c["id"] not in retired]
    header = "# Case ids that were removed; they are never used again.\n"
    atomic_write({folder / RETIRED: header + "".join(f"{i}\n" for i in retired + gone),
                  folder / README: render_readme(families, cases),
                  folder / DATA: render_data(families, cases)})


# ----------------------------------------------------------------------------- lint


def _plain_floats(x, path, out):
    """Paths in an expectation where a non-integer number stands outside a matcher."""
    if isinstance(x, dict):
        if any(k.startswith("$") for k in x):
            return
        for k, v in x.items():
            _plain_floats(v, f"{path}.{k}", out)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            _plain_floats(v, f"{path}[{i}]", out)
    elif isinstance(x, float):
        out.append(path)


def lint(folder: Path) -> list:
    import jsonschema

    problems = []
    data = json.loads((folder / DATA).read_text(encoding="utf-8"))
    schema = json.loads((folder / SCHEMA_FILE).read_text(encoding="utf-8"))
    try:
        jsonschema.validate(data, schema)
    except jsonschema.ValidationError as e:
        problems.append(f"schema: {e.message} at {list(e.absolute_path)}")
    axis_enum = schema["$defs"]["case"]["properties"]["axis"]["enum"]
    if axis_enum != list(readings.AXES) + ["none"]:
        problems.append(f"schema: the axis enum is not readings.AXES (the axes of oracle/sieve.h "
                        f"and the statements) and none: {axis_enum}")
    ids = [c["id"] for c in data["cases"]]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    problems += [f"duplicate id {i}" for i in dupes]
    problems += [f"retired id in use: {i}" for i in set(ids) & set(read_retired(folder))]
    names = {f["name"] for f in data["families"]}
    problems += [f"family {m.FAMILY} has no cases" for m in ALL if m.FAMILY not in names]
    for f in data["families"]:
        n = sum(1 for c in data["cases"] if c["family"] == f["name"])
        if n != f["cases"] or n == 0:
            problems.append(f"family {f['name']}: {n} cases, header says {f['cases']}")
    for c in data["cases"]:
        floats = []
        _plain_floats(c["expect"], "expect", floats)
        problems += [f"{c['id']}: a float outside a matcher at {p}" for p in floats]
        problems += description_problems(c["id"], c["description"])
    return problems


DESCRIPTION_MAX = 120
MODAL = re.compile(r"\b(can|could|may|might|must|shall|should|will|would)\b", re.I)


def description_problems(cid: str, description: str) -> list:
    """A description states a fact: at most DESCRIPTION_MAX characters, no modal verb."""
    out = []
    if len(description) > DESCRIPTION_MAX:
        out.append(f"{cid}: the description has {len(description)} characters, more than "
                   f"{DESCRIPTION_MAX}")
    modal = MODAL.search(description)
    if modal:
        out.append(f"{cid}: the description says \"{modal.group(0)}\"; state what the case "
                   "shows")
    return out


def main():
    stop_on_signals()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "fixtures")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--lint", action="store_true")
    args = ap.parse_args()
    committed = ROOT / "fixtures"
    if args.lint:
        problems = lint(args.out)
        for p in problems:
            print(f"lint: {p}", file=sys.stderr)
        print(f"lint: {'FAILED' if problems else 'ok'} ({args.out / DATA})")
        return 1 if problems else 0
    families, cases = build()
    if args.check:
        return check(committed, families, cases)
    args.out.mkdir(parents=True, exist_ok=True)
    previous = load_cases(args.out)
    changes = semantic_diff(previous, cases)
    write_all(args.out, families, cases, committed_cases(args.out))
    for line in changes:
        print(line)
    print(f"make_fixtures: {len(cases)} cases in {len(families)} families; "
          f"{len(changes)} changed, added or removed")
    return 0


def check(committed: Path, families, cases) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name in (SCHEMA_FILE, RETIRED):
            if (committed / name).exists():
                (tmp / name).write_bytes((committed / name).read_bytes())
        write_all(tmp, families, cases, load_cases(committed))
        differ = [n for n in (DATA, README, RETIRED)
                  if not (committed / n).exists()
                  or (committed / n).read_bytes() != (tmp / n).read_bytes()]
        for line in semantic_diff(load_cases(committed), cases):
            print(f"check: {line}", file=sys.stderr)
    for n in differ:
        print(f"check: fixtures/{n} differs from what the generators write; run make fixtures "
              "and review the change", file=sys.stderr)
    problems = lint(committed)
    for p in problems:
        print(f"lint: {p}", file=sys.stderr)
    ok = not differ and not problems
    print(f"check-fixtures: {'ok' if ok else 'FAILED'}: {len(cases)} cases regenerated, "
          f"{len(differ)} files differ, {len(problems)} lint problems")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
