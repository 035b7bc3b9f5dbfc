#!/usr/bin/env bash
# `ucmd exec` fails closed: no call on a device fd reaches the placeholder
# file behind it, and a program or daemon ucmd cannot serve is refused.
#
# - fio --ioengine=libaio --direct=1 with verify on /dev/nvme0n1: the
#   namespace (read back with ucmd's CLI outside exec) holds fio's pattern.
# - every call that could bypass the read/write family, from Python under
#   the preload: mmap, sendfile both ways, splice, copy_file_range,
#   fallocate, posix_fallocate, an unknown ioctl, ftruncate, readahead,
#   libc's syscall() with pwrite64/pread64, native aio (io_setup, io_submit
#   with IOCB_FLAG_RESFD, io_getevents, FSYNC, a char device's EINVAL,
#   io_cancel, io_destroy), stdio (fopen, fwrite, fread, fileno), and
#   io_uring requests ucmd does not serve (tests/exec/uring_unserved.c). Each is served (the namespace has the bytes) or
#   fails with Linux's errno; afterwards every placeholder is still empty.
# - refused before anything runs: a --daemon socket nobody listens on (and
#   $UCMD_DAEMON likewise), a set-user-ID program; a statically linked one
#   (ldconfig) runs under ucmd-supervise instead; and with the daemon unreachable the preload gives
#   ENOENT for /dev/nvme0, not the host's device.
set -euo pipefail
# shellcheck source=tests/system/lib/daemon.sh
. "$(dirname "$0")/lib/daemon.sh"

for t in fio python3 cmp; do
	command -v "$t" >/dev/null || fail "$t is missing (scripts/deps.sh installs it)"
done
PRELOAD=$(meson introspect "$B" --targets | python3 -c '
import json, sys
for t in json.load(sys.stdin):
    if t["name"] == "ucmd-preload" and t["type"] == "shared library":
        print(t["filename"][0]); break
')
[ -n "$PRELOAD" ] && [ -f "$PRELOAD" ] || fail "no libucmd-preload.so in $B"

daemon_start --ctrl "$T/ctrl"
EXEC_ROOT=$T/exec-root
mkdir -p "$EXEC_ROOT"

px() {
	(cd "$T" && timeout -k 5 300 "$UCMD" exec --daemon "$SOCK" -- "$@")
}
pxl() {
	(cd "$T" && UCMD_DAEMON=$SOCK UCMD_EXEC_ROOT=$EXEC_ROOT LD_PRELOAD=$PRELOAD \
		timeout -k 5 300 "$@")
}
# bytes [lba * 512, + n * 512) of namespace 1 through ucmd's CLI, into a file
ns_read() {	# first-lba count file
	timeout 60 "$UCMD" --daemon "$SOCK" read -s "$1" -c "$(($2 - 1))" -z "$(($2 * 512))" \
		-d "$3" >/dev/null || fail "ucmd read"
}
placeholders_empty() {
	local p n=0
	for p in "$EXEC_ROOT"/dev/*; do
		[ -f "$p" ] || continue
		n=$((n + 1))
		[ ! -s "$p" ] || fail "placeholder $p has $(stat -c %s "$p") bytes"
	done
	[ "$n" -ge 3 ] || fail "only $n placeholders under $EXEC_ROOT/dev"
}

LBS=$(timeout 60 "$UCMD" --daemon "$SOCK" --output-format json id-ns | python3 -c '
import json, sys
j = json.load(sys.stdin)
print(1 << j["lbafs"][j["flbas"] & 0xf]["ds"])')
[ "$LBS" = 512 ] || fail "this test expects 512-byte LBAs, not $LBS"

step "fio libaio, O_DIRECT, iodepth 16, verify: the namespace holds the pattern"
px fio --name=aio --ioengine=libaio --direct=1 --filename=/dev/nvme0n1 --rw=randwrite \
	--bs=4k --size=4M --iodepth=16 --verify=pattern --verify_pattern=0x5ca1ab1e \
	--do_verify=1 --randrepeat=0 --output="$T/fio.txt" || { cat "$T/fio.txt"; fail "fio libaio"; }
grep -q "err= 0" "$T/fio.txt" || { cat "$T/fio.txt"; fail "fio reports an error"; }
ns_read 0 8192 "$T/ns.bin"
python3 - "$T/ns.bin" <<'PY' || fail "the namespace does not hold fio's pattern"
import sys
d = open(sys.argv[1], 'rb').read()
want = bytes.fromhex('5ca1ab1e') * (len(d) // 4)
if d != want:
    bad = next(i for i in range(len(d)) if d[i] != want[i])
    print("first difference at byte", bad)
    sys.exit(1)
PY
step "fio libaio verify_only reads it back through the preload"
px fio --name=aio --ioengine=libaio --direct=1 --filename=/dev/nvme0n1 --rw=read \
	--bs=64k --size=4M --iodepth=8 --verify=pattern --verify_pattern=0x5ca1ab1e \
	--verify_only --output="$T/fio2.txt" || { cat "$T/fio2.txt"; fail "fio libaio verify_only"; }

step "every bypassing call on a device fd: served or an errno, never the placeholder"
cat >"$T/calls.py" <<'PY'
import ctypes, errno, fcntl, mmap, os, struct, sys

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
out = {}

def err(f):
    try:
        f()
        return "ok"
    except OSError as e:
        return errno.errorcode[e.errno]

def sc(*a):
    r = libc.syscall(*[ctypes.c_long(x) for x in a])
    return r if r >= 0 else -ctypes.get_errno()

pat = lambda c: bytes([c]) * 4096
dev = os.open("/dev/nvme0n1", os.O_RDWR)
ng = os.open("/dev/ng0n1", os.O_RDWR)
src = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
os.write(src, pat(0xa1))

out["mmap"] = err(lambda: mmap.mmap(dev, 4096))
out["mmap_ng"] = err(lambda: mmap.mmap(ng, 4096))
# sendfile file -> device at the device's position (LBA 9000), then device -> file
os.lseek(dev, 9000 * 512, os.SEEK_SET)
out["sendfile_to_dev"] = os.sendfile(dev, src, 0, 4096)
out["sendfile_pos"] = os.lseek(dev, 0, os.SEEK_CUR)
dst = os.open(sys.argv[1] + ".back", os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
out["sendfile_from_dev"] = os.sendfile(dst, dev, 9000 * 512, 4096)
out["sendfile_back_same"] = os.pread(dst, 4096, 0) == pat(0xa1)
out["sendfile_ng"] = err(lambda: os.sendfile(ng, src, 0, 4096))
# splice pipe -> device at LBA 9008
r, w = os.pipe()
os.write(w, pat(0xb2))
out["splice_to_dev"] = os.splice(r, dev, 4096, offset_dst=9008 * 512)
out["copy_file_range"] = err(lambda: os.copy_file_range(dev, src, 4096))
out["copy_file_range_to"] = err(lambda: os.copy_file_range(src, dev, 4096, 0, 0))
out["posix_fallocate"] = err(lambda: os.posix_fallocate(dev, 0, 4096))
out["fallocate_mode0"] = -ctypes.get_errno() if libc.fallocate(dev, 0, ctypes.c_long(0), ctypes.c_long(4096)) else 0
out["ioctl_unknown"] = err(lambda: fcntl.ioctl(dev, 0x4e99))
out["ftruncate"] = err(lambda: os.ftruncate(dev, 8192))
out["readahead"] = sc(187, dev, 0, 4096)
# libc's syscall(): pwrite64 at LBA 9016, pread64 back
buf = ctypes.create_string_buffer(pat(0xc3), 4096)
out["syscall_pwrite64"] = sc(18, dev, ctypes.addressof(buf), 4096, 9016 * 512)
rb = ctypes.create_string_buffer(4096)
out["syscall_pread64"] = sc(17, dev, ctypes.addressof(rb), 4096, 9016 * 512)
out["syscall_pread_same"] = rb.raw == pat(0xc3)
out["syscall_write_ng"] = sc(1, ng, ctypes.addressof(buf), 4096)

# native aio: io_setup 206, io_destroy 207, io_getevents 208, io_submit 209, io_cancel 210
ctx = ctypes.c_ulong(0)
out["io_setup"] = sc(206, 8, ctypes.addressof(ctx))
efd = os.eventfd(0)
wbuf = ctypes.create_string_buffer(pat(0xd4), 4096)
def iocb(op, fd, addr, n, off, flags=0, resfd=0, data=0):
    # aio_data, aio_key, aio_rw_flags, opcode, reqprio, fildes, buf, nbytes, offset,
    # reserved2, flags, resfd
    return ctypes.create_string_buffer(struct.pack("<QIIHhIQQqQII", data, 0, 0, op, 0, fd,
                                                   addr, n, off, 0, flags, resfd), 64)
IOCB_CMD_PREAD, IOCB_CMD_PWRITE, IOCB_CMD_FSYNC = 0, 1, 2
cb = iocb(IOCB_CMD_PWRITE, dev, ctypes.addressof(wbuf), 4096, 9024 * 512, 1, efd, 77)
cbs = (ctypes.c_void_p * 1)(ctypes.addressof(cb))
out["io_submit"] = sc(209, ctx.value, 1, ctypes.addressof(cbs))
ev = ctypes.create_string_buffer(32 * 4)
out["io_getevents"] = sc(208, ctx.value, 1, 4, ctypes.addressof(ev), 0)
data, obj, res, res2 = struct.unpack_from("<QQqq", ev.raw)
out["event"] = (data, obj == ctypes.addressof(cb), res, res2)
out["eventfd"] = os.eventfd_read(efd)
rbuf = ctypes.create_string_buffer(4096)
rcb = iocb(IOCB_CMD_PREAD, dev, ctypes.addressof(rbuf), 4096, 9024 * 512, data=78)
fcb = iocb(IOCB_CMD_FSYNC, dev, 0, 0, 0, data=79)
cbs2 = (ctypes.c_void_p * 2)(ctypes.addressof(rcb), ctypes.addressof(fcb))
out["io_submit_2"] = sc(209, ctx.value, 2, ctypes.addressof(cbs2))
out["io_getevents_2"] = sc(208, ctx.value, 2, 4, ctypes.addressof(ev), 0)
out["events_2"] = sorted((struct.unpack_from("<Q", ev.raw, 32 * i)[0],
                          struct.unpack_from("<q", ev.raw, 32 * i + 16)[0]) for i in range(2))
out["aio_read_same"] = rbuf.raw == pat(0xd4)
ngcb = iocb(IOCB_CMD_PWRITE, ng, ctypes.addressof(wbuf), 4096, 0)
cbs3 = (ctypes.c_void_p * 1)(ctypes.addressof(ngcb))
out["io_submit_ng"] = sc(209, ctx.value, 1, ctypes.addressof(cbs3))
out["io_cancel"] = sc(210, ctx.value, ctypes.addressof(cb), ctypes.addressof(ev))
out["io_destroy"] = sc(207, ctx.value)
out["io_submit_destroyed"] = sc(209, ctx.value, 1, ctypes.addressof(cbs))
# stdio: fopen of the device, fseek, fwrite, fflush, fread back, fileno, fclose (LBA 9032)
libc.fopen.restype = ctypes.c_void_p
for fn in ("fseek", "fwrite", "fflush", "fread", "fileno", "fclose"):
    getattr(libc, fn).argtypes = None
fp = ctypes.c_void_p(libc.fopen(b"/dev/nvme0n1", b"r+"))
sbuf = ctypes.create_string_buffer(pat(0xe5), 4096)
out["fseek"] = libc.fseek(fp, ctypes.c_long(9032 * 512), 0)
out["fwrite"] = libc.fwrite(sbuf, 1, 4096, fp)
out["fflush"] = libc.fflush(fp)
libc.fseek(fp, ctypes.c_long(9032 * 512), 0)
sback = ctypes.create_string_buffer(4096)
out["fread"] = libc.fread(sback, 1, 4096, fp)
out["fread_same"] = sback.raw == pat(0xe5)
out["fileno_is_dev"] = os.fstat(libc.fileno(fp)).st_rdev == os.fstat(dev).st_rdev
out["fclose"] = libc.fclose(fp)
for k, v in out.items():
    print(k, v)
PY
pxl python3 "$T/calls.py" "$T/src.bin" | tee "$T/calls.txt"
cat >"$T/calls.want" <<EOF
mmap ENODEV
mmap_ng ENODEV
sendfile_to_dev 4096
sendfile_pos $((9000 * 512 + 4096))
sendfile_from_dev 4096
sendfile_back_same True
sendfile_ng EINVAL
splice_to_dev 4096
copy_file_range EINVAL
copy_file_range_to EINVAL
posix_fallocate ENODEV
fallocate_mode0 -95
ioctl_unknown ENOTTY
ftruncate EINVAL
readahead 0
syscall_pwrite64 4096
syscall_pread64 4096
syscall_pread_same True
syscall_write_ng -22
io_setup 0
io_submit 1
io_getevents 1
event (77, True, 4096, 0)
eventfd 1
io_submit_2 2
io_getevents_2 2
events_2 [(78, 4096), (79, 0)]
aio_read_same True
io_submit_ng -22
io_cancel -22
io_destroy 0
io_submit_destroyed -22
fseek 0
fwrite 4096
fflush 0
fread 4096
fread_same True
fileno_is_dev True
fclose 0
EOF
diff "$T/calls.want" "$T/calls.txt" || fail "a call did not behave as Linux on a device"
placeholders_empty
ns_read 9000 40 "$T/calls-ns.bin"
python3 - "$T/calls-ns.bin" <<'PY' || fail "the namespace does not hold what the calls wrote"
import sys
d = open(sys.argv[1], 'rb').read()
want = bytes([0xa1]) * 4096 + bytes([0xb2]) * 4096 + bytes([0xc3]) * 4096 + bytes([0xd4]) * 4096 + \
    bytes([0xe5]) * 4096
sys.exit(0 if d == want else 1)
PY

step "io_uring requests ucmd does not serve complete with an error, never on the placeholder"
URING_UNSERVED="$(pwd)/$B/tests/exec/uring_unserved"
[ -x "$URING_UNSERVED" ] || fail "no $URING_UNSERVED"
pxl "$URING_UNSERVED" /dev/nvme0n1 /dev/ng0n1 /dev/nvme0 | tee "$T/uring.txt"
cat >"$T/uring.want" <<'EOF'
fallocate_blk EOPNOTSUPP
splice_blk EOPNOTSUPP
write_ng EINVAL
write_ctrl EINVAL
read_ng EINVAL
write_fixed_unregistered EFAULT
sync_file_range_blk EOPNOTSUPP
madvise 0
write_blk positive
EOF
diff "$T/uring.want" "$T/uring.txt" || fail "an io_uring request on a device was not refused"
placeholders_empty
ns_read 9040 8 "$T/uring-ns.bin"
python3 -c 'import sys; sys.exit(open(sys.argv[1], "rb").read() != bytes([0xf6]) * 4096)' \
	"$T/uring-ns.bin" || fail "io_uring's WRITE is not on the namespace"

step "a --daemon socket nobody listens on: refused, the program never runs"
set +e
timeout 60 "$UCMD" exec --daemon "$T/nobody.sock" -- touch "$T/ran" 2>"$T/err.txt"
rc=$?
set -e
[ "$rc" -ne 0 ] || fail "exec with a dead socket exited 0"
[ ! -e "$T/ran" ] || fail "the program ran without a daemon"
grep -q "cannot reach ucmdd at $T/nobody.sock" "$T/err.txt" || { cat "$T/err.txt"; fail "no reason"; }
set +e
UCMD_DAEMON=$T/nobody.sock timeout 60 "$UCMD" exec -- touch "$T/ran" 2>/dev/null
rc=$?
set -e
[ "$rc" -ne 0 ] && [ ! -e "$T/ran" ] || fail "\$UCMD_DAEMON unreachable: not refused"

step "the preload with the daemon unreachable: /dev/nvme0 is ENOENT, not the host's"
mkdir "$T/root2"
got=$(UCMD_DAEMON=$T/nobody.sock UCMD_EXEC_ROOT=$T/root2 LD_PRELOAD=$PRELOAD python3 -c '
import errno, os
for p in ("/dev/nvme0", "/dev/ng0n1", "/dev/nvme0n1", "/sys/class/nvme/nvme0"):
    try:
        os.open(p, os.O_RDONLY); print(p, "opened")
    except OSError as e:
        print(p, errno.errorcode[e.errno])')
[ "$got" = "/dev/nvme0 ENOENT
/dev/ng0n1 ENOENT
/dev/nvme0n1 ENOENT
/sys/class/nvme/nvme0 ENOENT" ] || fail "unreachable daemon: $got"
step "a name the daemon does not have is ENOENT under exec too"
got=$(px python3 -c '
import errno, os
try:
    os.open("/dev/nvme7", os.O_RDONLY); print("opened")
except OSError as e:
    print(errno.errorcode[e.errno])')
[ "$got" = ENOENT ] || fail "/dev/nvme7 under exec: $got"

step "a statically linked program runs under ucmd-supervise (exec_static.sh has the devices)"
STATIC=$(command -v ldconfig || echo /sbin/ldconfig)
grep -q "static" <<<"$(file -L "$STATIC")" || fail "$STATIC is not statically linked here"
# its open of /etc/ld.so.cache is made by the supervisor for it
px "$STATIC" -p >"$T/static.txt" 2>"$T/err.txt" || { cat "$T/err.txt"; fail "static program failed"; }
grep -q "libs found in cache" "$T/static.txt" || fail "ldconfig -p printed no cache"

step "a set-user-ID program (of another user) is refused with the reason"
cp "$(type -P true)" "$T/suid-true"
chown 65534 "$T/suid-true"
chmod 4755 "$T/suid-true"
set +e
px "$T/suid-true" 2>"$T/err.txt"
rc=$?
set -e
[ "$rc" -eq 126 ] || fail "set-user-ID program: exit $rc"
grep -q "set-user-ID" "$T/err.txt" || { cat "$T/err.txt"; fail "no reason given"; }
px true || fail "a plain program is refused"

echo "exec_fail_closed: ok"
