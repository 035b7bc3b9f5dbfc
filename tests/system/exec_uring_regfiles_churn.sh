#!/usr/bin/env bash
# Registered files naming the program's own descriptors under `ucmd exec`,
# registered and unregistered thousands of times
# (tests/exec/uring_regfiles_churn.c): the preload's table of which indexes
# are the kernel ring's is freed once no submitter looks at it
# (src/preload/uring_own.c, swap_slots); before, every old one was kept,
# and the heap grew by a table per round. A fixed-file read still works after.
source "$(dirname "$0")/lib/common.sh"
PROG="$(pwd)/$B/tests/exec/uring_regfiles_churn"
[ -x "$PROG" ] || fail "$PROG not built"
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"

step "register and unregister own files 4000 times"
out=$(timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$PROG" 4000 2>&1) || fail "uring_regfiles_churn: exit $?: $out"
echo "$out"
[ "$out" = "$(printf 'heap ok\nread ok')" ] || fail "uring_regfiles_churn: $out"
echo "exec_uring_regfiles_churn: ok"
