#!/usr/bin/env bash
# ucmdd's CPU per NVMe/TCP read: runs `bench_tcp --only rr-tcp-ram` of
# BENCH_BUILD against the ucmdd of UCMDD_BUILD, waits for the connection,
# then counts ucmdd's task-clock and context switches over 2 s of the
# steady state (`perf stat -p`; after the bench has filled the namespace)
# and divides by the reads of those 2 s (the bench's rate over its 4 s run
# times 2: an estimate). One line per run; alternate builds to compare.
# Usage: bench/tcp_target_cpu.sh BENCH_BUILD [UCMDD_BUILD] [LABEL]
#        (a benchmark, not a test; needs perf)
set -eu
B=$1 U=${2:-$1} L=${3:-$U}
T=$(mktemp)
trap 'rm -f "$T"' EXIT
"$B/bench/bench_tcp" --time 4 --rounds 1 --only rr-tcp-ram --ucmdd "$U/src/server/ucmdd" >"$T" 2>&1 &
BP=$!
for _ in $(seq 200); do grep -q "connected to" "$T" && break; sleep 0.05; done
sleep 0.5
UP=$(pgrep -P "$BP" -x ucmdd)
ST=$(perf stat -x, -e task-clock,context-switches -p "$UP" -- sleep 2 2>&1)
wait "$BP"
OPS=$(awk '/^rr-tcp-ram/ { print $NF }' "$T")
TC=$(echo "$ST" | awk -F, '/task-clock/ { print $1 }')
CS=$(echo "$ST" | awk -F, '/context-switches/ { print $1 }')
awk -v l="$L" -v tc="$TC" -v ops="$OPS" -v cs="$CS" -v load="$(cut -d' ' -f1 /proc/loadavg)" 'BEGIN {
	printf "%s: load %s, %d reads/s, ucmdd %.0f ms of CPU in 2 s, %.3f us per read, %.4f switches per read\n",
	       l, load, ops, tc, tc * 1000 / (ops * 2), cs / (ops * 2) }'
