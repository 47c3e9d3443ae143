#!/bin/sh
# One stage of make test, timed:
#   stage.sh LOG NAME COMMAND...          runs COMMAND, appends "NAME SECONDS STATUS START END"
#                                         to LOG, and exits with COMMAND's status
#   stage.sh LOG --whole NAME COMMAND...  the same, its output kept in LOG's folder and printed
#                                         whole when it ends (a stage run beside another lane)
#   stage.sh LOG --table                  prints LOG's stages as a table: the seconds of each,
#                                         and the run's wall-clock seconds, first start to last end
# A stage that fails prints the table so far, so the log shows where the time went either way.
set -u
log=$1
shift
table() {
  awk '{ printf "  %-12s %7.1f s%s\n", $1, $2, $3 == 0 ? "" : "  FAILED"; sum += $2
         failed += $3 != 0
         if (NR == 1 || $4 < first) first = $4
         if (NR == 1 || $5 > last) last = $5 }
       END { printf "  %-12s %7.1f s (the stages add up to %.1f s: two lanes run at once)\n",
                    "wall clock", last - first, sum
             printf "%s\n", failed ? "make test: FAILED" : "make test: every stage passed" }' "$log"
}
if [ "$1" = --table ]; then
  echo "make test: seconds by stage (build/stages.tsv)"
  table
  exit 0
fi
whole=""
if [ "$1" = --whole ]; then
  whole=1
  shift
fi
name=$1
shift
out="${log%.tsv}-$name.log"
start=$(date +%s.%N)
if [ -n "$whole" ]; then
  "$@" > "$out" 2>&1
  status=$?
  echo "make test: stage $name:"
  cat "$out"
else
  "$@"
  status=$?
fi
end=$(date +%s.%N)
awk -v name="$name" -v a="$start" -v b="$end" -v s="$status" \
  'BEGIN { printf "%s %.2f %s %.2f %.2f\n", name, b - a, s, a, b }' >> "$log"
if [ "$status" != 0 ]; then
  echo "make test: stage $name failed (exit $status); the stages so far:" >&2
  table >&2
fi
exit "$status"
