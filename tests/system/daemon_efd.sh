#!/usr/bin/env bash
# The eventfds a ucmdd client shares cannot hold a daemon thread: a
# registered blocking eventfd at 2^64-2, the ring's cq eventfd made
# blocking (the same file description as the daemon's) and filled, and the
# sq eventfd made blocking and kept at 0 while the proxy drains it. Each
# client then exits; its threads must end (the thread count comes back),
# another client is served, and SIGTERM still saves the state and exits 0
# within 20 s (a daemon thread stuck in write() would hang it for ever).
# (The sq case held only the client's own ring before, since stopping a ring
# wrote the sq eventfd; stopping now wakes the proxy through an eventfd of
# the daemon's own, so the drain must not wait either.)
source "$(dirname "$0")/lib/daemon.sh"

U=64061
CTRL=$T/ctrl
daemon_start --ctrl "$CTRL" "${ANY_USER[@]}"
client "$U" rw --slba 0 --nlb 8 --count 4 --seed 3 >/dev/null || fail "a first client"
base=$(proc_status "$DPID" Threads)

for mode in efd-user efd-cq efd-sq; do
	step "$mode: the client holds its eventfd against the daemon, then exits"
	out=$(client "$U" hostile "$mode" --stall-ms 500) || fail "$mode: the client failed: $out"
	grep -qx "$mode: done" <<<"$out" || fail "$mode: $out"
done

step "every thread of those clients ends"
n=
for _ in $(seq 100); do
	n=$(proc_status "$DPID" Threads)
	[ "$n" -le "$base" ] && break
	sleep 0.1
done
[ "$n" -le "$base" ] || fail "ucmdd has $n threads 10 s after the clients left ($base before)"

step "another client is served"
client "$((U + 1))" rw --verify-only --slba 0 --nlb 8 --count 4 --seed 3 >/dev/null ||
	fail "a client after the hostile ones"

step "a hostile client still connected at SIGTERM does not hold the stop"
setpriv --reuid "$U" --regid "$U" --clear-groups --inh-caps=-all -- \
	"$CLIENT" hostile efd-cq --stall-ms 60000 --daemon "$SOCK" >/dev/null 2>&1 &
STARTED_PIDS+=("$!")
sleep 1
daemon_stop 20
grep -q "stopped" "$DLOG" || fail "ucmdd did not log its stop"

step "restart: the state was saved"
daemon_start --ctrl "$CTRL" "${ANY_USER[@]}"
client "$U" rw --verify-only --slba 0 --nlb 8 --count 4 --seed 3 >/dev/null || fail "data lost"
daemon_stop
echo "daemon_efd: no thread waits on a client's eventfd; SIGTERM exits 0"
