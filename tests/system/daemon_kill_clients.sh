#!/usr/bin/env bash
# ucmdd: clients that die mid-I/O cost the daemon nothing that stays. Each
# round a client keeps reads in flight on two rings (plain buffers the
# daemon bounces; ucmd_buf_alloc() memory registered as fixed buffers) and
# a TIMEOUT of an hour, and is killed with SIGKILL; every third round a
# client instead floods its ring until the daemon pushes back and exits
# with its CQ and overflow list full. Afterwards the daemon's descriptors
# and threads are back to their count before the rounds exactly, and its
# memory within a small bound:
#
#   fds, threads       exact: every per-client fd (socket, ring memfd,
#                      eventfds, region memfds, pidfd) and thread (control,
#                      proxies) is the client's and must go with it.
#   /proc/PID/maps     at most 4 more lines: each ring and region the
#                      daemon maps is a line, so a leaked one per round would
#                      be 30+; a few lines of allocator heaps may appear.
#   VmRSS, VmData      at most 4 MiB more. One round holds about 32 KiB of
#                      bounces, a 64 KiB region and a ring of ~30 KiB (the
#                      flood: 4096 overflow CQEs, ~128 KiB), so a leak of
#                      any of them over 30 rounds is 2-8 MiB; the allocator
#                      keeps some freed memory, which warm-up rounds settle
#                      before the baseline is taken. MALLOC_ARENA_MAX=1:
#                      glibc reserves 64 MiB of VmData for each new
#                      per-thread arena and never gives it back, a step that
#                      would say nothing about leaks.
source "$(dirname "$0")/lib/daemon.sh"

ROUNDS=${ROUNDS:-30}
WARM=5
U=64021
export MALLOC_ARENA_MAX=1
daemon_start --ctrl "$T/ctrl" "${ANY_USER[@]}"
client "$U" rw --slba 0 --nlb 8 --count 8 >/dev/null || fail "first client"

one_round() {	# i
	local i=$1 out=$T/c.out pid
	if [ $((i % 3)) = 2 ]; then
		client "$((U + 1))" flood --entries 64 --no-reap --stall-ms 500 >"$out" 2>&1 ||
			{ cat "$out"; fail "round $i: flood client failed"; }
		return
	fi
	: >"$out"
	setpriv --reuid "$U" --regid "$U" --clear-groups --inh-caps=-all -- \
		"$CLIENT" hold --qd 16 --daemon "$SOCK" >"$out" 2>&1 &
	pid=$!
	STARTED_PIDS+=("$pid")
	for _ in $(seq 300); do
		grep -q "hold: ready" "$out" && break
		kill -0 "$pid" 2>/dev/null || { cat "$out"; fail "round $i: hold client died"; }
		sleep 0.1
	done
	grep -q "hold: ready" "$out" || fail "round $i: hold client not ready"
	sleep "0.0$((RANDOM % 10))"
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null || true
}

# Wait (bounded) for the daemon to have let go of every dead client.
settle() {	# fds threads
	for _ in $(seq 600); do
		[ "$(proc_fds "$DPID")" = "$1" ] && [ "$(proc_status "$DPID" Threads)" = "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

step "warm-up: $WARM rounds"
for i in $(seq "$WARM"); do one_round "$i"; done
sleep 1
fd0=$(proc_fds "$DPID"); th0=$(proc_status "$DPID" Threads)
# cleanup of the warm-up clients may still run: wait for a stable count
for _ in $(seq 50); do
	sleep 0.2
	f=$(proc_fds "$DPID"); t=$(proc_status "$DPID" Threads)
	[ "$f" = "$fd0" ] && [ "$t" = "$th0" ] && break
	fd0=$f; th0=$t
done
rss0=$(proc_status "$DPID" VmRSS); data0=$(proc_status "$DPID" VmData); maps0=$(proc_maps "$DPID")
echo "baseline: $fd0 fds, $th0 threads, $maps0 maps, VmRSS $rss0 kB, VmData $data0 kB"

step "$ROUNDS rounds of clients killed mid-I/O"
for i in $(seq "$ROUNDS"); do
	one_round "$i"
	daemon_alive
done
settle "$fd0" "$th0" || fail "fds/threads $(proc_fds "$DPID")/$(proc_status "$DPID" Threads), baseline $fd0/$th0"
rss1=$(proc_status "$DPID" VmRSS); data1=$(proc_status "$DPID" VmData); maps1=$(proc_maps "$DPID")
echo "after: $(proc_fds "$DPID") fds, $(proc_status "$DPID" Threads) threads, $maps1 maps, VmRSS $rss1 kB, VmData $data1 kB"
[ "$maps1" -le $((maps0 + 4)) ] || fail "maps grew from $maps0 to $maps1"
[ "$rss1" -le $((rss0 + 4096)) ] || fail "VmRSS grew from $rss0 kB to $rss1 kB"
[ "$data1" -le $((data0 + 4096)) ] || fail "VmData grew from $data0 kB to $data1 kB"

step "another client works"
client "$((U + 2))" rw --slba 4096 --nlb 8 --count 16 --seed 3 >/dev/null || fail "client after the kills"
daemon_stop
echo "daemon_kill_clients: $ROUNDS killed clients left nothing behind"
