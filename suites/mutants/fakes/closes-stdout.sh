#!/bin/sh
# An implementation that answers hello, then closes its stdout and keeps reading.
read -r line
echo '{"protocol":1,"name":"closer","version":"0","ops":["hello","filter"]}'
exec 1>&-
while read -r line; do :; done
