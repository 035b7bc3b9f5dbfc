#!/usr/bin/env bash
# io_uring passthrough on device descriptors a program opened with its own
# syscall instruction (ucmd-supervise's, numbered 960..) where no
# io_uring_enter tells the preload's ring of them (tests/exec/uring_rawfd_sq.c):
#
# - sqpoll: an SQPOLL ring whose poller is awake takes an SQE naming a
#   descriptor opened after the ring's last enter: the preload's thread
#   mirrored it before the open returned (src/preload/svtab.h, pl_svack),
#   so the write is served; once closed with the program's own
#   instruction, the number is EBADF there at once, as on Linux.
# - dup: copies made through libc (dup, dup2, dup3, F_DUPFD,
#   F_DUPFD_CLOEXEC) of such a descriptor, the original closed, are the
#   device for NVME_IOCTL_ID and on a ring; each closed, EBADF.
# - rawdup: the same copies made with the program's own instruction (no
#   interposer sees them: Go's syscall.Dup), each found by the preload at
#   its first call through libc (NVME_IOCTL_ID; on nvmeXnY a pwrite, a
#   pread, an fstat), served from then on, rings included.
# - sqfork: a child's SQE and enter on an SQPOLL ring it inherited through
#   fork are served on its maker's ring, as Linux's poller takes them;
#   EOWNERDEAD once the maker is gone.
# - fork: a forked child's own ring serves the descriptor it inherited and
#   one it opened so; its close of the inherited one is EBADF on its ring
#   and leaves the parent's served.
#
# Every block written is read back with dd from the namespace under
# `ucmd exec` and compared (cmp) with what was written.
source "$(dirname "$0")/lib/common.sh"
need_tools dd cmp
PROG="$(pwd)/$B/tests/exec/uring_rawfd_sq"
[ -x "$PROG" ] || fail "$PROG not built"
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"
ex() { timeout 120 "$UCMD" exec --ctrl "$CTRL" -- "$@"; }
# the 4096 bytes at byte offset $1 of nvme0n1, through ucmd
block_at() { ex dd if=/dev/nvme0n1 bs=4096 skip=$(($1 / 4096)) count=1 iflag=direct status=none; }

step "sqpoll: a descriptor opened after the ring's last enter"
out=$(ex "$PROG" sqpoll /dev/ng0n1 2>&1) || fail "sqpoll: exit $?: $out"
[ "$out" = "write ok
closed EBADF" ] || fail "sqpoll: '$out'"
"$PROG" pattern 1 >"$T/want1" || fail "pattern 1"
block_at 0 >"$T/got1" || fail "dd from nvme0n1"
cmp "$T/want1" "$T/got1" || fail "LBA 0 is not what the SQPOLL ring wrote"

step "dup: copies through libc of the supervisor's descriptor"
out=$(ex "$PROG" dup /dev/ng0n1 2>&1) || fail "dup: exit $?: $out"
[ "$out" = "dup ok
dup2 ok
dup3 ok
F_DUPFD ok
F_DUPFD_CLOEXEC ok
dup closed EBADF
dup2 closed EBADF
dup3 closed EBADF
F_DUPFD closed EBADF
F_DUPFD_CLOEXEC closed EBADF" ] || fail "dup: '$out'"
for k in 0 1 2 3 4; do
	"$PROG" pattern $((2 + k)) >"$T/want" || fail "pattern"
	block_at $((4096 * (k + 1))) >"$T/got" || fail "dd from nvme0n1"
	cmp "$T/want" "$T/got" || fail "block $((k + 1)) is not what copy $k wrote"
done
step "rawdup: copies made with the program's own instruction"
out=$(ex "$PROG" rawdup /dev/ng0n1 /dev/nvme0n1 2>&1) || fail "rawdup: exit $?: $out"
[ "$out" = "dup ok
dup closed EBADF
dup2 ok
dup2 closed EBADF
dup3 ok
dup3 closed EBADF
F_DUPFD ok
F_DUPFD closed EBADF
F_DUPFD_CLOEXEC ok
F_DUPFD_CLOEXEC closed EBADF
blk write ok
blk read ok same
blk fstat ok block" ] || fail "rawdup: '$out'"
for k in 0 1 2 3 4 5; do
	"$PROG" pattern $((11 + k)) >"$T/want" || fail "pattern"
	block_at $((4096 * (11 + k))) >"$T/got" || fail "dd from nvme0n1"
	cmp "$T/want" "$T/got" || fail "block $((11 + k)) is not what raw copy $k wrote"
done
step "sqfork: an SQPOLL ring a child inherited is its maker's"
out=$(ex "$PROG" sqfork /dev/ng0n1 2>&1) || fail "sqfork: exit $?: $out"
[ "$out" = "child sqpoll ok
maker gone EOWNERDEAD" ] || fail "sqfork: '$out'"
"$PROG" pattern 17 >"$T/want" || fail "pattern"
block_at $((4096 * 17)) >"$T/got" || fail "dd from nvme0n1"
cmp "$T/want" "$T/got" || fail "block 17 is not what the child wrote on the inherited ring"
step "fork: a child's ring and the descriptors it inherited and opened"
out=$(ex "$PROG" fork /dev/ng0n1 2>&1) || fail "fork: exit $?: $out"
[ "$out" = "child inherited ok
child opened ok
child closed EBADF
parent ok" ] || fail "fork: '$out'"
for k in 6 7 8; do
	"$PROG" pattern $((k + 1)) >"$T/want" || fail "pattern"
	block_at $((4096 * k)) >"$T/got" || fail "dd from nvme0n1"
	cmp "$T/want" "$T/got" || fail "block $k is not what the fork test wrote there"
done
echo "exec_uring_rawfd_sq: ok"
