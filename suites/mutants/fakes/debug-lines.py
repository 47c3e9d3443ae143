"""The oracle, except that it writes a debug line to stdout before its answer to every third
uniform request, and dies of a segmentation fault on a filter batch of more than 64 rows. A
debug line puts its answers out of step: sieve fuzz must take the line as that request's answer
(a crash), start it again, and ask the request it had sent meanwhile again, so that no answer
is judged against another request; and a crash must not end the run."""
import json
import os
import signal
import subprocess
import sys

serve = subprocess.Popen([os.environ["SIEVE_BIN"], "serve"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
uniforms = 0
for line in sys.stdin:
    request = json.loads(line)
    if request.get("op") == "filter" and len(request.get("rows", [])) > 64:
        os.kill(os.getpid(), signal.SIGSEGV)
    if request.get("op") == "uniform":
        uniforms += 1
        if uniforms % 3 == 0:
            sys.stdout.write("debug: asking the uniform\n")
    serve.stdin.write(line)
    serve.stdin.flush()
    sys.stdout.write(serve.stdout.readline())
    sys.stdout.flush()
