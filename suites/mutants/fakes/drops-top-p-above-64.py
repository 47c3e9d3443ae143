"""The oracle, except that a filter batch of more than 64 rows takes another path that drops
every row's top_p (as the batched decode path of paiml/aprender#2080 did): sieve run's batches
stay below that size and pass; sieve fuzz must find it and shrink it to a batch of 65 rows."""
import json
import os
import subprocess
import sys

serve = subprocess.Popen([os.environ["SIEVE_BIN"], "serve"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
for line in sys.stdin:
    request = json.loads(line)
    rows = request.get("rows", []) if request.get("op") == "filter" else []
    if len(rows) > 64:
        for row in rows:
            row.get("params", {}).pop("top_p", None)
    serve.stdin.write(json.dumps(request) + "\n")
    serve.stdin.flush()
    sys.stdout.write(serve.stdout.readline())
    sys.stdout.flush()
