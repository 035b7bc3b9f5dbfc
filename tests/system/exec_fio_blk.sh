#!/usr/bin/env bash
# Unmodified Debian programs on ucmd's block device /dev/nvme0n1 through
# libucmd-preload.so (docs/cli.md, `ucmd exec`): fio with ioengine=psync (O_DIRECT) and
# ioengine=sync (buffered, unaligned block size) writing with
# verify=crc32c, a verify_only pass, and a wrong-checksum pass that must
# fail; dd with an unaligned block size and seek (read-modify-write of
# partial LBAs), an O_DIRECT misaligned write that must fail with EINVAL,
# and conv=fsync; blockdev's BLK* ioctls; Python's os.pread/pwrite/lseek
# for the edge cases (end of device, O_DIRECT alignment, errno values);
# mkfs.ext4 and a read-only e2fsck.
# What the programs wrote is then read back with ucmd's own CLI through the
# daemon, from the namespace itself.
#
# The programs run under `ucmd exec --daemon SOCK`, some with LD_PRELOAD and
# UCMD_DAEMON set by hand instead (the library must work without ucmd exec).
set -euo pipefail
# shellcheck source=tests/system/lib/daemon.sh
. "$(dirname "$0")/lib/daemon.sh"

for t in fio dd blockdev cmp python3 mkfs.ext4 e2fsck; do
	command -v "$t" >/dev/null || fail "$t is missing (scripts/deps.sh installs it)"
done
PRELOAD=$(meson introspect "$B" --targets | python3 -c '
import json, sys
for t in json.load(sys.stdin):
    if t["name"] == "ucmd-preload" and t["type"] == "shared library":
        print(t["filename"][0]); break
')
[ -n "$PRELOAD" ] && [ -f "$PRELOAD" ] || fail "no libucmd-preload.so in $B"

# nvme0: a controller directory (512-byte LBAs); nvme1: RAM, 4 KiB LBAs
daemon_start --ctrl "$T/ctrl" --ram 64M
EXEC_ROOT=$T/exec-root
mkdir -p "$EXEC_ROOT"
DEV=/dev/nvme0n1

# A program with ucmd's devices (bounded: a hang is a failure), run in $T
# so that what fio leaves behind (verify state) goes with it: through
# `ucmd exec`, and (pxl) with LD_PRELOAD by hand, which must work as well.
px() {
	(cd "$T" && timeout -k 5 300 "$UCMD" exec --daemon "$SOCK" -- "$@")
}
pxl() {
	(cd "$T" && UCMD_DAEMON=$SOCK UCMD_EXEC_ROOT=$EXEC_ROOT LD_PRELOAD=$PRELOAD \
		timeout -k 5 300 "$@")
}
# ucmd's CLI on the daemon: bytes [off, off + len) of namespace 1, to stdout.
ns_bytes() {	# off len
	local first=$(($1 / LBS)) last=$((($1 + $2 - 1) / LBS))
	timeout 60 "$UCMD" --daemon "$SOCK" read -s "$first" -c "$((last - first))" \
		-z "$(((last - first + 1) * LBS))" >"$T/ns.raw" || fail "ucmd read"
	python3 -c 'import sys
d = open(sys.argv[1], "rb").read()
o, n = int(sys.argv[2]), int(sys.argv[3])
sys.stdout.buffer.write(d[o:o + n])' "$T/ns.raw" "$(($1 - first * LBS))" "$2"
}

step "geometry: blockdev's ioctls agree with Identify Namespace"
timeout 60 "$UCMD" --daemon "$SOCK" --output-format json id-ns >"$T/id-ns.json"
read -r LBS NSZE < <(python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
f = j["lbafs"][j["flbas"] & 0xf]
print(1 << f["ds"], j["nsze"])' "$T/id-ns.json")
SIZE=$((LBS * NSZE))
echo "lba size $LBS, $NSZE blocks, $SIZE bytes"
got=$(px blockdev --getsize64 --getss --getpbsz --getiomin --getioopt --getro --getsz "$DEV" |
	tr '\n' ' ')
[ "$got" = "$SIZE $LBS $LBS $LBS 0 0 $((SIZE / 512)) " ] || fail "blockdev says '$got'"

# Every program must reach ucmd's namespace, not a /dev/nvme0n1 of the host:
# a signature written with ucmd's CLI is what each one reads, before any
# of them writes (fio read-only, dd and Python read).
step "the programs read ucmd's namespace (a signature written by ucmd's CLI)"
python3 -c 'import sys; sys.stdout.buffer.write(bytes.fromhex("c0ffee15") * 1024)' >"$T/sig.bin"
timeout 60 "$UCMD" --daemon "$SOCK" write -s 0 -c $((4096 / LBS - 1)) -z 4096 \
	-d "$T/sig.bin" >/dev/null 2>&1 || fail "ucmd write of the signature"
px dd if="$DEV" bs=4096 count=1 status=none | cmp - "$T/sig.bin" ||
	fail "dd does not read ucmd's nvme0n1"
px python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
sys.stdout.buffer.write(os.pread(fd, 4096, 0))' "$DEV" | cmp - "$T/sig.bin" ||
	fail "Python does not read ucmd's nvme0n1"
px fio --name=guard --filename="$DEV" --readonly --rw=read --bs=4k --size=4k \
	--ioengine=psync --verify=pattern --verify_pattern=0xc0ffee15 --verify_only=1 \
	>"$T/guard.txt" 2>&1 || { cat "$T/guard.txt"; fail "fio does not read ucmd's nvme0n1"; }

# The edge cases, by Python's os module (libc's pread/pwrite/lseek...).
cat >"$T/edge.py" <<'PY'
import errno, mmap, os, sys
dev, lbs, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

def err(e, f, *a):
    try:
        f(*a)
    except OSError as x:
        assert x.errno == e, (f.__name__, a, x)
        return
    raise AssertionError(f"{f.__name__}{a} did not fail with {errno.errorcode[e]}")

fd = os.open(dev, os.O_RDWR)
assert os.lseek(fd, 0, os.SEEK_END) == size
assert os.lseek(fd, 0, os.SEEK_CUR) == size
err(errno.EINVAL, os.lseek, fd, size + 1, os.SEEK_SET)
err(errno.EINVAL, os.lseek, fd, -1, os.SEEK_SET)
assert os.lseek(fd, 7, os.SEEK_SET) == 7
# unaligned buffered write and read back, across an LBA boundary
data = os.urandom(lbs + 77)
assert os.pwrite(fd, data, 3 * lbs - 33) == len(data)
assert os.pread(fd, len(data), 3 * lbs - 33) == data
# read/write use and advance the file offset
os.lseek(fd, 3 * lbs - 33, os.SEEK_SET)
assert os.read(fd, 10) == data[:10]
assert os.lseek(fd, 0, os.SEEK_CUR) == 3 * lbs - 23
assert os.write(fd, b"xyz") == 3
assert os.pread(fd, 13, 3 * lbs - 33) == data[:10] + b"xyz"
assert os.lseek(fd, 0, os.SEEK_CUR) == 3 * lbs - 20
# vectored
assert os.pwritev(fd, [b"ab", b"cdef"], 5 * lbs + 1) == 6
assert os.preadv(fd, [bytearray(3), bytearray(3)], 5 * lbs + 1) == 6
assert os.pread(fd, 6, 5 * lbs + 1) == b"abcdef"
# the end of the device: short, then 0; writes short, then ENOSPC
assert os.pwrite(fd, b"E" * 100, size - 40) == 40
assert os.pread(fd, 100, size - 40) == b"E" * 40
assert os.pread(fd, 100, size) == b""
err(errno.ENOSPC, os.pwrite, fd, b"x", size)
err(errno.EINVAL, os.pread, fd, 1, -1)
assert os.pread(fd, 0, 0) == b"" and os.pwrite(fd, b"", size) == 0
os.fsync(fd)
os.fdatasync(fd)
os.close(fd)

# O_DIRECT: position and lengths in whole LBAs, else EINVAL
fd = os.open(dev, os.O_RDWR | os.O_DIRECT)
buf = mmap.mmap(-1, 4 * lbs)
buf.write(os.urandom(4 * lbs))
assert os.pwrite(fd, buf, 8 * lbs) == 4 * lbs
rb = mmap.mmap(-1, 4 * lbs)
assert os.preadv(fd, [rb], 8 * lbs) == 4 * lbs and rb[:] == buf[:]
err(errno.EINVAL, os.pwrite, fd, memoryview(buf)[:lbs - 1], 8 * lbs)
err(errno.EINVAL, os.pwrite, fd, memoryview(buf)[:lbs], 8 * lbs + 1)
err(errno.EINVAL, os.preadv, fd, [memoryview(rb)[:lbs - 4]], 0)
os.close(fd)

# access modes
fd = os.open(dev, os.O_RDONLY)
err(errno.EBADF, os.pwrite, fd, b"x", 0)
os.close(fd)
PY
step "edge cases through Python's os module (pread/pwrite/lseek, errno), 512 B LBAs"
px python3 "$T/edge.py" "$DEV" "$LBS" "$SIZE" || fail "edge cases on $DEV"
step "the same on nvme1n1, 4 KiB LBAs"
geo1=$(pxl blockdev --getss --getsize64 /dev/nvme1n1 | tr '\n' ' ')
read -r LBS1 SIZE1 <<<"$geo1"
[ "$LBS1" = 4096 ] && [ "$SIZE1" = $((64 << 20)) ] || fail "nvme1n1: $LBS1 $SIZE1"
pxl python3 "$T/edge.py" /dev/nvme1n1 "$LBS1" "$SIZE1" || fail "edge cases on nvme1n1"
head -c 5000 /dev/urandom >"$T/in1.bin"
pxl dd if="$T/in1.bin" of=/dev/nvme1n1 bs=1000 seek=3 count=5 conv=notrunc,nocreat \
	status=none || fail "dd write to nvme1n1"
pxl dd if=/dev/nvme1n1 bs=1000 skip=3 count=5 status=none | cmp - "$T/in1.bin" ||
	fail "nvme1n1: dd read back differs"

step "fio psync, O_DIRECT: randwrite with verify=crc32c, then a verify-only pass"
fio_common=(--name=blk --filename="$DEV" --size=16M --offset=1M --bs=4k --verify_fatal=1
	    --randrepeat=1 --output-format=normal)
px fio "${fio_common[@]}" --ioengine=psync --direct=1 --rw=randwrite --verify=crc32c \
	--do_verify=1 >"$T/fio1.txt" 2>&1 || { cat "$T/fio1.txt"; fail "fio psync write+verify"; }
grep -q "err= 0" "$T/fio1.txt" || { cat "$T/fio1.txt"; fail "fio psync reported an error"; }
px fio "${fio_common[@]}" --ioengine=psync --direct=1 --rw=randwrite --verify=crc32c \
	--verify_only=1 >"$T/fio2.txt" 2>&1 || { cat "$T/fio2.txt"; fail "fio verify_only"; }

step "fio: a verify with the wrong checksum type must fail"
if px fio "${fio_common[@]}" --ioengine=psync --direct=1 --rw=randwrite --verify=md5 \
	--verify_only=1 >"$T/fio3.txt" 2>&1; then
	cat "$T/fio3.txt"
	fail "fio verified crc32c data as md5"
fi
grep -q "verify" "$T/fio3.txt" || { cat "$T/fio3.txt"; fail "fio failed, but not in verify"; }

step "fio psync, threads: two jobs in one process, each on its own daemon ring"
px fio --name=thr --filename="$DEV" --ioengine=psync --direct=1 --rw=randwrite --bs=8k \
	--size=4M --offset=40M --offset_increment=4M --numjobs=2 --thread --verify=crc32c \
	--do_verify=1 --verify_fatal=1 >"$T/fio6.txt" 2>&1 || { cat "$T/fio6.txt"; fail "fio threads"; }
[ "$(grep -c "err= 0" "$T/fio6.txt")" = 2 ] || { cat "$T/fio6.txt"; fail "fio threads: errors"; }

step "fio sync, buffered, unaligned 1000-byte blocks: write + verify"
px fio --name=sync --filename="$DEV" --ioengine=sync --direct=0 --rw=write --bs=1000 \
	--offset=20000000 --size=1000000 --verify=crc32c --do_verify=1 --verify_fatal=1 \
	--fsync=7 >"$T/fio4.txt" 2>&1 || { cat "$T/fio4.txt"; fail "fio sync write+verify"; }
grep -q "err= 0" "$T/fio4.txt" || { cat "$T/fio4.txt"; fail "fio sync reported an error"; }

step "fio's bytes are on the namespace (ucmd read through the daemon)"
px fio --name=pat --filename="$DEV" --ioengine=psync --direct=1 --rw=write --bs=64k \
	--offset=64M --size=1M --buffer_pattern=0x55aa33cc >"$T/fio5.txt" 2>&1 ||
	{ cat "$T/fio5.txt"; fail "fio pattern write"; }
ns_bytes $((64 * 1024 * 1024 + 300 * 1024)) 4096 >"$T/pat.bin"
python3 -c '
import sys
d = open(sys.argv[1], "rb").read()
assert len(d) == 4096 and d == bytes.fromhex("55aa33cc") * 1024, d[:16]' "$T/pat.bin" ||
	fail "the namespace does not hold fio's pattern"

step "dd: unaligned bs=1000 seek=3 count=5, read back by dd and by ucmd"
head -c 5000 /dev/urandom >"$T/in.bin"
ns_bytes 0 16384 >"$T/before.bin"
pxl dd if="$T/in.bin" of="$DEV" bs=1000 seek=3 count=5 conv=notrunc,nocreat status=none ||
	fail "dd write"
pxl dd if="$DEV" of="$T/out.bin" bs=1000 skip=3 count=5 status=none || fail "dd read"
cmp "$T/in.bin" "$T/out.bin" || fail "dd read back differs"
ns_bytes 0 16384 >"$T/after.bin"
ns_bytes 3000 5000 | cmp - "$T/in.bin" || fail "ucmd read differs from dd's write"
cmp -n 3000 "$T/before.bin" "$T/after.bin" || fail "dd changed bytes before its seek"
cmp -i 8000:8000 "$T/before.bin" "$T/after.bin" || fail "dd changed bytes after its end"

step "dd: O_DIRECT with a misaligned size is EINVAL; aligned with conv=fsync works"
if px dd if=/dev/zero of="$DEV" bs=1000 count=1 oflag=direct conv=notrunc,nocreat status=none 2>"$T/dd.err"; then
	fail "an O_DIRECT 1000-byte write succeeded"
fi
grep -q "Invalid argument" "$T/dd.err" || { cat "$T/dd.err"; fail "not EINVAL"; }
head -c 65536 /dev/urandom >"$T/in64.bin"
px dd if="$T/in64.bin" of="$DEV" bs=16k seek=100 oflag=direct conv=fsync,notrunc,nocreat status=none ||
	fail "dd O_DIRECT conv=fsync"
ns_bytes $((100 * 16384)) 65536 | cmp - "$T/in64.bin" || fail "dd's O_DIRECT write is not there"

step "mkfs.ext4 (BLK* ioctls, discard, FALLOC_FL_ZERO_RANGE, fsync), then e2fsck -fn"
px mkfs.ext4 -F -q "$DEV" >"$T/mkfs.txt" 2>&1 || { cat "$T/mkfs.txt"; fail "mkfs.ext4"; }
px e2fsck -fn "$DEV" >"$T/fsck.txt" 2>&1 || { cat "$T/fsck.txt"; fail "e2fsck after mkfs"; }
# the superblock's magic, 0xEF53 at byte 1024 + 56, is on the namespace
[ "$(ns_bytes $((1024 + 56)) 2 | od -An -tx1 | tr -d ' ')" = 53ef ] ||
	fail "no ext4 superblock on the namespace"

[ -e "$DEV" ] && [ ! -b "$DEV" ] && [ ! -c "$DEV" ] && fail "a program made $DEV on the host"
daemon_alive
daemon_stop
echo "PASS"
