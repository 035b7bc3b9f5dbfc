#!/usr/bin/env bash
# 4 KiB randread QD32 through ucmd's NVMe/TCP host on loopback, against
# ucmdd --ram with two --nvme-tcp ports of one subsystem: one path (plain
# attach), round-robin over both, and numa over both (every read on the
# first path: what the head itself costs); prints each IOPS and the ratio.
# Usage: bench/mpath_tcp.sh [BUILD_DIR] [SECONDS]  (a benchmark, not a test)
set -eu
B=${1:-build} S=${2:-10}
ninja -C "$B" src/server/ucmdd tools/ucmd bench/bench_mpath_tcp >/dev/null
T=$(mktemp -d)
trap 'kill "$DPID" 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
P1=$(port) P2=$(port)
"$B/src/server/ucmdd" --ram 256M --socket "$T/sock" --foreground \
	--nvme-tcp "127.0.0.1:$P1" --nvme-tcp "127.0.0.1:$P2" > "$T/log" 2>&1 &
DPID=$!
for _ in $(seq 100); do grep -q "NVMe/TCP port 2 at" "$T/log" && break; sleep 0.1; done
NQN=$("$B/tools/ucmd" --daemon "$T/sock" id-ctrl | sed -n 's/^subnqn *: //p')
U1=nvme-tcp://127.0.0.1:$P1/$NQN U2=nvme-tcp://127.0.0.1:$P2/$NQN
one=$("$B/bench/bench_mpath_tcp" "$S" "$U1" | sed -n 's/^IOPS //p')
"$B/bench/bench_mpath_tcp" "$S" "$U1?iopolicy=round-robin,$U2" > "$T/two"
two=$(sed -n 's/^IOPS //p' "$T/two")
# the head's own cost: both paths attached, every read on the first (numa)
head=$("$B/bench/bench_mpath_tcp" "$S" "$U1?iopolicy=numa,$U2" | sed -n 's/^IOPS //p')
echo "one path:                 $one IOPS"
echo "round-robin, two paths:   $two IOPS ($(grep -c '^path' "$T/two") paths: $(grep '^path' "$T/two" | tr '\n' ' '))"
echo "numa, two paths (one used): $head IOPS"
echo "ratio two/one:            $(awk -v a="$two" -v b="$one" 'BEGIN { printf "%.2f", a / b }')"
