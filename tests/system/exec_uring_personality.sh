#!/usr/bin/env bash
# IORING_REGISTER_PERSONALITY under `ucmd exec` on SQEs that run on the
# preload's kernel ring (the program's own descriptors, and those naming
# none: IORING_OP_SOCKET): the personality is registered there too, so they
# run as the credentials it names, as on Linux; an SQE the preload runs
# itself (STATX) with one is -EOPNOTSUPP (tests/exec/uring_personality.c,
# docs/compat.md). Before, the id reached the kernel ring unchanged
# (-EINVAL) and the STATX ran as the thread.
source "$(dirname "$0")/lib/common.sh"
PROG="$(pwd)/$B/tests/exec/uring_personality"
[ -x "$PROG" ] || fail "$PROG not built"
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"

step "personalities on own SQEs"
rc=0
out=$(timeout 120 "$UCMD" exec --ctrl "$CTRL" -- "$PROG" 2>&1) || rc=$?
echo "$out"
[ $rc -ne 77 ] || skip "no raw socket as root (CAP_NET_RAW)"
[ $rc -eq 0 ] || fail "uring_personality: exit $rc"
cat >"$T/want" <<'W'
register ok
as_submitter_eperm ok
as_personality ok
unknown_personality ok
local_refused ok
unregister ok
unregistered_personality ok
all ok
W
diff "$T/want" <(echo "$out") || fail "uring_personality's checks"
echo "exec_uring_personality: ok"
