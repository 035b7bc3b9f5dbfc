#!/usr/bin/env bash
# io_uring passthrough on a device descriptor the program opened with its
# own syscall instruction (tests/exec/uring_rawfd.c): under `ucmd exec`
# ucmd-supervise makes that open (the descriptor is its, numbered 960..),
# while the ring is the preload's (liburing through libc). The preload
# learns of the supervisor's descriptors from the table it shares
# (src/preload/svtab.h), so the ring's IORING_OP_URING_CMD on it is served
# and the bytes are on the namespace (read back through the block device);
# once the program closes it, again with its own instruction, the number is
# EBADF in the ring, as on Linux.
source "$(dirname "$0")/lib/common.sh"
need_tools dd od
PROG="$(pwd)/$B/tests/exec/uring_rawfd"
[ -x "$PROG" ] || fail "$PROG not built"
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"
ex() { timeout 120 "$UCMD" exec --ctrl "$CTRL" -- "$@"; }

step "the ring's write and read on the supervisor's descriptor"
out=$(ex "$PROG" /dev/ng0n1 2>&1) || fail "uring_rawfd: exit $?: $out"
[ "$out" = "write ok
read ok
same
closed EBADF" ] || fail "uring_rawfd: '$out'"

step "the namespace holds what the ring wrote"
got=$(ex dd if=/dev/nvme0n1 bs=4096 count=1 iflag=direct status=none | head -c 16 | od -An -tx1 |
	tr -d ' \n') || fail "dd from nvme0n1"
want=""
for i in $(seq 0 15); do want+=$(printf '%02x' $(((i * 7 + 13) & 255))); done
[ "$got" = "$want" ] || fail "LBA 0 holds '$got', not the ring's '$want'"
echo "exec_uring_rawfd: ok"
