#!/usr/bin/env bash
# A liburing program of our own that knows nothing of ucmd
# (tests/exec/uring_passthru.c, linked against Debian's liburing.so.2,
# which makes its io_uring system calls without libc), unchanged under
# `ucmd exec`: passthrough on /dev/ng0n1 and /dev/nvme0, block I/O on
# /dev/nvme0n1, plain, SQPOLL and IOPOLL rings, vectored, registered
# buffers and files, links, and Linux's errors. Then the same through a
# fork and an exec (the device fd inherited), and `--trace`'s log of a
# call ucmd does not handle.
set -euo pipefail
B=${UCMD_BUILD:-build}
UCMD="$(pwd)/$B/tools/ucmd"
PROG="$(pwd)/$B/tests/exec/uring_passthru"
dir=$(mktemp -d /tmp/ucmd-exec-uring.XXXXXX)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
step() { echo "--- $*"; }
[ -x "$PROG" ] || fail "no $PROG"
# the program must not know ucmd: no ucmd library among what it loads
if ldd "$PROG" | grep -q ucmd; then fail "uring_passthru links ucmd"; fi
ldd "$PROG" | grep -q 'liburing.so.2' || fail "uring_passthru does not use the system liburing"

step "uring_passthru under ucmd exec"
timeout 300 "$UCMD" exec --ctrl "$dir/ctrl" -- "$PROG" /dev/ng0n1 /dev/nvme0 /dev/nvme0n1 \
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
echo "ok"
