#!/usr/bin/env bash
# A dynamically linked program that opens with its own syscall instruction
# (tests/exec/raw_open.c, as Go's os.Open: no libc, so no preload sees the
# call) under `ucmd exec`: ucmd-supervise --dirs makes every open of it,
# so /dev/ng0n1 and /dev/nvme0n1 are ucmd's (their NVME_IOCTL_ID, and a
# raw read gives what dd wrote through the preload), a name ucmd does not
# have is ENOENT, an NVMe device number is ENXIO, and every other file
# opens as it would: a FIFO's open waits for its other end without stopping
# the program's other opens, /dev/stdin is the program's.
source "$(dirname "$0")/lib/common.sh"
need_tools cc dd od mkfifo
cc -O2 -o "$T/raw_open" "$SRC/tests/exec/raw_open.c" || fail "cc raw_open"
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"
ex() { timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$@"; }
expect() {	# want, then the command
	local want=$1 out
	shift
	out=$("$@" 2>&1) || fail "$*: exit $?: $out"
	[ "$out" = "$want" ] || fail "$*: '$out', not '$want'"
}

step "a known pattern on namespace 1 (dd through the preload)"
printf 'ucmd-raw-open:%04d' 7 >"$T/pat"
head -c 4096 /dev/zero >>"$T/pat"
ex dd if="$T/pat" of=/dev/nvme0n1 bs=4096 count=1 oflag=direct iflag=fullblock status=none ||
	fail "dd to nvme0n1"
want=$(head -c 8 "$T/pat" | od -An -tx1 | tr -d ' \n')

step "the program's own openat of ucmd's devices: ucmd's"
expect "nsid 1
read: Invalid argument" ex "$T/raw_open" /dev/ng0n1
expect "nsid 1
data: $want" ex "$T/raw_open" /dev/nvme0n1

step "a name ucmd does not have: ENOENT; any other file: the host's"
expect "open: No such file or directory" ex "$T/raw_open" /dev/nvme9n9
expect "open: No such file or directory" ex "$T/raw_open" /dev/ng9n1
printf 'abcdefghij' >"$T/plain"
expect "nsid: Inappropriate ioctl for device
data: 6162636465666768" ex "$T/raw_open" "$T/plain"
expect "nsid: Inappropriate ioctl for device
data: 6162636465666768" ex sh -c 'cd "$1" && "$2" plain' sh "$T" "$T/raw_open"

step "a relative name on a descriptor that is not open: EBADF, never judged from /"
expect "open: Bad file descriptor" ex "$T/raw_open" dev/nvme0n1 77

step "an NVMe device number (UCMD_TEST_NVME_MAJORS names /dev/null's): ENXIO"
expect "open: No such device or address" env UCMD_TEST_NVME_MAJORS=c:1 \
	timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$T/raw_open" /dev/null
step "opens that wait (a FIFO's two ends) and the program's own /dev/stdin, made by the supervisor"
mkfifo "$T/fifo" || fail "mkfifo"
out=$(timeout 60 "$UCMD" exec --ctrl "$CTRL" -- sh -c 'cat "$1" & echo through-a-fifo >"$1"; wait' \
	sh "$T/fifo" 2>&1) || fail "a FIFO under exec: exit $?: $out"
[ "$out" = "through-a-fifo" ] || fail "a FIFO under exec: '$out'"
out=$(echo outer | ex sh -c 'echo inner | cat /dev/stdin; echo fd | cat /dev/fd/0' 2>&1) ||
	fail "/dev/stdin under exec: exit $?: $out"
[ "$out" = "inner
fd" ] || fail "/dev/stdin under exec is not the program's: '$out'"
echo "exec_raw_open: ok"
