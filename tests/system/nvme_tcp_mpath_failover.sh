#!/usr/bin/env bash
# ucmd's multipath host when one path's connection drops, and the port
# coming back (ucmdd's port-state), on loopback against two ports of one
# subsystem:
#  - 16 writes at a time; port 1 non-optimized, so that the head sends
#    every write to port 2;
#    then port 2 is taken down (its listener stops, its connections are
#    closed): the write in flight on it is sent again on port 1 at once
#    (Linux's nvme_failover_req), not after a reconnection to port 2, so
#    writes go on while port 2 stays down; the writer sees no error;
#  - port 2 brought back: the host reconnects to it (reconnect_delay=1),
#    and with port 1 then inaccessible the writes go on through port 2;
#  - every block reads back as its last acknowledged write;
#  - partial attach: port 2 down when a host attaches to both: it comes up
#    on port 1 alone, retries port 2 every reconnect_delay, and once port 2
#    is back carries the writes through it (port 1 then inaccessible).
# shellcheck source=tests/system/lib/daemon.sh
source "$(dirname "$0")/lib/daemon.sh"
# shellcheck source=tests/system/lib/mpath_workload.sh
source "$(dirname "$0")/lib/mpath_workload.sh"
[ -x /usr/bin/python3 ] || fail "/usr/bin/python3 is missing"
daemon_start_two_ports
R="reconnect_delay=1&ctrl_loss_tmo=120"
U1="nvme-tcp://127.0.0.1:$P1/$NQN?$R" U2="nvme-tcp://127.0.0.1:$P2/$NQN?$R"
port() { "$UCMD" --daemon "$SOCK" port-state --port "$1" --state "$2" > "$T/port.out" 2>&1 ||
	{ cat "$T/port.out"; fail "port-state --port $1 --state $2"; }
	grep -q "^port $1: $2\$" "$T/port.out" || { cat "$T/port.out"; fail "port-state says"; }; }

echo "--- port-state: ask, bad input"
"$UCMD" --daemon "$SOCK" port-state --port 2 > "$T/ps.out" || fail "port-state --port 2"
grep -q '^port 2: up$' "$T/ps.out" || { cat "$T/ps.out"; fail "port 2 is not up at start"; }
rc=0; "$UCMD" --daemon "$SOCK" port-state --port 3 > "$T/ps3.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "no such --nvme-tcp listener" "$T/ps3.out" ||
	{ cat "$T/ps3.out"; fail "port 3: status $rc"; }
rc=0; "$UCMD" --daemon "$SOCK" port-state --port 2 --state sideways > "$T/ps4.out" 2>&1 || rc=$?
[ "$rc" = 2 ] || { cat "$T/ps4.out"; fail "--state sideways: status $rc"; }
echo "ok"

echo "--- writes on port 2 while its connections drop"
mkdir "$T/w"
ana 1 non-optimized
"$W" "$U1,$U2" "$T/w" qd=16 bs=131072 > "$T/w.out" 2>&1 &
WPID=$!
OUT=$T/w.out
wait_acks 2
sleep 2	# the ANA Change notice of port 1 reached the host: writes go to port 2
# The writes on port 2 at the instant it goes down: the writer keeps 16 in
# flight, but one that the target had answered just before is not in
# flight any more. So the drop is tried up to three times (port 2 brought
# back and carrying writes again in between) until it catches some.
path2() { grep '^acked' "$OUT" | tail -1 | sed -n 's/.* path2 \([0-9]*\) .*/\1/p'; }
fo=0
for attempt in 1 2 3; do
	p2=$(path2)
	for _ in $(seq 100); do [ "$(path2)" -gt "${p2:-0}" ] && break; sleep 0.1; done
	[ "$(path2)" -gt "${p2:-0}" ] || { tail -3 "$OUT"; fail "the writes do not go to port 2"; }
	port 2 down
	# port 2 stays down: the writes go on through port 1 within a few seconds
	wait_acks 4 8 "with port 2 down, the writes in flight there were not failed over"
	# ... because those in flight on port 2 went to port 1, not to wait for port 2
	fo=$(grep '^acked' "$OUT" | tail -1 | sed -n 's/.* failovers \([0-9]*\)$/\1/p')
	[ "${fo:-0}" -gt 0 ] && break
	echo "drop $attempt: no write was in flight on port 2; again"
	[ "$attempt" = 3 ] || { port 2 up; sleep 3; }	# reconnect_delay 1 s
done
[ "${fo:-0}" -gt 0 ] || { tail -3 "$OUT"; fail "port 2 down: no write failed over (they wait for it)"; }
grep -q '^write' "$T/w.out" && { cat "$T/w.out"; fail "the writer saw an error"; }
echo "ok: writes go on through port 1 while port 2 is down"

echo "--- port 2 back: the host reconnects to it"
port 2 up
sleep 3	# reconnect_delay 1 s
ana 1 inaccessible
wait_acks 4 20 "port 1 inaccessible: the host did not reconnect to port 2"
ana 1 optimized
wait_acks 2
workload_end "$T/w" mpath_workload
read -r _ _ _ _ _ _ _ d1 _ d2 _ fo _ <<<"$line"
[ "$d2" -gt 0 ] && [ "$d1" -gt 0 ] || fail "both paths should have carried writes: $line"
[ "$fo" -gt 0 ] || fail "no write failed over when port 2 went down: $line"
grep -q "port 2 (127.0.0.1:$P2) down" "$DLOG" && grep -q "port 2 (127.0.0.1:$P2) up" "$DLOG" ||
	fail "ucmdd's log does not say port 2 went down and up"
echo "ok: no lost write, no error, port 2 reconnected"

echo "--- attach with port 2 down: up on port 1, port 2 joins once back"
port 2 down
mkdir "$T/w2"
"$W" "$U1,$U2" "$T/w2" qd=16 > "$T/w2.out" 2>&1 &
WPID=$!
OUT=$T/w2.out
wait_acks 2 20 "no writes with port 2 down at attach"
port 2 up
sleep 3	# reconnect_delay 1 s
ana 1 inaccessible
wait_acks 4 20 "port 1 inaccessible: port 2 did not join the head"
ana 1 optimized
workload_end "$T/w2" "mpath_workload (partial attach)"
read -r _ _ _ _ _ _ _ d1 _ d2 _ <<<"$line"
[ "$d1" -gt 0 ] && [ "$d2" -gt 0 ] || fail "both paths should have carried writes: $line"
echo "ok: a path unreachable at attach joined once reachable"
daemon_stop
echo "PASS"
