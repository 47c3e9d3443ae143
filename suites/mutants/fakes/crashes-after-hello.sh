#!/bin/sh
# An implementation that answers hello, then dies of a segmentation fault on the next request.
read -r line
echo '{"protocol":1,"name":"crasher","version":"0","ops":["hello","validate","filter","uniform","draw","sample","position","bye"]}'
read -r line
echo "crashes-after-hello: about to crash" >&2
kill -SEGV $$
