#!/bin/sh
# Every test that oracle/SPEC.md cites as `suite::name` must exist in suites/.
# Exit 1, naming the missing ones, when any does not.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
defined=$(mktemp)
trap 'rm -f "$defined"' EXIT
# Test(suite, name), ParameterizedTest(type, suite, name), and PROPERTY(name) in properties.
sed -n -e 's/^Test(\([a-z0-9_]*\), *\([a-z0-9_]*\)).*/\1::\2/p' \
       -e 's/^PROPERTY(\([a-z0-9_]*\)).*/properties::\1/p' "$root"/suites/*.c > "$defined"
tr -d '\n' < "$root"/suites/test_properties.c |
  grep -o 'ParameterizedTest([^,]*, *[a-z0-9_]*, *[a-z0-9_]*)' |
  sed 's/ParameterizedTest([^,]*, *\([a-z0-9_]*\), *\([a-z0-9_]*\))/\1::\2/' >> "$defined"
missing=0
for cited in $(grep -o '`[a-z0-9_]*::[a-z0-9_]*`' "$root/oracle/SPEC.md" | tr -d '`' | sort -u); do
  if ! grep -qx "$cited" "$defined"; then
    echo "oracle/SPEC.md cites $cited, which is not a test in suites/" >&2
    missing=1
  fi
done
count=$(grep -o '`[a-z0-9_]*::[a-z0-9_]*`' "$root/oracle/SPEC.md" | sort -u | wc -l)
[ "$missing" = 0 ] && echo "check_spec: all $count tests cited by oracle/SPEC.md exist"
exit "$missing"
