"""The oracle, whose hello claims a largest batch beyond any integer ("max_batch": 1e30): sieve
fuzz must keep its batches to 1024 rows and finish, not loop on empty batches."""
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
    if json.loads(line).get("op") == "hello":
        answer["max_batch"] = 1e30
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
