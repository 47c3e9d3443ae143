#!/usr/bin/env bash
# The steps of harness/action.yml, one subcommand each; also usable from any runner's shell.
#
#   gate.sh build         builds sieve (its Debian packages through sudo when not root)
#   gate.sh smoke         the smoke suite: does $SIEVE_IMPL answer at all? (seconds)
#   gate.sh conformance   the run that gates: $SIEVE_IMPL against the fixtures, with
#                         $SIEVE_EXPECT (optional), $SIEVE_SUITE (optional), $SIEVE_JOBS;
#                         writes the JUnit report to $SIEVE_JUNIT and the HTML report to
#                         $SIEVE_HTML, appends the markdown report to $GITHUB_STEP_SUMMARY (a
#                         line saying so on a harness error) and the reports' paths to
#                         $GITHUB_OUTPUT when they are set and were written; exits with sieve
#                         run's status (0, 1 or 2).
#   gate.sh fuzz          $SIEVE_FUZZ_SECONDS (0 or empty: nothing) of sieve fuzz against
#                         $SIEVE_FUZZ_AGAINST: "fit" (the default) is the rule the conformance
#                         step fitted (the diagnosis.rule of $SIEVE_JUNIT), DeepInfer's when it
#                         fitted none; else profile:NAME or rule:AXIS=VALUE,... The seed is
#                         $SIEVE_FUZZ_SEED, else $GITHUB_RUN_ID (a re-run asks the same rows),
#                         else the clock; $SIEVE_FUZZ_SHARD (I/N) takes shard I of N of its
#                         rows. Writes the JUnit report to $SIEVE_FUZZ_JUNIT, the
#                         minimal cases to the folder $SIEVE_FUZZ_CASES, the text report to
#                         $GITHUB_STEP_SUMMARY and both paths to $GITHUB_OUTPUT; exits with sieve
#                         fuzz's status.
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
  local junit=${SIEVE_JUNIT:-sieve-junit.xml} html=${SIEVE_HTML:-sieve-report.html} summary args
  local status=0
  summary=$(mktemp)
  trap 'rm -f "$summary"' RETURN
  args=(run --impl "$SIEVE_IMPL" --jobs "${SIEVE_JOBS:-2}" --format junit --output "$junit"
        --report "markdown=$summary" --report "html=$html")
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
  if [ -n "${GITHUB_OUTPUT:-}" ] && [ -f "$html" ]; then
    echo "html=$html" >> "$GITHUB_OUTPUT"
  fi
  return "$status"
}

# The --against of the fuzz step: "fit" reads the fitted rule off the conformance report
# ("boundary=ge + topk_ties=keep_all", or "deepinfer").
fuzz_against() {
  local against=${SIEVE_FUZZ_AGAINST:-fit} junit=${SIEVE_JUNIT:-sieve-junit.xml} fitted=""
  if [ "$against" != fit ]; then
    echo "$against"
    return
  fi
  [ ! -f "$junit" ] ||
    fitted=$(sed -n 's/.*<property name="diagnosis.rule" value="\([^"]*\)".*/\1/p' "$junit" | head -1)
  case $fitted in
    "" | deepinfer) echo profile:deepinfer ;;
    *) echo "rule:${fitted// + /,}" ;;
  esac
}

fuzz() {
  need_impl
  local seconds=${SIEVE_FUZZ_SECONDS:-0} junit=${SIEVE_FUZZ_JUNIT:-sieve-fuzz-junit.xml}
  local cases=${SIEVE_FUZZ_CASES:-sieve-fuzz-cases} seed against report status=0
  if [ -z "$seconds" ] || [ "$seconds" = 0 ]; then
    echo "gate.sh fuzz: fuzz-seconds is 0: no fuzz step"
    return 0
  fi
  seed=${SIEVE_FUZZ_SEED:-${GITHUB_RUN_ID:-$(date +%s)}}
  against=$(fuzz_against)
  report=$(mktemp)
  trap 'rm -f "$report"' RETURN
  local shard=()
  [ -z "${SIEVE_FUZZ_SHARD:-}" ] || shard=(--shard "$SIEVE_FUZZ_SHARD")
  "$sieve" fuzz --impl "$SIEVE_IMPL" --against "$against" --time "$seconds" --seed "$seed" \
    "${shard[@]}" --report "junit=$junit" --save "$cases" | tee "$report" || status=$?
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    { echo "## sieve fuzz: seed $seed${SIEVE_FUZZ_SHARD:+, shard $SIEVE_FUZZ_SHARD}, against $against"
      echo; echo '```';
      cat "$report"; echo '```'; } >> "$GITHUB_STEP_SUMMARY"
  fi
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    [ ! -f "$junit" ] || echo "fuzz-junit=$junit" >> "$GITHUB_OUTPUT"
    [ ! -d "$cases" ] || echo "fuzz-cases=$cases" >> "$GITHUB_OUTPUT"
  fi
  return "$status"
}

case "${1:-}" in
  build | smoke | conformance | fuzz) "$1" ;;
  *) echo "usage: gate.sh build|smoke|conformance|fuzz" >&2; exit 2 ;;
esac
