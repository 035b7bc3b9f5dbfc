#!/usr/bin/env bash
# A program that looks at paths with its own syscall instruction (no libc:
# tests/exec/raw_stat.c, as Go's runtime does) under `ucmd exec` gets what
# the same calls through libc get from the preload: stat, lstat,
# newfstatat, statx, access, faccessat, faccessat2, readlink and readlinkat
# of ucmd's /dev nodes (their kind, mode and device numbers), of NVMe names
# ucmd does not have (ENOENT) and of the generated /sys tree (its files,
# directories and links), byte for byte; its own opens of /sys attributes
# read the tree's values, and an open for writing is EACCES (a rescan is
# taken), and fstat of a device it opened so says what stat of its path
# says; its own listing of /sys/block shows ucmd's namespace beside the
# host's disks, as ls does. A path that is neither is the host's
# (/etc/passwd, /dev/null).
source "$(dirname "$0")/lib/common.sh"
need_tools cc
cc -O2 -o "$T/raw_stat" "$SRC/tests/exec/raw_stat.c" || fail "cc raw_stat"
cc -O2 -o "$T/raw_getdents" "$SRC/tests/exec/raw_getdents.c" || fail "cc raw_getdents"
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"

# every look, raw and through libc, in one exec (one tree): "OP PATH: RAW | LIBC" lines
cat >"$T/looks.sh" <<EOS
for p in /dev/nvme0 /dev/ng0n1 /dev/nvme0n1 /dev/nvme0n9 /dev/ng7n1 /dev/null /etc/passwd \\
	/sys/block/nvme0n1 /sys/block/nvme0n1/size /sys/class/nvme/nvme0 \\
	/sys/class/nvme/nvme0/device /sys/class/nvme/nvme0/model /sys/class/nvme-generic/ng0n1/dev \\
	/sys/dev/block/259:0 /sys/class/nvme/nvme9; do
	for op in stat lstat fstatat statx readlink readlinkat; do
		echo "\$op \$p: \$('$T/raw_stat' \$op \$p) | \$('$T/raw_stat' libc \$op \$p)"
	done
	for op in access faccessat faccessat2; do
		for m in r w; do
			echo "\$op \$m \$p: \$('$T/raw_stat' \$op \$p \$m) | \$('$T/raw_stat' libc \$op \$p \$m)"
		done
	done
done
EOS
timeout 300 "$UCMD" exec --ctrl "$CTRL" -- bash "$T/looks.sh" >"$T/looks.txt" 2>&1 ||
	fail "the looks: $(cat "$T/looks.txt")"

step "raw and libc looks agree, for ucmd's nodes, the tree and the host's files"
[ "$(wc -l <"$T/looks.txt")" = 180 ] || fail "looks: $(cat "$T/looks.txt")"
while IFS= read -r line; do
	raw=${line#*: }
	[ "${raw%% | *}" = "${raw#* | }" ] || fail "raw and libc differ: $line"
done <"$T/looks.txt"

step "the answers are ucmd's: device kinds and numbers, ENOENT for other NVMe names, the tree's links"
want() { grep -qxF "$1" "$T/looks.txt" || fail "no '$1' in: $(grep -F "${1%%:*}:" "$T/looks.txt")"; }
grep -q "^stat /dev/nvme0: type=c mode=0600 rdev=240:0 size=0 " "$T/looks.txt" || fail "stat nvme0"
grep -q "^statx /dev/ng0n1: type=c mode=0600 rdev=241:0 size=0 " "$T/looks.txt" || fail "statx ng0n1: $(grep "^statx /dev/ng0n1" "$T/looks.txt")"
grep -q "^lstat /dev/nvme0n1: type=b mode=0660 rdev=259:0 size=0 " "$T/looks.txt" || fail "lstat nvme0n1"
grep -q "^fstatat /dev/nvme0n1: type=b mode=0660 rdev=259:0 size=0 " "$T/looks.txt" || fail "fstatat nvme0n1"
want "stat /dev/nvme0n9: err No such file or directory | err No such file or directory"
want "statx /dev/ng7n1: err No such file or directory | err No such file or directory"
want "access r /dev/ng7n1: err No such file or directory | err No such file or directory"
want "faccessat2 r /dev/ng0n1: ok | ok"
want "stat /sys/class/nvme/nvme9: err No such file or directory | err No such file or directory"
grep -q "^lstat /sys/block/nvme0n1: type=l " "$T/looks.txt" || fail "lstat /sys/block/nvme0n1 is no link"
grep -q "^stat /sys/block/nvme0n1: type=d " "$T/looks.txt" || fail "stat /sys/block/nvme0n1 is no directory"
grep -qE "^readlink /sys/block/nvme0n1: \.\./devices/pci0000:00/0000:00:[0-9a-f]{2}\.0/nvme/nvme0/nvme0n1 \|" \
	"$T/looks.txt" || fail "readlink /sys/block/nvme0n1: $(grep "^readlink /sys/block/nvme0n1" "$T/looks.txt")"
grep -qE "^readlinkat /sys/class/nvme/nvme0/device: \.\./\.\./\.\./0000:00:[0-9a-f]{2}\.0 \|" \
	"$T/looks.txt" || fail "readlinkat device: $(grep "^readlinkat /sys/class/nvme/nvme0/device" "$T/looks.txt")"
grep -q "^stat /dev/null: type=c mode=0666 rdev=1:3 " "$T/looks.txt" || fail "/dev/null is not the host's"

step "fstat of a device its own openat gave: what stat of the path says (kind, mode, numbers)"
for p in /dev/nvme0 /dev/ng0n1 /dev/nvme0n1; do
	f=$(timeout 60 "$UCMD" exec --ctrl "$CTRL" -- "$T/raw_stat" fstat $p 2>&1) || fail "fstat $p: $f"
	l=$(grep "^stat $p: " "$T/looks.txt")
	l=${l#stat $p: }
	l=${l%% | *}
	# another exec, another tree: all but the placeholder's inode
	[ "${f% ino=*}" = "${l% ino=*}" ] && [ -n "${f% ino=*}" ] ||
		fail "fstat of a raw-opened $p says '$f', stat of its path '$l'"
done

step "its own opens of /sys: the tree's attributes; written, EACCES; a rescan taken"
out=$(timeout 120 "$UCMD" exec --ctrl "$CTRL" -- sh -c "'$T/raw_stat' cat /sys/block/nvme0n1/size;
	cat /sys/block/nvme0n1/size; '$T/raw_stat' cat /sys/class/nvme/nvme0/nvme0n1/nsid;
	'$T/raw_stat' write /sys/block/nvme0n1/size; '$T/raw_stat' write /sys/class/nvme/nvme0/rescan_controller;
	'$T/raw_stat' write /sys/class/nvme/nvme0/nvme0n1/queue/logical_block_size" 2>&1) ||
	fail "raw opens: $out"
sz=$(sed -n 1p <<<"$out")
[ -n "$sz" ] && [ "$sz" != 0 ] && [ "$sz" = "$(sed -n 2p <<<"$out")" ] ||
	fail "a raw read of size is not libc's: '$out'"
[ "$(sed -n '3,$p' <<<"$out")" = "1
err Permission denied
ok
err Permission denied" ] || fail "raw opens of the tree: '$out'"

step "its own listing of /sys/block: ucmd's namespace beside the host's disks, as ls"
timeout 120 "$UCMD" exec --ctrl "$CTRL" -- sh -c "'$T/raw_getdents' /sys/block insn; echo --; ls -A /sys/block" \
	>"$T/block.txt" 2>&1 || fail "raw_getdents /sys/block: $(cat "$T/block.txt")"
sed '/^--$/,$d' "$T/block.txt" | cut -d' ' -f1 | sort >"$T/raw.names"
sed '1,/^--$/d' "$T/block.txt" | sort >"$T/ls.names"
grep -qx nvme0n1 "$T/raw.names" || fail "no nvme0n1 in a raw listing of /sys/block: $(cat "$T/block.txt")"
diff "$T/raw.names" "$T/ls.names" >"$T/diff.txt" || fail "raw listing and ls differ: $(cat "$T/diff.txt")"
echo "exec_raw_stat: ok"
