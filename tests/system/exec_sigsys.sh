#!/usr/bin/env bash
# Under `ucmd exec`, a program whose SIGSYS disposition is not the
# preload's is served, not killed, when it makes a call the preload traps
# (tests/exec/sigsys_exec.c, with its own syscall instructions, as Go's
# runtime and its children):
# - a vfork child that resets SIGSYS to SIG_DFL (its own rt_sigaction),
#   then runs execve with its own instruction: the new image runs (exit 0,
#   its output), also when every signal is blocked around the reset (Go's
#   os/exec); a static image is refused with EACCES, the child lives on;
# - posix_spawn (Python's), whose child asks every disposition with all
#   signals blocked: the new image runs;
# - a program with its own SIGSYS handler (sigaction reads it back) running
#   execve with its own instruction: the new image runs;
# - a SIGSYS that is not the preload's (raise) reaches the program's
#   handler, and with SIG_DFL ends the program by SIGSYS, as on Linux.
source "$(dirname "$0")/lib/common.sh"
need_tools cc
cc -O2 -o "$T/sigsys_exec" "$SRC/tests/exec/sigsys_exec.c" || fail "cc sigsys_exec"
printf 'int main(void) { return 7; }\n' >"$T/static.c"
cc -O2 -static -o "$T/static7" "$T/static.c" || fail "cc -static"
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"
ex() { timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$@"; }

step "a vfork child with SIGSYS reset runs execve with its own instruction: served"
out=$(ex "$T/sigsys_exec" vfork /bin/echo from-the-child 2>&1) || fail "vfork: exit $?: $out"
[ "$out" = "from-the-child
child exit 0" ] || fail "vfork child: '$out'"

step "the same with every signal blocked around the child's reset, as Go's os/exec"
out=$(ex "$T/sigsys_exec" blocked /bin/echo blocked-child 2>&1) || fail "blocked: exit $?: $out"
[ "$out" = "blocked-child
child exit 0" ] || fail "vfork child, signals blocked: '$out'"

step "posix_spawn: the child runs"
need_tools python3
out=$(ex python3 -c 'import os; p = os.posix_spawn("/bin/echo", ["echo", "spawned"], os.environ); print(os.waitpid(p, 0)[1])' 2>&1) ||
	fail "posix_spawn: exit $?: $out"
[ "$out" = "spawned
0" ] || fail "posix_spawn: '$out'"

step "the same child execs a static program: EACCES, not killed"
out=$(ex "$T/sigsys_exec" vfork "$T/static7" 2>/dev/null) || fail "vfork static: exit $?: $out"
[ "$out" = "child execve: Permission denied
child exit 3" ] || fail "vfork child, static image: '$out'"

step "a program with its own SIGSYS handler runs execve with its own instruction: served"
out=$(ex "$T/sigsys_exec" own /bin/echo after-exec 2>&1) || fail "own: exit $?: $out"
[ "$out" = "after-exec" ] || fail "own handler, execve: '$out'"

step "a SIGSYS of the program's own: its handler, or death by SIGSYS with SIG_DFL"
set +e
out=$(ex "$T/sigsys_exec" raise 2>&1)
rc=$?
set -e
[ "$rc" = 99 ] && [ "$out" = "own handler" ] || fail "raise: exit $rc, '$out'"
set +e
ex "$T/sigsys_exec" raise-dfl >/dev/null 2>&1
rc=$?
set -e
[ "$rc" = $((128 + 31)) ] || fail "raise with SIG_DFL: exit $rc, not 159 (SIGSYS)"
echo "exec_sigsys: ok"
