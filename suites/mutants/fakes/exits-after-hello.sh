#!/bin/sh
# An implementation that answers hello and exits: the next request meets a closed pipe.
read -r line
echo '{"protocol":1,"name":"quitter","version":"0","ops":["hello","validate","filter","uniform","draw","sample","position","bye"]}'
