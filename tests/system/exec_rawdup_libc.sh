#!/usr/bin/env bash
# Copies of a device the program opened through libc (the preload's
# descriptor: an empty directory opened read-only, src/preload/fdmap.c)
# made with the program's own dup system call, which no interposer sees
# (Go's syscall.Dup; tests/exec/rawdup_libc.c):
#
# - blk: the first call on each copy through libc (write, pwrite, writev,
#   pwritev, sendfile, splice, fallocate, read, pread, readv, preadv, mmap,
#   ftruncate, copy_file_range, fsync, fstat, statx, F_GETFL) is found by the
#   preload and served as the device: the blocks written are read back
#   with dd from the namespace; the same calls made with the program's own
#   instruction, on the original and on a copy, each fail with an errno
#   (none reaches a file).
# - ng: an SQE naming a copy before any call on it through libc is served
#   (the preload asks about the numbers of the SQEs at io_uring_enter).
# - aio: a native aio iocb (libaio's io_submit) naming a copy before any
#   call on it is served as the device: a write read back with dd, a read,
#   an fsync.
# - a device sh opened through libc, kept across its exec of dd (found
#   again by the new image's preload by its placeholder's path, which
#   names the access mode), with dd's F_SETFL(O_DIRECT) on it.
source "$(dirname "$0")/lib/common.sh"
need_tools dd cmp grep
PROG="$(pwd)/$B/tests/exec/rawdup_libc"
[ -x "$PROG" ] || fail "$PROG not built"
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"
ex() { timeout 120 "$UCMD" exec --ctrl "$CTRL" -- "$@"; }
# the 4096 bytes at block $1 of nvme0n1, through ucmd
block_at() { ex dd if=/dev/nvme0n1 bs=4096 skip="$1" count=1 iflag=direct status=none; }
same_block() {
	"$PROG" pattern "$1" >"$T/want" || fail "pattern $1"
	block_at "$1" >"$T/got" || fail "dd from nvme0n1"
	cmp -s "$T/want" "$T/got" || fail "block $1 is not what $2 wrote through a raw copy"
}

step "blk: the first call through libc on a raw copy of /dev/nvme0n1"
out=$(timeout 120 "$UCMD" exec --trace --ctrl "$CTRL" -- "$PROG" blk /dev/nvme0n1 2>"$T/trace") ||
	fail "blk: exit $?: $out $(cat "$T/trace")"
want="write positive
pwrite positive
writev positive
pwritev positive
sendfile positive
splice positive
fallocate ok zeroes
read positive same
pread positive same
readv positive same
preadv positive same
mmap ENODEV
ftruncate EINVAL
copy_file_range EINVAL
fsync ok
fstat ok block
statx ok block
F_GETFL ok rdwr"
raw="raw read EISDIR
raw write EBADF
raw pread64 EISDIR
raw pwrite64 EBADF
raw readv EISDIR
raw writev EBADF
raw mmap ENODEV
raw fallocate EBADF
raw ftruncate EINVAL
raw sendfile-in EINVAL
raw sendfile-out EBADF
raw splice-in EINVAL
raw splice-out EBADF
raw copy_file_range EISDIR"
[ "$out" = "$want
$raw
$raw" ] || fail "blk: '$out'"
k=20
for call in write pwrite writev pwritev sendfile splice; do
	same_block $k $call
	k=$((k + 1))
done
ex dd if=/dev/nvme0n1 bs=4096 skip=26 count=1 iflag=direct status=none | cmp -s - <(head -c 4096 /dev/zero) ||
	fail "block 26 is not zeroes after fallocate through a raw copy"
# fsync answers 0 either way: the trace says the copy was found (and flushed)
n=$(grep -c "a copy of nvme0n1 made without libc" "$T/trace") || true
[ "$n" = 18 ] || fail "the trace names $n raw copies found, not 18: $(cat "$T/trace")"

step "ng: an SQE naming a raw copy before any call on it through libc"
out=$(ex "$PROG" ng /dev/ng0n1 /dev/nvme0n1 2>&1) || fail "ng: exit $?: $out"
[ "$out" = "ng sqe ok
blk sqe ok
ng read EINVAL" ] || fail "ng: '$out'"
same_block 30 "an SQE on ng0n1"
same_block 31 "an SQE on nvme0n1"
step "aio: native aio iocbs naming raw copies of nvme0n1, each the copy's first call"
out=$(ex "$PROG" aio /dev/nvme0n1 2>&1) || fail "aio: exit $?: $out"
[ "$out" = "aio write ok
aio read ok same
aio fsync ok" ] || fail "aio: '$out'"
same_block 34 "an aio write through a raw copy"
step "a device sh opened through libc, inherited by dd across exec (its F_SETFL O_DIRECT)"
head -c 4096 /dev/urandom >"$T/in40"
ex sh -c "dd bs=4096 seek=40 count=1 oflag=direct status=none <'$T/in40' >/dev/nvme0n1" ||
	fail "dd to the stdout sh opened"
ex sh -c "dd bs=4096 skip=40 count=1 iflag=direct status=none </dev/nvme0n1" >"$T/got40" ||
	fail "dd from the stdin sh opened"
cmp -s "$T/in40" "$T/got40" || fail "block 40 is not what dd wrote through the stdout sh opened"
block_at 40 | cmp -s "$T/in40" - || fail "block 40 on the namespace is not what dd wrote"
echo "exec_rawdup_libc: ok"
