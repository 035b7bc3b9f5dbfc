#!/usr/bin/env bash
# Debian's fio, unmodified, under `ucmd exec`: its io_uring_cmd engine
# (NVMe passthrough, raw io_uring system calls of its own) on /dev/ng0n1
# with every ring feature fio has, two job processes sharing the one
# controller; a verify pass in a second run that must find the data; a
# verify with the wrong pattern that must fail; and fio's io_uring engine
# on the block device /dev/nvme0n1 (O_DIRECT).
source "$(dirname "$0")/lib/common.sh"
dir=$T
need_tools fio
ctrl="$dir/ctrl"
# fio leaves its verify state files in the current directory: ours
X() { (cd "$dir" && timeout 300 "$UCMD" exec --ctrl "$ctrl" --create -- "$@"); }
# fio's JSON (after the warnings fio prints into the same file): total
# errors and I/O of every job
io_of() { python3 -c '
import json, sys
t = open(sys.argv[1]).read()
j = json.loads(t[t.index("{"):])
print(sum(x["error"] for x in j["jobs"]), sum(x[sys.argv[2]]["total_ios"] for x in j["jobs"]))' "$@"; }

CMD=(--ioengine=io_uring_cmd --cmd_type=nvme --filename=/dev/ng0n1 --bs=4k --size=8M
     --numjobs=2 --offset_increment=8M --iodepth=16 --iodepth_batch_submit=4
     --fixedbufs=1 --registerfiles=1 --sqthread_poll=1 --hipri=1 --verify=crc32c)

step "fio io_uring_cmd: randwrite + verify, 2 job processes, fixedbufs registerfiles sqthread_poll hipri"
X fio --name=w --rw=randwrite "${CMD[@]}" --output-format=json --output="$dir/w.json" \
	|| fail "fio write+verify failed: $(cat "$dir/w.json" 2>/dev/null | tail -5)"
read -r err ios < <(io_of "$dir/w.json" write)
[ "$err" = 0 ] || fail "write job errors: $err"
[ "$ios" = 4096 ] || fail "wrote $ios blocks, want 4096 (2 x 8 MiB)"
read -r err ios < <(io_of "$dir/w.json" read)
[ "$ios" = 4096 ] || fail "verified $ios blocks, want 4096"

step "a second run verifies what the first wrote (the data persisted in the controller)"
X fio --name=v --rw=randwrite --verify_only=1 "${CMD[@]}" --output-format=json \
	--output="$dir/v.json" || fail "verify-only pass failed"
read -r err ios < <(io_of "$dir/v.json" read)
[ "$err" = 0 ] && [ "$ios" = 4096 ] || fail "verify-only: errors $err, $ios blocks read"

step "a verify against the wrong pattern fails"
X fio --name=p --ioengine=io_uring_cmd --cmd_type=nvme --filename=/dev/ng0n1 --bs=4k \
	--offset=32M --size=1M --rw=write --verify=pattern --verify_pattern=0xaa --do_verify=0 \
	--output="$dir/p.txt" || fail "pattern write failed"
if X fio --name=p --ioengine=io_uring_cmd --cmd_type=nvme --filename=/dev/ng0n1 --bs=4k \
	--offset=32M --size=1M --rw=write --verify=pattern --verify_pattern=0x55 --verify_only=1 \
	--output="$dir/p2.txt" 2>"$dir/p2.err"; then
	fail "a wrong-pattern verify passed"
fi
grep -qi "verify" "$dir/p2.err" "$dir/p2.txt" || fail "no verify error reported"

step "fio io_uring on the block device /dev/nvme0n1, O_DIRECT, write + verify"
X fio --name=b --ioengine=io_uring --filename=/dev/nvme0n1 --direct=1 --bs=4k --size=8M \
	--offset=64M --rw=randwrite --iodepth=8 --fixedbufs=1 --verify=crc32c \
	--output-format=json --output="$dir/b.json" || fail "fio io_uring on nvme0n1 failed"
read -r err ios < <(io_of "$dir/b.json" read)
[ "$err" = 0 ] && [ "$ios" = 2048 ] || fail "block verify: errors $err, $ios blocks"

step "ucmd's own CLI reads what fio wrote: the first block of job 0 carries fio's verify header"
timeout 60 "$UCMD" --ctrl "$ctrl" read -s 0 -c 7 -z 4096 -d "$dir/b0.bin" >/dev/null
python3 - "$dir/b0.bin" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
# fio's verify_header starts with its magic 0xacca, then the verify type
magic = struct.unpack_from('<H', d, 0)[0]
sys.exit(0 if magic == 0xacca else 1)
PY
echo "ok"
