#!/usr/bin/env bash
# A program that lists /dev or /sys with getdents64 itself, not readdir
# (tests/exec/raw_getdents.c: glibc's getdents64(), syscall(), and its own
# syscall instruction with a SIGSYS handler of its own, as Go's runtime) under
# `ucmd exec` sees what `ls` (libc's readdir, interposed) sees: ucmd's
# devices in /dev (nvme0 and ng0n1 as character devices, nvme0n1 as a
# block device), the controller's PCI function in /sys/devices/pci0000:00
# and its class entry in /sys/class/nvme, and the host's other entries
# (/dev/null); a rewind (lseek 0) lists the same again. A directory the
# tree does not have (/etc) is the host's, untouched. The same program
# linked statically (ucmd-supervise, which serves every getdents64) lists
# /dev as the dynamic one does, and /etc as the host's. With the supervisor
# gone, the dynamic program's own getdents64 fails (ENOSYS) rather than
# list the host's /dev. x86-64's old getdents call (its own record layout)
# lists the same as getdents64, through syscall() and inline, dynamic and
# static.
source "$(dirname "$0")/lib/common.sh"
need_tools cc python3
cc -O2 -o "$T/raw_getdents" "$SRC/tests/exec/raw_getdents.c" || fail "cc raw_getdents"
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"

ex() { timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$@"; }

step "/dev with getdents64: ucmd's devices, of their kinds"
ex "$T/raw_getdents" /dev >"$T/dev.txt" 2>&1 || fail "raw_getdents /dev: $(cat "$T/dev.txt")"
ex "$T/raw_getdents" /dev syscall >"$T/dev2.txt" 2>&1 || fail "raw_getdents /dev syscall: $(cat "$T/dev2.txt")"
ex "$T/raw_getdents" /dev insn >"$T/dev3.txt" 2>&1 || fail "raw_getdents /dev insn: $(cat "$T/dev3.txt")"
for want in "nvme0 c" "ng0n1 c" "nvme0n1 b" "null c"; do
	grep -qx "$want" "$T/dev.txt" || fail "getdents64() of /dev has no '$want': $(cat "$T/dev.txt")"
	grep -qx "$want" "$T/dev2.txt" || fail "syscall(getdents64) of /dev has no '$want': $(cat "$T/dev2.txt")"
	grep -qx "$want" "$T/dev3.txt" || fail "its own getdents64 instruction on /dev has no '$want': $(cat "$T/dev3.txt")"
done

step "the same names as ls (libc's readdir) lists"
compare() {	# dir [syscall]
	ex "$T/raw_getdents" "$@" >"$T/raw.txt" 2>&1 || fail "raw_getdents $*: $(cat "$T/raw.txt")"
	ex ls -A "$1" >"$T/ls.txt" 2>&1 || fail "ls $1: $(cat "$T/ls.txt")"
	cut -d' ' -f1 "$T/raw.txt" | sort >"$T/raw.names"
	sort "$T/ls.txt" >"$T/ls.names"
	diff "$T/raw.names" "$T/ls.names" >"$T/diff.txt" ||
		fail "$1: raw getdents64 and ls differ: $(cat "$T/diff.txt")"
}
compare /dev
compare /dev syscall
compare /dev insn
compare /etc insn
compare /sys/devices/pci0000:00
compare /sys/class/nvme
compare /etc

step "the controller's PCI function and class entry, listed raw"
ex "$T/raw_getdents" /sys/devices/pci0000:00 >"$T/pci.txt" 2>&1 || fail "raw_getdents pci0000:00"
grep -qE '^0000:00:[0-9a-f]{2}\.0 d$' "$T/pci.txt" || fail "no PCI function listed raw: $(cat "$T/pci.txt")"
ex "$T/raw_getdents" /sys/class/nvme >"$T/class.txt" 2>&1 || fail "raw_getdents /sys/class/nvme"
grep -qE '^nvme0 ' "$T/class.txt" || fail "no nvme0 in /sys/class/nvme listed raw: $(cat "$T/class.txt")"
step "a static program (ucmd-supervise) lists /dev with ucmd's devices, no host NVMe node"
cc -O2 -static -o "$T/raw_getdents.static" "$SRC/tests/exec/raw_getdents.c" || fail "cc -static"
ex "$T/raw_getdents.static" /dev >"$T/sdev.txt" 2>&1 || fail "static /dev: $(cat "$T/sdev.txt")"
for want in "nvme0 c" "ng0n1 c" "nvme0n1 b" "null c"; do
	grep -qx "$want" "$T/sdev.txt" || fail "static getdents64 of /dev has no '$want': $(cat "$T/sdev.txt")"
done
# the same names as the dynamic program's listing (the preload's)
cut -d' ' -f1 "$T/sdev.txt" | sort >"$T/sdev.names"
cut -d' ' -f1 "$T/dev.txt" | sort >"$T/dev.names"
diff "$T/sdev.names" "$T/dev.names" >"$T/diff.txt" ||
	fail "static and dynamic listings of /dev differ: $(cat "$T/diff.txt")"
step "a static program's listing of another directory is the host's own"
ex "$T/raw_getdents.static" /etc >"$T/setc.txt" 2>&1 || fail "static /etc: $(cat "$T/setc.txt")"
cut -d' ' -f1 "$T/setc.txt" | sort >"$T/setc.names"
ls -A /etc | sort >"$T/etc.names"
diff "$T/setc.names" "$T/etc.names" >"$T/diff.txt" ||
	fail "static listing of /etc is not the host's: $(cat "$T/diff.txt")"
step "the old getdents (struct linux_dirent) lists what getdents64 lists, dynamic and static"
# syscall(SYS_getdents) (the preload) and the program's own instruction
# (ucmd-supervise), names and types alike; before, both were the host's
# listing (no ng0n1 in /dev, no nvme0n1 in /sys/block)
old_same() {	# program dir mode
	ex "$1" "$2" >"$T/new.txt" 2>&1 || fail "$1 $2: $(cat "$T/new.txt")"
	ex "$1" "$2" "$3" >"$T/old.txt" 2>&1 || fail "$1 $2 $3: $(cat "$T/old.txt")"
	sort "$T/new.txt" >"$T/new.sorted"
	sort "$T/old.txt" >"$T/old.sorted"
	diff "$T/old.sorted" "$T/new.sorted" >"$T/diff.txt" ||
		fail "$1 $2: getdents ($3) and getdents64 differ: $(cat "$T/diff.txt")"
}
for prog in "$T/raw_getdents" "$T/raw_getdents.static"; do
	for mode in old oldinsn; do
		old_same "$prog" /dev "$mode"
		grep -qx "ng0n1 c" "$T/old.txt" || fail "$prog /dev $mode: no 'ng0n1 c': $(cat "$T/old.txt")"
		grep -qx "nvme0n1 b" "$T/old.txt" || fail "$prog /dev $mode: no 'nvme0n1 b'"
		old_same "$prog" /sys/block "$mode"
		grep -qE "^nvme0n1 [ld]$" "$T/old.txt" || fail "$prog /sys/block $mode: no nvme0n1: $(cat "$T/old.txt")"
		old_same "$prog" /etc "$mode"
	done
done
step "the supervisor gone: the open and the listing fail (ENOSYS), never the host's"
set +e
ex "$T/raw_getdents" /dev orphan >"$T/orphan.txt" 2>&1
rc=$?
set -e
[ "$rc" = 137 ] || fail "ucmd exec after its supervisor was killed: exit $rc, not 137"
for _ in $(seq 100); do
	grep -q "Function not implemented" "$T/orphan.txt" && break
	sleep 0.1
done
# its open of /dev goes to the supervisor first (every open does), its listing too
grep -qxE "(/dev|getdents64): Function not implemented" "$T/orphan.txt" ||
	fail "the orphan's listing did not fail with ENOSYS: $(cat "$T/orphan.txt")"
echo "exec_raw_getdents: ok"
