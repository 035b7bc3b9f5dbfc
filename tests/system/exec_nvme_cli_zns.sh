#!/usr/bin/env bash
# Debian's nvme-cli `nvme zns ...`, unmodified, under `ucmd exec` against a
# zoned controller, and `ucmd zns ...` on the same controller: after every
# step both must print the same (text and -o json), and the zone state must
# be what the step did. Every step runs; the failures are listed at the end.
# shellcheck source=tests/system/lib/common.sh
source "$(dirname "$0")/lib/common.sh"
dir=$T
ctrl="$dir/ctrl"
failed=()
bad() { echo "  FAIL: $*"; failed+=("$*"); }
[ -x "$UCMD" ] || fail "no $UCMD: build first"
need_tools nvme timeout python3 diff cmp

N() { timeout 120 "$UCMD" exec --ctrl "$ctrl" -- nvme zns "$@" 2>"$dir/err"; }
U() { timeout 60 "$UCMD" --ctrl "$ctrl" zns "$@" 2>"$dir/err"; }
# the same command through both; $1 names the step, the rest is the command
# with DEV (CDEV) where nvme-cli wants the namespace's (controller's) device
same() {
	local what=$1 sub=$2; shift 2
	local nargs=() uargs=()
	for a in "$@"; do
		case $a in
		DEV) nargs+=(/dev/ng0n1) ;;
		CDEV) nargs+=(/dev/nvme0) ;;
		*) nargs+=("$a"); uargs+=("$a") ;;
		esac
	done
	step "$what: nvme zns $sub ${nargs[*]}"
	N "$sub" "${nargs[@]}" >"$dir/n.out" || { bad "$what: nvme zns $sub failed"; sed 's/^/    /' "$dir/err"; return 0; }
	U "$sub" "${uargs[@]}" >"$dir/u.out" || { bad "$what: ucmd zns $sub failed"; sed 's/^/    /' "$dir/err"; return 0; }
	diff -u "$dir/n.out" "$dir/u.out" >"$dir/diff" || { bad "$what: outputs differ"; head -20 "$dir/diff" | sed 's/^/    /'; }
	return 0
}
# zone ZID's state and write pointer as nvme-cli's JSON says
zone() {
	N report-zones /dev/ng0n1 -o json >"$dir/rep.json" || { echo "?"; return 0; }
	python3 -c 'import json,sys; z=json.load(open(sys.argv[1]))["zone_list"][int(sys.argv[2])]; print(z["state"], z["wp"])' "$dir/rep.json" "$1"
}
expect_zone() {
	local got; got=$(zone "$1")
	[ "$got" = "$2" ] || bad "zone $1: '$got', expected '$2'"
}

step "create-ctrl refuses what cannot be: usage errors (2), nothing created"
for bad_args in "--zone-size=1M" "--zns --nr-conv=1" "--zns --zone-size=1000" \
	"--zns --zone-size=64K --zone-cap=128K" "--zns --max-open=4 --max-active=2" \
	"--zns --zd-ext-size=100" "--zns --zone-size=2G"; do
	rc=0
	# shellcheck disable=SC2086
	"$UCMD" --ctrl "$dir/bad" create-ctrl $bad_args >/dev/null 2>&1 || rc=$?
	[ "$rc" = 2 ] || bad "create-ctrl $bad_args: exit $rc, expected 2"
	[ ! -e "$dir/bad/ctrl.json" ] || bad "create-ctrl $bad_args made a controller"
done

step "a zoned controller: 6 zones of 96 KiB (not a power of two), 80 KiB writable"
"$UCMD" --ctrl "$ctrl" create-ctrl --zns --nsze=1152 --zone-size=96K --zone-cap=80K \
	--max-open=2 --max-active=3 --zd-ext-size=64 >/dev/null || fail "create-ctrl --zns"
head -c 65536 /dev/urandom >"$dir/data"

same "identify controller" id-ctrl CDEV
same "identify controller json" id-ctrl CDEV -o json
same "identify namespace" id-ns DEV
same "identify namespace human" id-ns DEV -H
same "identify namespace json" id-ns DEV -o json
same "report, empty" report-zones DEV
same "report json, empty" report-zones DEV -o json

step "appends through nvme-cli land at the write pointer"
out=$(N zone-append /dev/ng0n1 -s 192 -z 4096 -d "$dir/data") || bad "nvme zns zone-append failed"
[ "$out" = "Success appended data to LBA c0" ] || bad "first append: '$out'"
out=$(U zone-append -s 192 -z 4096 -d "$dir/data") || bad "ucmd zns zone-append failed"
[ "$out" = "Success appended data to LBA c8" ] || bad "second append: '$out'"
# (each exec is a new power cycle of the controller: the zone comes back Closed)
expect_zone 1 "CLOSED 208"
same "report after appends" report-zones DEV
same "report verbose" report-zones DEV -v
same "report json" report-zones DEV -o json
same "report of 2 from zone 1" report-zones DEV -s 192 -d 2
same "report closed only" report-zones DEV -S 4 -o json

step "the data appended is where the LBA says"
"$UCMD" --ctrl "$ctrl" read -s 200 -c 7 -z 4096 -d "$dir/back" 2>/dev/null || bad "read back"
cmp -s -n 4096 "$dir/data" "$dir/back" || bad "appended data differs at LBA 200"

same "open zone 2" open-zone DEV -s 384
# opened, nothing written: the power cycle of the next exec leaves it Empty (as QEMU does)
expect_zone 2 "EMPTY 384"
same "finish zone 3" finish-zone DEV -s 576
expect_zone 3 "FULL 18446744073709551615"
same "close zone 1" close-zone DEV -s 192
same "reset zone 1" reset-zone DEV -s 192
expect_zone 1 "EMPTY 192"
same "zone-mgmt-send finish (2) zone 4" zone-mgmt-send DEV -s 768 -z 2
expect_zone 4 "FULL 18446744073709551615"
same "reset all" reset-zone DEV -a
expect_zone 3 "EMPTY 576"
same "zone-mgmt-recv" zone-mgmt-recv DEV -s 0 -z 0 -l 4096
step "a descriptor extension: set on an Empty zone, which it makes Closed"
head -c 64 /dev/urandom >"$dir/ext"
# (not `same`: the second would find the zone Closed) nvme-cli on zone 5, ucmd on zone 4
out=$(N set-zone-desc /dev/ng0n1 -s 960 -d "$dir/ext") || bad "nvme zns set-zone-desc failed"
[ "$out" = "set-zone-desc: Success, zone:3c0 nsid:1" ] || bad "nvme set-zone-desc: '$out'"
out=$(U set-zone-desc -s 768 -d "$dir/ext") || bad "ucmd zns set-zone-desc failed"
[ "$out" = "set-zone-desc: Success, zone:300 nsid:1" ] || bad "ucmd set-zone-desc: '$out'"
expect_zone 5 "CLOSED 960"
expect_zone 4 "CLOSED 768"
same "extended report" report-zones DEV -e
same "extended report json" report-zones DEV -e -o json
python3 -c 'import json,sys; z=json.load(open(sys.argv[1]))["zone_list"]; x=open(sys.argv[2],"rb").read(); want="".join(chr(b) if 33 <= b <= 126 else "." for b in x); sys.exit(not all("".join(z[i]["ext_data"]) == want for i in (4, 5)))' \
	"$dir/u.out" "$dir/ext" || bad "the extension reported is not the one set"
same "changed zone list" changed-zone-list DEV

step "errors: the same status, nothing changes"
N zone-append /dev/ng0n1 -s 193 -z 512 -d "$dir/data" >/dev/null && bad "nvme: append off a zone start succeeded"
grep -q "Invalid Field" "$dir/err" || bad "nvme: append off a zone start: $(cat "$dir/err")"
U zone-append -s 193 -z 512 -d "$dir/data" >/dev/null && bad "ucmd: append off a zone start succeeded"
grep -q "0x4002" "$dir/err" || bad "ucmd: append off a zone start: $(cat "$dir/err")"
N offline-zone /dev/ng0n1 -s 0 >/dev/null && bad "offline of an Empty zone succeeded"
grep -qi "transition" "$dir/err" || bad "offline of an Empty zone: $(cat "$dir/err")"
same "report after the errors" report-zones DEV -o json

if [ ${#failed[@]} -gt 0 ]; then
	echo "exec_nvme_cli_zns: ${#failed[@]} failure(s):"
	printf '  %s\n' "${failed[@]}"
	exit 1
fi
echo "exec_nvme_cli_zns: nvme zns and ucmd zns agree on every step"
