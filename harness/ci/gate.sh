#!/usr/bin/env bash
# The steps of harness/action.yml, one subcommand each; also usable from any runner's shell.
#
#   gate.sh build         builds sieve (its Debian packages through sudo when not root)
#   gate.sh smoke         the smoke suite: does $SIEVE_IMPL answer at all? (seconds)
#   gate.sh conformance   the run that gates: $SIEVE_IMPL against the fixtures, with
#                         $SIEVE_EXPECT (optional), $SIEVE_SUITE (optional), $SIEVE_JOBS;
#                         writes the JUnit report to $SIEVE_JUNIT, appends the markdown report
#                         to $GITHUB_STEP_SUMMARY (a line saying so on a harness error) and
#                         the report's path to $GITHUB_OUTPUT when they are set and it was
#                         written; exits with sieve run's status (0, 1 or 2).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
sieve=$root/build/sieve

need_impl() {
  [ -n "${SIEVE_IMPL:-}" ] || { echo "gate.sh: SIEVE_IMPL (the action's impl input) is empty" >&2; exit 2; }
}

build() {
  if [ "$(id -u)" != 0 ] && command -v sudo >/dev/null 2>&1; then
    sudo make -s -C "$root" deps
  fi
  make -s -C "$root"
}

smoke() {
  need_impl
  "$sieve" run --suite smoke --impl "$SIEVE_IMPL"
}

conformance() {
  need_impl
  local junit=${SIEVE_JUNIT:-sieve-junit.xml} summary args status=0
  summary=$(mktemp)
  trap 'rm -f "$summary"' RETURN
  args=(run --impl "$SIEVE_IMPL" --jobs "${SIEVE_JOBS:-2}" --format junit --output "$junit"
        --report "markdown=$summary")
  [ -z "${SIEVE_EXPECT:-}" ] || args+=(--expect "$SIEVE_EXPECT")
  [ -z "${SIEVE_SUITE:-}" ] || args+=(--suite "$SIEVE_SUITE")
  "$sieve" "${args[@]}" || status=$?
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ -s "$summary" ]; then
    cat "$summary" >> "$GITHUB_STEP_SUMMARY"
  elif [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    echo "## sieve run: harness error (exit $status), no report: the step's log says why" \
      >> "$GITHUB_STEP_SUMMARY"
  fi
  if [ -n "${GITHUB_OUTPUT:-}" ] && [ -f "$junit" ]; then
    echo "junit=$junit" >> "$GITHUB_OUTPUT"
  fi
  return "$status"
}

case "${1:-}" in
  build | smoke | conformance) "$1" ;;
  *) echo "usage: gate.sh build|smoke|conformance" >&2; exit 2 ;;
esac
