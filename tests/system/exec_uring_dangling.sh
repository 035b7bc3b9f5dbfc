#!/usr/bin/env bash
# A link dangling at the end of a submission ends with it, as on Linux
# (tests/exec/uring_dangling.c): under `ucmd exec` the daemon's proxy takes
# whatever is published as one batch, and a posted CQE of the program's
# own descriptors (a NOP the preload appends: src/preload/uring_own.c) or
# the program's next submission must never join the chain. Rounds of a pipe
# read completing while a failing device read with IOSQE_IO_LINK and a good
# one are submitted apart: every CQE once, with its own result.
source "$(dirname "$0")/lib/common.sh"
PROG="$(pwd)/$B/tests/exec/uring_dangling"
[ -x "$PROG" ] || fail "$PROG not built"
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"
ex() { timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$@"; }

step "a dangling link, then a posted CQE"
out=$(ex "$PROG" /dev/nvme0n1 3000 posted 2>&1) || fail "uring_dangling posted: exit $?: $out"
echo "$out"
[ "$out" = "rounds 3000 ok" ] || fail "uring_dangling posted: $out"

step "a dangling link, then a posted CQE and the next submission"
out=$(ex "$PROG" /dev/nvme0n1 3000 2>&1) || fail "uring_dangling: exit $?: $out"
echo "$out"
[ "$out" = "rounds 3000 ok" ] || fail "uring_dangling: $out"
echo "exec_uring_dangling: ok"
