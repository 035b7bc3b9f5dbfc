#!/usr/bin/env bash
# A program under `ucmd exec` that changes its root or its mount namespace
# sees ucmd's /dev and /sys only where its new root reaches them, as on
# Linux (tests/exec/chroot_look.c: stat, lstat, statx, access, readlink,
# an open of /sys and a stat relative to its cwd, made with its own
# instruction: ucmd-supervise answers them, dynamic and static alike; and
# the same through libc: a dynamic program's preload judges them itself):
# chrooted into a directory without /dev or /sys, every look is ENOENT;
# chrooted into one where /dev and /sys are bind mounts of the host's
# (where ucmd's stand), the looks are ucmd's, the relative one from the
# thread's own cwd ("ng0n1" from its /dev) too; after unshare(CLONE_NEWNS)
# with a tmpfs over /dev and /sys, ENOENT; after unshare alone, ucmd's.
# Runs in a mount namespace of its own (the bind mounts end with it).
# (before common.sh: its temporary directory is removed by the shell that made it)
if [ -z "${UCMD_CHROOT_LOOK_NS:-}" ] && [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
	UCMD_CHROOT_LOOK_NS=1 exec unshare -m --propagation private bash "$0" "$@"
fi
source "$(dirname "$0")/lib/common.sh"
need_root "chroot, unshare, mount"
need_tools cc unshare mount
[ -n "${UCMD_CHROOT_LOOK_NS:-}" ] || fail "not in a mount namespace of its own"
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"
cc -O2 -o "$T/chroot_look" "$SRC/tests/exec/chroot_look.c" || fail "cc chroot_look"
cc -O2 -static -o "$T/chroot_look.static" "$SRC/tests/exec/chroot_look.c" || fail "cc -static"
ex() { timeout 120 "$UCMD" exec --ctrl "$CTRL" -- "$@"; }

mkdir "$T/bare" "$T/bound" "$T/bound/dev" "$T/bound/sys"
# read-only binds, let go before T is removed: T's removal must never reach
# the host's /dev through them
unbind() { umount -l "$T/bound/dev" "$T/bound/sys" 2>/dev/null || true; }
at_exit unbind
for d in dev sys; do
	mount --bind "/$d" "$T/bound/$d" || fail "bind /$d"
	mount -o remount,bind,ro "$T/bound/$d" || fail "bind /$d read-only"
done
for d in dev sys; do
	opts=$(awk -v m="$T/bound/$d" '$5 == m { print $6 }' /proc/self/mountinfo)
	case ",$opts," in *,ro,*) ;; *) fail "the bind of /$d is not read-only: '$opts'" ;; esac
done

ours="stat /dev/ng0n1: ok c
lstat /dev/ng0n1: ok c
statx /dev/ng0n1: ok c
access /dev/nvme0n1: ok
readlink /sys/block/nvme0n1: ok
open /sys/block/nvme0n1/size: ok
stat ng0n1 from /dev: ok c"
none() {	# the last line: the relative look
	printf '%s\n' "stat /dev/ng0n1: ENOENT" "lstat /dev/ng0n1: ENOENT" \
		"statx /dev/ng0n1: ENOENT" "access /dev/nvme0n1: ENOENT" \
		"readlink /sys/block/nvme0n1: ENOENT" "open /sys/block/nvme0n1/size: ENOENT" "$1"
}
check() {	# want program args...
	local want=$1 out
	shift
	out=$(ex "$@" 2>&1) || fail "$*: $out"
	[ "$out" = "$want" ] || fail "$*: got
$out
want
$want"
}

# the program's own instruction (ucmd-supervise answers), then libc's calls
# (a dynamic program's are the preload's own looks, which must agree)
# shellcheck disable=SC2086  # $run is a program and its option
for run in "$T/chroot_look" "$T/chroot_look.static" "$T/chroot_look --libc" \
	"$T/chroot_look.static --libc"; do
	name=$(basename "$run")
	step "$name: the program's own root (chroot /): ucmd's /dev and /sys"
	check "$ours" $run chroot /
	step "$name: chroot into a directory without /dev or /sys: ENOENT, as Linux"
	check "$(none "stat dev/ng0n1 from /: ENOENT")" $run chroot "$T/bare"
	step "$name: chroot into one whose /dev and /sys are the host's: ucmd's"
	check "$ours" $run chroot "$T/bound"
	step "$name: unshare -m, a tmpfs over /dev and /sys: its own, empty"
	check "$(none "stat ng0n1 from /dev: ENOENT")" $run unshare
	step "$name: unshare -m alone: ucmd's"
	check "$ours" $run keep
done
echo "exec_chroot_look: ok"
