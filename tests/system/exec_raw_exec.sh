#!/usr/bin/env bash
# Execs that go around libc's exec family, from a program under `ucmd exec`
# (the preload), never give a program the host's /dev (tests/exec/raw_exec.c):
#
# - the execve and execveat system calls made with the program's own
#   instruction, of a static program: EACCES, the reason on stderr, the
#   static program never ran;
# - the same of a dynamic program with an environment of {"X=1"} alone
#   (LD_PRELOAD and UCMD_DAEMON left out): the new image is still under
#   exec (it opens ucmd's /dev/ng0n1) and keeps the program's X=1;
# - posix_spawn with that environment (libc's execve, in a child whose
#   signal handlers glibc resets: a trap would kill it) and `env -i`: the
#   same; a UCMD_DAEMON the program set is kept (a wrong one: ENOENT, not
#   the host's device);
# - a bad environment pointer is EFAULT, as the kernel says.
source "$(dirname "$0")/lib/common.sh"
need_tools cc
dir=$T
cc -O2 -o "$dir/raw_exec" "$SRC/tests/exec/raw_exec.c" || fail "cc"
cc -O2 -static -o "$dir/raw_exec.static" "$SRC/tests/exec/raw_exec.c" || fail "cc -static"
grep -q 'statically linked' <<<"$(file "$dir/raw_exec.static")" || fail "not static"

CTRL=$dir/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"
run() {	# args...: the output of raw_exec under ucmd exec, in $out (any status)
	out=$(timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$dir/raw_exec" "$@" 2>&1) || true
}

for how in execve execveat; do
	step "$how with the program's own instruction, of a static program: EACCES"
	run "$how" "$dir/raw_exec.static"
	grep -qx "$how errno EACCES" <<<"$out" || fail "$how static: $out"
	grep -q 'statically linked' <<<"$out" || fail "$how static: no reason given: $out"
	if grep -q '^probe' <<<"$out"; then fail "$how static: it ran: $out"; fi

	step "$how of a dynamic program with {X=1} alone: still under exec, X kept"
	run "$how" "$dir/raw_exec"
	grep -qx 'probe open ok' <<<"$out" || fail "$how dynamic: not under exec: $out"
	grep -qx 'probe X 1' <<<"$out" || fail "$how dynamic: the environment is not the program's: $out"
done

step "posix_spawn with {X=1} alone (libc's execve in a child with handlers reset)"
run spawn "$dir/raw_exec"
grep -qx 'probe open ok' <<<"$out" || fail "spawn: not under exec: $out"
grep -qx 'probe X 1' <<<"$out" || fail "spawn: the environment: $out"
grep -qx 'spawn status 0' <<<"$out" || fail "spawn: the child: $out"

step "env -i: the image it runs is still under exec"
out=$(timeout 300 "$UCMD" exec --ctrl "$CTRL" -- env -i X=1 "$dir/raw_exec" probe 2>&1) ||
	fail "env -i: $out"
grep -qx 'probe open ok' <<<"$out" || fail "env -i: not under exec: $out"
grep -qx 'probe X 1' <<<"$out" || fail "env -i: the environment: $out"

step "a UCMD_DAEMON the program gave is its own: a wrong one fails closed (ENOENT)"
out=$(timeout 300 "$UCMD" exec --ctrl "$CTRL" -- env -i X=1 UCMD_DAEMON="$dir/nobody.sock" \
	"$dir/raw_exec" probe 2>&1) || fail "env -i UCMD_DAEMON: $out"
grep -qx 'probe open ENOENT' <<<"$out" || fail "env -i UCMD_DAEMON: $out"

step "a bad environment pointer: EFAULT"
run execve-badenv "$dir/raw_exec"
grep -qx 'execve-badenv errno EFAULT' <<<"$out" || fail "bad envp: $out"
echo "exec_raw_exec: ok"
