#!/bin/sh
# An implementation that writes only to stderr.
while read -r line; do echo "stderr-only: got a request" >&2; done
