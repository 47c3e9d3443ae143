#!/bin/sh
# An implementation whose hello gives the protocol as a string.
while read -r line; do echo '{"protocol":"v1","name":"stringly","version":"0","ops":["filter"]}'; done
