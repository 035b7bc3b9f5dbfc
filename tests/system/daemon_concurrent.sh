#!/usr/bin/env bash
# ucmdd: 64 clients at once, each a different unprivileged user, each
# writing, flushing and verifying its own region; and while they run, one
# client that floods its ring without reaping until the daemon pushes back,
# then reaps everything: every SQE the daemon took gives one CQE (or is
# counted dropped in the CQ's overflow counter, as Linux does). Everyone
# succeeds; the flood affects only the flooder.
source "$(dirname "$0")/lib/daemon.sh"

N=64
U=64100
daemon_start --ctrl "$T/ctrl" "${ANY_USER[@]}"

step "$N concurrent clients and a flooder"
client 64099 flood --entries 64 --stall-ms 1000 >"$T/flood.out" 2>&1 &
fpid=$!
pids=()
for i in $(seq 0 $((N - 1))); do
	client "$((U + i))" rw --slba $((i * 2048)) --nlb 8 --count 64 --seed "$i" \
		>"$T/c$i.out" 2>&1 &
	pids+=("$!")
done
bad=0
for i in $(seq 0 $((N - 1))); do
	if ! wait "${pids[$i]}"; then
		echo "client $i failed:"; cat "$T/c$i.out"; bad=$((bad + 1))
	fi
done
[ "$bad" = 0 ] || fail "$bad of $N concurrent clients failed"
wait "$fpid" || { cat "$T/flood.out"; fail "the flooding client"; }
cat "$T/flood.out"
grep -q "pushed back" "$T/flood.out" || fail "the daemon never pushed back on the flood"

step "all regions intact, read by one more client"
for i in $(seq 0 $((N - 1))); do
	client "$((U + N))" rw --verify-only --slba $((i * 2048)) --nlb 8 --count 64 --seed "$i" \
		>/dev/null || fail "region of client $i"
done
daemon_alive
daemon_stop
echo "daemon_concurrent: $N concurrent clients succeeded"
