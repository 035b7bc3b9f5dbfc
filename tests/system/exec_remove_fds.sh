#!/usr/bin/env bash
# Descriptors already open on a controller and its namespace when the
# controller's PCI function is removed under `ucmd exec` fail as Linux's do
# once the NVMe driver is unbound (docs/compat.md, src/preload/ctlfiles.c):
# the NVMe ioctls on /dev/nvme0, /dev/ng0n1 and /dev/nvme0n1 ENODEV (the
# request queue is dying: blk_queue_enter), the disk's pread, pwrite and
# fsync EIO (bios to a dead disk), its size 0 (blk_mark_disk_dead); after
# /sys/bus/pci/rescan the same descriptors work again, as ucmd's rescan
# brings the function back. A dynamic program (the preload) and a static
# one (ucmd-supervise) alike (tests/exec/gone_fd.c).
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
}
want=$(live before; echo "wrote remove"
	printf 'after nvme0 identify: ENODEV\nafter ng0n1 ns-id: ENODEV\nafter nvme0n1 ns-id: ENODEV\n'
	printf 'after nvme0n1 pread: EIO\nafter nvme0n1 pwrite: EIO\nafter nvme0n1 fsync: EIO\n'
	printf 'after nvme0n1 size: ok 0\n'
	echo "wrote rescan"; live after)
for kind in dyn static; do
	step "$kind: open fds fail once the function is removed, work again after the rescan"
	out=$(timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$T/gone.$kind" \
		"/sys/bus/pci/devices/$FN/remove" /sys/bus/pci/rescan 2>&1) || fail "$kind: rc $?: $out"
	[ "$out" = "$want" ] || fail "$kind: $(diff <(echo "$want") <(echo "$out"))"
done
echo "exec_remove_fds: ok"
