#!/usr/bin/env bash
# A device descriptor a program opened with its own syscall instruction
# (ucmd-supervise's, numbered 960..), copied with its own dup3 to a child's
# stdout or stdin before the child execs dd (tests/exec/rawfd_child.c; as
# Go's os/exec hands a child an *os.File): the new image's preload asks the
# supervisor which device that number is (PL_SV_IOC_FDINFO, kcmp against
# the files it gave) and serves it, so dd writes and reads the namespace
# through it as on Linux, also when the copy is all that is left of the file
# (the supervisor keeps a description while a copy below its numbers holds
# it). Read back with dd and compared with cmp.
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
step "a copy that outlived every number the supervisor gave for its file"
# the program's own dup3 to 1, its own close of the original, then its own
# exec of dd: only the copy holds the file, and the supervisor still knows it
head -c 4096 /dev/urandom >"$T/in2"
out=$(ex "$PROG" alone /dev/nvme0n1 "$T/in2" 2>&1) || fail "rawfd_child alone: exit $?: $out"
ex dd if=/dev/nvme0n1 of="$T/got2" bs=4096 skip=12 count=1 iflag=direct status=none ||
	fail "dd from nvme0n1"
cmp "$T/in2" "$T/got2" || fail "block 12 is not what dd wrote through the lone copy"
echo "exec_rawfd_child: ok"
