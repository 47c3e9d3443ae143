#!/bin/sh
# Runs each libFuzzer target for SECONDS on a corpus seeded from the fixtures, two at a time
# (each is one process; make test has two cores).
#   run.sh ROOT SECONDS TARGET...
# Exit 1, naming the target, when one finds a crash (its input is kept in build/fuzz/).
set -eu
root=$1 seconds=$2
shift 2
fuzz=$root/build/fuzz

seed_corpus() {
  corpus=$fuzz/corpus_$1
  mkdir -p "$corpus"
  [ -z "$(ls -A "$corpus")" ] || return 0
  case $1 in
    serve) head -c 200000 "$root/harness/examples/requests.jsonl" > "$corpus/examples"
           printf '%s\n' '{"op":"filter","rows":[{"logits":{"$recipe":{"kind":"irwin_hall4","seed":"7","v":40,"bits":8,"exp":-6,"spike_every":9,"spike_units":900}}}]}' > "$corpus/recipe" ;;
    fixtures) /usr/bin/python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
pick = [c for c in d["cases"] if c["family"] in ("seed-examples", "draw")][:6]
pick += [c for c in d["cases"] if c["family"] == "large-vocab"][:1]
print(json.dumps({"schema": d["schema"], "cases": pick}))' "$root/fixtures/sieve-fixtures.json" > "$corpus/small" ;;
    answers) printf '{"rows":[{"logprobs":[-0.5,null,-1.5]}]}' > "$corpus/a1"
             printf '{"error":{"kind":"invalid_params","field":"top_k"}}' > "$corpus/a2" ;;
    oracle) printf '\000\000\000\000\000\000\360?\232\231\231\231\231\231\351?\002\000\000\000\000\000\000\000\000\000\200?\000\000\000@\000\000@@' > "$corpus/o1" ;;
  esac
}

# Runs one target; its verdict goes to $fuzz/fuzz_TARGET.verdict, 0 or 1.
fuzz_one() {
  if "$fuzz/fuzz_$1" -max_total_time="$seconds" -max_len=65536 -rss_limit_mb=2048 \
      -artifact_prefix="$fuzz/crash_$1-" -print_final_stats=1 "$fuzz/corpus_$1" \
      > "$fuzz/fuzz_$1.log" 2>&1; then
    echo 0 > "$fuzz/fuzz_$1.verdict"
  else
    echo 1 > "$fuzz/fuzz_$1.verdict"
  fi
}

report() {
  if [ "$(cat "$fuzz/fuzz_$1.verdict")" != 0 ]; then
    echo "fuzz: $1 found a crash; see $fuzz/fuzz_$1.log" >&2
    tail -30 "$fuzz/fuzz_$1.log" >&2
    return 1
  fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$fuzz/fuzz_$1.log" | grep -o '[0-9]*$')
  cov=$(grep -o 'cov: [0-9]*' "$fuzz/fuzz_$1.log" | tail -1)
  echo "fuzz: $1 ran $runs inputs in ${seconds}s ($cov), no crash"
}

for target in "$@"; do
  if [ ! -x "$fuzz/fuzz_$target" ]; then
    echo "fuzz: $fuzz/fuzz_$target is not built (make fuzz builds it)" >&2
    exit 1
  fi
  seed_corpus "$target"
done
status=0
while [ $# -gt 0 ]; do
  first=$1
  shift
  second=${1:-}
  [ -z "$second" ] || shift
  fuzz_one "$first" &
  [ -z "$second" ] || fuzz_one "$second" &
  wait
  report "$first" || status=1
  [ -z "$second" ] || report "$second" || status=1
done
exit $status
