#!/usr/bin/env bash
# resource0 of the controller's PCI function is read as a host's BAR0:
# read and pread under `ucmd exec` return the controller's registers at the
# call, not the copy written into the tree when the file was opened. The
# proof: a program opens resource0, then overwrites that copy (the tree's
# own file, by its path in UCMD_EXEC_ROOT) with 0xff, then reads CAP, VS
# and CC through its descriptor (read after lseek, and pread): they are the
# controller's (VS 1.x, CAP.MQES not all ones), not the 0xff bytes; the
# same program's mmap of it keeps the copy (what docs/compat.md says).
source "$(dirname "$0")/lib/common.sh"
need_tools python3
CTRL=$T/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"
out=$(timeout 120 "$UCMD" exec --ctrl "$CTRL" -- python3 - 2>&1 <<'PY'
import mmap, os, struct
p = "/sys/class/nvme/nvme0/device/resource0"
fd = os.open(p, os.O_RDONLY)
real = os.path.realpath(p)
tree = os.environ["UCMD_EXEC_ROOT"] + real
os.chmod(tree, 0o600)
with open(tree, "r+b") as f:
    f.write(b"\xff" * 0x4000)
os.lseek(fd, 0, os.SEEK_SET)
head = os.read(fd, 0x20)
cap, vs = struct.unpack_from("<QI", head, 0)
vs2 = struct.unpack("<I", os.pread(fd, 4, 8))[0]
print("vs %08x pread %08x cap %016x pos %d" % (vs, vs2, cap, os.lseek(fd, 0, os.SEEK_CUR)))
m = mmap.mmap(fd, 0x1000, mmap.MAP_SHARED, mmap.PROT_READ)
print("mmap vs %08x" % struct.unpack_from("<I", m, 8)[0])
PY
) || fail "the program: $out"
grep -qE '^vs 0001[0-9a-f]{4} pread 0001[0-9a-f]{4} cap [0-9a-f]{16} pos 32$' <<<"$out" ||
	fail "read/pread of resource0 are not the controller's registers now: $out"
grep -q 'cap ffffffffffffffff' <<<"$out" && fail "CAP is the overwritten copy: $out"
grep -qx 'mmap vs ffffffff' <<<"$out" || fail "mmap is not the copy at open: $out"
echo "exec_res0_live: ok"
