#!/usr/bin/env bash
# ucmd's own NVMe/TCP host with native multipath, on loopback against
# ucmdd's target with two ports (two --nvme-tcp listeners) of one subsystem:
#  - the CLI with two URLs: one head (ng0n1, nvme0n1) over controllers
#    nvme0 and nvme1; data written through it is on the subsystem;
#  - bad input: two URLs naming two subsystems, an unreachable path;
#  - tests/system/qemu/mpath_workload: round-robin writes through the head's
#    block device while port 2 turns inaccessible and back (writes fail
#    over, none lost), then with both ports inaccessible a passthrough Read
#    on the head gets Linux's -EINVAL (uring_cmd) and -EWOULDBLOCK (ioctl)
#    and a block read waits until port 1 is optimized again; every block
#    reads back as last acknowledged.
# shellcheck source=tests/system/lib/daemon.sh
source "$(dirname "$0")/lib/daemon.sh"
# shellcheck source=tests/system/lib/mpath_workload.sh
source "$(dirname "$0")/lib/mpath_workload.sh"
[ -x /usr/bin/python3 ] || fail "/usr/bin/python3 is missing"
daemon_start_two_ports
U1=nvme-tcp://127.0.0.1:$P1/$NQN U2=nvme-tcp://127.0.0.1:$P2/$NQN

echo "--- the CLI on two paths"
head -c 65536 /dev/urandom > "$T/pat"
"$UCMD" --ctrl "$U1,$U2" write -s 16 -c 15 -z 65536 -d "$T/pat" >/dev/null ||
	fail "write through the head"
"$UCMD" --ctrl "$U2" read -s 16 -c 15 -z 65536 -d "$T/back" >/dev/null || fail "read via port 2"
cmp "$T/pat" "$T/back" || fail "port 2 reads other data than the head wrote"
ana 1 inaccessible
"$UCMD" --ctrl "$U1,$U2" read -s 16 -c 15 -z 65536 -d "$T/back2" >/dev/null ||
	fail "read through the head with port 1 inaccessible"
cmp "$T/pat" "$T/back2" || fail "the head read other data with port 1 inaccessible"
ana 1 optimized
echo "ok: one head over two controllers; a port inaccessible at attach is avoided"

echo "--- bad path lists"
rc=0
"$UCMD" --ctrl "$U1,nvme-tcp://127.0.0.1:$P2/nqn.2026-12.io.ucmd:other" id-ctrl \
	> "$T/two.out" 2>&1 || rc=$?
[ "$rc" != 0 ] && grep -q "path 2 names subsystem nqn.2026-12.io.ucmd:other, path 1 $NQN" \
	"$T/two.out" || { cat "$T/two.out"; fail "two subsystems: status $rc"; }
P3=$(free_port) P4=$(free_port)
# one path unreachable: the head comes up on the other (that one is retried)
rc=0
timeout 60 "$UCMD" --ctrl "nvme-tcp://127.0.0.1:$P3/$NQN,$U2" id-ctrl > "$T/unreach.out" 2>&1 ||
	rc=$?
[ "$rc" = 0 ] && grep -q "^subnqn *: $NQN" "$T/unreach.out" ||
	{ cat "$T/unreach.out"; fail "one unreachable path: status $rc"; }
# none reachable: the first one's reason, naming it
rc=0
timeout 60 "$UCMD" --ctrl "nvme-tcp://127.0.0.1:$P3/$NQN,nvme-tcp://127.0.0.1:$P4/$NQN" id-ctrl \
	> "$T/unreach2.out" 2>&1 || rc=$?
[ "$rc" != 0 ] && [ "$rc" != 124 ] && grep -q "path 1 (nvme-tcp://127.0.0.1:$P3/$NQN)" \
	"$T/unreach2.out" && grep -q "refused" "$T/unreach2.out" ||
	{ cat "$T/unreach2.out"; fail "no reachable path: status $rc"; }
echo "ok: two subsystems refused; one unreachable path left out, none reachable refused"

echo "--- writes while port 2 turns inaccessible and back, then no path"
mkdir "$T/w"
"$W" "$U1?iopolicy=round-robin,$U2" "$T/w" > "$T/w.out" 2>&1 &
WPID=$!
OUT=$T/w.out
wait_acks 2
for _ in 1 2 3; do
	ana 2 inaccessible
	wait_acks 3
	ana 2 optimized
	wait_acks 3
done
ana 1 inaccessible
ana 2 inaccessible
# a second host on the same two paths: passthrough and a block read, no usable path
"$W" "$U1,$U2" "$T/w" no-path > "$T/np.out" 2>&1 &
NPID=$!
for _ in $(seq 300); do grep -q '^queued$' "$T/np.out" && break; sleep 0.1; done
grep -q '^queued$' "$T/np.out" || { cat "$T/np.out"; fail "no queued read with no path"; }
grep -q '^passthru uring_cmd -22 ioctl -11$' "$T/np.out" ||
	{ cat "$T/np.out"; fail "passthrough with no usable path: not -EINVAL / -EWOULDBLOCK"; }
n=$(acks)
sleep 1
grep -q '^queued read' "$T/np.out" && { cat "$T/np.out"; fail "the read completed with no path"; }
# the writer's block write waits too (acks stall), not failed
[ "$(acks)" -le $((n + 1)) ] || fail "writes acknowledged with both ports inaccessible"
kill -0 "$WPID" 2>/dev/null || { cat "$T/w.out"; fail "the writer ended with no path"; }
ana 1 optimized
rc=0
wait "$NPID" || rc=$?
grep -q '^queued read: 4096$' "$T/np.out" && [ "$rc" = 0 ] ||
	{ cat "$T/np.out"; fail "the waiting read did not complete once port 1 came back"; }
# no I/O of that host went through port 1 meanwhile: its controller's notice told it
read -r _ n1 _ <<<"$(grep '^notices' "$T/np.out")"
[ "${n1:-0}" -ge 1 ] || { cat "$T/np.out"; fail "port 1 back: no ANA Change notice"; }
wait_acks 2
ana 2 optimized
wait_acks 2
workload_end "$T/w" mpath_workload
read -r _ _ _ _ _ _ _ d1 _ d2 _ fo _ a1 a2 <<<"$line"
[ "$d1" -gt 0 ] && [ "$d2" -gt 0 ] || fail "round-robin used one path only: $line"
[ "$fo" -gt 0 ] || fail "no write failed over while port 2 was inaccessible: $line"
# a change the host learnt first from an I/O's ANA status (and read the log
# for) is not noticed again by the target: some of port 2's changes are
[ "$((a1 + a2))" -ge 1 ] || fail "no ANA Change notice was seen: $line"
echo "ok: no lost write, no verify error; failovers, passthrough errors as Linux's"
daemon_stop
echo "PASS"
