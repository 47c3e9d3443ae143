"""The `sieve` command of the wheel: runs the sieve CLI bundled beside this file (bin/sieve),
which finds the bundled fixtures (share/sieve/) as an installed sieve finds its own."""

import os
import shutil
import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent


def binary() -> str:
    """The sieve CLI: $SIEVE_BIN, the wheel's, the checkout's build/sieve, or sieve on PATH."""
    candidates = [os.environ.get("SIEVE_BIN"), _HERE / "bin" / "sieve",
                  _HERE.parents[2] / "build" / "sieve"]
    for c in candidates:
        if c and os.access(c, os.X_OK) and not os.path.isdir(c):
            return str(c)
    found = shutil.which("sieve")
    if found and Path(found).resolve() != Path(sys.argv[0]).resolve():
        return found
    raise OSError("the sieve CLI is not found: install the sieve wheel (make wheel), build sieve "
                  "(make), or set SIEVE_BIN")


def main() -> None:
    try:
        path = binary()
    except OSError as e:
        sys.exit(f"sieve: {e}")
    os.execv(path, [path, *sys.argv[1:]])


if __name__ == "__main__":
    main()
