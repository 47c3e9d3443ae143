#!/bin/sh
# The oracle declaring an arithmetic that sieve does not know in hello.
"$SIEVE_BIN" serve | sed -u 's/"precision":"float64"/"precision":"fp16"/'
