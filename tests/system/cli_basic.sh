#!/usr/bin/env bash
# The ucmd CLI end to end on a fresh file-backed controller directory:
# the main job, identify/log output (normal and JSON), a write/read round
# trip that survives a restart, and bad input giving clear errors.
source "$(dirname "$0")/lib/common.sh"
dir=$T
export UCMD_CTRL="$dir/ctrl"

step "run (creates the controller)"
out=$("$UCMD" run --size 4194304)
echo "$out" | tail -5
grep -q "all 4 MiB written, verified and read back" <<<"$out" || fail "run did not verify"
[ -f "$UCMD_CTRL/ctrl.json" ] || fail "no controller config in $UCMD_CTRL"

step "list / id-ctrl / id-ns / smart-log as JSON (-o after the command, as nvme-cli)"
"$UCMD" list -o json | python3 -c '
import json,sys; d=json.load(sys.stdin)
# nvme-cli list layout: one entry per namespace
n = d["Devices"][0]
assert n["DevicePath"] == "/dev/nvme0n1" and n["NameSpace"] == 1, d
assert n["SectorSize"] == 512 and n["MaximumLBA"] == 2097152, d'
"$UCMD" id-ctrl -o json | python3 -c '
import json,sys; d=json.load(sys.stdin); assert d["nn"] >= 1 and d["ver"] >= 0x10400, d'
"$UCMD" id-ns -o json | python3 -c '
import json,sys; d=json.load(sys.stdin); assert d["nsze"] == 2097152 and len(d["lbafs"]) == d["nlbaf"] + 1, d'
# the old global position still sets the default
"$UCMD" --output-format json id-ctrl | python3 -c 'import json,sys; json.load(sys.stdin)'
[ "$("$UCMD" id-ctrl -b | wc -c)" = 4096 ] || fail "id-ctrl -b is not the 4096-byte structure"
"$UCMD" smart-log --output-format=json | python3 -c '
import json,sys; d=json.load(sys.stdin)
# the 4 MiB job wrote 8192 sectors: 8.192 thousand-sector data units, rounded up
# (128-bit counters are decimal strings, as nvme-cli prints them)
assert int(d["data_units_written"]) >= 9 and int(d["host_write_commands"]) >= 32, d'

step "write then read back in a new process"
head -c 4096 /dev/urandom > "$dir/in.bin"
"$UCMD" write -s 100 -c 7 -d "$dir/in.bin"
"$UCMD" flush
"$UCMD" read -s 100 -c 7 -d "$dir/out.bin"
cmp "$dir/in.bin" "$dir/out.bin" || fail "read back differs"

step "passthru: Identify through admin-passthru, Read through io-passthru"
"$UCMD" admin-passthru -o 6 --cdw10=1 --data-len=4096 --read --raw-binary > "$dir/id.bin"
[ "$(stat -c %s "$dir/id.bin")" = 4096 ] || fail "identify size"
"$UCMD" io-passthru --opcode=2 --cdw10=100 --cdw12=7 --data-len=4096 --read --raw-binary > "$dir/pt.bin"
cmp "$dir/in.bin" "$dir/pt.bin" || fail "io-passthru read differs"

step "errors: NVMe status names and errnos, non-zero exits"
if "$UCMD" read -s 3000000 -c 0 -d "$dir/x" 2>"$dir/err"; then fail "read past the end succeeded"; fi
grep -qi "LBA Out of Range" "$dir/err" || { cat "$dir/err"; fail "no status name"; }
if "$UCMD" io-passthru --opcode=0x7e 2>"$dir/err"; then fail "invalid opcode succeeded"; fi
grep -qi "Invalid Command Opcode" "$dir/err" || { cat "$dir/err"; fail "no status name for opcode"; }
if "$UCMD" read -s xyz 2>/dev/null; then fail "bad number accepted"; fi
if "$UCMD" nosuchcmd 2>/dev/null; then fail "unknown command accepted"; fi
if "$UCMD" --output-format yaml list 2>/dev/null; then fail "bad format accepted"; fi
if "$UCMD" --namespace-id 9 id-ns 2>"$dir/err"; then fail "missing namespace accepted"; fi
if "$UCMD" id-ns -n 9 2>"$dir/err"; then fail "missing namespace accepted (-n after)"; fi
echo "cli_basic: all checks passed"
