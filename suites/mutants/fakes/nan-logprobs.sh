#!/bin/sh
# The oracle with every sampled logprob, and every number of a logprobs row, replaced by NaN.
"$SIEVE_BIN" serve | sed -u -e 's/"logprob":[-0-9.e]*/"logprob":"nan"/g' \
  -e ':a' -e 's/\("logprobs":[^]]*[[,]\)-\{0,1\}[0-9][-0-9.e+]*/\1"nan"/' -e 'ta'
