#!/usr/bin/env bash
# A power-of-two zoned namespace's /dev/nvme0n1 under `ucmd exec` with
# real zoned clients: util-linux blkzone report/open/close/finish/reset
# (compared with `ucmd zns report-zones` on the same controller), the zoned
# block ioctls' errnos for bad arguments (python's fcntl.ioctl: the ioctl
# as a program issues it), a write off the write pointer failing with EIO,
# and Debian fio --zonemode=zbd with psync and io_uring on the block device
# and io_uring_cmd on the generic device, verified (crc32c).
# shellcheck source=tests/system/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
[ -x "$UCMD" ] || fail "no $UCMD: build first"
need_tools blkzone fio python3 timeout dd
ctrl=$T/ctrl
X() { timeout 120 "$UCMD" exec --ctrl "$ctrl" -- "$@"; }

step "a zoned controller: 16 zones of 1 MiB, at most 4 open and 6 active"
"$UCMD" --ctrl "$ctrl" create-ctrl --zns --nsze=32768 --zone-size=1M --max-open=4 \
	--max-active=6 >/dev/null || fail "create-ctrl --zns"

# "zone-index cond wp-relative-to-start" from blkzone's report and from ucmd's
bz_states() {
	X blkzone report /dev/nvme0n1 >"$T/bz" || fail "blkzone report"
	python3 - "$T/bz" <<'PY'
import re, sys
for i, l in enumerate(open(sys.argv[1])):
    m = re.search(r"start: (0x[0-9a-f]+), len (0x[0-9a-f]+), cap (0x[0-9a-f]+), wptr (0x[0-9a-f]+).*zcond: *(\d+)", l)
    print(i, int(m.group(5)), int(m.group(4), 16))
PY
}
u_states() {
	"$UCMD" --ctrl "$ctrl" zns report-zones -o json >"$T/u.json" || fail "ucmd zns report-zones"
	python3 - "$T/u.json" <<'PY'
import json, sys
cond = {"EMPTY": 1, "IMP_OPENED": 2, "EXP_OPENED": 3, "CLOSED": 4, "READ_ONLY": 13, "FULL": 14, "OFFLINE": 15}
for i, z in enumerate(json.load(open(sys.argv[1]))["zone_list"]):
    c = cond[z["state"]]
    # 512-byte blocks: LBAs are sectors; the block layer's full wp is the zone's end
    wp = int(str(z["wp"]), 0) - int(str(z["slba"]), 0)
    print(i, c, 2048 if c == 14 else wp)
PY
}
same_states() {
	bz_states >"$T/b.out"
	u_states >"$T/u.out"
	diff -u "$T/u.out" "$T/b.out" >"$T/diff" || { cat "$T/diff"; fail "$1: blkzone and ucmd zns differ"; }
	[ -z "${2:-}" ] || grep -qx "$2" "$T/b.out" || { cat "$T/b.out"; fail "$1: no zone '$2'"; }
}

step "blkzone report: 16 empty zones, as ucmd zns report-zones"
same_states "fresh" "15 1 0"
[ "$(wc -l <"$T/b.out")" = 16 ] || fail "blkzone reported $(wc -l <"$T/b.out") zones"

step "a write at zone 0's write pointer, then blkzone open/close/finish in one session"
# Each exec is a new session of the controller: opened zones close at its
# reset (the spec's controller-level reset), so the open states are read in
# the session that made them and compared with ucmd's once they are stable.
X sh -c 'dd if=/dev/urandom of=/dev/nvme0n1 bs=4096 count=4 oflag=direct status=none &&
	blkzone report -c 1 /dev/nvme0n1 && blkzone open -o 2048 -c 1 /dev/nvme0n1 &&
	blkzone report -o 2048 -c 1 /dev/nvme0n1 && blkzone close -o 0 -c 1 /dev/nvme0n1 &&
	blkzone report -c 1 /dev/nvme0n1 && blkzone close -o 2048 -c 1 /dev/nvme0n1 &&
	blkzone finish -o 4096 -c 2 /dev/nvme0n1' >"$T/seq" || { cat "$T/seq"; fail "blkzone sequence"; }
conds=$(sed -n 's/.*wptr \(0x[0-9a-f]*\).*zcond: *\([0-9]*\).*/\2 \1/p' "$T/seq" | tr '\n' ,)
# written: implicitly open at 32 sectors; opened: explicitly open; closed
[ "$conds" = "2 0x000020,3 0x000000,4 0x000020," ] || { cat "$T/seq"; fail "zone states in the session: $conds"; }
same_states "after finish" "3 14 2048"
grep -qx "0 4 32" "$T/b.out" || fail "zone 0 not closed at 32"
grep -qx "1 1 0" "$T/b.out" || fail "zone 1 not empty after close"
grep -qx "2 14 2048" "$T/b.out" || fail "zone 2 not full"

step "a write off the write pointer fails (EIO) and moves nothing"
rc=0
X dd if=/dev/zero of=/dev/nvme0n1 bs=4096 count=1 seek=2 oflag=direct status=none 2>"$T/err" || rc=$?
[ "$rc" != 0 ] || fail "a write off the wp succeeded"
grep -q "Input/output error" "$T/err" || { cat "$T/err"; fail "not EIO"; }
same_states "after the refused write" "0 4 32"

step "blkzone reset of the whole disk: every zone empty"
X blkzone reset /dev/nvme0n1 || fail "blkzone reset"
same_states "after reset" "3 1 0"
grep -qv " 1 0$" "$T/b.out" && { cat "$T/b.out"; fail "a zone not empty after reset"; }

step "the zoned ioctls' errnos for bad arguments"
cat >"$T/ioc.py" <<'PY'
import errno, fcntl, os, struct, sys
BLKGETZONESZ, BLKGETNRZONES = 0x80041284, 0x80041285
BLKREPORTZONE, BLKRESETZONE = 0xc0101282, 0x40101283
BLKOPENZONE = 0x40101286
def eno(fd, req, arg):
    try:
        fcntl.ioctl(fd, req, arg)
        return 0
    except OSError as e:
        return errno.errorcode[e.errno]
rw = os.open("/dev/nvme0n1", os.O_RDWR)
ro = os.open("/dev/nvme0n1", os.O_RDONLY)
print("zonesz", struct.unpack("I", fcntl.ioctl(rw, BLKGETZONESZ, b"\0" * 4))[0])
print("nrzones", struct.unpack("I", fcntl.ioctl(rw, BLKGETNRZONES, b"\0" * 4))[0])
rng = lambda s, n: struct.pack("QQ", s, n)
print("unaligned-start", eno(rw, BLKRESETZONE, rng(1, 2048)))
print("unaligned-len", eno(rw, BLKRESETZONE, rng(0, 100)))
print("empty", eno(rw, BLKOPENZONE, rng(0, 0)))
print("past-end", eno(rw, BLKOPENZONE, rng(30720, 4096)))
print("overflow", eno(rw, BLKRESETZONE, rng(2048, 2**64 - 1024)))
print("readonly", eno(ro, BLKRESETZONE, rng(0, 2048)))
print("report-none", eno(rw, BLKREPORTZONE, struct.pack("QII", 0, 0, 0)))
buf = bytearray(struct.pack("QII", 3 * 2048 + 5, 2, 0) + b"\0" * 64 * 2)
fcntl.ioctl(rw, BLKREPORTZONE, buf)
s, n, fl = struct.unpack_from("QII", buf)
z = struct.unpack_from("QQQBBBB", buf, 16)
print("report", n, fl, z[0], z[1], z[4])
# the last zone: only one is left past sector 15 * 2048
buf = bytearray(struct.pack("QII", 15 * 2048, 4, 0) + b"\0" * 64 * 4)
fcntl.ioctl(rw, BLKREPORTZONE, buf)
print("report-tail", struct.unpack_from("QII", buf)[1])
# past the open limit: ETOOMANYREFS as the block layer maps the status
print("opens", [eno(rw, BLKOPENZONE, rng(i * 2048, 2048)) for i in range(5)])
PY
X python3 "$T/ioc.py" >"$T/ioc.out" 2>&1 || { cat "$T/ioc.out"; fail "ioctl script"; }
want="zonesz 2048
nrzones 16
unaligned-start EINVAL
unaligned-len EINVAL
empty EINVAL
past-end EINVAL
overflow EINVAL
readonly EBADF
report-none EINVAL
report 2 1 6144 2048 1
report-tail 1
opens [0, 0, 0, 0, 'ETOOMANYREFS']"
[ "$(cat "$T/ioc.out")" = "$want" ] || { diff <(echo "$want") "$T/ioc.out"; fail "ioctl errnos"; }
X blkzone reset /dev/nvme0n1 || fail "blkzone reset"

# the block device with psync and io_uring; passthrough on ng0n1 with io_uring_cmd
for eng in psync io_uring io_uring_cmd; do
	dev=/dev/nvme0n1 extra=()
	[ "$eng" = io_uring_cmd ] && dev=/dev/ng0n1 extra=(--cmd_type=nvme)
	step "fio --zonemode=zbd --ioengine=$eng on $dev with crc32c verify"
	X fio --name=zbd --filename=$dev --direct=1 --zonemode=zbd --ioengine=$eng "${extra[@]}" \
		--rw=write --bs=16k --size=8M --max_open_zones=4 --verify=crc32c --do_verify=1 \
		--verify_fatal=1 --verify_state_save=0 --output-format=terse >"$T/fio.out" 2>"$T/fio.err" ||
		{ cat "$T/fio.err"; fail "fio $eng"; }
	grep -q "verify" "$T/fio.err" && { cat "$T/fio.err"; fail "fio $eng: verify errors"; }
	# terse v3: field 5 is the error; 6 the bytes read (KiB), 47 the bytes written
	IFS=';' read -r -a f <"$T/fio.out"
	[ "${f[4]}" = 0 ] || fail "fio $eng: error ${f[4]}"
	[ "${f[46]}" = 8192 ] || fail "fio $eng: wrote ${f[46]} KiB, expected 8192"
	[ "${f[5]}" = 8192 ] || fail "fio $eng: verified ${f[5]} KiB, expected 8192"
	same_states "after fio $eng" "7 14 2048"
	X blkzone reset /dev/nvme0n1 || fail "blkzone reset"
done
echo "ok"
