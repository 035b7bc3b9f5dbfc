#!/usr/bin/env bash
# A stat that follows /dev/fd/N, /proc/self/fd/N, /proc/thread-self/fd/N,
# /proc/<pid>/task/<tid>/fd/N, /dev//fd/./N or /dev/stdin naming a device
# fd says what stat of the device says (Linux follows the magic link to
# the node), for a statically linked program (ucmd-supervise, sv_stat.c)
# as for the same program linked dynamically (the preload, paths.c): a
# device fd the supervisor gave and a copy of it on descriptor 0; lstat
# says a link, a path below it is ENOTDIR, a pipe's is a fifo
# (tests/exec/static_fdpath.c; docs/compat.md).
source "$(dirname "$0")/lib/common.sh"
need_tools cc
cc -O2 -static -o "$T/fdpath.static" "$SRC/tests/exec/static_fdpath.c" || fail "cc -static"
cc -O2 -o "$T/fdpath.dyn" "$SRC/tests/exec/static_fdpath.c" || fail "cc"
grep -q 'statically linked' <<<"$(file "$T/fdpath.static")" || fail "fdpath.static is not static"
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"
for kind in static dyn; do
	for dev in /dev/nvme0n1 /dev/ng0n1 /dev/nvme0; do
		step "$kind: stat of the descriptor paths of $dev"
		out=$(timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$T/fdpath.$kind" "$dev" 2>&1) ||
			fail "$kind $dev: $out"
		[ "$out" = ok ] || fail "$kind $dev: $out"
	done
done
echo "exec_static_fdpath: ok"
