#!/bin/sh
# An implementation that answers every request with an empty object.
while read -r line; do case "$line" in *hello*) echo '{"protocol":1,"name":"empty","version":"0","ops":["filter"]}';; *) echo "{}";; esac; done
