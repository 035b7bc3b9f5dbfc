#!/usr/bin/env bash
# The maintenance commands end to end on the embedded controller: sanitize
# (block erase, overwrite with a pattern, crypto erase) with the sanitize
# status log, device self-test (short, extended, abort) with its log,
# firmware download / commit with the firmware log and activation at reset,
# the controller reset, and get-log of the same pages. The logs are checked
# in their raw form (-b), by the spec's offsets, so that no printer's layout
# matters here.
source "$(dirname "$0")/lib/common.sh"
dir=$T
export UCMD_CTRL="$dir/ctrl"
unset UCMD_DAEMON
# wait_for CMD...: until CMD succeeds (an event; bounded so a hang fails)
wait_for() {
	for _ in $(seq 600); do "$@" && return 0; sleep 0.05; done
	fail "never true: $*"
}
sstat_done() {	# the sanitize status log says: most recent sanitize completed successfully
	"$UCMD" sanitize-log -b | python3 -c '
import struct,sys; b=sys.stdin.buffer.read(); sys.exit(0 if struct.unpack_from("<H", b, 2)[0] & 7 == 1 else 1)'
}
dst_idle() {	# no self-test in progress (byte 0 of log 06h)
	"$UCMD" self-test-log -o binary | python3 -c 'import sys; sys.exit(sys.stdin.buffer.read()[0] != 0)'
}

# 16 MiB, not the default 1 GiB: sanitize and the extended self-test go
# over every block (1 GiB took 10-40 s of overwrite, against wait_for's 30 s)
"$UCMD" create-ctrl --nsze 32768 >/dev/null
head -c 4096 /dev/urandom > "$dir/a.bin"
"$UCMD" write -s 0 -c 7 -d "$dir/a.bin" 2>/dev/null

step "sanitize: block erase, the status log, the data gone"
"$UCMD" sanitize -a start-block-erase
wait_for sstat_done
"$UCMD" read -s 0 -c 7 -d "$dir/r.bin"
cmp -s "$dir/a.bin" "$dir/r.bin" && fail "block erase left the data"
"$UCMD" sanitize-log -b | cmp - <("$UCMD" get-log -i 0x81 -l 512 -b) || fail "get-log 81h differs"

step "sanitize: overwrite with a pattern"
"$UCMD" write -s 0 -c 7 -d "$dir/a.bin" 2>/dev/null
"$UCMD" sanitize -a 3 --owpass=1 --ovrpat=0xa5a5a5a5
wait_for sstat_done
"$UCMD" read -s 0 -c 7 -d "$dir/r.bin"
python3 -c 'import sys; b=open(sys.argv[1],"rb").read(); assert b == b"\xa5" * len(b), b[:16]' \
	"$dir/r.bin" || fail "overwrite did not write the pattern"

step "sanitize: crypto erase"
"$UCMD" write -s 0 -c 7 -d "$dir/a.bin" 2>/dev/null
"$UCMD" sanitize --sanact=4
wait_for sstat_done
"$UCMD" read -s 0 -c 7 -d "$dir/r.bin"
cmp -s "$dir/a.bin" "$dir/r.bin" && fail "crypto erase left the data"

step "device self-test: short runs to a result; extended is aborted"
o=$("$UCMD" device-self-test -s 1) && grep -q "Short Device self-test started" <<<"$o" || fail "short"
wait_for dst_idle
"$UCMD" self-test-log -o binary | python3 -c '
import sys; b=sys.stdin.buffer.read()
assert len(b) == 564, len(b)
st = b[4]   # newest result: code in 7:4, result in 3:0
assert st >> 4 == 1 and st & 0xf == 0, hex(st)' || fail "short self-test result"
o=$("$UCMD" device-self-test -s 2) && grep -q "Extended Device self-test started" <<<"$o" || fail "extended"
o=$("$UCMD" device-self-test -s 0xf) && grep -q "Aborting" <<<"$o" || fail "abort"
wait_for dst_idle
"$UCMD" self-test-log -o binary | python3 -c '
import sys; b=sys.stdin.buffer.read(); st=b[4]
assert st >> 4 == 2 and st & 0xf == 1, hex(st)   # extended, aborted by a DST command' ||
	fail "aborted self-test result"

step "firmware: download, commit to slot 2, active after a reset"
# an image the controller takes (docs/compat.md): its header, then 16 KiB in all
{ printf 'UCMDFW012.0     \0\0\0\0'; head -c 16364 /dev/urandom; } > "$dir/fw.bin"
o=$("$UCMD" fw-download --fw "$dir/fw.bin" --xfer 4096) && grep -q "success" <<<"$o" || fail "fw-download"
o=$("$UCMD" fw-commit --slot 2 --action 1) && grep -q "Success committing" <<<"$o" || fail "fw-commit"
"$UCMD" reset || fail "reset"
"$UCMD" fw-log -b | python3 -c '
import sys; b=sys.stdin.buffer.read()
assert len(b) == 512 and b[0] & 7 == 2, b[:1]   # AFI: slot 2 active
assert b[16:24] == b"2.0     ", b[8:24]          # FRS2: the revision in the image' || fail "fw-log after reset"
"$UCMD" fw-log -b | cmp - <("$UCMD" get-log -i 3 -l 512 -b) || fail "get-log 03h differs"

step "show-regs: the register file of the embedded controller"
"$UCMD" show-regs -o json | python3 -c '
import json,sys; d=json.load(sys.stdin)
assert d["vs"] == 0x10400 and d["csts"] & 1 and d["cc"] & 1, d   # NVMe 1.4, enabled and ready
assert d["cap"] & 0xffff == 0x3ff, hex(d["cap"])                 # CAP.MQES: 1024 entries'
o=$("$UCMD" show-regs) && grep -q "^version : 10400" <<<"$o" || fail "show-regs text"

step "bad input: clear errors"
printf 'abc' > "$dir/odd.bin"
rc=0; "$UCMD" fw-download -f "$dir/odd.bin" 2>"$dir/err" || rc=$?
[ "$rc" = 1 ] && grep -q "invalid size 3" "$dir/err" || fail "odd firmware size: exit $rc"
rc=0; "$UCMD" fw-download -f "$dir/nonexistent" 2>"$dir/err" || rc=$?
[ "$rc" = 1 ] && grep -q "No such file" "$dir/err" || fail "missing firmware file: exit $rc"
echo "cli_maint: all checks passed"
