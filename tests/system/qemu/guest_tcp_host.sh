#!/bin/sh
# Guest side of tests/system/nvme_tcp_host.sh: Linux's nvmet-tcp target,
# configured through configfs with a file-backed namespace on the guest's
# loopback, and ucmd's NVMe/TCP host transport (the CLI, --ctrl
# nvme-tcp://...) against it: Identify, write/read (compare: nvmet has
# none), the bytes in the backing file, digests, a transfer that needs R2Ts.
fail() { echo "FAIL: $*"; exit 1; }
R=$UCMD_GUEST_RESULTS
NQN=nqn.2026-12.io.ucmd:nvmet-file
CFG=/sys/kernel/config/nvmet
URL=nvme-tcp://127.0.0.1:4420/$NQN

echo "guest: kernel $(uname -r)"
ip link set lo up || fail "loopback"
# run.sh --mod nvmet-tcp: /init loaded it and what it needs (nvmet, configfs)
[ -d /sys/module/nvmet_tcp ] || fail "nvmet-tcp is not loaded"
grep -q configfs /proc/mounts || mount -t configfs none /sys/kernel/config || fail "configfs"
[ -d $CFG ] || fail "no $CFG after loading nvmet"

# --- the target: one subsystem, a 64 MiB file namespace, a TCP port ---------
# nvmet's file namespace takes its LBA size from the file system's block
# size (at most 4 KiB). The differential sequence wants namespace 1 with
# 512-byte blocks, as the emulated controller's: its file lives on a FAT
# file system with 512-byte sectors (on a loop device over tmpfs), whose
# inodes have 512-byte blocks (run.sh --mod vfat --mod loop ...).
truncate -s 80M /tmp/fat.img
mkdosfs -S 512 /tmp/fat.img > /dev/null || fail "mkdosfs"
FATDEV=$(losetup -f) && losetup "$FATDEV" /tmp/fat.img || fail "losetup"
mkdir -p /mnt/fat
mount -t vfat -o codepage=437,iocharset=ascii "$FATDEV" /mnt/fat || fail "mount vfat"
NS1=/mnt/fat/ns1.img
truncate -s 64M $NS1 || fail "the namespace 1 file"
S=$CFG/subsystems/$NQN
mkdir $S || fail "subsystem"
echo 1 > $S/attr_allow_any_host
mkdir $S/namespaces/1
echo -n $NS1 > $S/namespaces/1/device_path
echo 1 > $S/namespaces/1/buffered_io	# the page cache, as namespace 2's on tmpfs
echo 1 > $S/namespaces/1/enable || fail "namespace enable"
# a second one, as the differential sequence wants two namespaces
truncate -s 64M /tmp/ns2.img
mkdir $S/namespaces/2
echo -n /tmp/ns2.img > $S/namespaces/2/device_path
echo 1 > $S/namespaces/2/buffered_io
echo 1 > $S/namespaces/2/enable || fail "namespace 2 enable"
P=$CFG/ports/1
mkdir $P
echo tcp > $P/addr_trtype
echo ipv4 > $P/addr_adrfam
echo 127.0.0.1 > $P/addr_traddr
echo 4420 > $P/addr_trsvcid
ln -s $S $P/subsystems/$NQN || fail "port link"
echo "GUEST-PART nvmet-tcp listening on 127.0.0.1:4420 ($NQN)"

# --- ucmd's host transport against it -----------------------------------------
ucmd --ctrl "$URL" id-ctrl > $R/id-ctrl.txt 2>&1 || { cat $R/id-ctrl.txt; fail "id-ctrl"; }
grep -q "$NQN" $R/id-ctrl.txt || { cat $R/id-ctrl.txt; fail "id-ctrl does not name the subsystem"; }
grep -qi "linux" $R/id-ctrl.txt || { cat $R/id-ctrl.txt; fail "id-ctrl: not Linux's controller"; }
ucmd --ctrl "$URL" id-ns > $R/id-ns.txt 2>&1 || { cat $R/id-ns.txt; fail "id-ns"; }
echo "GUEST-PART id-ctrl and id-ns through nvme-tcp"

# namespace 1's LBA size, from what nvmet says (512 bytes, from the FAT file system)
ucmd --ctrl "$URL" list > $R/list.txt 2>&1 || { cat $R/list.txt; fail "list"; }
# the LBA size from the raw Identify Namespace (FLBAS at byte 26, LBAF[i].DS at 128+4i+2)
ucmd --ctrl "$URL" id-ns -b > $R/id-ns.bin || fail "id-ns -b"
LBS=$(od -An -tu1 -v $R/id-ns.bin | awk '{ for (i = 1; i <= NF; i++) b[n++] = $i }
	END { if (n != 4096) exit 1; f = b[26]; x = f % 16 + int(f / 32) % 4 * 16
	      v = 1; for (k = 0; k < b[128 + 4 * x + 2]; k++) v *= 2; printf "%d\n", v }') ||
	fail "id-ns -b: not 4096 bytes"
echo "guest: namespace 1 has $LBS-byte blocks"
[ "$LBS" = 512 ] || fail "namespace 1 has $LBS-byte blocks, not 512: the differential sequence needs 512"
# rw OP BYTE-OFFSET BYTES FILE [URL]: one command of BYTES at BYTE-OFFSET
rw() {
	ucmd --ctrl "${5:-$URL}" $1 -s $(($2 / LBS)) -c $(($3 / LBS - 1)) -z $3 -d $4
}

dd if=/dev/urandom of=/tmp/pat bs=4096 count=8 2>/dev/null
rw write 32768 32768 /tmp/pat || fail "write 32 KiB"
rw read 32768 32768 /tmp/back || fail "read 32 KiB"
cmp /tmp/pat /tmp/back || fail "read back differs"
# nvmet has no Compare command (6.1): the target's status must come back as
# the CLI's error, not as a transport failure
if ! rw compare 32768 32768 /tmp/pat > $R/compare.txt 2>&1; then
	grep -q "Invalid Command Opcode" $R/compare.txt || { cat $R/compare.txt; fail "compare"; }
	echo "guest: compare: nvmet answers Invalid Command Opcode (it has no Compare)"
fi
# the bytes are in the target's file, where they were written
dd if=$NS1 of=/tmp/infile bs=4096 skip=8 count=8 2>/dev/null
cmp /tmp/pat /tmp/infile || fail "the namespace file does not hold the written data"
echo "GUEST-PART write/read/compare 32 KiB, data in the nvmet file"

# one block (in the capsule) and 256 KiB (R2T/H2CData), with both digests
dd if=/dev/urandom of=/tmp/small bs=$LBS count=1 2>/dev/null
dd if=/dev/urandom of=/tmp/big bs=4096 count=64 2>/dev/null
D="$URL?hdgst&ddgst"
rw write 4096000 $LBS /tmp/small "$D" || fail "digests: write one block"
rw write 8388608 262144 /tmp/big "$D" || fail "digests: write 256 KiB"
rw read 4096000 $LBS /tmp/small.back "$D" || fail "digests: read one block"
rw read 8388608 262144 /tmp/big.back "$D" || fail "digests: read 256 KiB"
cmp /tmp/small /tmp/small.back && cmp /tmp/big /tmp/big.back || fail "digests: data differs"
rw read 8388608 262144 /tmp/big.back2 || fail "read 256 KiB without digests"
cmp /tmp/big /tmp/big.back2 || fail "256 KiB read without digests differs"
dd if=$NS1 of=/tmp/infile bs=4096 skip=2048 count=64 2>/dev/null
cmp /tmp/big /tmp/infile || fail "the namespace file does not hold the 256 KiB"
echo "GUEST-PART header and data digests, one block and 256 KiB"

ucmd --ctrl "$URL" flush || fail "flush"
ucmd --ctrl "$URL" smart-log > $R/smart.txt 2>&1 || { cat $R/smart.txt; fail "smart-log"; }
echo "GUEST-PART flush and smart-log"

# a subsystem that does not exist: Connect is refused, the CLI says so
if ucmd --ctrl nvme-tcp://127.0.0.1:4420/nqn.2026-12.io.ucmd:nobody id-ctrl > $R/refused.txt 2>&1; then
	fail "a Connect to an unknown subsystem succeeded"
fi
grep -qi "refused" $R/refused.txt || { cat $R/refused.txt; fail "no reason for the refusal"; }
echo "GUEST-PART an unknown subsystem is refused"
# the differential sequence through ucmd's host transport: every step must
# run (difftest exits 0); the host compares its output (nvmet-tcp.out) with
# the emulated controller's, every difference explained in docs/nvmet-compat.md
if command -v difftest >/dev/null; then
	difftest --tcp "$URL" > $R/nvmet-tcp.out 2> $R/difftest.err || { cat $R/difftest.err; fail "difftest --tcp"; }
	echo "GUEST-PART difftest --tcp against nvmet ($(wc -l < $R/nvmet-tcp.out) steps)"
fi
echo "guest: all parts passed"
