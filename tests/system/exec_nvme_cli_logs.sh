#!/usr/bin/env bash
# Debian's nvme-cli, unmodified, under `ucmd exec`: the logs and Identify
# data a user reaches beyond the basic ones. Get LBA Status (86h) and the
# LBA Status Information log (0Eh) report the blocks Write Uncorrectable
# marked; telemetry host-initiated captures (07h) and the controller-
# initiated log (08h); the Persistent Event log (0Dh) and its reporting
# context; the Endurance Group Information log (09h); Identify CNS 09h, 0Ah
# and 19h, and the spec's Invalid Field for the CNS values of features the
# controller does not have. Each with the status a bad field gets.
source "$(dirname "$0")/lib/common.sh"
dir=$T
ctrl="$dir/ctrl"
[ -x "$UCMD" ] || fail "no $UCMD: build first"
need_tools nvme python3

X() { timeout 120 "$UCMD" exec --ctrl "$ctrl" -- "$@" 2>"$dir/err"; }
# python3 expression over the JSON document d on stdin, printed
J() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
# nvme-cli's status line for a command that must fail with it
refused() {
	local want=$1; shift
	if X "$@" >"$dir/out"; then fail "$* succeeded, expected $want"; fi
	grep -q "$want" "$dir/err" || fail "$*: '$(cat "$dir/err")', expected $want"
}
# Get LBA Status through admin-passthru (nvme-cli 2.3's own get-lba-status
# sends no data buffer: libnvme 1.3 leaves the length 0): the descriptors as
# "nlsd cmpc slba:nlb ..." (with -b, stdout holds the payload alone).
lba_status() {
	X nvme admin-passthru /dev/nvme0 --opcode=0x86 "$@" -r -b >"$dir/ls.bin" ||
		fail "get lba status $*: $(cat "$dir/err")"
	python3 - "$dir/ls.bin" <<'EOF'
import struct, sys
b = open(sys.argv[1], 'rb').read()
nlsd, cmpc = struct.unpack_from('<IB', b, 0)
d = [struct.unpack_from('<QI', b, 8 + 16 * i) for i in range(nlsd)]
print(nlsd, cmpc, *('%d:%d' % x for x in d))
EOF
}

step "a fresh controller: blocks 10-14 and 100 marked uncorrectable"
"$UCMD" --ctrl "$ctrl" create-ctrl >/dev/null || fail "ucmd create-ctrl $ctrl"
X nvme write-uncor /dev/nvme0n1 -s 10 -c 4 >/dev/null || fail "write-uncor: $(cat "$dir/err")"
X nvme write-uncor /dev/nvme0n1 -s 100 -c 0 >/dev/null || fail "write-uncor: $(cat "$dir/err")"

step "Identify Controller says what is there"
X nvme id-ctrl /dev/nvme0 -o json >"$dir/id.json" || fail "id-ctrl: $(cat "$dir/err")"
r=$(J '(d["lpa"] & 0x18, d["oacs"] & 0x200, d["ctratt"] & 0x10, d["endgidmax"], d["pels"])' <"$dir/id.json")
[ "$r" = "(24, 512, 16, 1, 1)" ] ||
	fail "lpa telemetry+PEL, oacs Get LBA Status, ctratt endurance groups, endgidmax, pels: $r"
X nvme get-log /dev/nvme0 -i 0 -l 1024 -b >"$dir/lids.bin" || fail "log 00h: $(cat "$dir/err")"
r=$(python3 -c "import struct; v=struct.unpack('<256I', open('$dir/lids.bin','rb').read()); print([l for l in (7, 8, 9, 13, 14) if not v[l] & 1])")
[ "$r" = "[]" ] || fail "log 00h does not list LIDs $r"

step "Get LBA Status: tracked, a scan of a range, a buffer too small, bad fields"
r=$(lba_status -n 1 --cdw12=15 --cdw13=0x11000000 -l 64)
[ "$r" = "2 2 10:5 100:1" ] || fail "ATYPE 11h from 0: '$r', expected both ranges, complete"
r=$(lba_status -n 1 --cdw10=12 --cdw12=15 --cdw13=0x10000002 -l 64)
[ "$r" = "1 2 12:2" ] || fail "ATYPE 10h over 12-13: '$r', expected 12:2"
r=$(lba_status -n 1 --cdw10=15 --cdw12=15 --cdw13=0x10000000 -l 64)
[ "$r" = "1 2 100:1" ] || fail "ATYPE 10h from 15, RL 0 (to the end): '$r'"
r=$(lba_status -n 1 --cdw12=5 --cdw13=0x11000000 -l 24)
[ "$r" = "1 1 10:5" ] || fail "room for one descriptor: '$r', expected one and CMPC 1 (more)"
refused "Invalid Field" nvme admin-passthru /dev/nvme0 --opcode=0x86 -n 1 --cdw12=15 --cdw13=0x0b000000 -l 64 -r
refused "LBA Out of Range" nvme admin-passthru /dev/nvme0 --opcode=0x86 -n 1 --cdw10=0xffffffff --cdw11=0xff --cdw12=15 --cdw13=0x11000000 -l 64 -r
refused "Invalid Namespace" nvme admin-passthru /dev/nvme0 --opcode=0x86 -n 9 --cdw12=15 --cdw13=0x11000000 -l 64 -r

step "LBA Status Information log: the marked ranges, a generation that follows them"
X nvme lba-status-log /dev/nvme0 -o json >"$dir/lsl.json" || fail "lba-status-log: $(cat "$dir/err")"
r=$(J '(d["nlslne"], d["estulb"], [(e["neid"], e["ratype"], [(x["rslba"], x["rnlb"]) for x in e["descs"]]) for e in d["ns_elements"]])' <"$dir/lsl.json")
[ "$r" = "(1, 6, [(1, 17, [(10, 5), (100, 1)])])" ] || fail "lba-status-log: $r"
g0=$(J 'd["lsgc"]' <"$dir/lsl.json")
g1=$(X nvme lba-status-log /dev/nvme0 -o json | J 'd["lsgc"]')
[ "$g1" = "$g0" ] || fail "the generation moved ($g0 -> $g1) with nothing changed"
X nvme write-zeroes /dev/nvme0n1 -s 100 -c 0 >/dev/null || fail "write-zeroes: $(cat "$dir/err")"
X nvme lba-status-log /dev/nvme0 -o json >"$dir/lsl.json" || fail "lba-status-log: $(cat "$dir/err")"
r=$(J '(d["estulb"], d["lsgc"] != '"$g0"')' <"$dir/lsl.json")
[ "$r" = "(5, True)" ] || fail "after clearing block 100: estulb and generation change $r"

step "telemetry: a capture, read again without a new one, then a second"
X sh -c "nvme telemetry-log /dev/nvme0 -o '$dir/t1.bin' && nvme telemetry-log /dev/nvme0 -g 0 -o '$dir/t2.bin' && nvme telemetry-log /dev/nvme0 -o '$dir/t3.bin'" >/dev/null ||
	fail "telemetry-log: $(cat "$dir/err")"
python3 - "$dir" <<'EOF' || fail "telemetry captures"
import struct, sys
t = [open('%s/t%d.bin' % (sys.argv[1], i), 'rb').read() for i in (1, 2, 3)]
for b in t:
    assert len(b) == 1024, len(b)
    assert b[0] == 7 and struct.unpack_from('<3H', b, 8) == (1, 1, 1), b[:16]
    assert b[512 + 3] == 100, 'data area 1 is the SMART log: available spare'
assert [b[381] for b in t] == [1, 1, 2], [b[381] for b in t]
assert t[1] == t[0], 'a read without Create is the last capture'
EOF
X nvme telemetry-log /dev/nvme0 -c -o "$dir/tc.bin" >/dev/null || fail "telemetry-log -c: $(cat "$dir/err")"
python3 -c "b=open('$dir/tc.bin','rb').read(); assert len(b) == 512 and b[0] == 8 and b[382] == 0, b[:16]" ||
	fail "controller-initiated telemetry: $(xxd "$dir/tc.bin" | head -3)"
refused "Invalid Field" nvme get-log /dev/nvme0 -i 7 -l 512 --lpo=4
refused "Invalid Field" nvme get-log /dev/nvme0 -i 8 -l 512 --lpo=4096

step "persistent event log: context, read, release, the sequence errors"
X nvme persistent-event-log /dev/nvme0 -a 1 -l 1048 -o json >"$dir/pel.json" ||
	fail "persistent-event-log -a 1: $(cat "$dir/err")"
r=$(J '(d["log_id"], d["total_num_of_events"], d["total_log_len"], d["gen_number"], d["rci"])' <"$dir/pel.json")
[ "$r" = "(13, 1, 1048, 1, 262144)" ] || fail "persistent event log header: $r"
X sh -c "nvme persistent-event-log /dev/nvme0 -a 1 >/dev/null && nvme persistent-event-log /dev/nvme0 -a 1" >/dev/null &&
	fail "a second context was established"
grep -q "Command Sequence Error" "$dir/err" || fail "second context: $(cat "$dir/err")"
X sh -c "nvme persistent-event-log /dev/nvme0 -a 1 >/dev/null && nvme persistent-event-log /dev/nvme0 -a 0 -l 1048 -b >'$dir/pel.bin' && nvme persistent-event-log /dev/nvme0 -a 2 && nvme persistent-event-log /dev/nvme0 -a 1 >/dev/null" >/dev/null ||
	fail "establish, read, release, establish: $(cat "$dir/err")"
python3 -c "import struct; b=open('$dir/pel.bin','rb').read(); assert len(b) == 1048 and b[512] == 1 and struct.unpack_from('<H', b, 512 + 22)[0] == 512, b[512:540]" ||
	fail "the event: a SMART / Health snapshot of 512 bytes"
refused "Command Sequence Error" nvme persistent-event-log /dev/nvme0 -a 0 -l 1048
refused "Invalid Field" nvme persistent-event-log /dev/nvme0 -a 3 -l 1048

step "endurance group log: group 1, no other"
X nvme endurance-log /dev/nvme0 -g 1 -o json >"$dir/eg.json" || fail "endurance-log: $(cat "$dir/err")"
r=$(J '(d["avl_spare"], d["avl_spare_threshold"], int(d["host_write_cmds"]) > 0)' <"$dir/eg.json")
[ "$r" = "(100, 10, True)" ] || fail "endurance-log: $r"
refused "Invalid Field" nvme endurance-log /dev/nvme0 -g 2
X nvme list-endgrp /dev/nvme0 >"$dir/out" || fail "list-endgrp: $(cat "$dir/err")"
grep -q "num of endurance group ids: 1" "$dir/out" || fail "list-endgrp: $(cat "$dir/out")"
r=$(X nvme id-ns /dev/nvme0n1 -o json | J 'd["endgid"]')
[ "$r" = 1 ] || fail "id-ns endgid $r"

step "Identify for an LBA format index; Invalid Field for what is not there"
r=$(X nvme id-ns-lba /dev/nvme0n1 --lba-format-index=5 -o json | J '(d["nlbaf"], d["lbafs"][5])')
[ "$r" = "(13, {'ms': 8, 'ds': 12, 'rp': 0})" ] || fail "id-ns-lba 5: $r"
refused "Invalid Field" nvme id-ns-lba /dev/nvme0n1 --lba-format-index=14
X nvme nvm-id-ns-lba-format /dev/nvme0n1 --lba-format-index=2 >/dev/null || fail "nvm-id-ns-lba-format: $(cat "$dir/err")"
for c in id-ns-granularity id-uuid id-domain primary-ctrl-caps list-secondary; do
	refused "Invalid Field" nvme $c /dev/nvme0
done
echo "exec_nvme_cli_logs: all checks passed"
