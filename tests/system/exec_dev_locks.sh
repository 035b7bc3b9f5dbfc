#!/usr/bin/env bash
# Record locks (F_SETLK, F_SETLKW, F_GETLK, F_OFD_*) and flock on ucmd's
# devices under `ucmd exec` behave as Linux's on a file: two processes of
# one exec exclude each other, F_GETLK names the holder, a write lock needs
# the fd opened for writing (EBADF otherwise), any close drops the
# process's POSIX locks and the last close of a description its OFD locks
# and flock (tests/exec/dev_locks.c, compared line by line with a run on a
# regular file outside exec; docs/compat.md). `dev_locks exec`: the locks
# of fds that survive an exec are kept across it, as Linux keeps them.
source "$(dirname "$0")/lib/common.sh"
need_tools cc
cc -O2 -o "$T/dev_locks" "$SRC/tests/exec/dev_locks.c" || fail "cc dev_locks"
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"
ex() { timeout 300 "$UCMD" exec --ctrl "$CTRL" "$@"; }

step "on a regular file, outside exec"
: >"$T/file"
"$T/dev_locks" "$T/file" >"$T/native.out" || { cat "$T/native.out"; fail "dev_locks outside exec"; }
[ "$(wc -l <"$T/native.out")" -ge 40 ] || fail "too few lines: $(cat "$T/native.out")"
grep -q "child setlk write 50+10: EAGAIN" "$T/native.out" || fail "no contention natively"

for dev in /dev/nvme0n1 /dev/ng0n1; do
	step "on $dev under exec: the same lines"
	ex -- "$T/dev_locks" "$dev" >"$T/exec.out" || { cat "$T/exec.out"; fail "dev_locks $dev"; }
	diff -u "$T/native.out" "$T/exec.out" || fail "locks on $dev differ from Linux's"
done
step "exec: locks of fds that survive an exec, on a regular file outside exec"
"$T/dev_locks" exec "$T/file" >"$T/native.out" || { cat "$T/native.out"; fail "dev_locks exec outside exec"; }
grep -q "child getlk 0+100: write 0+100 by parent" "$T/native.out" || fail "no kept lock natively: $(cat "$T/native.out")"
for dev in /dev/nvme0n1 /dev/ng0n1; do
	step "exec: locks of fds that survive an exec, on $dev under exec"
	ex -- "$T/dev_locks" exec "$dev" >"$T/exec.out" || { cat "$T/exec.out"; fail "dev_locks exec $dev"; }
	diff -u "$T/native.out" "$T/exec.out" || fail "locks kept across exec on $dev differ from Linux's"
done
echo "exec_dev_locks: ok"
