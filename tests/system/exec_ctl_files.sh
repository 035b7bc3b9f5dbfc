#!/usr/bin/env bash
# The tree's write-only control files under `ucmd exec` do what Linux's do
# (docs/compat.md; src/preload/ctlfiles.c):
#
# - echo 1 > /sys/class/nvme/nvme0/reset_controller resets the controller
#   (nvme_sysfs_reset): firmware committed for activation at the next reset
#   becomes active (fw-log's afi, id-ctrl's fr, the tree's firmware_rev), the
#   namespace keeps its data, and I/O works after it;
# - echo 1 > the PCI function's reset is a controller reset too; bash's
#   builtin echo (glibc's own write) as dash's;
# - echo 1 > the function's remove takes the controller and its namespaces
#   out of /dev and /sys (ls, test -e, nvme list) for every process of the
#   exec, until /sys/bus/pci/rescan brings them back, the controller probed
#   again (reset: a committed firmware becomes active), the data still there;
# - the same for a static program (busybox sh: ucmd-supervise, which
#   serves the program's own process: its builtins);
# - the files are 0200, and the function's rescan is taken;
# - the action is the write's, its value read as Linux's store reads it
#   (kstrtoul(buf, 0)): an open for writing alone does nothing, 0 to remove
#   or rescan is nothing and succeeds, junk is EINVAL and nothing, reset
#   takes 1 alone (0 EINVAL, no reset), 0x1 and +1 are numbers too: python's
#   os.write, dash's and bash's echo (a static program's are taken at its
#   open, docs/compat.md).
source "$(dirname "$0")/lib/common.sh"
need_tools nvme python3 dd cmp busybox
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"
ex() { timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$@" 2>"$T/err"; }
J() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
afi() { ex nvme fw-log /dev/nvme0 -o json | J 'd["nvme0"]["Active Firmware Slot (afi)"]'; }
# a firmware image for slot $1, revision $2, committed for activation at the next reset
fw_next() {
	{ printf 'UCMDFW01%-8s\0\0\0\0' "$2"; head -c 6000 /dev/zero; } >"$T/fw$1.bin"
	ex nvme fw-download /dev/nvme0 --fw="$T/fw$1.bin" >/dev/null || fail "fw-download: $(cat "$T/err")"
	ex nvme fw-commit /dev/nvme0 --slot="$1" --action=1 >/dev/null || fail "fw-commit: $(cat "$T/err")"
}
head -c 8192 /dev/urandom >"$T/pat"
ex dd if="$T/pat" of=/dev/nvme0n1 bs=4096 count=2 oflag=direct status=none || fail "dd write: $(cat "$T/err")"
FN=$(basename "$(ex readlink /sys/class/nvme/nvme0/device)")
case $FN in 0000:00:??.0) ;; *) fail "the controller's PCI function: '$FN'" ;; esac
PCI=/sys/bus/pci/devices/$FN

step "modes: reset_controller, the function's remove, rescan, reset are 0200"
out=$(ex stat -c '%a %n' /sys/class/nvme/nvme0/reset_controller "$PCI/remove" "$PCI/rescan" "$PCI/reset") ||
	fail "stat: $(cat "$T/err")"
[ "$out" = "200 /sys/class/nvme/nvme0/reset_controller
200 $PCI/remove
200 $PCI/rescan
200 $PCI/reset" ] || fail "modes: $out"

step "echo 1 > reset_controller: the controller resets (firmware activated), data and I/O survive"
fw_next 2 2.0
[ "$(afi)" = 33 ] || fail "afi $(afi) after the commit, expected 0x21"
out=$(ex sh -c "echo 1 >/sys/class/nvme/nvme0/reset_controller && cat /sys/class/nvme/nvme0/firmware_rev | tr -d ' '") ||
	fail "echo 1 > reset_controller: $(cat "$T/err")"
[ "$out" = "2.0" ] || fail "firmware_rev after the reset: '$out', expected 2.0"
[ "$(afi)" = 2 ] || fail "afi $(afi) after reset_controller, expected 2"
ex dd if=/dev/nvme0n1 of="$T/back" bs=4096 count=2 iflag=direct status=none || fail "dd read: $(cat "$T/err")"
cmp "$T/pat" "$T/back" || fail "the namespace's data after reset_controller"
ex sh -c "echo 1 >/sys/class/nvme/nvme0/reset_controller &&
	dd if='$T/pat' of=/dev/nvme0n1 bs=4096 seek=4 count=2 oflag=direct status=none &&
	dd if=/dev/nvme0n1 of='$T/back2' bs=4096 skip=4 count=2 iflag=direct status=none" ||
	fail "I/O in the process that reset: $(cat "$T/err")"
cmp "$T/pat" "$T/back2" || fail "I/O after reset_controller"

step "echo 1 > the function's reset: a controller reset"
fw_next 3 3.0
ex sh -c "echo 1 >$PCI/reset" || fail "echo 1 > reset: $(cat "$T/err")"
[ "$(afi)" = 3 ] || fail "afi $(afi) after the function's reset, expected 3"
fr=$(ex nvme id-ctrl /dev/nvme0 -o json | J 'd["fr"].strip()')
[ "$fr" = 3.0 ] || fail "id-ctrl fr '$fr' after the function's reset"

step "remove: nvme0 leaves /dev and /sys for every process until /sys/bus/pci/rescan"
fw_next 2 2.1
ex sh -c "
	echo 1 >$PCI/remove || exit 9
	echo removed
	ls /dev | grep -E '^(nvme|ng)' || echo no-dev
	{ ls /sys/class/nvme; ls /sys/block; } | grep nvme || echo no-sys
	ls /sys/bus/pci/devices | grep -x '$FN' || echo no-fn
	test -e /dev/nvme0n1 || echo no-nvme0n1
	test -e /sys/class/nvme/nvme0 || echo no-nvme0
	nvme list -o json | python3 -c 'import json,sys; print(len(json.load(sys.stdin).get(\"Devices\", [])), \"listed\")'
	dd if=/dev/nvme0n1 of=/dev/null count=1 status=none 2>/dev/null || echo no-open
	echo 1 >/sys/bus/pci/rescan || exit 8
	echo rescanned
	ls /dev | grep -E '^(nvme|ng)'
	nvme list -o json | python3 -c 'import json,sys; print(*[d[\"DevicePath\"] for d in json.load(sys.stdin)[\"Devices\"]])'
	tr -d ' ' </sys/class/nvme/nvme0/firmware_rev
	dd if=/dev/nvme0n1 of='$T/back3' bs=4096 count=2 iflag=direct status=none && echo read
" >"$T/out" || fail "remove/rescan: rc $?: $(cat "$T/out" "$T/err")"
[ "$(cat "$T/out")" = "removed
no-dev
no-sys
no-fn
no-nvme0n1
no-nvme0
0 listed
no-open
rescanned
ng0n1
nvme0
nvme0n1
/dev/nvme0n1
2.1
read" ] || fail "remove, then rescan: $(cat "$T/out")"
cmp "$T/pat" "$T/back3" || fail "the namespace's data after remove and rescan"
[ "$(afi)" = 2 ] || fail "afi $(afi) after the rescan's probe, expected 2"

step "a static program (busybox sh, ucmd-supervise): reset_controller, remove, rescan"
ex busybox sh -c "
	echo 1 >/sys/class/nvme/nvme0/reset_controller && echo reset
	echo 1 >$PCI/rescan && echo fn-rescan
	echo 1 >$PCI/remove && echo removed
	busybox ls /dev | busybox grep -E '^(nvme|ng)' || echo no-dev
	busybox ls /sys/class/nvme | busybox grep nvme || echo no-sys
	test -e /dev/nvme0n1 || echo no-node
	echo 1 >/sys/bus/pci/rescan && echo rescanned
	busybox ls /dev | busybox grep -E '^(nvme|ng)'
	test -b /dev/nvme0n1 && echo node
	busybox ls /sys/class/nvme
" >"$T/out" || fail "static: rc $?: $(cat "$T/out" "$T/err")"
[ "$(cat "$T/out")" = "reset
fn-rescan
removed
no-dev
no-sys
no-node
rescanned
ng0n1
nvme0
nvme0n1
node
nvme0" ] || fail "static: $(cat "$T/out")"
step "bash's builtin echo 1 > reset_controller (glibc's own write on 1): a controller reset, the write taken"
fw_next 3 3.1
out=$(ex bash -c "echo 1 >/sys/class/nvme/nvme0/reset_controller && cat /sys/class/nvme/nvme0/firmware_rev") ||
	fail "bash's echo 1 > reset_controller: $(cat "$T/err")"
[ "$(echo $out)" = "3.1" ] || fail "firmware_rev after bash's reset: '$out', expected 3.1"
[ "$(afi)" = 3 ] || fail "afi $(afi) after bash's reset_controller, expected 3"

step "the write is the action, its value as Linux's stores read it (python's os.write)"
fw_next 2 2.2
ex python3 -c "
import errno, os, sys
def w(path, val):
    fd = os.open(path, os.O_WRONLY)
    try:
        return str(os.write(fd, val))
    except OSError as e:
        return errno.errorcode[e.errno]
    finally:
        os.close(fd)
def here():
    return os.path.exists('/sys/class/nvme/nvme0') and os.path.exists('/dev/nvme0n1')
pci = '$PCI'
os.close(os.open(pci + '/remove', os.O_WRONLY))
print('open-only', here())
print('remove 0', w(pci + '/remove', b'0\\n'), here())
print('remove junk', w(pci + '/remove', b'junk\\n'), here())
print('remove 1x', w(pci + '/remove', b'1x'), here())
print('remove -1', w(pci + '/remove', b'-1'), here())
print('remove empty', w(pci + '/remove', b''), here())
print('rescan junk', w('/sys/bus/pci/rescan', b'yes'), here())
print('rescan 0', w('/sys/bus/pci/rescan', b'0'), here())
print('fn rescan junk', w(pci + '/rescan', b'x'), here())
print('reset 0', w(pci + '/reset', b'0\\n'))
print('reset 2', w(pci + '/reset', b'2'))
print('reset junk', w(pci + '/reset', b'junk'))
print('reset huge', w(pci + '/reset', b'99999999999999999999999'))
print('remove 0x10', w(pci + '/remove', b'0x10\\n'), here())
print('rescan +1', w('/sys/bus/pci/rescan', b'+1\\n'), here())
" >"$T/out" || fail "python: rc $?: $(cat "$T/out" "$T/err")"
[ "$(cat "$T/out")" = "open-only True
remove 0 2 True
remove junk EINVAL True
remove 1x EINVAL True
remove -1 EINVAL True
remove empty 0 True
rescan junk EINVAL True
rescan 0 1 True
fn rescan junk EINVAL True
reset 0 EINVAL
reset 2 EINVAL
reset junk EINVAL
reset huge ERANGE
remove 0x10 5 False
rescan +1 3 True" ] || fail "values: $(cat "$T/out")"
# the refused resets reset nothing: the committed firmware waits, then the rescan's probe takes it
[ "$(afi)" = 2 ] || fail "afi $(afi) after the rescan's probe, expected 2"
fw_next 3 3.2
ex sh -c "echo 0 >$PCI/reset" 2>/dev/null && fail "dash's echo 0 > reset succeeded"
[ "$(afi)" = 50 ] || fail "afi $(afi) after echo 0 > reset, expected 0x32 (slot 2 active, 3 next: no reset)"
ex sh -c "echo 0x1 >$PCI/reset" || fail "echo 0x1 > reset: $(cat "$T/err")"
[ "$(afi)" = 3 ] || fail "afi $(afi) after echo 0x1 > reset, expected 3"

step "dash's and bash's echo (glibc's own write on 1): 0 nothing, junk EINVAL, 1 removes"
for sh in sh bash; do
	ex $sh -c "
		echo 0 >$PCI/remove && echo zero-ok
		test -e /dev/nvme0n1 && echo still
		echo junk >$PCI/remove || echo junk-refused
		test -e /sys/class/nvme/nvme0 && echo still
		echo 1 >$PCI/remove && echo removed
		test -e /dev/nvme0n1 || echo gone
		echo 1 >/sys/bus/pci/rescan && test -e /dev/nvme0n1 && echo back
	" >"$T/out" || fail "$sh: rc $?: $(cat "$T/out" "$T/err")"
	[ "$(cat "$T/out")" = "zero-ok
still
junk-refused
still
removed
gone
back" ] || fail "$sh's echo: $(cat "$T/out")"
	# dash says "I/O error" for any failed write; bash says the errno
	[ $sh = sh ] || grep -q "Invalid argument" "$T/err" || fail "$sh's echo junk: not EINVAL: $(cat "$T/err")"
done

echo "exec_ctl_files: ok"
