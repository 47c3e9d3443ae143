#!/bin/sh
# An implementation whose hello names no protocol.
while read -r line; do echo '{"name":"unversioned","version":"0","ops":["filter"]}'; done
