#!/usr/bin/env bash
# The current io_uring ABI under `ucmd exec`, from a program that makes the
# system calls itself as liburing 2.9+ does (tests/exec/uring_abi.c):
# IORING_SETUP_NO_SQARRAY and IORING_SETUP_HYBRID_IOPOLL are accepted and
# honoured (NOPs round the ring with no index array, O_DIRECT READs on
# /dev/nvme0n1 that match pread), HYBRID_IOPOLL without IOPOLL is EINVAL.
# A forked child submits on its maker's ring without an SQ array (EBADF
# before: the relay needs the program's own SQ, which such a ring lacked).
set -euo pipefail
# shellcheck source=tests/system/lib/daemon.sh
. "$(dirname "$0")/lib/daemon.sh"

PROG="$(pwd)/$B/tests/exec/uring_abi"
[ -x "$PROG" ] || fail "no $PROG"
daemon_start --ctrl "$T/ctrl"
python3 -c 'import os, sys; sys.stdout.buffer.write(os.urandom(4096))' >"$T/lba0.bin"
timeout 60 "$UCMD" --daemon "$SOCK" write -s 0 -c 7 -z 4096 -d "$T/lba0.bin" >/dev/null 2>&1 ||
	fail "ucmd write"

step "uring_abi under ucmd exec"
(cd "$T" && timeout -k 5 120 "$UCMD" exec --daemon "$SOCK" -- "$PROG" /dev/nvme0n1) | tee "$T/out.txt"
cat >"$T/want.txt" <<'W'
hybrid_alone EINVAL
no_sqarray ok
hybrid_iopoll ok
hybrid_iopoll_no_sqarray ok
no_sqarray_rawdup ok
no_sqarray_child ok
W
diff "$T/want.txt" "$T/out.txt" || fail "the current setup flags are not served"
echo "exec_uring_abi: ok"
