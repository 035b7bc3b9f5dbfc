#!/usr/bin/env bash
# The calls a statically linked program makes under `ucmd exec` (served by
# ucmd-supervise) besides open, pread/pwrite and liburing's ring, each
# answered as the preload answers the same program linked dynamically, and
# the bytes proven on the namespace with ucmd's CLI outside exec:
#
# - tests/exec/blk_calls.c on /dev/nvme0n1: readv/writev, preadv/pwritev,
#   preadv2/pwritev2 (offset -1: the file position), fsync, fdatasync,
#   lseek SEEK_END (the namespace's size), BLKGETSIZE64, BLKGETSIZE,
#   BLKSSZGET, BLKPBSZGET, BLKFLSBUF; a read at the end is 0, a write there
#   ENOSPC, a read across it short. Static and dynamic print the same line.
# - tests/exec/uring_rawmap.c on /dev/ng0n1: io_uring by hand as fio's own
#   engine maps it (IORING_OFF_SQ_RING, IORING_OFF_SQES, then
#   IORING_OFF_CQ_RING apart), NVMe passthrough write and read; and with
#   IORING_REGISTER_RING_FDS, io_uring_enter on the registered index after
#   the ring fd is closed.
source "$(dirname "$0")/lib/common.sh"
need_tools cc python3
dir=$T
for p in blk_calls uring_rawmap; do
	cc -O2 -static -o "$dir/$p.static" "$SRC/tests/exec/$p.c" || fail "cc -static $p"
	cc -O2 -o "$dir/$p.dyn" "$SRC/tests/exec/$p.c" || fail "cc $p"
	grep -q 'statically linked' <<<"$(file "$dir/$p.static")" || fail "$p.static is not static"
done

CTRL=$dir/ctrl
timeout 60 "$UCMD" --ctrl "$CTRL" create-ctrl >/dev/null || fail "create-ctrl"
read -r LBS NSZE < <(timeout 60 "$UCMD" --ctrl "$CTRL" --output-format json id-ns | python3 -c '
import json, sys
ns = json.load(sys.stdin)
print(1 << ns["lbafs"][ns["flbas"] & 0xf]["ds"], ns["nsze"])')

# bytes [$1, $1 + $2) of namespace 1 are the pattern of seed $3 (from its byte 0)
ns_has() {	# byte-offset length seed
	local slba=$(($1 / LBS)) n=$(($2 / LBS))
	timeout 60 "$UCMD" --ctrl "$CTRL" read -s "$slba" -c "$((n - 1))" -z "$2" \
		-d "$dir/back.bin" >/dev/null || fail "ucmd read"
	python3 - "$dir/back.bin" "$2" "$3" <<'PY'
import sys
data, n, seed = open(sys.argv[1], 'rb').read(), int(sys.argv[2]), int(sys.argv[3])
want = bytes((seed * 131 + i * 7 + (i >> 9)) & 0xff for i in range(n))
sys.exit(0 if data[:n] == want else 1)
PY
}

run() {	# program args...: its output under ucmd exec in $out; a non-zero exit fails the test
	out=$(timeout 300 "$UCMD" exec --ctrl "$CTRL" -- "$@" 2>&1) || fail "$*: $out"
}

want_line="ok size $((NSZE * LBS)) lbs $LBS pbs $LBS"
step "block calls, dynamic (the preload): $want_line"
run "$dir/blk_calls.dyn" /dev/nvme0n1 65536 3
grep -qx "$want_line" <<<"$out" || fail "dynamic blk_calls: $out"
ns_has 65536 8192 3 || fail "the namespace does not hold the dynamic writev's data"
ns_has $((65536 + 8192)) 8192 4 || fail "the namespace does not hold the dynamic pwritev2's data"

step "block calls, static (ucmd-supervise): the same answers"
run "$dir/blk_calls.static" /dev/nvme0n1 131072 5
grep -qx "$want_line" <<<"$out" || fail "static blk_calls: $out"
ns_has 131072 8192 5 || fail "the namespace does not hold the static writev's data"
ns_has $((131072 + 8192)) 8192 6 || fail "the namespace does not hold the static pwritev2's data"
ns_has $((131072 + 16384)) 4096 6 || fail "the namespace does not hold the static pwritev's data"

for kind in dyn static; do
	step "io_uring mapped as fio maps it ($kind): SQ ring, SQEs, CQ ring apart"
	slba=$([ "$kind" = dyn ] && echo 512 || echo 640)
	run "$dir/uring_rawmap.$kind" /dev/ng0n1 1 "$LBS" "$slba" 11
	grep -qx ok <<<"$out" || fail "uring_rawmap.$kind: $out"
	ns_has $((slba * LBS)) 8192 11 || fail "the namespace does not hold uring_rawmap.$kind's data"
	step "the same with the ring fd registered (IORING_REGISTER_RING_FDS) and closed ($kind)"
	run "$dir/uring_rawmap.$kind" /dev/ng0n1 1 "$LBS" "$((slba + 64))" 12 register
	grep -qx 'registered 0' <<<"$out" && grep -qx ok <<<"$out" ||
		fail "uring_rawmap.$kind register: $out"
	ns_has $(((slba + 64) * LBS)) 8192 12 ||
		fail "the namespace does not hold uring_rawmap.$kind register's data"
done
echo "exec_static_calls: ok"
