#!/usr/bin/env bash
# A statically linked program that forks under `ucmd exec` (ucmd-supervise;
# tests/exec/static_fork.c): its children keep the seccomp filter, so their
# calls on ucmd's devices are served by the supervisor, never made on the
# host's /dev:
#
# - the child's pread on the device descriptor it inherited and its open of
#   /dev/ng0n1 are served (each descendant a process of its own), and so is
#   a grandchild's open (tests/system/exec_static_forkio.sh has their I/O);
# - a child left running after the program exits (the supervisor gone with
#   it) gets ENOSYS for the open, as for every call the filter sends;
# - the program itself is served meanwhile.
source "$(dirname "$0")/lib/common.sh"
need_tools cc
cc -O2 -static -o "$T/static_fork" "$SRC/tests/exec/static_fork.c" || fail "cc -static"
grep -q 'statically linked' <<<"$(file "$T/static_fork")" || fail "not static"
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"

step "the program, its child and grandchild"
out=$(timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$T/static_fork" /dev/nvme0n1 /dev/ng0n1 \
	"$T/orphan.txt" 2>&1) || fail "static_fork: $out"
for want in "parent pread 512" "child pread ok" "child open ok" "grandchild open ok"; do
	grep -qx "$want" <<<"$out" || fail "no '$want': $out"
done

step "the child left after the program exits: ENOSYS"
for _ in $(seq 100); do [ -s "$T/orphan.txt" ] && break; sleep 0.1; done
grep -qx "orphan open ENOSYS" "$T/orphan.txt" || fail "orphan: $(cat "$T/orphan.txt" 2>&1)"
echo "exec_static_fork: ok"
