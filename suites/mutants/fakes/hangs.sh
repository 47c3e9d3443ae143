#!/bin/sh
# An implementation that reads a request and never answers.
read -r line
exec sleep 3600
