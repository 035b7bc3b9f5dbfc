#!/usr/bin/env bash
# creat, creat64, every fopen mode glibc takes and freopen give under
# `ucmd exec` what they give outside it, to the byte
# (tests/exec/open_modes.c: errno, access mode, O_APPEND, FD_CLOEXEC, the
# mode bits with the umask, glibc's stream flags for 'm', 'c', 'e', the
# position "a" starts at, ",ccs="'s wide stream; freopen's stream and
# descriptor number kept, the old descriptor closed when it fails), and
# their opens are the preload's own, made from its openat stub: a loop of
# them adds no call to those ucmd-supervise serves (its `--trace` counts
# them), where glibc's own open inside them would cost a user
# notification each; ",ccs=UTF-8" too (fdopen, then fwide under a UTF-8
# LC_CTYPE: the same conversion; its cases compare the characters read and
# the bytes written). ",ccs=" of another set, and freopen of a stream read
# through mmap ('m'), are the exceptions (glibc alone sets those streams
# up; docs/compat.md): they stay the supervisor's, and the count says so.
source "$(dirname "$0")/lib/common.sh"
need_tools cc
cc -O2 -o "$T/open_modes" "$SRC/tests/exec/open_modes.c" || fail "cc open_modes"
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"
ex() { timeout 300 "$UCMD" exec --ctrl "$CTRL" "$@"; }
mkdir "$T/native" "$T/exec"

step "each case, outside exec and under it: the same lines"
"$T/open_modes" cases "$T/native" >"$T/native.out" || fail "open_modes outside exec"
ex -- "$T/open_modes" cases "$T/exec" >"$T/exec.out" || fail "open_modes under exec"
sed "s|$T/native|DIR|g" "$T/native.out" >"$T/native.cmp"
sed "s|$T/exec|DIR|g" "$T/exec.out" >"$T/exec.cmp"
[ "$(wc -l <"$T/native.cmp")" -ge 62 ] || fail "too few cases: $(cat "$T/native.cmp")"
diff -u "$T/native.cmp" "$T/exec.cmp" || fail "under exec, creat/fopen differ from Linux's"

# calls ucmd-supervise served in a run of N opens of KIND: its --trace
# (which `ucmd exec --trace` gives a static program only) counts them
printf '#!/bin/sh\nexec "%s" --trace "$@"\n' "$SRC/$B/src/preload/ucmd-supervise" >"$T/sv-trace"
chmod +x "$T/sv-trace"
served() {	# N KIND PATH
	local out
	UCMD_SUPERVISE=$T/sv-trace ex -- "$T/open_modes" loop "$1" "$2" "$3" 2>"$T/trace" || {
		cat "$T/trace"
		fail "open_modes loop $*"
	}
	out=$(sed -n 's/.*: \([0-9]*\) calls served, .*/\1/p' "$T/trace" | tail -n 1)
	[ -n "$out" ] || { cat "$T/trace"; fail "--trace said no count: $*"; }
	echo "$out"
}

N=200
echo hello >"$T/file"
step "a loop of $N opens through the preload adds no supervised call"
for kind in creat creat64 fopen:r fopen:rm fopen:rc fopen:re fopen:r+ fopen:w fopen:a \
	fopen:wbe fopen:rmce freopen:r freopen:a freopen:r+e "fopen:r,ccs=UTF-8" \
	"fopen:a+,ccs=utf-8" "fopen:rc,ccs=UTF-8,x"; do
	path=$T/file
	[ "${kind#creat}" != "$kind" ] && path=$T/made
	base=$(served 0 "$kind" "$path")
	many=$(served "$N" "$kind" "$path")
	[ $((many - base)) -lt $((N / 4)) ] ||
		fail "$kind: $N opens cost $((many - base)) supervised calls (0 opens: $base)"
done
step "fopen's \",ccs=\" of another set and freopen's 'm' are glibc's own opens: the supervisor's"
for kind in "fopen:r,ccs=UTF-16LE" freopen:rm; do
	base=$(served 0 "$kind" "$T/file")
	many=$(served "$N" "$kind" "$T/file")
	[ $((many - base)) -ge "$N" ] || fail "$kind: $N opens, $((many - base)) supervised calls"
done
echo "exec_open_modes: ok"
