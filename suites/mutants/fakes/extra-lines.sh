#!/bin/sh
# The oracle, but every answer is sent twice: from the second request on, answers are stale.
"$SIEVE_BIN" serve | sed -u 'p'
