#!/usr/bin/env bash
# Namespaces come and go under `ucmd exec` as on Linux, with Debian's
# nvme-cli: after create-ns + attach-ns, another process of the same exec
# (nvme list) and a new exec see /dev/nvme0n2, /dev/ng0n2 and
# /sys/block/nvme0n2 (and a listing of /dev made with the program's own
# getdents64 instruction), and data written there is on the new namespace;
# after delete-ns they are gone. NVME_IOCTL_IO_CMD on /dev/nvme0 (nvme-cli's
# flush, read and write on the controller's device) is served on the
# controller's only namespace, EINVAL with two, ENOTTY with none, as
# Linux's nvme_dev_user_cmd. Get Features 09h per vector, and UNVMCAP
# following the namespaces created; namespaces of TNVMCAP / NN each (what
# nvme-cli's own create-max-ns test asks) can be made; create-ns --dps
# makes a namespace with protection whose disk reads and writes, the
# controller inserting and checking the tuples (nvme-cli's format test).
set -euo pipefail
# shellcheck source=tests/system/lib/daemon.sh
. "$(dirname "$0")/lib/daemon.sh"

command -v nvme >/dev/null || fail "nvme-cli is missing (scripts/deps.sh installs it)"
cc -O2 -o "$T/raw_getdents" "$SRC/tests/exec/raw_getdents.c" || fail "cc raw_getdents"
daemon_start --ctrl "$T/ctrl"
px() {
	(cd "$T" && timeout -k 5 120 "$UCMD" exec --daemon "$SOCK" -- "$@")
}
# "rc=N" of a command, its output in $T/out.txt
rc_of() {
	set +e
	px "$@" >"$T/out.txt" 2>&1
	echo "rc=$?"
	set -e
}
list() {	# the namespace nodes nvme list shows, one line
	px nvme list -o json | python3 -c '
import json, sys
j = json.load(sys.stdin)
print(" ".join(sorted(d["DevicePath"] for d in j.get("Devices", []))))'
}
CNTLID=$(px nvme id-ctrl /dev/nvme0 -o json | python3 -c 'import json, sys; print(json.load(sys.stdin)["cntlid"])')

step "one namespace: nvme flush/write/read on /dev/nvme0 use it (NVME_IOCTL_IO_CMD)"
[ "$(rc_of nvme flush /dev/nvme0 -n 1)" = rc=0 ] || { cat "$T/out.txt"; fail "flush on nvme0"; }
python3 -c 'import sys; sys.stdout.buffer.write(b"hotplug!" * 64)' >"$T/w.bin"
[ "$(rc_of nvme write /dev/nvme0 -n 1 -s 5 -c 0 -z 512 -d "$T/w.bin")" = rc=0 ] ||
	{ cat "$T/out.txt"; fail "write on nvme0"; }
timeout 60 "$UCMD" --daemon "$SOCK" read -s 5 -c 0 -z 512 -d "$T/r.bin" >/dev/null
cmp "$T/w.bin" "$T/r.bin" || fail "nvme write through /dev/nvme0 is not on namespace 1"

unvmcap() {
	px nvme id-ctrl /dev/nvme0 -o json | python3 -c '
import json, sys
j = json.load(sys.stdin)
print(int(j["tnvmcap"]) - int(j["unvmcap"]), j["unvmcap"])'
}
step "Get Features 09h for every vector nvme-cli may ask; TNVMCAP less UNVMCAP is the namespaces"
for iv in 0 1 2; do
	px nvme get-feature /dev/nvme0 -f 9 --cdw11=$iv -H >"$T/out.txt" 2>&1 ||
		{ cat "$T/out.txt"; fail "get-feature 9 vector $iv"; }
	grep -q "Interrupt Vector   (IV): $iv\$" "$T/out.txt" || { cat "$T/out.txt"; fail "vector $iv"; }
done
NS1_BYTES=$(px nvme id-ns /dev/nvme0n1 -o json | python3 -c '
import json, sys
j = json.load(sys.stdin)
print(j["nsze"] * (1 << j["lbafs"][j["flbas"] & 0xf]["ds"]))')
read -r used before < <(unvmcap)
[ "$used" = "$NS1_BYTES" ] || fail "TNVMCAP - UNVMCAP is $used, namespace 1 has $NS1_BYTES bytes"

step "create-ns + attach-ns in one process; another process and a new exec see nvme0n2"
px sh -c "nvme create-ns /dev/nvme0 --nsze=4096 --ncap=4096 --flbas=0 &&
	nvme attach-ns /dev/nvme0 -n 2 -c $CNTLID && nvme list -o json >'$T/same.json' &&
	cat /sys/block/nvme0n2/size && test -b /dev/nvme0n2 && test -c /dev/ng0n2 &&
	'$T/raw_getdents' /dev insn >'$T/raw.txt'" >"$T/out.txt" 2>&1 ||
	{ cat "$T/out.txt"; fail "create/attach"; }
grep -qx 4096 "$T/out.txt" || { cat "$T/out.txt"; fail "/sys/block/nvme0n2/size"; }
# /dev listed with the program's own getdents64 instruction (ucmd-supervise) follows too
grep -qx "nvme0n2 b" "$T/raw.txt" || fail "a raw listing of /dev misses nvme0n2: $(cat "$T/raw.txt")"
grep -q '"/dev/nvme0n2"' "$T/same.json" || fail "nvme list in the same exec misses nvme0n2"
[ "$(list)" = "/dev/nvme0n1 /dev/nvme0n2" ] || fail "a new exec lists '$(list)'"
python3 -c 'import sys; sys.stdout.buffer.write(bytes(range(256)) * 16)' >"$T/n2.bin"
px dd if="$T/n2.bin" of=/dev/nvme0n2 bs=4096 seek=1 oflag=direct status=none ||
	fail "dd to nvme0n2"
timeout 60 "$UCMD" --daemon "$SOCK" read -n 2 -s 8 -c 7 -z 4096 -d "$T/n2r.bin" >/dev/null
cmp "$T/n2.bin" "$T/n2r.bin" || fail "what dd wrote is not on namespace 2"

read -r used after < <(unvmcap)
[ "$((before - after))" = $((4096 * 512)) ] || fail "UNVMCAP went from $before to $after"

step "two namespaces: NVME_IOCTL_IO_CMD on /dev/nvme0 is EINVAL"
[ "$(rc_of nvme flush /dev/nvme0 -n 1)" != rc=0 ] || fail "flush on nvme0 with two namespaces"
grep -q "Invalid argument" "$T/out.txt" || { cat "$T/out.txt"; fail "not EINVAL"; }

step "delete-ns 2: /dev/nvme0n2 and its sysfs are gone, in the process and in a new exec"
px sh -c "nvme delete-ns /dev/nvme0 -n 2 && test ! -e /dev/nvme0n2 && test ! -e /dev/ng0n2 &&
	test ! -e /sys/block/nvme0n2 && '$T/raw_getdents' /dev insn >'$T/raw.txt'" >"$T/out.txt" 2>&1 ||
	{ cat "$T/out.txt"; fail "delete-ns"; }
! grep -q "^nvme0n2 " "$T/raw.txt" || fail "a raw listing of /dev still has nvme0n2"
grep -qx "nvme0n1 b" "$T/raw.txt" || fail "a raw listing of /dev lost nvme0n1: $(cat "$T/raw.txt")"
[ "$(list)" = "/dev/nvme0n1" ] || fail "after delete-ns a new exec lists '$(list)'"
[ "$(rc_of test -e /dev/nvme0n2)" = rc=1 ] || fail "/dev/nvme0n2 is still there"
[ "$(rc_of nvme flush /dev/nvme0 -n 1)" = rc=0 ] || { cat "$T/out.txt"; fail "one namespace again"; }

step "no namespace: NVME_IOCTL_IO_CMD on /dev/nvme0 is ENOTTY"
px nvme delete-ns /dev/nvme0 -n 1 >/dev/null 2>&1 || fail "delete-ns 1"
[ "$(list)" = "" ] || fail "no namespace, yet nvme list shows '$(list)'"
[ "$(rc_of nvme flush /dev/nvme0 -n 1)" != rc=0 ] || fail "flush with no namespace"
grep -q "Inappropriate ioctl" "$T/out.txt" || { cat "$T/out.txt"; fail "not ENOTTY"; }

step "TNVMCAP / NN per namespace (nvme-cli's create-max-ns sizing) is created, attached, found"
read -r tnvmcap nn < <(px nvme id-ctrl /dev/nvme0 -o json | python3 -c '
import json, sys
j = json.load(sys.stdin)
print(j["tnvmcap"], j["nn"])')
nsze=$((tnvmcap / 512 / nn))
for n in 1 2; do
	px nvme create-ns /dev/nvme0 --nsze=$nsze --ncap=$nsze --flbas=0 >"$T/out.txt" 2>&1 ||
		{ cat "$T/out.txt"; fail "create-ns $n of $nsze blocks (TNVMCAP $tnvmcap / NN $nn)"; }
	px nvme attach-ns /dev/nvme0 -n $n -c "$CNTLID" >/dev/null 2>&1 || fail "attach-ns $n"
done
px sh -c "nvme reset /dev/nvme0 && echo 1 >/sys/bus/pci/rescan && test -b /dev/nvme0n1 &&
	test -b /dev/nvme0n2 && dd if=/dev/zero of=/dev/nvme0n2 bs=4096 count=10 status=none" ||
	fail "the namespaces after reset and PCI rescan"

step "create-ns --dps=1 on the 8-byte-metadata format: PI type 1; its disk reads and writes (PRACT)"
px nvme delete-ns /dev/nvme0 -n 0xffffffff >/dev/null 2>&1 || fail "delete-ns all"
px nvme create-ns /dev/nvme0 --nsze=4096 --ncap=4096 --flbas=1 --dps=1 >"$T/out.txt" 2>&1 ||
	{ cat "$T/out.txt"; fail "create-ns --flbas=1 --dps=1"; }
px nvme attach-ns /dev/nvme0 -n 1 -c "$CNTLID" >/dev/null 2>&1 || fail "attach-ns of the PI namespace"
[ "$(px nvme id-ns /dev/nvme0n1 -o json | python3 -c 'import json, sys; j = json.load(sys.stdin); print(j["dps"], j["flbas"])')" = "1 1" ] ||
	fail "id-ns of the PI namespace: dps, flbas"
head -c $((10 * 512)) /dev/urandom >"$T/pi.bin"
px dd if="$T/pi.bin" of=/dev/nvme0n1 bs=512 seek=3 oflag=direct status=none ||
	fail "dd to the PI namespace's disk"
px dd if=/dev/nvme0n1 of="$T/pir.bin" bs=512 skip=3 count=10 status=none ||
	fail "dd from the PI namespace's disk"
cmp "$T/pi.bin" "$T/pir.bin" || fail "the PI namespace's disk read back other data"
# the controller made the tuples: a passthrough read checking them passes (guard and LBA 3's tag)
px nvme read /dev/ng0n1 -s 3 -c 0 -z 512 -y 8 -M "$T/md.bin" -d "$T/r1.bin" -p 0x5 -r 3 \
	>"$T/out.txt" 2>&1 || { cat "$T/out.txt"; fail "a read that checks the generated tuple"; }
cmp -n 512 "$T/pi.bin" "$T/r1.bin" || fail "passthrough read of LBA 3"

echo "exec_hotplug: ok"
