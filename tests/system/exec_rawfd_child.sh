#!/usr/bin/env bash
# A device descriptor a program opened with its own syscall instruction
# (ucmd-supervise's, numbered 960..), copied with its own dup3 to a child's
# stdout or stdin before the child execs dd (tests/exec/rawfd_child.c; as
# Go's os/exec hands a child an *os.File): the new image's preload asks the
# supervisor which device that number is (PL_SV_IOC_FDINFO, kcmp against
# the files it gave) and serves it, so dd writes and reads the namespace
# through it as on Linux. Read back with dd and compared with cmp.
source "$(dirname "$0")/lib/common.sh"
need_tools dd cmp head
PROG="$(pwd)/$B/tests/exec/rawfd_child"
[ -x "$PROG" ] || fail "$PROG not built"
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"
ex() { timeout 120 "$UCMD" exec --ctrl "$CTRL" -- "$@"; }
head -c 4096 /dev/urandom >"$T/in"

step "dd through a copy of the supervisor's descriptor as its stdout, then its stdin"
out=$(ex "$PROG" /dev/nvme0n1 "$T/in" "$T/out" 2>&1) || fail "rawfd_child: exit $?: $out"
[ "$out" = "write: 0
read: 0" ] || fail "rawfd_child: '$out'"
cmp "$T/in" "$T/out" || fail "what dd read through its stdin is not what it wrote"

step "the namespace holds what dd wrote"
ex dd if=/dev/nvme0n1 of="$T/got" bs=4096 skip=10 count=1 iflag=direct status=none ||
	fail "dd from nvme0n1"
cmp "$T/in" "$T/got" || fail "block 10 is not what dd wrote through its stdout"
echo "exec_rawfd_child: ok"
