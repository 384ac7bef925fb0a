#!/usr/bin/env bash
# One device call (issue 15 part 3): the fixed cost of a dispatch + barrier in a replayed command
# buffer on the H100: chains of N dependent silu ops on one 256-wide row (bench/dispatch_chain.py),
# each checked against the CPU reference, then timed by vkqc bench (timestamp queries, whole program).
# usage (on the device, repo root): bash bench/device_dispatch.sh
set -u
source bench/device_env.sh
mkdir -p .dev/x && tar xJf .dev/bin.tar.xz -C .dev/x vkqc
V=$PWD/.dev/x/vkqc
for n in 1 16 64 256; do
  python3 bench/dispatch_chain.py /tmp/c$n $n
  $V compile /tmp/c$n/graph.json --target nvidia-hopper --tokens 1 -o /tmp/c$n.vkqb > /dev/null || exit 1
  $V run /tmp/c$n.vkqb --reference /tmp/c$n/graph.json | grep -E "PASS|FAIL" | sed "s/^/N=$n /"
  $V bench /tmp/c$n.vkqb --min-ms 300 2>&1 | grep whole | sed "s/^/N=$n /"
done
