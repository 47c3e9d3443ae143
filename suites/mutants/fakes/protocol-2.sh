#!/bin/sh
# An implementation that speaks protocol 2 only.
while read -r line; do echo '{"protocol":2,"name":"future","version":"0","ops":["filter"]}'; done
