#!/usr/bin/env bash
# Debian's nvme-cli, unmodified, under `ucmd exec` on a fresh controller
# directory: the controller features of docs/compat.md as nvme-cli drives them,
# one process per command as a user types them. Firmware download, commit,
# the slot log and activation at `nvme reset`; device self-test, its log and
# abort; sanitize and its log, the data it leaves; the error log and its
# count across calls; a run of calls is not a run of power cycles.
source "$(dirname "$0")/lib/common.sh"
dir=$T
ctrl="$dir/ctrl"
[ -x "$UCMD" ] || fail "no $UCMD: build first"
need_tools nvme python3

X() { timeout 120 "$UCMD" exec --ctrl "$ctrl" -- "$@" 2>"$dir/err"; }
# jq-like: python3 expression over the JSON document d on stdin, printed
J() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

step "a fresh controller"
"$UCMD" --ctrl "$ctrl" create-ctrl >/dev/null || fail "ucmd create-ctrl $ctrl"
pc0=$(X nvme smart-log /dev/nvme0 -o json | J 'int(d["power_cycles"])')

step "firmware: download, commit to slot 2 for the next reset, nvme reset"
{ printf 'UCMDFW012.0     \0\0\0\0'; head -c 6000 /dev/zero; } >"$dir/fw.bin"
X nvme fw-download /dev/nvme0 --fw="$dir/fw.bin" >/dev/null || fail "fw-download: $(cat "$dir/err")"
X nvme fw-commit /dev/nvme0 --slot=2 --action=1 >/dev/null || fail "fw-commit: $(cat "$dir/err")"
afi=$(X nvme fw-log /dev/nvme0 -o json | J 'd["nvme0"]["Active Firmware Slot (afi)"]')
[ "$afi" = 33 ] || fail "fw-log afi $afi after commit, expected 0x21 (slot 1 active, slot 2 next)"
X nvme reset /dev/nvme0 || fail "nvme reset: $(cat "$dir/err")"
afi=$(X nvme fw-log /dev/nvme0 -o json | J 'd["nvme0"]["Active Firmware Slot (afi)"]')
[ "$afi" = 2 ] || fail "fw-log afi $afi after the reset, expected 2"
fr=$(X nvme id-ctrl /dev/nvme0 -o json | J 'd["fr"].strip()')
[ "$fr" = 2.0 ] || fail "id-ctrl fr '$fr' after activation, expected 2.0"
if X nvme fw-commit /dev/nvme0 --slot=1 --action=0 >/dev/null; then fail "slot 1 is read-only"; fi
grep -q "Invalid Firmware Slot" "$dir/err" || fail "fw-commit slot 1: $(cat "$dir/err")"
if X nvme fw-commit /dev/nvme0 --slot=3 --action=2 >/dev/null; then fail "slot 3 is empty"; fi
grep -q "Invalid Firmware Image" "$dir/err" || fail "fw-commit empty slot: $(cat "$dir/err")"

step "device self-test: short on namespace 1, until done"
X nvme device-self-test /dev/nvme0 -n 1 -s 1 >/dev/null || fail "device-self-test: $(cat "$dir/err")"
for i in $(seq 1 100); do
	op=$(X nvme self-test-log /dev/nvme0 -o json | J 'd["Current Device Self-Test Operation"]')
	[ "$op" = 0 ] && break
	sleep 0.2
done
[ "$op" = 0 ] || fail "the short self-test never ended"
X nvme self-test-log /dev/nvme0 -o json >"$dir/st.json"
r=$(J 'd["List of Valid Reports"][0]' <"$dir/st.json")
python3 -c "import json; r=json.load(open('$dir/st.json'))['List of Valid Reports'][0]; assert (r['Self test code'], r['Self test result'], r['Namespace Identifier']) == (1, 0, 1), r" ||
	fail "self-test result: $r"

step "device self-test: extended, a second start refused, abort"
X nvme device-self-test /dev/nvme0 -s 2 >/dev/null || fail "device-self-test -s 2: $(cat "$dir/err")"
if X nvme device-self-test /dev/nvme0 -s 1 >/dev/null; then fail "a second self-test started"; fi
grep -q "Device Self-test In Progress" "$dir/err" || fail "second start: $(cat "$dir/err")"
X nvme device-self-test /dev/nvme0 -s 0xf >/dev/null || fail "abort: $(cat "$dir/err")"
X nvme self-test-log /dev/nvme0 -o json >"$dir/st.json"
python3 -c "import json; d=json.load(open('$dir/st.json')); r=d['List of Valid Reports'][0]; assert d['Current Device Self-Test Operation'] == 0 and (r['Self test code'], r['Self test result']) == (2, 1), d" ||
	fail "after the abort: $(head -c 400 "$dir/st.json")"

step "sanitize: block erase, the log, zeros after it"
head -c 4096 /dev/urandom >"$dir/pat.bin"
X nvme write /dev/nvme0n1 -s 0 -c 7 -z 4096 -d "$dir/pat.bin" >/dev/null || fail "write: $(cat "$dir/err")"
X nvme sanitize /dev/nvme0 -a 2 >/dev/null || fail "sanitize: $(cat "$dir/err")"
for i in $(seq 1 100); do
	st=$(X nvme sanitize-log /dev/nvme0 -o json | J 'd["nvme0"]["sstat"]["status"][:3]')
	[ "$st" != "(2)" ] && break
done
[ "$st" = "(1)" ] || fail "sanitize status $st, expected (1) completed"
X nvme sanitize-log /dev/nvme0 -o json >"$dir/san.json"
python3 -c "import json; d=json.load(open('$dir/san.json'))['nvme0']; assert d['sprog'] == 65535 and d['cdw10_info'] == 2 and d['sstat']['global_erased'] == 1, d" ||
	fail "sanitize-log: $(cat "$dir/san.json")"
X nvme read /dev/nvme0n1 -s 0 -c 7 -z 4096 -d "$dir/r.bin" >/dev/null || fail "read: $(cat "$dir/err")"
cmp -s "$dir/r.bin" <(head -c 4096 /dev/zero) || fail "the data outlived the block erase"

step "error log: kept across calls, counted"
n0=$(X nvme smart-log /dev/nvme0 -o json | J 'int(d["num_err_log_entries"])')
if X nvme admin-passthru /dev/nvme0 --opcode=0xc7 >/dev/null; then fail "opcode c7h ran"; fi
n1=$(X nvme smart-log /dev/nvme0 -o json | J 'int(d["num_err_log_entries"])')
[ "$n1" = $((n0 + 1)) ] || fail "num_err_log_entries $n0 -> $n1, expected one more"
X nvme error-log /dev/nvme0 -e 1 -o json >"$dir/el.json"
python3 -c "import json; e=json.load(open('$dir/el.json'))['errors'][0]; assert e['error_count'] == $n1 and e['status_field'] & 0x7ff == 1, e" ||
	fail "error-log: $(head -c 400 "$dir/el.json")"

step "power cycles: none for this run of calls"
pc1=$(X nvme smart-log /dev/nvme0 -o json | J 'int(d["power_cycles"])')
[ "$pc1" = "$pc0" ] || fail "power_cycles went from $pc0 to $pc1 over CLI calls"
echo "exec_nvme_cli_ctrl: all checks passed"
