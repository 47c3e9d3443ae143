#!/bin/sh
# One stage of make test, timed:
#   stage.sh LOG NAME COMMAND...  runs COMMAND, appends "NAME SECONDS STATUS" to
#                                 LOG, and exits with COMMAND's status
#   stage.sh LOG --table          prints LOG's stages as a table, with their sum
# A stage that fails prints the table so far, so the log shows where the time went either way.
set -u
log=$1
shift
table() {
  awk '{ printf "  %-12s %7.1f s%s\n", $1, $2, $3 == 0 ? "" : "  FAILED"; total += $2
         failed += $3 != 0 }
       END { printf "  %-12s %7.1f s\n", "total", total
             printf "%s\n", failed ? "make test: FAILED" : "make test: every stage passed" }' "$log"
}
if [ "$1" = --table ]; then
  echo "make test: seconds by stage (build/stages.tsv)"
  table
  exit 0
fi
name=$1
shift
start=$(date +%s.%N)
"$@"
status=$?
end=$(date +%s.%N)
awk -v name="$name" -v a="$start" -v b="$end" -v s="$status" \
  'BEGIN { printf "%s %.2f %s\n", name, b - a, s }' >> "$log"
if [ "$status" != 0 ]; then
  echo "make test: stage $name failed (exit $status); the stages so far:" >&2
  table >&2
fi
exit "$status"
