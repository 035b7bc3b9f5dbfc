#!/usr/bin/env bash
# Every nvme-cli style command of the CLI on the embedded controller, with
# the data or status each must produce.
set -euo pipefail
B=${UCMD_BUILD:-build}
UCMD="$(pwd)/$B/tools/ucmd"
dir=$(mktemp -d /var/tmp/ucmd-cmds.XXXXXX)
trap 'rm -rf "$dir"' EXIT
export UCMD_CTRL="$dir/ctrl"
fail() { echo "FAIL: $*"; exit 1; }
step() { echo "--- $*"; }
J() { "$UCMD" --output-format json "$@"; }
expect_status() {	# NAME-PATTERN COMMAND...
	local pat=$1; shift
	if "$@" 2>"$dir/err" >/dev/null; then fail "$* succeeded, expected $pat"; fi
	grep -qi "$pat" "$dir/err" || { cat "$dir/err"; fail "$*: expected '$pat'"; }
}

head -c 4096 /dev/urandom > "$dir/a.bin"
head -c 4096 /dev/zero > "$dir/zero.bin"
"$UCMD" write -s 0 -c 7 -d "$dir/a.bin" 2>/dev/null

step "ns-descs, effects-log, error-log"
J ns-descs | python3 -c 'import json,sys; d=json.load(sys.stdin); assert {"nguid", "eui64", "uuid"} & {x["type"] for x in d["ns-descs"]}, d'
J effects-log | python3 -c '
import json,sys; d=json.load(sys.stdin)
io, adm = d[0]["io_cmd_set"], d[0]["admin_cmd_set"]   # nvme-cli: a list of pages
assert io["IOCS_1 (Write)"] & 0x3 == 0x3, io   # write: CSUPP | LBCC
assert io["IOCS_2 (Read)"] & 0x1, io           # read supported
assert adm["ACS_6 (Identify)"] & 0x1, adm      # identify supported'
J error-log | python3 -c 'import json,sys; json.load(sys.stdin)'

step "get-feature / set-feature (temperature threshold)"
# each CLI run is a power cycle: only a saved value outlives it
J set-feature -f 4 -V 350 | python3 -c 'import json,sys; json.load(sys.stdin)'
J get-feature -f 4 | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["value"] & 0xffff == 343, d'
J set-feature -f 4 -V 350 --save | python3 -c 'import json,sys; json.load(sys.stdin)'
J get-feature -f 4 | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["value"] & 0xffff == 350, d'
J get-feature -f 4 -s 2 | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["value"] & 0xffff == 350, d'
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
expect_status "not active" "$UCMD" --namespace-id "$nsid" id-ns
"$UCMD" --namespace-id "$nsid" attach-ns >/dev/null
"$UCMD" --output-format json --namespace-id "$nsid" id-ns | python3 -c '
import json,sys; d=json.load(sys.stdin); assert d["nsze"] == 2048 and d["flbas"] & 0xf == 4, d'
head -c 4096 /dev/urandom > "$dir/b.bin"
"$UCMD" --namespace-id "$nsid" write -s 1 -c 0 -d "$dir/b.bin" 2>/dev/null
"$UCMD" --namespace-id "$nsid" read -s 1 -c 0 -d "$dir/r.bin"
cmp "$dir/r.bin" "$dir/b.bin" || fail "4 KiB namespace round trip"
"$UCMD" --namespace-id "$nsid" detach-ns >/dev/null
"$UCMD" --namespace-id "$nsid" delete-ns >/dev/null
expect_status "Invalid" "$UCMD" --namespace-id "$nsid" delete-ns

step "format: a new LBA format, data erased"
"$UCMD" format --lbaf 4 --ses 1 >/dev/null
"$UCMD" --output-format json id-ns | python3 -c '
import json,sys; d=json.load(sys.stdin); assert d["flbas"] & 0xf == 4, d'
"$UCMD" read -s 0 -c 0 -d "$dir/r.bin"
cmp "$dir/r.bin" "$dir/zero.bin" || fail "format did not erase"
"$UCMD" format --lbaf 0 >/dev/null

step "bad arguments: clear errors, exit 1 or 2"
for args in "dsm --slbs=1,2 --blocks=1" "copy --slbs=1" "get-feature" "set-feature -f 4" \
	    "format --lbaf 99" "create-ns" "write-zeroes -c 70000" "error-log --log-entries 0"; do
	# shellcheck disable=SC2086
	if "$UCMD" $args 2>/dev/null >/dev/null; then fail "accepted: $args"; fi
done
echo "cli_commands: all checks passed"
