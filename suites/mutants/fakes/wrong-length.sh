#!/bin/sh
# The oracle with the first logprob of every row dropped: answers of the wrong length.
"$SIEVE_BIN" serve | sed -u 's/"logprobs":\[[^],]*,/"logprobs":[/g'
