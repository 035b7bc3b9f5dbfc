#!/usr/bin/env bash
# ucmdd's SIGTERM: it drains what is in flight, saves and exits 0; clients
# busy on their rings then get -ENOTCONN from their next call, not a hang
# (timeout(1) turns a hang into a failure); the data written before is
# there after a restart.
source "$(dirname "$0")/lib/daemon.sh"

U=64051
CTRL=$T/ctrl
daemon_start --ctrl "$CTRL" "${ANY_USER[@]}"
client "$U" rw --slba 0 --nlb 8 --count 32 --seed 5 >/dev/null || fail "writing before SIGTERM"

step "three clients doing I/O; SIGTERM"
pids=()
for k in 0 1 2; do
	timeout -k 5 120 setpriv --reuid "$((U + k))" --regid "$((U + k))" --clear-groups \
		--inh-caps=-all -- "$CLIENT" hold --until-error --daemon "$SOCK" >"$T/h$k.out" 2>&1 &
	pids+=("$!")
done
for k in 0 1 2; do
	for _ in $(seq 300); do
		grep -q "hold: ready" "$T/h$k.out" && break
		sleep 0.1
	done
	grep -q "hold: ready" "$T/h$k.out" || { cat "$T/h$k.out"; fail "client $k not ready"; }
done
daemon_stop
for k in 0 1 2; do
	rc=0
	wait "${pids[$k]}" || rc=$?
	[ "$rc" != 124 ] && [ "$rc" != 137 ] || fail "client $k hung after the daemon stopped"
	[ "$rc" = 0 ] || { cat "$T/h$k.out"; fail "client $k exited $rc"; }
	grep -qx ENOTCONN <<<"$(tail -n 1 "$T/h$k.out")" || { cat "$T/h$k.out"; fail "client $k did not get ENOTCONN"; }
done

step "a client connecting now is refused, not left waiting"
rc=0
client "$U" rw --slba 0 --nlb 8 --count 1 >/dev/null 2>&1 || rc=$?
[ "$rc" != 0 ] && [ "$rc" != 124 ] && [ "$rc" != 137 ] || fail "connecting to a stopped daemon: exit $rc"

step "restart: the data written before SIGTERM is there"
daemon_start --ctrl "$CTRL" "${ANY_USER[@]}"
client "$U" rw --verify-only --slba 0 --nlb 8 --count 32 --seed 5 >/dev/null || fail "data lost across SIGTERM"
daemon_stop
echo "daemon_sigterm: exit 0, clients got ENOTCONN"
