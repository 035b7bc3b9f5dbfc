#!/usr/bin/env bash
# ASYNC_CANCEL and TIMEOUT_REMOVE find a request wherever it is in the ring
# (tests/exec/uring_cancel.c): under `ucmd exec` a RECV on a socketpair or a
# pipe, or a TIMEOUT linked to one, runs on the preload's kernel ring
# (src/preload/uring_own.c), and a cancel by user_data, by descriptor, by
# registered file, of all or any, or a TIMEOUT_REMOVE, looks there as well
# as on the daemon's ring, answering as Linux does (before: -ENOENT, -EBADF
# by descriptor, the RECVs left waiting). The program first runs without
# ucmd: Linux's answers are the ones expected.
source "$(dirname "$0")/lib/common.sh"
PROG="$(pwd)/$B/tests/exec/uring_cancel"
[ -x "$PROG" ] || fail "$PROG not built"
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"
ex() { timeout 120 "$UCMD" exec --ctrl "$CTRL" -- "$@"; }

step "Linux's answers"
want=$(timeout 60 "$PROG" 2>&1) || fail "uring_cancel without ucmd: exit $?: $want"
echo "$want"
[ "$(echo "$want" | tail -n 1)" = "all ok" ] || fail "uring_cancel without ucmd: $want"

step "the same under ucmd exec"
out=$(ex "$PROG" 2>&1) || fail "uring_cancel: exit $?: $out"
echo "$out"
diff <(echo "$want") <(echo "$out") || fail "uring_cancel's checks under ucmd exec"
echo "exec_uring_cancel: ok"
