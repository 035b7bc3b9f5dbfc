#!/usr/bin/env bash
# A program under `ucmd exec` cannot reach a host NVMe device by a name
# that does not say so: a node made with mknod elsewhere, or one bind-mounted
# over another file, is judged by its device number after the open (a
# character major /proc/devices names nvme or nvme-generic, a block device
# whose /sys/dev/block/MAJ:MIN is an NVMe namespace) and refused, ENXIO:
# through the preload (open, fopen) and through ucmd-supervise (a static
# program). A machine without NVMe has no such major, so the test names
# /dev/null's (1, "mem") as NVMe's with UCMD_TEST_NVME_MAJORS (test-only,
# it can only refuse more) and shows the same node opens without it; where
# /proc/devices has nvme-generic, a node made with its major is refused
# with no hook at all.
source "$(dirname "$0")/lib/common.sh"
need_tools cc
cc -O2 -o "$T/open_node" "$SRC/tests/exec/open_node.c" || fail "cc open_node"
cc -O2 -static -o "$T/open_node.static" "$SRC/tests/exec/open_node.c" || fail "cc -static open_node"
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"

ex() { timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$@"; }
expect() {	# want, then the command
	local want=$1 out
	shift
	out=$("$@" 2>&1) || fail "$*: exit $?: $out"
	[ "$out" = "$want" ] || fail "$*: '$out', not '$want'"
}

step "an ordinary device opens under exec (dynamic, fopen, static)"
expect "open ok" ex "$T/open_node" /dev/null
expect "open ok" ex "$T/open_node" /dev/null fopen
expect "open ok" ex "$T/open_node.static" /dev/null

step "the same device, its major taken as NVMe's: refused by its number, ENXIO"
export UCMD_TEST_NVME_MAJORS=b:7,c:1
expect "open: No such device or address" ex "$T/open_node" /dev/null
expect "open: No such device or address" ex "$T/open_node" /dev/null fopen
expect "open: No such device or address" ex "$T/open_node.static" /dev/null
# a block major in the list is not a character one
export UCMD_TEST_NVME_MAJORS=b:1
expect "open ok" ex "$T/open_node" /dev/null

if [ "$(id -u)" = 0 ]; then
	step "a node made with mknod elsewhere, and a bind mount, with an NVMe major: refused"
	mknod "$T/fake" c 1 3 || fail "mknod"
	unset UCMD_TEST_NVME_MAJORS
	expect "open ok" ex "$T/open_node" "$T/fake"
	export UCMD_TEST_NVME_MAJORS=c:1
	expect "open: No such device or address" ex "$T/open_node" "$T/fake"
	expect "open: No such device or address" ex "$T/open_node.static" "$T/fake"
	touch "$T/plain"
	out=$(unshare -m sh -c 'mount --bind /dev/null "$1" && shift && "$@"' sh "$T/plain" \
		timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$T/open_node" "$T/plain" 2>&1) ||
		fail "bind mount: $out"
	[ "$out" = "open: No such device or address" ] || fail "a bind-mounted NVMe node: '$out'"
	unset UCMD_TEST_NVME_MAJORS
	maj=$(awk '$2 == "nvme-generic" { print $1; exit }' /proc/devices)
	if [ -n "$maj" ]; then
		step "a node with the host's nvme-generic major ($maj), no hook: refused"
		mknod "$T/ng" c "$maj" 0 || fail "mknod nvme-generic"
		expect "open: No such device or address" ex "$T/open_node" "$T/ng"
		expect "open: No such device or address" ex "$T/open_node.static" "$T/ng"
	fi
fi
echo "exec_nvme_rdev: ok"
