#!/usr/bin/env bash
# `ucmd bench` end to end, briefly: each path with --verify, text and JSON
# output, the JSON fields checked with python3, the default target leaving
# the persistent namespace alone, and bad options rejected.
# Never asserts a speed: only that the numbers are there and consistent.
source "$(dirname "$0")/lib/common.sh"
dir=$T
export UCMD_CTRL="$dir/ctrl"

check_json() {	# $1: expected path, stdin: the JSON
	python3 -c '
import json, sys
d = json.load(sys.stdin)
path = sys.argv[1]
j = d["job"]
assert j["path"] == path and j["verify"] is True, j
assert d["elapsed_s"] > 0, d
assert d["io_errors"] == 0, d
assert d["verify"]["enabled"] and d["verify"]["errors"] == 0 and d["verify"]["checked"] > 0, d
ios = 0
for k in ("read", "write"):
    x = d[k]
    for f in ("ios", "bytes", "iops", "bw_bytes", "slat_ns", "clat_ns"):
        assert f in x, (k, f)
    assert x["bytes"] == x["ios"] * j["bs"], x
    ios += x["ios"]
    if x["ios"]:
        c = x["clat_ns"]
        p = c["percentiles"]
        assert c["samples"] == x["ios"], c
        assert c["min"] <= c["mean"] <= c["max"], c
        seq = [p[n] for n in ("p50", "p90", "p99", "p99.9", "p99.99")]
        assert seq == sorted(seq) and c["min"] <= seq[0] and seq[-1] <= c["max"], c
assert ios > 0 and abs(d["iops"] * d["elapsed_s"] - ios) <= 1 + 1e-6 * ios, d
# the block device counts its I/O (the main phase, as fio); passthrough is not counted
if path == "block":
    u = d["disk_util"][0]
    assert u["name"].endswith("n1"), u
    assert u["read_ios"] == d["read"]["ios"] and u["write_ios"] == d["write"]["ios"], (u, d)
    assert u["read_sectors"] * 512 == d["read"]["bytes"], u
    assert u["write_sectors"] * 512 == d["write"]["bytes"], u
    assert u["in_queue"] >= u["read_ticks"] + u["write_ticks"] and 0 <= u["util"] <= 100, u
else:
    assert "disk_util" not in d, d
' "$1"
}

for path in passthru block sync; do
	step "bench --path $path --rw randrw --verify, JSON"
	"$UCMD" --output-format json bench --path "$path" --rw randrw --runtime 1 --size 16M \
		--verify | check_json "$path"
done

step "bench on a RAM controller of its own, thread mode: fixed buffers, vectored, iopoll, sqpoll"
for extra in "--fixedbufs --batch 8" "--vectored --threads 2" "--iopoll" "--sqpoll" "--noplug --batch 8"; do
	# shellcheck disable=SC2086
	"$UCMD" bench --target ram --ctrl-mode thread $extra --rw randrw --runtime 0.5 --size 16M \
		--verify --output-format json | check_json passthru
done

step "thread mode with trapping doorbells, plugged and not"
for extra in "--batch 32" "--noplug --batch 32"; do
	# shellcheck disable=SC2086
	"$UCMD" bench --target ram --ctrl-mode trap --lba-size 512 --bs 512 $extra --rw randrw \
		--runtime 0.5 --size 16M --verify --output-format json | check_json passthru
done

step "bench text output"
out=$("$UCMD" bench --rw write --size 16M --bs 64k --verify --batch 4)
echo "$out"
grep -q "write: IOPS=" <<<"$out" || fail "no write line"
grep -q "p99.99=" <<<"$out" || fail "no percentiles"
grep -q "verify: .* 0 bad" <<<"$out" || fail "verify did not pass"

step "bench --path block text output: fio's Disk stats line"
out=$("$UCMD" bench --path block --rw randread --size 16M --ops 1000 --batch 4)
echo "$out"
grep -Eq "^  nvme[0-9]+n1: ios=1000/0, merge=0/0, ticks=[0-9]+/0, in_queue=[0-9]+, util=[0-9.]+%$" <<<"$out" ||
	fail "no Disk stats line for the block path"

step "bench --plid: writes through an FDP placement identifier, the WAF line from log 22h"
# 32 MiB of 4 KiB writes: the line counts exactly the run's host bytes
out=$("$UCMD" bench --rw randwrite --size 16M --ops 8192 --plid 3 --no-progress)
echo "$out"
grep -Eq "^  fdp: plid=3 WAF=[0-9]+\.[0-9]{2} \(log 22h: 33554432 host, [0-9]+ media bytes" <<<"$out" ||
	fail "no fdp WAF line"
out=$("$UCMD" bench --rw randwrite --size 16M --ops 64 --plid 3 --output-format json)
python3 -c 'import json,sys; f=json.loads(sys.argv[1])["fdp"]; sys.exit(f["plid"] != 3 or f["host_bytes"] != 262144)' "$out" ||
	fail "no fdp object in the JSON report: $out"
# a placement identifier the controller does not have: every write fails
if "$UCMD" bench --rw randwrite --size 16M --ops 64 --plid 9 >/dev/null 2>&1; then
	fail "bench --plid 9 (8 handles) succeeded"
fi

step "the default target is bench's own RAM namespace: the persistent one keeps its data"
head -c 65536 /dev/urandom > "$dir/data.bin"
"$UCMD" write -s 0 -c 127 -d "$dir/data.bin" 2>/dev/null
"$UCMD" bench --rw write --size 1M --bs 64k --ops 64 >/dev/null
"$UCMD" read -s 0 -c 127 -d "$dir/back.bin"
cmp "$dir/data.bin" "$dir/back.bin" || fail "bench's default target wrote over the namespace"
# only when told to: --target session writes the controller's namespace
"$UCMD" bench --target session --rw write --size 1M --bs 64k --ops 64 >/dev/null
"$UCMD" read -s 0 -c 127 -d "$dir/back.bin"
if cmp -s "$dir/data.bin" "$dir/back.bin"; then fail "--target session did not write the namespace"; fi

step "bad options give clear errors"
for bad in "--rw sideways" "--bs 1000" "--iodepth 0" "--batch 64 --iodepth 8" \
	   "--path sync --iopoll" "--size 1z" "--fixedbufs --vectored" "--plid 70000" \
	   "--plid 1 --path block"; do
	# shellcheck disable=SC2086
	if err=$("$UCMD" bench $bad 2>&1); then
		fail "bench $bad succeeded"
	fi
	grep -q "^bench: " <<<"$err" || fail "bench $bad: unclear error '$err'"
done
echo "bench_cli: OK"
