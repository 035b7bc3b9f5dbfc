#!/usr/bin/env bash
# ucmd's /dev and /sys under `ucmd exec` are Linux's for every user, and
# whatever the umask ucmd exec ran with (077 here):
#
# - stat, lstat, statx and fstat of the tree's directories show 0755, its
#   attributes 0444, the ones Linux takes writes to 0644 (the block queue's
#   tunables, a device's uevent, a PCI function's enable and config...) and
#   its control files (rescans, resets, remove) 0200, the modes this host's own /sys shows for a directory,
#   an attribute, the same writable attribute and /sys/bus/pci/rescan;
#   resource0 0600 (Linux's PCI resourceN); root opens a 0644 attribute
#   for writing, dynamic and static alike (attrw.c judges the preload's
#   writes, sv_attrw.c ucmd-supervise's: docs/compat.md);
# - ucmd's device nodes are Linux's under Debian's udev, for root and for
#   the user alike: /dev/nvme0 and /dev/ng0n1 crw------- root root,
#   /dev/nvme0n1 brw-rw---- root disk (stat, lstat, statx, fstat);
# - a root program that drops to user 65534 (setresuid, as a service does;
#   tests/exec/drop_tree.c), before it ever looked at /dev or /sys or after
#   it connected and looked as root (-w), sees through libc what root sees
#   (the same stat and realpath answers, listings of the tree's directories and of
#   /sys/block and /dev, attributes' contents), and is refused what Linux
#   refuses that user: ucmd's 0600 root nodes (access and open EACCES), a
#   rescan (0200), writing an attribute; a 0444 attribute is readable and
#   the 0755 directories searchable and listable;
# - a path that climbs out of the tree's /sys through its links and ".."
#   reaches nothing of the exec's private directory above it (the daemon's
#   socket), for root or for that user.
#
# Dynamic (the preload's interposers: the tree lies in the exec's private
# directory, which the user can no longer search, so ucmd-supervise answers
# for it, src/preload/svcall.c) and static (ucmd-supervise alone) alike.
source "$(dirname "$0")/lib/common.sh"
need_tools cc
[ "$(id -u)" = 0 ] || skip "needs root (a program that drops from root to a user)"
[ -e /sys/bus/pci/rescan ] || skip "this host's /sys has no /sys/bus/pci/rescan to compare with"
cc -O2 -o "$T/drop_tree" "$SRC/tests/exec/drop_tree.c" || fail "cc drop_tree"
cc -O2 -static -o "$T/drop_tree_s" "$SRC/tests/exec/drop_tree.c" || fail "cc -static drop_tree"
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"
ex() { (umask 077 && timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$@"); }

# Linux's modes, as this host's /sys shows them
attr=
for f in /sys/bus/pci/devices/*/vendor; do [ -e "$f" ] && attr=$f && break; done
[ -n "$attr" ] || skip "no PCI function in this host's /sys to compare with"
dmode=$(stat -L -c %04a /sys/class/block)
amode=$(stat -c %04a "$attr")
rmode=$(stat -c %04a /sys/bus/pci/rescan)
pcidir=$(dirname "$attr")
hostq=
for f in /sys/block/*/queue/scheduler; do [ -e "$f" ] && hostq=$(dirname "$f") && break; done
[ -n "$hostq" ] || skip "no block queue in this host's /sys to compare with"
# resourceN: this host's if it has one (0600, root's), else Linux's 0600
pmode=0600
for f in "$pcidir"/resource0 /sys/bus/pci/devices/*/resource0; do
	[ -e "$f" ] && pmode=$(stat -c %04a "$f") && break
done
step "this host's /sys: directories $dmode, attributes $amode, rescan $rmode, resource0 $pmode"
# Linux's writable attributes: each with the host file whose mode it must have
rw="/sys/block/nvme0n1/uevent=$pcidir/uevent /sys/class/nvme/nvme0/uevent=$pcidir/uevent"
for a in scheduler nr_requests read_ahead_kb max_sectors_kb rotational nomerges rq_affinity \
	io_poll_delay wbt_lat_usec; do
	rw+=" /sys/block/nvme0n1/queue/$a=$hostq/$a"
done
for a in enable config driver_override; do rw+=" /sys/class/nvme/nvme0/device/$a=$pcidir/$a"; done
rwattrs=
for e in $rw; do
	[ -e "${e#*=}" ] || skip "this host's /sys has no ${e#*=} to compare with"
	rwattrs+=" ${e%%=*}"
done
res0=/sys/class/nvme/nvme0/device/resource0
diskgid=$(getent group disk | cut -d: -f3)
[ -n "$diskgid" ] || diskgid=6

dirs="/sys/class/nvme /sys/class/nvme/nvme0 /sys/class/nvme/nvme0/device /sys/block/nvme0n1"
dirs+=" /sys/block/nvme0n1/queue /sys/class/nvme-subsystem/nvme-subsys0 /sys/bus/pci/drivers/nvme"
attrs="/sys/class/nvme/nvme0/model /sys/block/nvme0n1/size /sys/class/nvme/nvme0/device/vendor"
rescans="/sys/bus/pci/rescan /sys/class/nvme/nvme0/rescan_controller /sys/class/nvme/nvme0/reset_controller"
rescans+=" /sys/class/nvme/nvme0/device/remove /sys/class/nvme/nvme0/device/rescan /sys/class/nvme/nvme0/device/reset"
devs="/dev/ng0n1 /dev/nvme0 /dev/nvme0n1"

# A: answers that are every user's (stat, listings, contents): root's are the reference
for p in $dirs $attrs $rwattrs $res0 $rescans $devs; do
	printf '%s %s\n' stat "$p" lstat "$p" statx "$p"
done >"$T/A.ops"
for p in $dirs; do printf '%s %s\n' fstat "$p" realpath "$p"; done >>"$T/A.ops"
for p in $attrs /sys/block/nvme0n1/queue/read_ahead_kb /sys/block/nvme0n1/queue/scheduler; do
	echo "cat $p"
done >>"$T/A.ops"
for p in /sys/class/nvme /sys/class/nvme/nvme0 /sys/block/nvme0n1/queue /sys/block /dev; do
	echo "ls $p"
done >>"$T/A.ops"
# the tree's links lead elsewhere than their names: these climb out of its
# /sys (into the exec's private directory, where the daemon's socket is),
# which Linux's walk of /sys never does: nothing there, for root as for 65534
esc=/sys/class/nvme/nvme0/device/driver/../../../../../..
echo "stat $esc/sock" >>"$T/A.ops"
echo "stat $esc/root/.ready" >>"$T/A.ops"
echo "lstat $esc/sock" >>"$T/A.ops"
# B: what user 65534 may do, as Linux answers it for those modes (root's nodes, sysfs's files)
: >"$T/B.ops"
: >"$T/B.want"
for p in $dirs $attrs $rwattrs $res0 $rescans $devs; do
	case " $attrs $rwattrs $dirs " in *" $p "*) r="ok" ;; *) r="err Permission denied" ;; esac
	for op in access eaccess; do
		echo "$op $p r" >>"$T/B.ops"
		echo "$op $p w" >>"$T/B.ops"
		echo "$op $p r: $r" >>"$T/B.want"
		echo "$op $p w: err Permission denied" >>"$T/B.want"
	done
	echo "open $p r" >>"$T/B.ops"
	echo "open $p r: $r" >>"$T/B.want"
	case " $dirs " in *" $p "*) continue ;; esac	# EISDIR before any permission
	echo "open $p w" >>"$T/B.ops"
	echo "open $p w: err Permission denied" >>"$T/B.want"
done

for kind in dynamic static; do
	prog=$T/drop_tree
	[ $kind = static ] && prog=$T/drop_tree_s
	step "$kind, as root: the modes are this host's /sys's, whatever the umask"
	ex "$prog" <"$T/A.ops" >"$T/$kind.root" 2>&1 || fail "$kind as root: $(cat "$T/$kind.root")"
	if grep -q ': err' <<<"$(grep -v "^[a-z]* $esc/" "$T/$kind.root")"; then
		fail "$kind as root: $(grep ': err' "$T/$kind.root")"
	fi
	for p in $esc/sock $esc/root/.ready; do
		grep -qxF "stat $p: err No such file or directory" "$T/$kind.root" ||
			fail "$kind: $p leads out of the tree: $(grep -F "stat $p:" "$T/$kind.root")"
	done
	# the tree's files are the exec user's (root here); the device nodes root's
	for p in $dirs; do
		for op in stat statx fstat; do
			grep -qxF "$op $p: d $dmode 0:0" "$T/$kind.root" ||
				fail "$kind: $op $p is not a directory of mode $dmode: $(grep -F "$op $p:" "$T/$kind.root")"
		done
	done
	for p in $attrs; do
		grep -qxF "stat $p: f $amode 0:0" "$T/$kind.root" ||
			fail "$kind: $p is not an attribute of mode $amode: $(grep -F "stat $p:" "$T/$kind.root")"
	done
	for e in $rw; do
		p=${e%%=*}
		want=$(stat -c %04a "${e#*=}")
		for op in stat statx; do
			grep -qxF "$op $p: f $want 0:0" "$T/$kind.root" ||
				fail "$kind: $op $p is not of mode $want, as ${e#*=}: $(grep -F "$op $p:" "$T/$kind.root")"
		done
	done
	grep -qxF "stat $res0: f $pmode 0:0" "$T/$kind.root" ||
		fail "$kind: resource0 is not of mode $pmode: $(grep -F "stat $res0:" "$T/$kind.root")"
	for p in $rescans; do
		grep -qxF "stat $p: f $rmode 0:0" "$T/$kind.root" ||
			fail "$kind: $p is not of mode $rmode: $(grep -F "stat $p:" "$T/$kind.root")"
	done
	for op in stat lstat statx; do
		for p in /dev/nvme0 /dev/ng0n1; do
			grep -qxF "$op $p: c 0600 0:0" "$T/$kind.root" ||
				fail "$kind: $op $p is not crw------- root root: $(grep -F "$op $p:" "$T/$kind.root")"
		done
		grep -qxF "$op /dev/nvme0n1: b 0660 0:$diskgid" "$T/$kind.root" ||
			fail "$kind: $op /dev/nvme0n1 is not brw-rw---- root disk: $(grep -F "$op /dev/nvme0n1:" "$T/$kind.root")"
	done
	# root alone may open the nodes: fstat of the open device says the same
	printf 'fstat %s\n' $devs >"$T/R.ops"
	printf 'open %s w\n' $rwattrs >>"$T/R.ops"
	echo "cat /sys/block/nvme0n1/queue/scheduler" >>"$T/R.ops"
	ex "$prog" <"$T/R.ops" >"$T/$kind.R" 2>&1 || fail "$kind as root: $(cat "$T/$kind.R")"
	{
		echo "fstat /dev/ng0n1: c 0600 0:0"
		echo "fstat /dev/nvme0: c 0600 0:0"
		echo "fstat /dev/nvme0n1: b 0660 0:$diskgid"
		# root opens a 0644 attribute for writing, as Linux's root (attrw.c
		# judges the preload's writes, sv_attrw.c ucmd-supervise's)
		for p in $rwattrs; do echo "open $p w: ok"; done
		echo "cat /sys/block/nvme0n1/queue/scheduler: [none]"
	} >"$T/R.want"
	diff "$T/R.want" "$T/$kind.R" >"$T/R.diff" ||
		fail "$kind as root: nodes or writes other than want (- want, + exec): $(cat "$T/R.diff")"
	grep -qxF "ls /sys/class/nvme: nvme0" "$T/$kind.root" || fail "$kind: ls /sys/class/nvme"
	grep -qxF "ls /dev: ng0n1 nvme0 nvme0n1" "$T/$kind.root" || fail "$kind: ls /dev"

	for when in "-u" "-w -u"; do
		tag="$kind ($when 65534)"
		# shellcheck disable=SC2086  # the options are words
		ex "$prog" $when 65534 <"$T/A.ops" >"$T/got.A" 2>&1 || fail "$tag: $(cat "$T/got.A")"
		step "$tag: what root sees"
		diff "$T/$kind.root" "$T/got.A" >"$T/A.diff" ||
			fail "$tag sees other than root sees (- root, + 65534): $(cat "$T/A.diff")"
		# shellcheck disable=SC2086
		ex "$prog" $when 65534 <"$T/B.ops" >"$T/got.B" 2>&1 || fail "$tag: $(cat "$T/got.B")"
		step "$tag: what Linux lets that user do"
		diff "$T/B.want" "$T/got.B" >"$T/B.diff" ||
			fail "$tag answers other than Linux's (- Linux, + exec): $(cat "$T/B.diff")"
	done
done
echo "exec_tree_drop: ok"
