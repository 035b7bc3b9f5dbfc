#!/usr/bin/env bash
# The owner's ANA states of a controller directory of several controllers
# (each controller a port of its own), as nvmet's configfs ana_state:
#  - `ucmd --ctrl DIR ana-state --controller nvmeX` shows and sets a
#    controller's state, kept in the directory; bad names, a directory of
#    one controller, --port with --controller get their own errors;
#  - through ucmdd (UCMDD_CTRL_ANA_STATE): the daemon's multipath head
#    follows (both controllers inaccessible: passthrough on the head has no
#    path, -EINVAL as Linux; one back: I/O goes on), only ucmdd's user and
#    root may set, and the states outlive the daemon.
# Needs root (a second user asks and is refused).
# shellcheck source=tests/system/lib/daemon.sh
source "$(dirname "$0")/lib/daemon.sh"
need_tools setpriv nvme

D=$T/subsys
"$UCMD" --ctrl "$D" create-ctrl --controllers 2 >/dev/null || fail "create-ctrl --controllers 2"
state() {	# args... -> the line ana-state prints
	"$UCMD" "$@" 2>&1
}

step "in process"
[ "$(state --ctrl "$D" ana-state --controller nvme1)" = "nvme1 group 1: optimized" ] ||
	fail "controller 2 does not start optimized: $(state --ctrl "$D" ana-state --controller nvme1)"
[ "$(state --ctrl "$D" ana-state --controller nvme1 --state non-optimized)" = \
	"nvme1 group 1: non-optimized" ] || fail "setting nvme1 non-optimized"
[ "$(state --ctrl "$D" ana-state --controller nvme1)" = "nvme1 group 1: non-optimized" ] ||
	fail "the state is not kept in the directory"
[ "$(state --ctrl "$D" ana-state --controller nvme0)" = "nvme0 group 1: optimized" ] ||
	fail "controller 1 changed with controller 2"
bad() {	# rc message args...
	local want=$1 msg=$2 rc=0; shift 2
	"$UCMD" "$@" > "$T/bad.out" 2>&1 || rc=$?
	[ "$rc" = "$want" ] && grep -q -- "$msg" "$T/bad.out" ||
		{ cat "$T/bad.out"; fail "ucmd $*: status $rc, want $want and '$msg'"; }
}
bad 1 "nvme2, group 1: No such device (no such controller)" --ctrl "$D" ana-state --controller nvme2
bad 1 "no such controller" --ctrl "$D" ana-state --controller nvmex
bad 1 "(no such ANA group)" --ctrl "$D" ana-state --controller nvme1 --group 2
bad 2 "name one port" --ctrl "$D" ana-state --controller nvme1 --port 1
bad 2 "name one port" --ctrl "$D" ana-state
bad 2 "one of optimized" --ctrl "$D" ana-state --controller nvme1 --state off
"$UCMD" --ctrl "$T/one" create-ctrl >/dev/null || fail "create-ctrl"
bad 1 "a subsystem of one controller has no ANA" --ctrl "$T/one" ana-state --controller nvme0
echo "ok: shown, set and kept; bad names, groups, states and a directory of one refused"

step "through ucmdd"
printf '[policy]\ndefault = allow\naudit = no\n' >"$T/policy.ini"
daemon_start --ctrl "$D" --policy "$T/policy.ini" --socket-mode 0666
[ "$(state --daemon "$SOCK" ana-state --controller nvme1)" = "nvme1 group 1: non-optimized" ] ||
	fail "ucmdd does not see the directory's state"
rc=0
as_user 4321 "$UCMD" --daemon "$SOCK" ana-state --controller nvme1 --state optimized \
	> "$T/eperm.out" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "only ucmdd's user and root" "$T/eperm.out" ||
	{ cat "$T/eperm.out"; fail "another user set a state: status $rc"; }
[ "$(as_user 4321 "$UCMD" --daemon "$SOCK" ana-state --controller nvme1 2>&1)" = \
	"nvme1 group 1: non-optimized" ] || fail "another user cannot ask"
bad 1 "no such controller" --daemon "$SOCK" ana-state --controller nvme2
bad 1 "no such controller" --daemon "$SOCK" ana-state --controller ng0n1

"$UCMD" --daemon "$SOCK" write -s 0 -c 7 -z 4096 -d /dev/urandom >/dev/null ||
	fail "a write through the head"
for c in nvme0 nvme1; do
	"$UCMD" --daemon "$SOCK" ana-state --controller $c --state inaccessible >/dev/null ||
		fail "ana-state --controller $c --state inaccessible"
done
# the head learns it from each controller's ANA Change notice
rc=0
for _ in $(seq 100); do
	rc=0
	"$UCMD" --daemon "$SOCK" read -s 0 -c 7 -z 4096 > "$T/none.out" 2>&1 || rc=$?
	[ "$rc" != 0 ] && break
	sleep 0.1
done
[ "$rc" != 0 ] && grep -q "Invalid argument" "$T/none.out" ||
	{ cat "$T/none.out"; fail "both controllers inaccessible: the head's read got status $rc"; }
"$UCMD" --daemon "$SOCK" ana-state --controller nvme1 --state optimized >/dev/null ||
	fail "nvme1 back to optimized"
for _ in $(seq 100); do
	"$UCMD" --daemon "$SOCK" read -s 0 -c 7 -z 4096 > /dev/null 2>&1 && break
	sleep 0.1
done
"$UCMD" --daemon "$SOCK" read -s 0 -c 7 -z 4096 > /dev/null ||
	fail "controller 2 optimized again: the head's read still fails"
# list-subsys through ucmdd: both paths and their states, as nvme-cli under exec --daemon
for d in /dev/nvme0n1 ""; do
	for f in normal json; do
		timeout 60 "$UCMD" exec --daemon "$SOCK" -- nvme list-subsys -o "$f" ${d:+"$d"} \
			> "$T/lsn" 2>&1 || { cat "$T/lsn"; fail "nvme list-subsys -o $f $d under exec"; }
		"$UCMD" --daemon "$SOCK" list-subsys -o "$f" ${d:+"$d"} > "$T/lsu" 2>&1 ||
			{ cat "$T/lsu"; fail "ucmd --daemon list-subsys -o $f $d"; }
		cmp -s "$T/lsn" "$T/lsu" || { diff "$T/lsn" "$T/lsu"; fail "list-subsys -o $f $d differs"; }
	done
done
"$UCMD" --daemon "$SOCK" list-subsys /dev/nvme0n1 > "$T/lsu.txt" || fail "list-subsys /dev/nvme0n1"
grep -Eq '^ \+- nvme0 pcie [0-9a-f]{4}:00:[0-9a-f]{2}\.0 live inaccessible$' "$T/lsu.txt" &&
	grep -Eq '^ \+- nvme1 pcie [0-9a-f]{4}:00:[0-9a-f]{2}\.0 live optimized$' "$T/lsu.txt" ||
	{ cat "$T/lsu.txt"; fail "ucmd --daemon list-subsys /dev/nvme0n1: the paths' states"; }
daemon_stop
[ "$(state --ctrl "$D" ana-state --controller nvme0)" = "nvme0 group 1: inaccessible" ] ||
	fail "the daemon's change of nvme0 is not kept"
[ "$(state --ctrl "$D" ana-state --controller nvme1)" = "nvme1 group 1: optimized" ] ||
	fail "the daemon's change of nvme1 is not kept"
echo "ok: asked and set through ucmdd, others refused, the head follows, states kept"
echo "PASS"
