#!/usr/bin/env bash
# /dev/fd/N, /proc/self/fd/N and /dev/stdin, stdout naming a device fd
# under `ucmd exec` open the device afresh with the new open's flags, as
# Linux's do: what dd writes through them is on the namespace (read back
# by another exec), what it reads through them is the namespace's; a stat
# that follows one is the device's (lstat: the link); a path below one is
# ENOTDIR; spelled with "//", "/./" or a thread's task/<tid> too
# (docs/compat.md; src/preload/fdpath.c).
source "$(dirname "$0")/lib/common.sh"
need_tools dd cmp
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"
ex() { timeout 300 "$UCMD" exec --ctrl "$CTRL" "$@"; }
head -c 8192 /dev/urandom >"$T/pat1"
head -c 4096 /dev/urandom >"$T/pat2"

step "sh's exec 3<> keeps the preload's connection (its socket is not at 3): dd reads fd 3 as stdin"
head -c 8192 /dev/zero >"$T/zero"
ex -- sh -c "exec 3<>/dev/nvme0n1; dd of='$T/back0' bs=4096 count=2 status=none <&3" ||
	fail "dd <&3 after exec 3<>"
cmp "$T/zero" "$T/back0" || fail "dd <&3 did not read the (blank) namespace"

step "write through /dev/fd/3 (sh's exec 3<>): on the namespace"
ex -- sh -c "exec 3<>/dev/nvme0n1; dd if='$T/pat1' of=/dev/fd/3 bs=4096 count=2 conv=notrunc,fsync status=none" ||
	fail "dd of=/dev/fd/3"
ex -- dd if=/dev/nvme0n1 of="$T/back1" bs=4096 count=2 status=none || fail "dd if=/dev/nvme0n1"
cmp "$T/pat1" "$T/back1" || fail "what dd wrote through /dev/fd/3 is not on the namespace"

step "read through /dev/fd/3, /proc/self/fd/3 and /dev/stdin: the namespace's"
for p in /dev/fd/3 /proc/self/fd/3 /dev/stdin; do
	rm -f "$T/back"
	ex -- sh -c "exec 3</dev/nvme0n1; dd if=$p of='$T/back' bs=4096 count=2 status=none" </dev/null ||
		fail "dd if=$p"
	[ "$p" = /dev/stdin ] && { ex -- sh -c "dd if=/dev/stdin of='$T/back' bs=4096 count=2 status=none </dev/nvme0n1" ||
		fail "dd if=/dev/stdin"; }
	cmp "$T/pat1" "$T/back" || fail "dd if=$p did not read the namespace"
done

step "write through /dev/stdout of a read-write device fd 1"
ex -- sh -c "dd if='$T/pat2' of=/dev/stdout bs=4096 count=1 seek=1 conv=notrunc status=none 1<>/dev/nvme0n1" ||
	fail "dd of=/dev/stdout"
ex -- dd if=/dev/nvme0n1 of="$T/back2" bs=4096 skip=1 count=1 status=none || fail "dd if=/dev/nvme0n1 skip=1"
cmp "$T/pat2" "$T/back2" || fail "what dd wrote through /dev/stdout is not on the namespace"

step "stat of /dev/fd/N, /proc/self/fd/N, /dev/stdin naming a device fd: the device's (stat -L, test -b/-c)"
out=$(ex -- sh -c "exec 3</dev/nvme0n1 4</dev/nvme0; stat -L -c '%F %t:%T %a' /dev/fd/3 /proc/self/fd/3 /dev/nvme0n1;
	stat -L -c '%F %t:%T %a' /dev/stdin </dev/ng0n1; test -b /dev/fd/3 && test -c /dev/fd/4 && echo types;
	stat -c %F /dev/fd/3; stat -L /dev/fd/3/x 2>&1 | grep -o 'Not a directory'") || fail "stat of /dev/fd/N: $out"
[ "$out" = "block special file 103:0 660
block special file 103:0 660
block special file 103:0 660
character special file f1:0 600
types
symbolic link
Not a directory" ] || fail "stat of a device's /dev/fd/N: $out"

step "the same through other spellings the kernel walks alike: //, /./, task/<tid>"
# dd's writes through each (a block each, at its own offset), read back by another exec
i=0
for p in /dev//fd/3 /dev/./fd/3 /proc/self//fd/./3 '/proc/self/task/$$/fd/3'; do
	head -c 4096 /dev/urandom >"$T/sp$i"
	# exec: dd runs as the shell's pid ($$), which task/$$ names
	ex -- sh -c "exec 3<>/dev/nvme0n1; exec dd if='$T/sp$i' of=$p bs=4096 seek=$((4 + i)) count=1 conv=notrunc,fsync status=none" ||
		fail "dd of=$p"
	ex -- dd if=/dev/nvme0n1 of="$T/spb" bs=4096 skip=$((4 + i)) count=1 status=none || fail "dd if=/dev/nvme0n1"
	cmp "$T/sp$i" "$T/spb" || fail "what dd wrote through $p is not on the namespace"
	i=$((i + 1))
done

step "a path below a device's /dev/fd/N: ENOTDIR"
out=$(ex -- sh -c "exec 3</dev/nvme0n1; cat /dev/fd/3/x 2>&1" || true)
case $out in *"Not a directory"*) ;; *) fail "cat /dev/fd/3/x: $out" ;; esac
echo "exec_fd_path: ok"
