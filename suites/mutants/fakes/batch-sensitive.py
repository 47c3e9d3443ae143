"""The oracle, except that a filter answer's rows after the first are a little off: its answer to
a case changes with the case's place in a batch, which sieve run's second pass must report as
nondeterminism (and --no-batches, which leaves that pass out, must not)."""
import json
import os
import subprocess
import sys

serve = subprocess.Popen([os.environ["SIEVE_BIN"], "serve"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
for line in sys.stdin:
    serve.stdin.write(line)
    serve.stdin.flush()
    answer = json.loads(serve.stdout.readline())
    for row in answer.get("rows", [])[1:]:
        logprobs = row.get("logprobs") if isinstance(row, dict) else None
        for i, x in enumerate(logprobs or []):
            if isinstance(x, float) and x < 0:
                logprobs[i] = x * (1 + 1e-9)
                break
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
