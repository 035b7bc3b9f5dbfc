#!/usr/bin/env bash
# A liburing program of our own that knows nothing of ucmd
# (tests/exec/uring_passthru.c, linked against Debian's liburing.so.2,
# which makes its io_uring system calls without libc), unchanged under
# `ucmd exec`: passthrough on /dev/ng0n1 and /dev/nvme0, block I/O on
# /dev/nvme0n1, plain, SQPOLL and IOPOLL rings, vectored, registered
# buffers and files, links, and Linux's errors. Then the same through a
# fork and an exec (the device fd inherited), and `--trace`'s log of a
# call ucmd does not handle.
source "$(dirname "$0")/lib/common.sh"
PROG="$(pwd)/$B/tests/exec/uring_passthru"
dir=$T
[ -x "$PROG" ] || fail "no $PROG"
# the program must not know ucmd: no ucmd library among what it loads
if grep -q ucmd <<<"$(ldd "$PROG")"; then fail "uring_passthru links ucmd"; fi
grep -q 'liburing.so.2' <<<"$(ldd "$PROG")" || fail "uring_passthru does not use the system liburing"

step "uring_passthru under ucmd exec"
timeout 300 "$UCMD" exec --ctrl "$dir/ctrl" --create -- "$PROG" /dev/ng0n1 /dev/nvme0 /dev/nvme0n1 \
	| tee "$dir/out.txt"
[ "$(grep -c ': ok$' "$dir/out.txt")" -eq 10 ] || fail "not every case passed"

step "what it wrote is on the namespace (ucmd's own CLI reads LBA 8)"
timeout 60 "$UCMD" --ctrl "$dir/ctrl" read -s 8 -c 7 -z 4096 -d "$dir/lba8.bin" >/dev/null
python3 - "$dir/lba8.bin" <<'PY'
import sys
data = open(sys.argv[1], 'rb').read()
# test_rw's last pass (IOPOLL ring, flags 0x1) wrote fill(seed 2) at LBA 8
want = bytes((2 * 131 + i * 7 + (i >> 9)) & 0xff for i in range(4096))
sys.exit(0 if data[:4096] == want else 1)
PY

step "fork and exec keep a device fd: a shell opens ng0n1 on fd 7, its child reads the nsid"
cat > "$dir/child.py" <<'PY'
import fcntl, os, struct, sys
# NVME_IOCTL_ID on the inherited fd 7: _IO('N', 0x40)
nsid = fcntl.ioctl(7, 0x4e40)
st = os.fstat(7)
import stat
print("nsid", nsid, "chr", stat.S_ISCHR(st.st_mode), "rdev", os.major(st.st_rdev), os.minor(st.st_rdev))
PY
timeout 60 "$UCMD" exec --ctrl "$dir/ctrl" -- bash -c "exec 7<>/dev/ng0n1; python3 $dir/child.py; cat /sys/class/nvme-generic/ng0n1/dev" \
	| tee "$dir/fork.txt"
grep -q "^nsid 1 chr True rdev 241 0$" "$dir/fork.txt" || fail "the inherited fd is not ng0n1"
grep -qx "241:0" "$dir/fork.txt" || fail "sysfs and fstat disagree on ng0n1's number"

step "--trace logs an ioctl ucmd does not handle, and the program gets ENOTTY"
timeout 60 "$UCMD" exec --ctrl "$dir/ctrl" --trace -- python3 -c '
import fcntl, errno, os
fd = os.open("/dev/ng0n1", os.O_RDONLY)
try:
    fcntl.ioctl(fd, 0x1268)   # BLKSSZGET on a char device
    print("no error")
except OSError as e:
    print("errno", errno.errorcode[e.errno])
' >"$dir/trace.out" 2>"$dir/trace.err"
grep -qx "errno ENOTTY" "$dir/trace.out" || fail "unknown ioctl: $(cat "$dir/trace.out")"
grep -q "ioctl(.*0x1268) on ng0n1: not handled" "$dir/trace.err" || fail "no trace line: $(cat "$dir/trace.err")"
step "descriptor semantics: dup2, fcntl(F_DUPFD_CLOEXEC), close, O_CLOEXEC across exec, O_DIRECT in F_GETFL"
cat > "$dir/fds.py" <<'PY'
import fcntl, os, subprocess, sys
ID = 0x4e40                                 # NVME_IOCTL_ID
a = os.open("/dev/ng0n1", os.O_RDWR)
os.dup2(a, 9)
b = fcntl.fcntl(a, fcntl.F_DUPFD_CLOEXEC, 20)
assert b >= 20, b
os.close(a)
assert fcntl.ioctl(9, ID) == 1, "the dup2 copy outlives the original"
assert fcntl.ioctl(b, ID) == 1, "the F_DUPFD copy too"
try:
    fcntl.ioctl(a, ID)
    sys.exit("a closed fd still answers")
except OSError as e:
    assert e.errno == 9, e                  # EBADF
c = os.open("/dev/nvme0n1", os.O_RDONLY | os.O_DIRECT | os.O_CLOEXEC)
assert fcntl.fcntl(c, fcntl.F_GETFL) & os.O_DIRECT, "O_DIRECT lost"
assert fcntl.fcntl(c, fcntl.F_GETFD) & fcntl.FD_CLOEXEC, "O_CLOEXEC lost"
os.set_inheritable(9, True)
# the child sees fd 9 (inheritable) and not c or b (close-on-exec): what its
# numbers c and b lead to, looked at before the child opens anything itself
out = subprocess.run(["python3", "-c", """
import fcntl, os, sys
def what(n):
    try:
        return os.readlink('/proc/self/fd/%d' % n)
    except OSError:
        return '-'
links = [what(int(x)) for x in sys.argv[1:]]
print(fcntl.ioctl(9, 0x4e40), *links)
""", str(c), str(b)], close_fds=False, capture_output=True, text=True, check=True).stdout.split()
assert out[0] == "1", out
assert not out[1].endswith("/dev/nvme0n1") and not out[2].endswith("/dev/ng0n1"), out
# a file that is not ucmd's keeps its own answers
n = os.open("/dev/null", os.O_RDWR)
assert os.write(n, b"x") == 1 and not os.fstat(n).st_rdev == os.stat("/dev/ng0n1").st_rdev
print("fds ok")
PY
timeout 60 "$UCMD" exec --ctrl "$dir/ctrl" -- python3 "$dir/fds.py" | tee "$dir/fds.txt"
grep -qx "fds ok" "$dir/fds.txt" || fail "descriptor semantics"

step "the daemon's policy and audit bind the program: writes denied, reads allowed"
cat > "$dir/policy.ini" <<'INI'
[policy]
inherit = default

[rule no-writes]
verb = write, write-zeroes, trim, write-uncor, copy, format
action = deny
audit = yes
INI
timeout 60 "$UCMD" exec --ctrl "$dir/ctrl" --policy "$dir/policy.ini" --audit "$dir/audit.jsonl" -- python3 -c '
import fcntl, os, struct, ctypes
fd = os.open("/dev/ng0n1", os.O_RDWR)
buf = ctypes.create_string_buffer(4096)
def io(op):
    # struct nvme_passthru_cmd64 (80 bytes): opcode, nsid, addr, data_len, cdw12 = 7 (8 LBAs of 512)
    cmd = bytearray(80)
    struct.pack_into("<BBHI", cmd, 0, op, 0, 0, 1)
    struct.pack_into("<Q", cmd, 24, ctypes.addressof(buf))
    struct.pack_into("<I", cmd, 36, 4096)
    struct.pack_into("<I", cmd, 48, 7)
    try:
        return fcntl.ioctl(fd, 0xc0504e48, cmd)      # NVME_IOCTL_IO64_CMD
    except OSError as e:
        return -e.errno
print("read", io(2), "write", io(1))
' | tee "$dir/pol.txt"
grep -qx "read 0 write -13" "$dir/pol.txt" || fail "policy under ucmd exec: $(cat "$dir/pol.txt")"
grep -q '"deny"' "$dir/audit.jsonl" || fail "the denied write is not in the audit trail"
echo "ok"
