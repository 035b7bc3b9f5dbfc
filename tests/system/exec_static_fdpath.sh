#!/usr/bin/env bash
# A stat that follows /dev/fd/N, /proc/self/fd/N, /proc/thread-self/fd/N,
# /proc/<pid>/task/<tid>/fd/N, /dev//fd/./N or /dev/stdin naming a device
# fd says what stat of the device says (Linux follows the magic link to
# the node), for a statically linked program (ucmd-supervise, sv_stat.c)
# as for the same program linked dynamically (the preload, paths.c): a
# device fd the supervisor gave and a copy of it on descriptor 0; lstat
# says a link, a path below it is ENOTDIR, a pipe's is a fifo
# (tests/exec/static_fdpath.c; docs/compat.md). An open of such a path
# opens the device afresh, what is written through it is on the namespace
# (tests/exec/static_fdopen.c).
source "$(dirname "$0")/lib/common.sh"
need_tools cc
cc -O2 -static -o "$T/fdpath.static" "$SRC/tests/exec/static_fdpath.c" || fail "cc -static"
cc -O2 -o "$T/fdpath.dyn" "$SRC/tests/exec/static_fdpath.c" || fail "cc"
cc -O2 -static -o "$T/fdopen.static" "$SRC/tests/exec/static_fdopen.c" || fail "cc -static fdopen"
cc -O2 -o "$T/fdopen.dyn" "$SRC/tests/exec/static_fdopen.c" || fail "cc fdopen"
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
i=0
for kind in static dyn; do
	for prefix in /dev/fd /proc/self/fd; do
		byte=$(printf "\\x$(printf %x $((0x41 + i)))")
		step "$kind: write through $prefix/N of /dev/nvme0n1, read back by dd"
		out=$(timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$T/fdopen.$kind" /dev/nvme0n1 "$prefix" "$byte" 2>&1) ||
			fail "$kind $prefix: $out"
		[ "$out" = ok ] || fail "$kind $prefix: $out"
		timeout 300 "$UCMD" exec --ctrl "$CTRL" -- dd if=/dev/nvme0n1 of="$T/back" bs=4096 skip=2 count=1 status=none ||
			fail "dd back"
		head -c 4096 /dev/zero | tr '\0' "$byte" > "$T/want"
		cmp "$T/want" "$T/back" || fail "$kind $prefix: the namespace does not hold what was written"
		i=$((i + 1))
	done
done
echo "exec_static_fdpath: ok"
