#!/usr/bin/env bash
# ucmd's NVMe/TCP host transport (--ctrl nvme-tcp://...), in two places:
#  1. on this machine, against ucmdd's own target (ucmdd --nvme-tcp) on
#     loopback: the CLI (Identify, write/read/compare, digests), the
#     target's policy and audit keyed by the host NQN, ucmd's own policy
#     and audit in front of the remote controller, and the differential
#     sequence through NVMe/TCP compared with the in-process path
#     (docs/nvme-tcp-host.md lists the differences); reconnection: a host
#     writing while ucmdd is killed -9 and restarted goes on and reads back
#     every acknowledged write; with no restart, its writes fail after
#     ctrl_loss_tmo with "Transport endpoint is not connected";
#  2. in a QEMU guest (tests/system/qemu/run.sh), against Linux's nvmet-tcp
#     loaded from the guest kernel's package and configured through configfs
#     with a file-backed namespace (tests/system/qemu/guest_tcp_host.sh).
# Needs root (apt, QEMU) and Debian's mirror on the first run.
source "$(dirname "$0")/lib/common.sh"
out=${UCMD_QEMU_OUT:-$(mktemp -d /var/tmp/ucmd-tcp-host.XXXXXX)}
on_fail() { [ -f "$T/ucmdd.log" ] && tail -5 "$T/ucmdd.log"; }

[ "$(id -u)" -eq 0 ] || command -v qemu-system-x86_64 >/dev/null ||
	fail "not root and no qemu-system-x86_64: cannot install the harness's packages"
[ -f "$B/build.ninja" ] || meson setup "$B"
ninja -C "$B" tools/ucmd src/server/ucmdd tests/system/qemu/difftest \
	tests/system/qemu/dt_mkctrl tests/system/qemu/tcp_workload >/dev/null ||
	fail "build failed (ucmd, ucmdd, difftest, dt_mkctrl, tcp_workload)"

# --- 1. loopback: ucmd's host against ucmdd's target ---------------------------
echo "--- loopback: ucmd --ctrl nvme-tcp:// against ucmdd --nvme-tcp"
DPID= WPID=
stop_both() {
	[ -z "$DPID" ] || kill "$DPID" 2>/dev/null
	[ -z "$WPID" ] || kill "$WPID" 2>/dev/null
	wait 2>/dev/null
}
at_exit stop_both
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$B/tests/system/qemu/dt_mkctrl" "$T/ctrl" || fail "dt_mkctrl"
RO=nqn.2026-12.io.ucmd:readonly-host
cat > "$T/target.ini" <<EOP
; everything, except writes from one host NQN (audited)
[policy]
default = allow
audit = no

[rule readonly-host]
hostnqn = $RO
verb = write, write-zeroes
action = deny
audit = yes
EOP
"$B/src/server/ucmdd" --ctrl "$T/ctrl" --socket "$T/sock" --policy "$T/target.ini" \
	--audit "$T/target-audit.json" --nvme-tcp "127.0.0.1:$PORT" --foreground \
	> "$T/ucmdd.log" 2>&1 &
DPID=$!
for _ in $(seq 100); do grep -q "NVMe/TCP at" "$T/ucmdd.log" 2>/dev/null && break; sleep 0.1; done
grep -q "NVMe/TCP at" "$T/ucmdd.log" || fail "ucmdd did not start its target"
NQN=$("$UCMD" --daemon "$T/sock" id-ctrl | sed -n 's/^subnqn *: //p')
[ -n "$NQN" ] || fail "no subsystem NQN from ucmdd"
URL=nvme-tcp://127.0.0.1:$PORT/$NQN

"$UCMD" --ctrl "$URL" id-ctrl > "$T/id-ctrl.txt" || fail "id-ctrl over nvme-tcp"
grep -q "^sn *: ucmd0001" "$T/id-ctrl.txt" || fail "id-ctrl: not the exported controller"
"$UCMD" --daemon "$T/sock" id-ctrl > "$T/id-ctrl.local.txt"
diff <(grep -E '^(sn|mn|fr|subnqn|nn|oncs) ' "$T/id-ctrl.txt") \
	<(grep -E '^(sn|mn|fr|subnqn|nn|oncs) ' "$T/id-ctrl.local.txt") ||
	fail "id-ctrl over nvme-tcp and through the daemon's socket differ"
head -c 262144 /dev/urandom > "$T/pat"
"$UCMD" --ctrl "$URL" write -s 64 -c 511 -z 262144 -d "$T/pat" >/dev/null || fail "write 256 KiB"
"$UCMD" --ctrl "$URL" read -s 64 -c 511 -z 262144 -d "$T/back" >/dev/null || fail "read 256 KiB"
cmp "$T/pat" "$T/back" || fail "read back differs"
"$UCMD" --ctrl "$URL" compare -s 64 -c 511 -z 262144 -d "$T/pat" >/dev/null || fail "compare"
head -c 262144 /dev/urandom > "$T/other"
if "$UCMD" --ctrl "$URL" compare -s 64 -c 511 -z 262144 -d "$T/other" > "$T/cmp.txt" 2>&1; then
	fail "compare with other data succeeded"
fi
grep -q "Compare Failure" "$T/cmp.txt" || { cat "$T/cmp.txt"; fail "compare: not the target's Compare Failure"; }
# the same bytes through the daemon's socket: one controller, two paths
"$UCMD" --daemon "$T/sock" read -s 64 -c 511 -z 262144 -d "$T/back2" >/dev/null
cmp "$T/pat" "$T/back2" || fail "the socket path reads other data"
echo "ok: id-ctrl, write/read/compare 256 KiB (R2T/C2HData), Compare Failure"

D="$URL?hdgst&ddgst"
head -c 512 /dev/urandom > "$T/small"
"$UCMD" --ctrl "$D" write -s 7 -c 0 -z 512 -d "$T/small" >/dev/null || fail "digests: write 512"
"$UCMD" --ctrl "$D" read -s 64 -c 511 -z 262144 -d "$T/back3" >/dev/null || fail "digests: read"
"$UCMD" --ctrl "$URL" read -s 7 -c 0 -z 512 -d "$T/small.back" >/dev/null
cmp "$T/pat" "$T/back3" && cmp "$T/small" "$T/small.back" || fail "digests: data differs"
echo "ok: header and data digests"

# the target's policy, by host NQN: this host may read, not write; audited
"$UCMD" --ctrl "$URL" --hostnqn "$RO" read -s 64 -c 0 -z 512 -d "$T/ro.back" >/dev/null ||
	fail "$RO could not read"
if "$UCMD" --ctrl "$URL" --hostnqn "$RO" write -s 64 -c 0 -z 512 -d "$T/small" > "$T/ro.txt" 2>&1; then
	fail "the target's policy let $RO write"
fi
grep -q "\"hostnqn\":\"$RO\"" "$T/target-audit.json" &&
	grep -q '"decision":"deny"' <<<"$(grep "\"hostnqn\":\"$RO\"" "$T/target-audit.json")" ||
	{ cat "$T/target-audit.json"; fail "the target's audit has no denial for $RO"; }
"$UCMD" --ctrl "$URL" read -s 64 -c 0 -z 512 -d "$T/ro2.back" >/dev/null
cmp "$T/ro.back" "$T/ro2.back" || fail "$RO's refused write changed the data"
echo "ok: the target's policy and audit see the host NQN"

# ucmd's own policy and audit, in front of the remote controller
printf '[policy]\ndefault = allow\naudit = yes\n\n[rule no-writes]\nverb = write\naction = deny\n' \
	> "$T/local.ini"
if "$UCMD" --ctrl "$URL" --policy "$T/local.ini" --audit "$T/local-audit.json" \
	write -s 64 -c 0 -z 512 -d "$T/small" > "$T/local.txt" 2>&1; then
	fail "the local policy let a write through"
fi
grep -q '"decision":"deny"' "$T/local-audit.json" || fail "no local audit record of the denial"
"$UCMD" --ctrl "$URL" --policy "$T/local.ini" --audit "$T/local-audit.json" \
	read -s 64 -c 0 -z 512 -d "$T/l.back" >/dev/null || fail "the local policy refused a read"
grep -q '"decision":"allow"' "$T/local-audit.json" || fail "no local audit record of the read"
echo "ok: ucmd's own policy and audit on the nvme-tcp controller"

# the differential sequence: in process vs through NVMe/TCP (fresh namespaces)
kill "$DPID"; wait "$DPID" 2>/dev/null || true; DPID=
rm -rf "$T/ctrl" && "$B/tests/system/qemu/dt_mkctrl" "$T/ctrl"
printf '[policy]\ndefault = allow\naudit = no\n' > "$T/allow.ini"
"$B/src/server/ucmdd" --ctrl "$T/ctrl" --socket "$T/sock" --policy "$T/allow.ini" \
	--nvme-tcp "127.0.0.1:$PORT" --foreground > "$T/ucmdd.log" 2>&1 &
DPID=$!
for _ in $(seq 100); do grep -q "NVMe/TCP at" "$T/ucmdd.log" 2>/dev/null && break; sleep 0.1; done
NQN=$("$UCMD" --daemon "$T/sock" id-ctrl | sed -n 's/^subnqn *: //p')
mkdir -p "$out"
"$B/tests/system/qemu/difftest" --emulated > "$out/inprocess.out" || fail "difftest --emulated"
"$B/tests/system/qemu/difftest" --tcp "nvme-tcp://127.0.0.1:$PORT/$NQN" > "$out/tcp.out" ||
	fail "difftest --tcp"
python3 tests/system/qemu/compare.py "$out/inprocess.out" "$out/tcp.out" docs/nvme-tcp-host.md \
	> "$out/compare.txt" || { grep -v '^known ' "$out/compare.txt"; fail "unexplained differences"; }
tail -1 "$out/compare.txt"
echo "ok: the differential sequence through NVMe/TCP matches the in-process path"

# reconnection: one host (tcp_workload) writes blocks 0..255 of namespace 1
# over and over while ucmdd is killed -9 and restarted on the same port and
# directory; it must go on and read back every acknowledged write. Waits
# are bounded generously (a hang fails), never asserted as durations.
acked() { grep -c '^acked' "$1" 2>/dev/null || true; }
wait_acked() {	# FILE N: until N writes are acknowledged or the workload ended
	for _ in $(seq 1200); do
		[ "$(acked "$1")" -ge "$2" ] && return 0
		kill -0 "$WPID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}
start_target() {	# the same directory and port, after a kill -9
	"$B/src/server/ucmdd" --ctrl "$T/ctrl" --socket "$T/sock" --policy "$T/allow.ini" \
		--nvme-tcp "127.0.0.1:$PORT" --foreground > "$T/ucmdd.log" 2>&1 &
	DPID=$!
	for _ in $(seq 300); do grep -q "NVMe/TCP at" "$T/ucmdd.log" 2>/dev/null && break; sleep 0.1; done
	grep -q "NVMe/TCP at" "$T/ucmdd.log" || fail "ucmdd did not restart its target"
}
W="$B/tests/system/qemu/tcp_workload"
rm -f "$T/stop"
timeout 300 "$W" "nvme-tcp://127.0.0.1:$PORT/$NQN?reconnect_delay=1&ctrl_loss_tmo=120" \
	"$T/stop" > "$T/wl.out" 2>&1 &
WPID=$!
wait_acked "$T/wl.out" 300 || { tail -3 "$T/wl.out"; fail "the workload did not start writing"; }
kill -9 "$DPID"; wait "$DPID" 2>/dev/null || true; DPID=
n0=$(acked "$T/wl.out")
rm -f "$T/sock"
start_target
wait_acked "$T/wl.out" $((n0 + 600)) ||
	{ tail -3 "$T/wl.out"; fail "the workload did not go on after the target's restart"; }
touch "$T/stop"
wrc=0; wait "$WPID" || wrc=$?; WPID=
[ "$wrc" -eq 0 ] || { grep -v '^acked' "$T/wl.out"; fail "workload across a restart: exit $wrc"; }
grep -q "^verified 256 blocks after .* writes, 1 reconnects$" "$T/wl.out" ||
	{ tail -2 "$T/wl.out"; fail "no verified read-back after one reconnect"; }
echo "ok: kill -9 and restart of the target: writes go on (killed after $n0), $(tail -2 "$T/wl.out" | head -1)"

# no restart: with ctrl_loss_tmo=2 the writes fail with a clear error, no hang
rm -f "$T/stop"
timeout 120 "$W" "nvme-tcp://127.0.0.1:$PORT/$NQN?reconnect_delay=1&ctrl_loss_tmo=2" \
	"$T/stop" > "$T/wl2.out" 2>&1 &
WPID=$!
wait_acked "$T/wl2.out" 100 || { tail -3 "$T/wl2.out"; fail "the second workload did not start"; }
kill -9 "$DPID"; wait "$DPID" 2>/dev/null || true; DPID=
wrc=0; wait "$WPID" || wrc=$?; WPID=
[ "$wrc" -eq 3 ] || { grep -v '^acked' "$T/wl2.out"; fail "workload without a target: exit $wrc, not 3"; }
grep -q "^write [0-9]*: Transport endpoint is not connected (-107)$" "$T/wl2.out" &&
	grep -q '^detached$' "$T/wl2.out" ||
	{ grep -v '^acked' "$T/wl2.out"; fail "not -ENOTCONN after ctrl_loss_tmo, or no detach"; }
echo "ok: no target after ctrl_loss_tmo: $(grep '^write' "$T/wl2.out")"

# --- 2. the guest: ucmd's host against Linux's nvmet-tcp -----------------------
echo "--- guest (results in $out)"
grc=0
bash tests/system/qemu/run.sh --out "$out" --script tests/system/qemu/guest_tcp_host.sh \
	--dyn "$B/tools/ucmd" --dyn "$B/tests/system/qemu/difftest" --mod nvmet-tcp \
	--mod vfat --mod loop --mod nls_cp437 --mod nls_ascii || grc=$?
[ -f "$out/guest.log" ] && sed 's/^/guest| /' "$out/guest.log"
[ "$grc" -eq 125 ] && fail "the guest did not run (see above)"
[ "$grc" -eq 0 ] || fail "guest tests failed (status $grc; $out/guest.log)"
grep -q "guest: all parts passed" "$out/guest.log" || fail "the guest did not finish its parts"
# the same sequence against nvmet as against the emulated controller in
# process: every difference must be one docs/nvmet-compat.md explains
python3 tests/system/qemu/compare.py "$out/inprocess.out" "$out/nvmet-tcp.out" docs/nvmet-compat.md \
	> "$out/compare-nvmet.txt" ||
	{ grep -v '^known ' "$out/compare-nvmet.txt"; fail "unexplained differences against nvmet-tcp"; }
echo "nvmet-tcp: $(tail -1 "$out/compare-nvmet.txt")"
echo "ok: the differential sequence against Linux's nvmet-tcp, every difference explained"
echo "nvme_tcp_host: all checks passed"
