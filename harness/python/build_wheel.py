"""Builds the sieve wheel offline, with Debian's setuptools and wheel (make wheel):

  build_wheel.py ROOT STAGE CLI LIBSIEVE VERSION DIST

stages the package in STAGE (harness/python/sieve/, the CLI as bin/sieve, libsieve and the
libraries the CLI needs that a manylinux platform does not promise, as lib/, the fixtures as
share/sieve/), tags it as manylinux for the newest glibc symbol version its binaries use (PEP 600),
and writes DIST/sieve_conformance-VERSION-py3-none-manylinux_2_N_ARCH.whl whole or not at all.
The package holds no Python extension, so one wheel serves every Python 3 (py3-none).
"""

import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# The libraries PEP 600's manylinux promises on every platform it names (auditwheel's policy).
PROMISED = {"libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1",
            "libgcc_s.so.1", "libstdc++.so.6", "libutil.so.1", "libresolv.so.2",
            "libnsl.so.1", "ld-linux-x86-64.so.2", "libcrypt.so.1"}


def needed(path: Path) -> list:
    out = subprocess.run(["objdump", "-p", str(path)], capture_output=True, text=True, check=True)
    return re.findall(r"^\s*NEEDED\s+(\S+)", out.stdout, re.M)


def glibc_minor(path: Path) -> int:
    """The newest GLIBC_2.N symbol version the file asks for."""
    out = subprocess.run(["objdump", "-T", str(path)], capture_output=True, text=True, check=True)
    return max((int(m) for m in re.findall(r"GLIBC_2\.(\d+)", out.stdout)), default=17)


def resolved(cli: Path) -> dict:
    """{soname: path} of the CLI's libraries, as the loader finds them."""
    out = subprocess.run(["ldd", str(cli)], capture_output=True, text=True, check=True)
    return dict(re.findall(r"^\s*(\S+) => (\S+)", out.stdout, re.M))


def stage(root: Path, stage_dir: Path, cli: Path, libsieve: Path, version: str) -> list:
    """The staged package; the ELF files it bundles."""
    shutil.rmtree(stage_dir, ignore_errors=True)
    pkg = stage_dir / "sieve"
    for sub in ("bin", "lib", "share/sieve"):
        (pkg / sub).mkdir(parents=True)
    src = root / "harness" / "python"
    shutil.copy(src / "pyproject.toml", stage_dir)
    shutil.copy(src / "README.md", stage_dir)
    for module in sorted((src / "sieve").glob("*.py")):
        shutil.copy(module, pkg)
    (pkg / "_version.py").write_text(f'VERSION = "{version}"\n')
    shutil.copy(cli, pkg / "bin" / "sieve")
    soname = re.search(r"SONAME\s+(\S+)", subprocess.run(
        ["objdump", "-p", str(libsieve)], capture_output=True, text=True, check=True).stdout)[1]
    shutil.copy(libsieve, pkg / "lib" / soname)
    shutil.copy(root / "fixtures" / "sieve-fixtures.json", pkg / "share" / "sieve")
    elves = [pkg / "bin" / "sieve", pkg / "lib" / soname]
    for name, path in resolved(cli).items():
        if name not in PROMISED:
            shutil.copy(path, pkg / "lib" / name)
            elves.append(pkg / "lib" / name)
            copyright_of(name, pkg / "share" / "sieve")
    return elves


def copyright_of(soname: str, share: Path) -> None:
    """The Debian copyright file of the package that ships a bundled library, beside it."""
    owner = subprocess.run(["dpkg", "-S", f"*/{soname}"], capture_output=True, text=True)
    package = owner.stdout.split(":")[0] if owner.returncode == 0 else ""
    notice = Path("/usr/share/doc") / package / "copyright"
    if not package or not notice.exists():
        sys.exit(f"build_wheel: no copyright file for the bundled {soname}")
    shutil.copy(notice, share / f"{soname}.copyright")


def platform_tag(elves: list) -> str:
    """manylinux_2_N_ARCH for the newest glibc the binaries ask for; exits when one needs a
    library neither promised nor bundled."""
    bundled = {p.name for p in elves}
    for path in elves:
        missing = [n for n in needed(path) if n not in PROMISED and n not in bundled]
        if missing:
            sys.exit(f"build_wheel: {path.name} needs {', '.join(missing)}, neither bundled nor "
                     "promised by manylinux")
    return f"manylinux_2_{max(glibc_minor(p) for p in elves)}_{platform.machine()}"


def build(stage_dir: Path, tag: str, dist: Path) -> Path:
    (stage_dir / "setup.cfg").write_text(f"[bdist_wheel]\npython_tag = py3\nplat_name = {tag}\n")
    dist.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dist) as tmp:
        env = dict(os.environ, SOURCE_DATE_EPOCH=os.environ.get("SOURCE_DATE_EPOCH", "315532800"))
        code = ("import sys; from setuptools import build_meta; "
                "print(build_meta.build_wheel(sys.argv[1]))")
        out = subprocess.run([sys.executable, "-c", code, tmp], cwd=stage_dir, env=env,
                             capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"build_wheel: setuptools failed:\n{out.stderr[-3000:]}")
        name = out.stdout.strip().splitlines()[-1]
        for old in dist.glob("sieve_conformance-*.whl"):
            old.unlink()
        os.replace(Path(tmp) / name, dist / name)
    return dist / name


def main() -> None:
    root, stage_dir, cli, libsieve, version, dist = sys.argv[1:7]
    elves = stage(Path(root), Path(stage_dir), Path(cli), Path(libsieve), version)
    print(build(Path(stage_dir), platform_tag(elves), Path(dist)))


if __name__ == "__main__":
    main()
