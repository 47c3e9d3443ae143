#!/bin/sh
# `make install` into a temporary PREFIX, then every documented use of what it installs, from a
# folder outside the checkout (harness/CI.md "From the engine's own tests", oracle/README.md):
# the pkg-config line with its rpath, the static line, the C adapter's build line, the CLI and
# the Python module. Fails naming the step.
#
#   sh suites/check_install.sh ROOT
set -u
root=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
# The soname's number, the major version of sieve.h.
major=$(sed -n 's/^#define SIEVE_VERSION "\([0-9]*\)\..*/\1/p' "$root/oracle/sieve.h")
passed=0
failed=0

step() {
  name=$1
  shift
  if out=$("$@" 2>&1); then
    passed=$((passed + 1))
    echo "ok   install: $name"
  else
    failed=$((failed + 1))
    echo "FAIL install: $name"
    printf '%s\n' "$out" | tail -n 8 | sed 's/^/     /'
  fi
}

installed_files() {
  for f in lib/libsieve.a lib/libsieve.so lib/libsieve.so.$major include/sieve.h include/sieve_impl.h \
    lib/pkgconfig/sieve.pc bin/sieve share/sieve/sieve-fixtures.json; do
    [ -e "$prefix/$f" ] || { echo "missing $prefix/$f"; return 1; }
  done
  readelf -d "$prefix/lib/libsieve.so" | grep -q "SONAME.*\\[libsieve\\.so\\.$major\\]" ||
    { echo "libsieve.so has no soname libsieve.so.$major"; return 1; }
}

pc() { PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config "$@"; }

# The documented line: pkg-config's flags and an rpath to its libdir.
shared_program() {
  cc "$root/harness/adapters/example_filter.c" $(pc --cflags --libs sieve) \
    -Wl,-rpath,"$(pc --variable=libdir sieve)" -o "$work/example_filter" &&
    "$work/example_filter" | grep -q '^kept 2: 0=0.6225 1=0.3775$' &&
    readelf -d "$work/example_filter" | grep -q "NEEDED.*\\[libsieve\\.so\\.$major\\]"
}

# The static line: the archive named, no run-time search path needed.
static_program() {
  cc "$root/harness/adapters/example_filter.c" $(pc --cflags sieve) \
    "$(pc --variable=libdir sieve)/libsieve.a" -lm -o "$work/example_static" &&
    "$work/example_static" | grep -q '^kept 2:' &&
    ! readelf -d "$work/example_static" | grep -q 'libsieve'
}

# harness/adapters/c_adapter.c's own build line, run beside a copy of the file.
c_adapter() {
  cp "$root/harness/adapters/c_adapter.c" "$work/" &&
    line=$(sed -n 's/^ \*   //p' "$work/c_adapter.c" | grep -v '^sieve run') &&
    printf '%s\n' "$line" | grep -q '^cc -shared' &&
    (cd "$work" && export PKG_CONFIG_PATH="$prefix/lib/pkgconfig" && eval "$line") &&
    (cd "$work" && "$prefix/bin/sieve" run --impl lib:./libmy_sampler.so --suite smoke --format tap \
      >/dev/null)
}

# The CLI finds its fixtures in PREFIX/share/sieve.
cli() {
  (cd "$work" && "$prefix/bin/sieve" run --impl profile:deepinfer --suite smoke --format tap \
    >/dev/null)
}

# Debian's python3 imports the module from PYTHONDIR with no SIEVE_LIB, and it uses the
# installed library and fixtures.
python_module() {
  pydir=$(find "$prefix/lib" -path '*/dist-packages/sieve/__init__.py' | head -n 1)
  [ -n "$pydir" ] || { echo "no dist-packages/sieve/__init__.py under $prefix/lib"; return 1; }
  (cd "$work" && env -u SIEVE_LIB -u SIEVE_FIXTURES PYTHONPATH="$(dirname "$(dirname "$pydir")")" \
    /usr/bin/python3 -c '
import sys, sieve
prefix = sys.argv[1]
assert sieve.__file__.startswith(prefix), sieve.__file__
sieve.filter([2.0, 1.0, 0.0], top_p=0.9)
maps = open("/proc/self/maps").read()
assert prefix + "/lib/libsieve.so" in maps, "the installed libsieve.so was not the one loaded"
assert sieve.fixtures_path().startswith(prefix), sieve.fixtures_path()
' "$prefix")
}

# `make` (and so `make install`) asks for the run-time packages only; the tests' are make test's.
build_packages() {
  asked=$(make -n -C "$root" all SAN=0 | sed -n 's/.*for p in \([^;]*\);.*/\1/p' | sort -u)
  [ "$asked" = "libcjson-dev pkg-config" ] || { echo "make asks for: $asked"; return 1; }
}

step "make builds with libcjson-dev and pkg-config alone" build_packages
step "make install PREFIX=..." make -s -C "$root" install PREFIX="$prefix" SAN=0
step "the library (with its soname), headers, pkg-config file, CLI and fixtures" installed_files
step "pkg-config --cflags --libs with -Wl,-rpath builds a program that runs" shared_program
step "the static archive builds a program with no run-time dependency" static_program
step "c_adapter.c's documented build line gives a library sieve run passes" c_adapter
step "the installed CLI finds the installed fixtures" cli
step "Debian's python3 imports the installed module, which loads the installed library" python_module
echo "check_install: $passed passed, $failed failed"
[ "$failed" = 0 ]
