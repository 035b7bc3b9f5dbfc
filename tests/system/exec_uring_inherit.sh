#!/usr/bin/env bash
# A ring without SQPOLL that a forked child inherited, under `ucmd exec`
# (tests/exec/uring_inherit.c), as Linux's io_uring_enter and
# io_uring_register answer the child:
#
# - wait: the child's enter with nothing to submit is served on the
#   parent's ring: a look returns 0, and its wait sees the CQEs of a NOP
#   and an NVMe Read the parent submitted after the fork, in the CQ both
#   share (io_cqring_wait serves any task); the Read's data is in the
#   parent's buffer, and block 24 holds what the parent wrote.
# - single: IORING_SETUP_SINGLE_ISSUER: the child's submit and its
#   io_uring_register are EEXIST (Linux's answer to any task but the
#   ring's submitter), its wait is served.
# - defer: with IORING_SETUP_DEFER_TASKRUN (and SINGLE_ISSUER) the child's
#   wait is EEXIST too.
# - submit: parent and child submit on the ring they share at once (8
#   writes each, one per enter, under a lock of the program's): the parent
#   reaps the child's CQEs with its own from the one CQ, and the blocks hold
#   what each wrote from its own memory (the child's buffers, filled after
#   the fork, are zero in the parent).
# - regring: registered ring indexes (IORING_REGISTER_RING_FDS) are a
#   task's own: the child's enter by its parent's index is EINVAL; it
#   registers the inherited ring itself and enters by its own index.
# - flags: the child's relayed CQE keeps its flags (F_MORE,
#   F_SOCK_NONEMPTY), not only its user_data and result.
# - exit, _exit, exit_group: a child that leaves with a TIMEOUT of an hour
#   and an NVMe Read in flight on the shared ring: the parent reaps both
#   CQEs, the TIMEOUT's -ECANCELED, the Read's 0 (Linux's requests outlive
#   the task that submitted them; none vanish).
# - sigkill, raw_exit_group: the same, the child killed by SIGKILL or
#   leaving by an exit_group instruction of its own, which the preload
#   never sees: the daemon, seeing the child's connection end, cancels the
#   TIMEOUT, waits for the Read and posts both CQEs into the shared ring.
# - register: the child's io_uring_register on a plain ring it inherited
#   is the ring's, as Linux's: the probe; an eventfd, signalled for the
#   ring's CQEs (its NOP's), and its unregister. Files and buffers (the
#   child's descriptors and memory, which the daemon's ring, acting in the
#   maker's, cannot reach) are EOPNOTSUPP (docs/compat.md).
# - sqfull: the child submits 48 NOPs on a ring of 4 entries and exits
#   while the parent, reaping nothing, waits for it: the exit does not wait
#   for the parent to reap (the shared SQ the CQEs are relayed through is
#   full); the parent then reaps all 48.
source "$(dirname "$0")/lib/common.sh"
need_tools dd cmp
PROG="$(pwd)/$B/tests/exec/uring_inherit"
[ -x "$PROG" ] || fail "$PROG not built"
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"
ex() { timeout 120 "$UCMD" exec --ctrl "$CTRL" -- "$@"; }

step "wait: the child waits on its parent's ring"
out=$(ex "$PROG" wait /dev/ng0n1 2>&1) || fail "wait: exit $?: $out"
# the child's lines come out when it exits, before or after the parent's submit line
[ "$(grep '^child' <<<"$out")" = "child look: ok
child reaped 2: ok" ] || fail "wait: '$out'"
[ "$(grep '^parent' <<<"$out")" = "parent write: ok
parent submit: ok
parent read back: ok" ] || fail "wait: '$out'"
# the pattern uring_inherit writes: byte i is i * 7 + 29
python3 -c 'import sys; sys.stdout.buffer.write(bytes((i * 7 + 29) & 255 for i in range(4096)))' \
	>"$T/want" || fail "pattern"
ex dd if=/dev/nvme0n1 bs=4096 skip=24 count=1 iflag=direct status=none >"$T/got" ||
	fail "dd from nvme0n1"
cmp "$T/want" "$T/got" || fail "block 24 is not what the parent wrote"

step "single: SINGLE_ISSUER refuses the child's submit and register"
out=$(ex "$PROG" single /dev/ng0n1 2>&1) || fail "single: exit $?: $out"
[ "$(grep '^child' <<<"$out")" = "child look: ok
child submit: EEXIST
child register eventfd: EEXIST
child reaped 1: ok" ] || fail "single: '$out'"
[ "$(grep '^parent' <<<"$out")" = "parent write: ok
parent submit: ok" ] || fail "single: '$out'"

step "defer: DEFER_TASKRUN refuses the child's wait"
out=$(ex "$PROG" defer /dev/ng0n1 2>&1) || fail "defer: exit $?: $out"
[ "$out" = "parent write: ok
child look: ok
child submit: EEXIST
child register eventfd: EEXIST
child wait: EEXIST" ] || fail "defer: '$out'"
step "submit: the child submits on the ring it shares with its parent"
out=$(ex "$PROG" submit /dev/ng0n1 2>&1) || fail "submit: exit $?: $out"
[ "$(grep '^child' <<<"$out")" = "child submitted 8: ok" ] || fail "submit: '$out'"
[ "$(grep '^parent' <<<"$out")" = "parent reaped child's 8, its own 8: ok" ] || fail "submit: '$out'"
ex dd if=/dev/nvme0n1 bs=4096 skip=40 count=16 iflag=direct status=none >"$T/got" ||
	fail "dd from nvme0n1"
python3 -c 'import sys; sys.stdout.buffer.write(b"".join(bytes([0xc0 + i]) * 4096 for i in range(8)) + b"".join(bytes([0x50 + i]) * 4096 for i in range(8)))' \
	>"$T/want" || fail "pattern"
cmp "$T/want" "$T/got" || fail "blocks 40..55 are not what the child and the parent wrote"

step "regring: registered ring indexes are the task's own"
out=$(ex "$PROG" regring /dev/ng0n1 2>&1) || fail "regring: exit $?: $out"
[ "$out" = "parent register ring fd: ok
parent enter by its index: ok
child enter by the parent's index: EINVAL
child register ring fd: ok
child enter by its index: ok
child enter by an index not its: EBADF" ] || fail "regring: '$out'"
step "flags: a relayed CQE keeps its flags"
out=$(ex "$PROG" flags /dev/ng0n1 2>&1) || fail "flags: exit $?: $out"
[ "$(grep '^child' <<<"$out")" = "child submit: ok" ] || fail "flags: '$out'"
[ "$(grep '^parent' <<<"$out")" = "parent cqe 400: res 7 flags 0x6: ok" ] || fail "flags: '$out'"

for how in exit _exit exit_group sigkill raw_exit_group; do
	step "$how: the child's requests in flight post their CQEs"
	out=$(ex "$PROG" "$how" /dev/ng0n1 2>&1) || fail "$how: exit $?: $out"
	[ "$out" = "child submitted 2: ok
parent timeout: ECANCELED
parent read: ok" ] || fail "$how: '$out'"
done
step "register: the child registers on the ring it inherited"
out=$(ex "$PROG" register 2>&1) || fail "register: exit $?: $out"
[ "$out" = "child probe: ok
child register eventfd: ok
child submit: ok
child eventfd signalled: ok
child unregister eventfd: ok
child register files: EOPNOTSUPP
child register buffers: EOPNOTSUPP
parent cqe 600: ok" ] || fail "register: '$out'"
step "sqfull: a child's exit with the shared SQ full waits for no reap"
out=$(ex "$PROG" sqfull 2>&1) || fail "sqfull: exit $?: $out"
[ "$out" = "child submitted 48: ok
parent wait for the child: ok
parent reaped 48: ok" ] || fail "sqfull: '$out'"
echo "exec_uring_inherit: ok"
