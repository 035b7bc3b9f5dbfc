#!/usr/bin/env bash
# Descriptors already open on a controller and its namespace when the
# controller's PCI function is removed under `ucmd exec` fail as Linux's do
# once the NVMe driver is unbound (docs/compat.md, src/preload/ctlfiles.c):
# the NVMe ioctls on /dev/nvme0, /dev/ng0n1 and /dev/nvme0n1 ENODEV (the
# request queue is dying: blk_queue_enter), the disk's pread, pwrite and
# fsync EIO (bios to a dead disk), its size 0 (blk_mark_disk_dead); after
# /sys/bus/pci/rescan the same descriptors work again, as ucmd's rescan
# brings the function back. A dynamic program (the preload) and a static
# one (ucmd-supervise) alike (tests/exec/gone_fd.c). The remove file's
# descriptor, written again after its write removed the function, is, for
# a dynamic program, ENODEV, "1" and an empty write alike: the attribute's
# kernfs node is gone (kernfs_fop_write_iter), where ucmd judged it a plain
# attribute (EINVAL, the empty write taken); a static program's control
# files act at the open (docs/compat.md). Each device opened again through
# /dev/fd/N or /proc/self/fd/N is ENXIO once removed (no driver behind the
# inode: chrdev_open, blkdev_open), where ucmd opened it again. io_uring
# SQEs on them (tests/exec/gone_uring.c) fail too: a passthrough command
# ENODEV, a disk's read and write EIO, where the daemon served them.
source "$(dirname "$0")/lib/common.sh"
need_tools cc
cc -O2 -o "$T/gone.dyn" "$SRC/tests/exec/gone_fd.c" || fail "cc"
cc -O2 -static -o "$T/gone.static" "$SRC/tests/exec/gone_fd.c" || fail "cc -static"
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl --nsze=4096 >/dev/null || fail "create-ctrl"
FN=$(basename "$(timeout 60 "$UCMD" exec --ctrl "$CTRL" -- readlink /sys/class/nvme/nvme0/device)")
case $FN in 0000:00:??.0) ;; *) fail "the controller's PCI function: '$FN'" ;; esac
live() {
	printf '%s nvme0 identify: ok\n%s ng0n1 ns-id: ok\n%s nvme0n1 ns-id: ok\n' "$1" "$1" "$1"
	printf '%s nvme0n1 pread: ok\n%s nvme0n1 pwrite: ok\n%s nvme0n1 fsync: ok\n' "$1" "$1" "$1"
	printf '%s nvme0n1 size: ok 2097152\n' "$1"
	printf '%s nvme0 reopen: ok\n%s ng0n1 reopen: ok\n%s nvme0n1 reopen: ok\n' "$1" "$1" "$1"
}
expect() {
	live before; echo "wrote remove"
	[ "$1" = dyn ] && echo "remove again: ENODEV" && echo "remove empty: ENODEV"
	printf 'after nvme0 identify: ENODEV\nafter ng0n1 ns-id: ENODEV\nafter nvme0n1 ns-id: ENODEV\n'
	printf 'after nvme0n1 pread: EIO\nafter nvme0n1 pwrite: EIO\nafter nvme0n1 fsync: EIO\n'
	printf 'after nvme0n1 size: ok 0\n'
	printf 'after nvme0 reopen: ENXIO\nafter ng0n1 reopen: ENXIO\nafter nvme0n1 reopen: ENXIO\n'
	echo "wrote rescan"; [ "$1" = dyn ] && echo "rescan again: ok" && echo "rescan empty: ok"
	live after
}
for kind in dyn static; do
	step "$kind: open fds fail once the function is removed, work again after the rescan"
	want=$(expect $kind) flags=-r
	[ $kind = dyn ] && flags="-w -r"	# a static program's control files act at the open (compat.md)
	out=$(timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$T/gone.$kind" $flags \
		"/sys/bus/pci/devices/$FN/remove" /sys/bus/pci/rescan 2>&1) || fail "$kind: rc $?: $out"
	[ "$out" = "$want" ] || fail "$kind: $(diff <(echo "$want") <(echo "$out"))"
done
step "dyn: io_uring SQEs on the removed devices fail as Linux's, served again after the rescan"
cc -O2 -o "$T/gone_uring" "$SRC/tests/exec/gone_uring.c" -luring 2>/dev/null || fail "cc gone_uring"
sqes() { printf '%s ng0n1 uring_cmd: %s\n%s nvme0n1 read: %s\n%s nvme0n1 write: %s\n' \
	"$1" "$2" "$1" "$3" "$1" "$3"; }
want=$(sqes before ok ok; echo "wrote remove"; sqes after ENODEV EIO; echo "wrote rescan"
	sqes after ok ok)
out=$(timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$T/gone_uring" \
	"/sys/bus/pci/devices/$FN/remove" /sys/bus/pci/rescan 2>&1) || fail "uring: rc $?: $out"
[ "$out" = "$want" ] || fail "uring: $(diff <(echo "$want") <(echo "$out"))"
echo "exec_remove_fds: ok"
