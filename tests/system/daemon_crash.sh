#!/usr/bin/env bash
# ucmdd killed with SIGKILL while clients write: every write a client saw
# acknowledged and flushed (its rw finished: write, Flush, read back,
# verified) survives a restart of the daemon on the same directory.
source "$(dirname "$0")/lib/daemon.sh"

U=64041
CTRL=$T/ctrl
daemon_start --ctrl "$CTRL" "${ANY_USER[@]}"
: >"$T/acked"

writer() {
	local i=0
	while :; do
		if timeout 60 setpriv --reuid "$U" --regid "$U" --clear-groups --inh-caps=-all -- \
			"$CLIENT" rw --slba $((i * 64)) --nlb 8 --count 8 --seed "$((i + 100))" \
			--daemon "$SOCK" >/dev/null 2>&1; then
			echo "$i" >>"$T/acked"
		else
			return 0	# the daemon is gone: this one was not acknowledged
		fi
		i=$((i + 1))
	done
}

step "writers running; SIGKILL of the daemon at a random moment"
writer &
wpid=$!
STARTED_PIDS+=("$wpid")
for _ in $(seq 600); do
	[ "$(wc -l <"$T/acked")" -ge 10 ] && break
	daemon_alive
	sleep 0.1
done
sleep "0.$((RANDOM % 10))"
kill -KILL "$DPID"
wait "$DPID" 2>/dev/null || true
DPID=
wait "$wpid" || true
n=$(wc -l <"$T/acked")
[ "$n" -ge 10 ] || fail "only $n acknowledged writes before the kill"
echo "killed after $n acknowledged, flushed writes"

step "restart on the same directory: every acknowledged write is there"
daemon_start --ctrl "$CTRL" "${ANY_USER[@]}"
while read -r i; do
	client "$U" rw --verify-only --slba $((i * 64)) --nlb 8 --count 8 --seed "$((i + 100))" \
		>/dev/null || fail "acknowledged write $i lost"
done <"$T/acked"
daemon_stop
echo "daemon_crash: all $n acknowledged writes survived SIGKILL of ucmdd"
