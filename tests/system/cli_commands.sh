#!/usr/bin/env bash
# Every nvme-cli style command of the CLI on the embedded controller, with
# the data or status each must produce.
source "$(dirname "$0")/lib/common.sh"
dir=$T
export UCMD_CTRL="$dir/ctrl"
expect_status() {	# NAME-PATTERN COMMAND...
	local pat=$1; shift
	if "$@" 2>"$dir/err" >/dev/null; then fail "$* succeeded, expected $pat"; fi
	grep -qi "$pat" "$dir/err" || { cat "$dir/err"; fail "$*: expected '$pat'"; }
}

head -c 4096 /dev/urandom > "$dir/a.bin"
head -c 4096 /dev/zero > "$dir/zero.bin"
"$UCMD" write -s 0 -c 7 -d "$dir/a.bin" 2>/dev/null

# nvme-cli's JSON layouts, then the raw structures (-b) apart from any printer
step "ns-descs, effects-log, error-log"
"$UCMD" ns-descs -o json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert {"nguid", "eui64", "uuid"} & {x["type"] for x in d["ns-descs"]}, d'
"$UCMD" effects-log -o json | python3 -c '
import json,sys; d=json.load(sys.stdin)
io, adm = d[0]["io_cmd_set"], d[0]["admin_cmd_set"]   # nvme-cli: a list of pages
assert io["IOCS_1 (Write)"] & 0x3 == 0x3, io   # write: CSUPP | LBCC
assert io["IOCS_2 (Read)"] & 0x1, io           # read supported
assert adm["ACS_6 (Identify)"] & 0x1, adm      # identify supported'
"$UCMD" error-log -o json | python3 -c 'import json,sys; json.load(sys.stdin)'

"$UCMD" ns-descs -b | python3 -c '
import sys; b=sys.stdin.buffer.read(); assert len(b) == 4096 and b[0] in (1, 2, 3), b[:8]'
"$UCMD" effects-log -b > "$dir/effects.bin"
"$UCMD" get-log -i 5 -l 4096 -b > "$dir/effects2.bin"
cmp "$dir/effects.bin" "$dir/effects2.bin" || fail "effects-log -b and get-log -i 5 differ"
python3 - "$dir/effects.bin" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
acs = struct.unpack_from("<256I", b, 0); iocs = struct.unpack_from("<256I", b, 1024)
assert iocs[1] & 3 == 3, hex(iocs[1])   # write: CSUPP | LBCC
assert iocs[2] & 1 and acs[6] & 1       # read, identify supported
PY
[ "$("$UCMD" error-log -e 4 -b | wc -c)" = 256 ] || fail "error-log -e 4 -b: not 4 entries"

step "get-feature / set-feature (temperature threshold)"
# the value as the completion's dword 0, through admin-passthru (no printer)
feat() { "$UCMD" admin-passthru -o 0xa --cdw10="$1" 2>&1 >/dev/null |
	sed -n 's/^NVMe command result:\([0-9a-f]*\)$/\1/p'; }
# the device stays powered between CLI calls (docs/store.md, "Power cycles"):
# a value set without Save is current until a power cycle or reset, and the
# saved one (SEL 2) is still the default
o=$("$UCMD" set-feature -f 4 -v 350) && grep -q "value:0x0000015e" <<<"$o" || fail "set-feature -v output"
[ "$(feat 4)" = 0000015e ] || fail "unsaved set-feature not current in the next CLI call: $(feat 4)"
[ "$(feat $((4 | 2 << 8)))" = 00000157 ] || fail "unsaved set-feature changed the saved value: $(feat $((4 | 2 << 8)))"
"$UCMD" set-feature -f 4 --value=350 --save >/dev/null
[ "$(feat 4)" = 0000015e ] || fail "saved set-feature lost: $(feat 4)"
[ "$(feat $((4 | 2 << 8)))" = 0000015e ] || fail "saved value (sel 2): $(feat $((4 | 2 << 8)))"
"$UCMD" get-feature -f 4 -s 2 >/dev/null || fail "get-feature -s 2"
"$UCMD" get-feature -n 1 --feature-id=4 >/dev/null || fail "get-feature -n 1"
expect_status "Invalid Field" "$UCMD" get-feature -f 0xf0

step "compare: match and mismatch"
"$UCMD" compare -s 0 -c 7 -d "$dir/a.bin" 2>/dev/null
expect_status "Compare Failure" "$UCMD" compare -s 0 -c 7 -d "$dir/zero.bin"

step "write-zeroes, dsm deallocate: the range reads back as zeros"
"$UCMD" write -s 100 -c 7 -d "$dir/a.bin" 2>/dev/null
"$UCMD" write-zeroes -s 100 -c 3 --deac 2>/dev/null
"$UCMD" read -s 100 -c 7 -d "$dir/r.bin"
cmp -n 2048 "$dir/r.bin" "$dir/zero.bin" || fail "write-zeroes left data"
cmp -i 2048 "$dir/r.bin" "$dir/a.bin" || fail "write-zeroes touched the next block"
"$UCMD" write -s 200 -c 7 -d "$dir/a.bin" 2>/dev/null
"$UCMD" dsm --slbs=200,206 --blocks=2,2 --ad 2>/dev/null
"$UCMD" read -s 200 -c 7 -d "$dir/r.bin"
cmp -n 1024 "$dir/r.bin" "$dir/zero.bin" || fail "dsm range 1 not zero"
cmp -i 1024:1024 -n 2048 "$dir/r.bin" "$dir/a.bin" || fail "dsm touched blocks between ranges"
cmp -i 3072 "$dir/r.bin" "$dir/zero.bin" || fail "dsm range 2 not zero"

step "write-uncor: reads fail until overwritten; verify sees it too"
"$UCMD" write-uncor -s 300 -c 0 2>/dev/null
expect_status "Unrecovered Read Error" "$UCMD" read -s 300 -c 0 -d "$dir/r.bin"
expect_status "Unrecovered Read Error" "$UCMD" verify -s 300 -c 0
"$UCMD" write -s 300 -c 0 -d "$dir/a.bin" 2>/dev/null
"$UCMD" read -s 300 -c 0 -d "$dir/r.bin"
"$UCMD" verify -s 0 -c 7 2>/dev/null

step "copy: two source ranges to a destination"
"$UCMD" copy --sdlba=400 --slbs=0,4 --blocks=1,1 2>/dev/null
"$UCMD" read -s 400 -c 3 -d "$dir/r.bin"
cmp -n 1024 "$dir/r.bin" "$dir/a.bin" || fail "copy range 1"
cmp -n 1024 "$dir/r.bin" "$dir/a.bin" 1024 2048 || fail "copy range 2"

step "namespace management: create, attach, use, detach, delete"
nsid=$("$UCMD" create-ns --nsze 2048 --flbas 4 | sed -n 's/.*nsid:\([0-9]*\).*/\1/p')
[ -n "$nsid" ] || fail "create-ns gave no nsid"
expect_status "not active" "$UCMD" id-ns -n "$nsid"
"$UCMD" id-ns -n "$nsid" --force -b | python3 -c '
import struct,sys; b=sys.stdin.buffer.read(); assert struct.unpack_from("<Q", b)[0] == 2048'
"$UCMD" attach-ns -n "$nsid" >/dev/null
"$UCMD" id-ns -n "$nsid" -o json | python3 -c '
import json,sys; d=json.load(sys.stdin); assert d["nsze"] == 2048 and d["flbas"] & 0xf == 4, d'
"$UCMD" --output-format json --namespace-id "$nsid" id-ns | python3 -c '
import json,sys; d=json.load(sys.stdin); assert d["nsze"] == 2048, d'
head -c 4096 /dev/urandom > "$dir/b.bin"
"$UCMD" write -n "$nsid" -s 1 -c 0 -d "$dir/b.bin" 2>/dev/null
"$UCMD" read --namespace-id="$nsid" -s 1 -c 0 -d "$dir/r.bin"
cmp "$dir/r.bin" "$dir/b.bin" || fail "4 KiB namespace round trip"
"$UCMD" detach-ns -n "$nsid" >/dev/null
"$UCMD" delete-ns -n "$nsid" >/dev/null
expect_status "Invalid" "$UCMD" delete-ns -n "$nsid"

step "format: a new LBA format, data erased (--force: no delay)"
"$UCMD" format --lbaf 4 --ses 1 --force >/dev/null
"$UCMD" id-ns -o json | python3 -c '
import json,sys; d=json.load(sys.stdin); assert d["flbas"] & 0xf == 4, d'
"$UCMD" read -s 0 -c 0 -d "$dir/r.bin"
cmp "$dir/r.bin" "$dir/zero.bin" || fail "format did not erase"
"$UCMD" format -l 0 --force >/dev/null

step "bad arguments: clear errors naming the problem, exit 2"
for args in "dsm --slbs=1,2 --blocks=1" "copy --slbs=1" "get-feature" "set-feature -f 4" \
	    "format --lbaf 99" "create-ns" "write-zeroes -c 70000" "error-log --log-entries 0" \
	    "delete-ns" "get-log -i 2" "get-log -i 2 -l 6" "sanitize" "sanitize -a 7" \
	    "sanitize -a 2 --owpass 3" "fw-download" "fw-commit -s 9" "device-self-test" \
	    "io-passthru -o 2 -r -w"; do
	rc=0
	# shellcheck disable=SC2086
	"$UCMD" $args >/dev/null 2>"$dir/err" || rc=$?
	[ "$rc" = 2 ] || { cat "$dir/err"; fail "'$args': exit $rc, not 2"; }
	[ -s "$dir/err" ] || fail "'$args': no message"
done

step "deleting every namespace leaves none (no new ns1 appears)"
"$UCMD" detach-ns -n 1 >/dev/null
"$UCMD" delete-ns -n 1 >/dev/null
expect_status "not active\|Invalid" "$UCMD" id-ns -n 1
"$UCMD" list -o json | python3 -c '
import json,sys; t=json.dumps(json.load(sys.stdin)); assert "nvme0n1" not in t, t'
expect_status "not active\|Invalid" "$UCMD" id-ns -n 1
echo "cli_commands: all checks passed"
