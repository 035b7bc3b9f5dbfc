#!/usr/bin/env bash
# A statically linked program under `ucmd exec` (no preload: ucmd-supervise
# alone) sees ucmd's /dev and /sys exactly as a dynamic one does (the
# preload's tree): tests/exec/raw_stat.c built with `cc -static`, run by
# Debian's static busybox sh, against the same program built dynamically
# and run by bash under another exec:
#
# - stat, lstat, fstatat, statx, readlink, readlinkat, access, faccessat,
#   faccessat2, each with its own syscall instruction and through (static)
#   glibc, of ucmd's nodes, of NVMe names ucmd does not have (ENOENT), of
#   the tree's files, directories and links, and of host files, print the
#   same (but the inode numbers: each exec has a tree of its own), and fstat
#   of a device its own open gave says what stat of its path says;
# - its listings (glibc's getdents64 and its own instruction) of /dev's
#   NVMe nodes, /sys/block, /sys/class/nvme, the controller's directory,
#   /sys/devices/pci0000:00 and others name the same entries;
# - busybox's own ls -l, stat, cat, readlink show ucmd's nodes and the
#   tree's attributes; writing an attribute is EACCES, a rescan is taken;
# - Debian's libnvme linked statically (tests/exec/nvme_scan.c, as
#   nvme-cli's list-subsys scans sysfs) finds the same subsystem,
#   controller and namespace as linked dynamically, and its 32-bit
#   passthrough ioctls (Get Features' result, a Write and a Read) work on
#   ng0n1 and nvme0n1, the namespace holding what was written.
source "$(dirname "$0")/lib/common.sh"
need_tools cc busybox pkg-config python3
grep -q 'statically linked' <<<"$(file -L "$(command -v busybox)")" ||
	fail "busybox is not busybox-static (scripts/deps.sh)"
for p in raw_stat raw_getdents; do
	cc -O2 -static -o "$T/${p}_s" "$SRC/tests/exec/$p.c" || fail "cc -static $p"
	cc -O2 -o "$T/$p" "$SRC/tests/exec/$p.c" || fail "cc $p"
done
# libnvme.a needs libcrypto.a (libssl-dev) and json-c's; its getaddrinfo warns
# shellcheck disable=SC2046  # pkg-config prints several words
cc -O2 -static -o "$T/nvme_scan_s" "$SRC/tests/exec/nvme_scan.c" \
	$(pkg-config --cflags libnvme) -lnvme -ljson-c -lcrypto 2>"$T/cc.log" ||
	fail "cc -static nvme_scan: $(cat "$T/cc.log")"
# shellcheck disable=SC2046
cc -O2 -o "$T/nvme_scan" "$SRC/tests/exec/nvme_scan.c" $(pkg-config --cflags --libs libnvme) ||
	fail "cc nvme_scan"
grep -q 'statically linked' <<<"$(file "$T/raw_stat_s")" || fail "raw_stat_s is not static"
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"
ex() { timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$@"; }

# every look, raw and through libc, of one program ($1): "OP PATH: RAW | LIBC" lines
cat >"$T/looks.sh" <<'EOS'
R=$1
for p in /dev/nvme0 /dev/ng0n1 /dev/nvme0n1 /dev/nvme0n9 /dev/ng7n1 /dev/null /etc/passwd \
	/sys/block/nvme0n1 /sys/block/nvme0n1/size /sys/class/nvme/nvme0 \
	/sys/class/nvme/nvme0/device /sys/class/nvme/nvme0/model /sys/class/nvme-generic/ng0n1/dev \
	/sys/dev/block/259:0 /sys/class/nvme/nvme9 /sys/class/nvme/nvme0/rescan_controller; do
	for op in stat lstat fstatat statx readlink readlinkat; do
		echo "$op $p: $("$R" $op $p) | $("$R" libc $op $p)"
	done
	for op in access faccessat faccessat2; do
		for m in r w; do
			echo "$op $m $p: $("$R" $op $p $m) | $("$R" libc $op $p $m)"
		done
	done
done
for p in /dev/nvme0 /dev/ng0n1 /dev/nvme0n1; do
	echo "fstat $p: $("$R" fstat $p)"
done
EOS
step "the looks of the static program (busybox sh) and of the dynamic one (bash)"
ex busybox sh "$T/looks.sh" "$T/raw_stat_s" >"$T/static.txt" 2>&1 ||
	fail "static looks: $(cat "$T/static.txt")"
ex bash "$T/looks.sh" "$T/raw_stat" >"$T/dynamic.txt" 2>&1 ||
	fail "dynamic looks: $(cat "$T/dynamic.txt")"
[ "$(wc -l <"$T/static.txt")" = 195 ] || fail "static looks: $(cat "$T/static.txt")"
sed 's/ ino=[0-9]*//g' "$T/static.txt" >"$T/static.cmp"
sed 's/ ino=[0-9]*//g' "$T/dynamic.txt" >"$T/dynamic.cmp"
diff "$T/dynamic.cmp" "$T/static.cmp" >"$T/looks.diff" ||
	fail "the static program's looks are not the dynamic one's (- dynamic, + static): $(cat "$T/looks.diff")"

step "they are ucmd's: device kinds and numbers, ENOENT for other NVMe names, the tree's links"
want() { grep -qxF "$1" "$T/static.cmp" || fail "no '$1' in: $(grep -F "${1%%:*}:" "$T/static.cmp")"; }
want "stat /dev/ng0n1: type=c mode=0600 rdev=241:0 size=0 nlink=1 | type=c mode=0600 rdev=241:0 size=0 nlink=1"
want "statx /dev/nvme0n1: type=b mode=0660 rdev=259:0 size=0 nlink=1 | type=b mode=0660 rdev=259:0 size=0 nlink=1"
want "lstat /dev/nvme0: type=c mode=0600 rdev=240:0 size=0 nlink=1 | type=c mode=0600 rdev=240:0 size=0 nlink=1"
want "fstat /dev/ng0n1: type=c mode=0600 rdev=241:0 size=0 nlink=1"
want "fstat /dev/nvme0n1: type=b mode=0660 rdev=259:0 size=0 nlink=1"
want "stat /dev/nvme0n9: err No such file or directory | err No such file or directory"
want "access r /dev/ng7n1: err No such file or directory | err No such file or directory"
want "faccessat2 w /dev/ng0n1: ok | ok"
want "stat /sys/class/nvme/nvme9: err No such file or directory | err No such file or directory"
grep -qE "^readlink /sys/block/nvme0n1: \.\./devices/pci0000:00/0000:00:[0-9a-f]{2}\.0/nvme/nvme0/nvme0n1 \|" \
	"$T/static.cmp" || fail "readlink /sys/block/nvme0n1: $(grep "^readlink /sys/block/nvme0n1" "$T/static.cmp")"
grep -q "^stat /sys/block/nvme0n1/size: type=f mode=0444 " "$T/static.cmp" || fail "stat size"
grep -q "^stat /dev/null: type=c mode=0666 rdev=1:3 " "$T/static.cmp" || fail "/dev/null is not the host's"

step "listings: glibc's getdents64 and the program's own instruction, as the dynamic program's"
cat >"$T/lists.sh" <<'EOS'
for d in /dev /sys/block /sys/class/nvme /sys/class/nvme/nvme0 /sys/class/nvme-subsystem/nvme-subsys0 \
	/sys/class/nvme-generic /sys/devices/pci0000:00 /sys/bus/pci/devices /sys/dev/block /sys/dev/char; do
	echo "== $d"
	# /dev: its NVMe nodes (the host's other nodes may come and go between two execs)
	"$1" "$d" $2 | cut -d' ' -f1 | if [ "$d" = /dev ]; then grep -E '^(nvme|ng)'; else cat; fi | sort
done
EOS
ex busybox sh "$T/lists.sh" "$T/raw_getdents_s" insn >"$T/s_insn.txt" 2>&1 ||
	fail "static listings: $(cat "$T/s_insn.txt")"
ex busybox sh "$T/lists.sh" "$T/raw_getdents_s" >"$T/s_libc.txt" 2>&1 ||
	fail "static listings: $(cat "$T/s_libc.txt")"
ex bash "$T/lists.sh" "$T/raw_getdents" >"$T/d_libc.txt" 2>&1 ||
	fail "dynamic listings: $(cat "$T/d_libc.txt")"
diff "$T/d_libc.txt" "$T/s_insn.txt" >"$T/lists.diff" ||
	fail "the static program's listings are not the dynamic one's (- dynamic, + static): $(cat "$T/lists.diff")"
diff "$T/s_libc.txt" "$T/s_insn.txt" >"$T/lists.diff" ||
	fail "static: glibc's and the own instruction's listings differ: $(cat "$T/lists.diff")"
for n in nvme0 ng0n1 nvme0n1; do
	grep -qx "$n" <<<"$(sed -n '/^== \/dev$/,/^== /p' "$T/s_insn.txt")" || fail "no $n in /dev: $(cat "$T/s_insn.txt")"
done
grep -qx nvme0n1 <<<"$(sed -n '/^== \/sys\/block$/,/^== /p' "$T/s_insn.txt")" ||
	fail "no nvme0n1 in /sys/block: $(cat "$T/s_insn.txt")"
grep -qx model <<<"$(sed -n '/^== \/sys\/class\/nvme\/nvme0$/,/^== /p' "$T/s_insn.txt")" ||
	fail "no model in the controller's directory: $(cat "$T/s_insn.txt")"

step "busybox's own ls -l, stat, cat, readlink; an attribute written: EACCES; a rescan taken"
out=$(ex busybox sh -c "ls -l /dev/ng0n1 /dev/nvme0n1; stat -c '%F %a %t:%T' /dev/nvme0;
	cat /sys/block/nvme0n1/size; readlink /sys/class/nvme/nvme0/device; ls /sys/block;
	echo 1 >/sys/block/nvme0n1/size || echo refused; '$T/raw_stat_s' write /sys/class/nvme/nvme0/rescan_controller;
	'$T/raw_stat_s' write /sys/bus/pci/rescan; '$T/raw_stat_s' write /sys/class/nvme/nvme0/model" 2>&1) ||
	fail "busybox: $out"
size=$(ex cat /sys/block/nvme0n1/size 2>&1) || fail "dynamic cat: $size"
grep -qE '^crw------- +1 root +root +241, +0 .* /dev/ng0n1$' <<<"$out" || fail "ls -l ng0n1: $out"
grep -qE '^brw-rw---- +1 root +(disk|6) +259, +0 .* /dev/nvme0n1$' <<<"$out" || fail "ls -l nvme0n1: $out"
grep -qx "character special file 600 f0:0" <<<"$out" || fail "stat nvme0: $out"
grep -qx "$size" <<<"$out" && [ "$size" -gt 0 ] || fail "cat size: '$out' (dynamic: $size)"
grep -qE '^\.\./\.\./\.\./0000:00:[0-9a-f]{2}\.0$' <<<"$out" || fail "readlink device: $out"
grep -qx nvme0n1 <<<"$out" || fail "ls /sys/block: $out"
grep -qx "sh: can't create /sys/block/nvme0n1/size: Permission denied" <<<"$out" &&
	grep -qx refused <<<"$out" || fail "writing size: $out"
[ "$(tail -n 3 <<<"$out")" = "ok
ok
err Permission denied" ] || fail "the rescans and a written attribute: $out"

step "libnvme linked statically finds the subsystem, controller and namespace the dynamic one finds"
s=$(ex "$T/nvme_scan_s" 2>&1) || fail "static nvme_scan: $s"
d=$(ex "$T/nvme_scan" 2>&1) || fail "dynamic nvme_scan: $d"
grep -q '^ ctrl nvme0 transport=pcie address=0000:00:' <<<"$d" || fail "dynamic nvme_scan: $d"
grep -q '^  ns nvme0n1 nsid=1 lba=512 blocks=[1-9]' <<<"$d" || fail "dynamic nvme_scan: $d"
[ "$s" = "$d" ] || fail "libnvme's scan, static: '$s', dynamic: '$d'"

step "libnvme 1.x's 32-bit passthrough from the static program: a result, a write the namespace holds"
for dev in /dev/ng0n1 /dev/nvme0n1; do
	s=$(ex "$T/nvme_scan_s" io $dev 2>&1) || fail "static nvme_scan io $dev: $s"
	d=$(ex "$T/nvme_scan" io $dev 2>&1) || fail "dynamic nvme_scan io $dev: $d"
	grep -qx "io ok" <<<"$s" && [ "$s" = "$d" ] || fail "io on $dev, static: '$s', dynamic: '$d'"
done
timeout 60 "$UCMD" --ctrl "$CTRL" read -s 64 -c 7 -z 4096 -d "$T/back.bin" >/dev/null || fail "ucmd read"
python3 - "$T/back.bin" <<'PY' || fail "the namespace does not hold nvme_scan's pattern"
import sys
data = open(sys.argv[1], 'rb').read()
sys.exit(0 if data[:4096] == bytes((i * 7 + 3) & 0xff for i in range(4096)) else 1)
PY
echo "exec_static_tree: ok"
