#!/bin/sh
# The long runs of sieve fuzz (harness/fuzz/README.md, "Evidence"): the faithful ports for
# PORT_SECONDS each, which must not fail, then every mutant of the catalogue with --first for
# MUTANT_SECONDS, with the seconds to its first failure, its verdicts and the first misreading
# its report names, "refused at hello"
# (a library that does not load), or "not found".
#   long.sh ROOT PORT_SECONDS MUTANT_SECONDS
# Exit 1 when a faithful port fails. Prints one line per run.
set -u
root=$1 port_seconds=$2 mutant_seconds=$3
sieve=$root/build/sieve
status=0
for impl in "lib:$root/build/mutants-f32/libport-faithful.so" \
            "exec:/usr/bin/python3 $root/suites/harness/rule_port.py" \
            "exec:/usr/bin/python3 $root/harness/adapters/python_batched_adapter.py"; do
  out=$("$sieve" fuzz --impl "$impl" --time "$port_seconds" --seed 1 | tail -1)
  case $out in *passed*) ;; *) status=1 ;; esac
  echo "faithful $impl: $out"
done
for lib in "$root"/build/mutants/lib*.so; do
  name=$(basename "$lib" .so); name=${name#lib}
  [ "$name" = port-faithful ] && continue
  out=$("$sieve" fuzz --impl "lib:$lib" --time "$mutant_seconds" --first --seed 1 2>&1)
  code=$?
  first=$(printf '%s\n' "$out" | sed -n 's/^the first failure came after \(.*\)$/\1/p')
  verdicts=$(printf '%s\n' "$out" | sed -n 's/^\([a-z][a-z ]*\): .* rows gave it)$/\1/p' | paste -sd, -)
  reading=$(printf '%s\n' "$out" | sed -n 's/.*more than half of the others: \([^ ]*\) gives.*/\1/p' | head -1)
  if [ "$code" = 2 ]; then
    echo "mutant $name: refused at hello"
  elif [ -n "$first" ]; then
    echo "mutant $name: $first ($verdicts)${reading:+, reading $reading}"
  else
    echo "mutant $name: not found in $mutant_seconds s"
  fi
done
exit $status
