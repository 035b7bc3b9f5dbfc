#!/usr/bin/env bash
# Removing one controller of a multipath subsystem under `ucmd exec`
# (create-ctrl --controllers 2: one head over two paths) leaves what Linux
# leaves when one path's PCI function is removed (docs/compat.md,
# src/preload/ctlfiles.c, sysfs_mpath.c): the head /dev/nvme0n1 and
# /dev/ng0n1 stay and serve I/O through the path left, descriptors open on
# them keep working, the subsystem keeps its name (nvme-subsys0, whichever
# controller went: the head is named after the first), the path left keeps
# its nvme0cCn1 with its ANA state, and nvme list, list-subsys and
# show-topology show the one path; the removed controller's own node and
# function are gone and its open descriptors fail (ENODEV). Removing the
# last path takes the head with it (its open descriptors ENODEV, EIO); the
# rescan brings everything back with the data. A dynamic program and a
# static one's descriptors alike (tests/exec/gone_fd.c).
source "$(dirname "$0")/lib/common.sh"
need_tools nvme cc cmp python3
cc -O2 -o "$T/gone.dyn" "$SRC/tests/exec/gone_fd.c" || fail "cc"
cc -O2 -static -o "$T/gone.static" "$SRC/tests/exec/gone_fd.c" || fail "cc -static"
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl --controllers 2 --nsze=4096 >/dev/null ||
	fail "create-ctrl --controllers 2"
ex() { timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$@" 2>"$T/err"; }
fn() { basename "$(ex readlink "/sys/class/nvme/nvme$1/device")"; }
FN0=$(fn 0) FN1=$(fn 1)
case "$FN0 $FN1" in "0000:00:"??".0 0000:00:"??".0") ;; *) fail "the functions: '$FN0' '$FN1'" ;; esac
head -c 8192 /dev/urandom >"$T/pat"

# What one exec sees of the tree after removing function $1 (controller
# $2 left), written to and read back from the head through that path.
cat >"$T/view.sh" <<'EOF2'
set -u
echo 1 >"/sys/bus/pci/devices/$1/remove" || exit 9
echo "dev: $(ls /dev | grep -E '^(nvme|ng)' | tr '\n' ' ')"
echo "class: $({ ls /sys/class/nvme; ls /sys/class/nvme-subsystem; } | tr '\n' ' ')"
echo "subsys0: $(ls /sys/class/nvme-subsystem/nvme-subsys0 | grep -E '^(nvme|ng)' | tr '\n' ' ')"
echo "block: $(ls /sys/block | grep nvme | tr '\n' ' ')"
echo "fn gone: $(ls /sys/bus/pci/devices /sys/devices/pci0000:00 | grep -c "$1")"
echo "path: $(ls /sys/class/nvme/nvme$2 | grep -E '^nvme.*c.*n' | tr '\n' ' ')$(cat /sys/class/nvme/nvme$2/nvme0c$2n1/ana_state)"
readlink /sys/block/nvme0n1/device
nvme list -o json | python3 -c 'import json,sys; print("list:", *[d["DevicePath"] for d in json.load(sys.stdin)["Devices"]])'
nvme list-subsys /dev/nvme0n1 | sed -n 's/^ +- \(nvme[0-9]\) pcie [0-9a-f:.]* \(.*\)$/list-subsys: \1 \2/p'
nvme show-topology | sed -n 's/^  +- \(nvme[0-9]\) pcie [0-9a-f:.]* \(.*\)$/topology: \1 \2/p'
dd if="$3" of=/dev/nvme0n1 bs=4096 seek=$((4 + $2 * 2)) count=2 oflag=direct status=none && echo written
EOF2
for left in 1 0; do
	gone=$((1 - left)) FN=$FN0
	[ $gone = 1 ] && FN=$FN1
	step "remove nvme$gone's function: the head stays over nvme$left"
	ex bash "$T/view.sh" "$FN" "$left" "$T/pat" >"$T/out" || fail "rc $?: $(cat "$T/out" "$T/err")"
	devs=$(printf '%s\n' ng0n1 nvme0n1 "nvme$left" | LC_ALL=C sort | tr '\n' ' ')
	[ "$(cat "$T/out")" = "dev: $devs
class: nvme$left nvme-subsys0 
subsys0: $devs
block: nvme0n1 
fn gone: 0
path: nvme0c${left}n1 optimized
../../nvme-subsys0
list: /dev/nvme0n1
list-subsys: nvme$left live optimized
topology: nvme$left live optimized
written" ] || fail "nvme$gone removed: $(diff <(echo) "$T/out"; cat "$T/err")"
	"$UCMD" --ctrl "$CTRL" read -s $((32 + left * 16)) -c 15 -z 8192 -d "$T/back" >/dev/null || fail "ucmd read"
	cmp "$T/pat" "$T/back" || fail "the head's write through nvme$left"
done

live() {
	local w=$1 c=${2:-ok}
	printf '%s nvme0 identify: %s\n%s ng0n1 ns-id: ok\n%s nvme0n1 ns-id: ok\n' "$w" "$c" "$w" "$w"
	printf '%s nvme0n1 pread: ok\n%s nvme0n1 pwrite: ok\n%s nvme0n1 fsync: ok\n' "$w" "$w" "$w"
	printf '%s nvme0n1 size: ok 2097152\n' "$w"
}
want=$(live before; echo "wrote remove"; live after ENODEV; echo "wrote remove"
	printf 'after nvme0 identify: ENODEV\nafter ng0n1 ns-id: ENODEV\nafter nvme0n1 ns-id: ENODEV\n'
	printf 'after nvme0n1 pread: EIO\nafter nvme0n1 pwrite: EIO\nafter nvme0n1 fsync: EIO\n'
	printf 'after nvme0n1 size: ok 0\n'
	echo "wrote rescan"; live after)
for kind in dyn static; do
	step "$kind: fds open on the head work while a path is left, fail with the last, work after the rescan"
	out=$(ex "$T/gone.$kind" "/sys/bus/pci/devices/$FN0/remove" "/sys/bus/pci/devices/$FN1/remove" \
		/sys/bus/pci/rescan 2>&1) || fail "$kind: rc $?: $out $(cat "$T/err")"
	[ "$out" = "$want" ] || fail "$kind: $(diff <(echo "$want") <(echo "$out"))"
done

step "both removed: nothing left; the rescan brings both paths back, the data there"
ex sh -c "echo 1 >/sys/bus/pci/devices/$FN1/remove && echo 1 >/sys/bus/pci/devices/$FN0/remove &&
	ls /dev /sys/class/nvme /sys/class/nvme-subsystem /sys/block | grep -E '^(nvme|ng)' || echo none
	echo 1 >/sys/bus/pci/rescan && ls /dev | grep -E '^(nvme|ng)' | tr '\n' ' ' &&
	nvme show-topology | grep -c ' live optimized\$' &&
	dd if=/dev/nvme0n1 of='$T/back2' bs=4096 skip=4 count=2 iflag=direct status=none" >"$T/out" ||
	fail "rc $?: $(cat "$T/out" "$T/err")"
[ "$(cat "$T/out")" = "none
ng0n1 nvme0 nvme0n1 nvme1 2" ] || fail "both removed, rescan: $(cat "$T/out")"
cmp "$T/pat" "$T/back2" || fail "the data after the rescan"
echo "exec_remove_mpath: ok"
